"""Stale outputs: a code cell's read says when its outputs may no longer match the notebook (its source edited
since the run, an earlier cell run since, or an earlier cell edited since its own run) and, following the names the
cells bind and read, which names it read changed and in which cell; jupyter_rerun_plan lists the cells to run so
the outputs are fresh again. On real notebooks, with the person's hidden cells left out."""

from __future__ import annotations

import asyncio
import json

from helpers import Bridge, corpus_json, corpus_text, make_bridge
from webmcp_bridge.access.levels import set_cell_levels
from webmcp_bridge.core.limits import STALE_IDS_SHOWN
from webmcp_bridge.core.raw import RunState
from webmcp_bridge.core.staleness import stale_outputs
from webmcp_bridge.tools import notebooks_toolset, variables_toolset

RUNNING = "notebook-running-code.ipynb"
CALCULUS = "handson-ml2-math-calculus.ipynb"
DEMO = "jupyterlite-demo-python.ipynb"
BEYOND = "ipython-beyond-plain-python.ipynb"


def planning_bridge(*notebooks: str) -> Bridge:
    """A bridge over the corpus notebooks named, with the cell tools and jupyter_rerun_plan, each notebook open."""
    b = Bridge({name: corpus_text(name) for name in notebooks}, toolsets=[notebooks_toolset(), variables_toolset()])
    for name in notebooks:
        b.open(name)
    return b


def by_index(b: Bridge, path: str) -> dict[int, dict]:
    return {c["index"]: c for c in b.ok("jupyter_get_cells", {"notebookPath": path, "endIndex": 200})["cells"]}


def plan(b: Bridge, path: str, cell_id: str | None = None) -> dict:
    return b.ok("jupyter_rerun_plan", {"notebookPath": path, **({"cellId": cell_id} if cell_id else {})})


def steps(payload: dict) -> list[tuple[int, str, list[str]]]:
    return [(c["index"], c["why"], c.get("names", [])) for c in payload["cells"]]


def cells(b: Bridge, path: str) -> list[dict]:
    return [
        c for c in b.ok("jupyter_get_cells", {"notebookPath": path, "endIndex": 200})["cells"] if c["type"] == "code"
    ]


def test_a_notebook_saved_with_cells_run_out_of_order_says_so_on_the_cell_run_before_its_predecessor():
    b = make_bridge({"ch13.ipynb": "mlbook-ch13-lightning.ipynb"})
    b.open("ch13.ipynb")
    stale = {c["id"]: c["outputsStale"] for c in cells(b, "ch13.ipynb") if "outputsStale" in c}
    # the saved notebook ran cell 26 (count 13) before cell 25 (count 14), everything else in order
    assert stale == {
        "6250f819": {
            "sourceEdited": False,
            "earlierRanSince": 1,
            "earlierEdited": 0,
            "earlierRanSinceIds": ["5100164a"],
        }
    }
    # reading that one cell alone says the same
    one = b.ok("jupyter_get_cells", {"notebookPath": "ch13.ipynb", "cellIds": ["6250f819"]})["cells"][0]
    assert one["outputsStale"] == stale["6250f819"]


def test_an_edit_since_the_run_and_a_rerun_above_mark_the_cells_whose_outputs_may_be_stale():
    b = make_bridge({RUNNING: RUNNING})
    b.open(RUNNING)
    first, second = cells(b, RUNNING)[:2]  # a = 10 / print(a)
    assert first["source"] == "a = 10" and second["source"] == "print(a)"
    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [first["id"], second["id"]]})
    assert all("outputsStale" not in c for c in cells(b, RUNNING))  # every cell ran in order, as saved

    b.nb(RUNNING).person_set_source(first["id"], "a = 11")
    now = {c["id"]: c for c in cells(b, RUNNING)}
    assert now[first["id"]]["outputsStale"] == {"sourceEdited": True, "earlierRanSince": 0, "earlierEdited": 0}
    assert now[second["id"]]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 0,
        "earlierEdited": 1,
        "earlierEditedIds": [first["id"]],
        "readsChanged": {"a": first["id"]},  # print(a) read the a the edited cell binds
    }
    # the cells below read nothing the edit changed: only the order of edits flags them
    assert all("readsChanged" not in c.get("outputsStale", {}) for c in list(now.values())[2:])

    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [first["id"]]})  # a = 11 runs again, alone
    now = {c["id"]: c for c in cells(b, RUNNING)}
    assert "outputsStale" not in now[first["id"]]
    stale = now[second["id"]]["outputsStale"]  # print(a) still shows 10: a cell above ran after it
    assert stale["earlierRanSince"] == 1 and stale["earlierRanSinceIds"] == [first["id"]]
    assert stale["readsChanged"] == {"a": first["id"]}
    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [second["id"]]})
    assert "outputsStale" not in {c["id"]: c for c in cells(b, RUNNING)}[second["id"]]


def test_a_hidden_cells_runs_and_edits_never_show_in_the_visible_cells_staleness():
    nb = corpus_json(RUNNING)
    b = Bridge({RUNNING: json.dumps(nb)})
    b.open(RUNNING)
    raw = b.nb(RUNNING)
    first, second = cells(b, RUNNING)[:2]
    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [first["id"], second["id"]]})
    set_cell_levels(raw, [first["id"]], "none")
    raw.person_set_source(first["id"], "a = 12")  # the person edits and reruns the hidden cell
    asyncio.run(raw.run_cell(first["id"], 5.0))
    visible = cells(b, RUNNING)
    assert first["id"] not in {c["id"] for c in visible}
    assert all("outputsStale" not in c for c in visible), [c.get("outputsStale") for c in visible]


def test_the_ids_listed_are_bounded_and_the_newest_runs_come_first():
    # 12 cells run top to bottom, then the 10 above the last one run again from the top: it lists the 5 newest
    states = [RunState(f"c{i}", i, i + 1, False) for i in range(12)]
    states = [RunState(s.id, s.index, 100 + s.index if s.index < 10 else s.execution_count, False) for s in states]
    found = stale_outputs(states, ["c11", "c10"])
    assert found["c11"]["earlierRanSince"] == 10
    assert found["c11"]["earlierRanSinceIds"] == ["c9", "c8", "c7", "c6", "c5"] and STALE_IDS_SHOWN == 5
    assert found["c10"]["earlierRanSince"] == 10


def test_cell_3_rebinding_names_cell_9_read_flags_cell_9_with_them_and_the_plan_runs_3_then_9():
    b = planning_bridge(CALCULUS)
    cells = by_index(b, CALCULUS)
    assert all("outputsStale" not in c for c in cells.values())  # saved as run, top to bottom
    imports, plot = cells[3], cells[9]  # %matplotlib inline + import numpy as np ... / xs = np.linspace(...) plt.plot
    assert "import numpy as np" in imports["source"] and "np.linspace" in plot["source"]
    b.nb(CALCULUS).person_set_source(imports["id"], imports["source"].replace("as np", "as np  # 2.x"))

    cells = by_index(b, CALCULUS)
    assert cells[9]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 0,
        "earlierEdited": 1,
        "earlierEditedIds": [imports["id"]],
        # not show(), which cell 5 binds with a def (cell 5's A_pos, made from np, changed)
        "readsChanged": {"np": imports["id"], "plt": imports["id"]},
    }
    # a cell calling a function reads what the function's body reads, where the call stands; the function itself
    # (cell 12 only defines it) is what it was
    assert cells[12]["source"].startswith("#@title\ndef animate_AB_line(")
    assert cells[15]["source"].startswith("#@title\nanimate_AB_line(lambda x: np.abs(x)")
    assert cells[15]["outputsStale"]["readsChanged"] == {
        "animation": imports["id"],
        "np": imports["id"],
        "plt": imports["id"],
    }

    one = plan(b, CALCULUS, plot["id"])
    assert steps(one) == [(3, "edited", []), (9, "stale", ["np", "plt"])]
    assert [c["id"] for c in one["cells"]] == [imports["id"], plot["id"]]
    assert one["hiddenCellCount"] == 0 and one["staleAfterCount"] == 11  # the other cells that read np or plt
    whole = plan(b, CALCULUS)
    assert [index for index, _, _ in steps(whole)] == [3, 5, 9, 12, 15, 17, 34, 41, 44, 46, 49, 54, 72]
    assert {why for _, why, _ in steps(whole)[1:]} == {"stale"} and "staleAfterIds" not in whole


def test_running_the_plan_makes_the_outputs_fresh_again():
    b = planning_bridge(RUNNING)
    first, second = cells(b, RUNNING)[:2]  # a = 10 / print(a)
    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [first["id"], second["id"]]})
    b.nb(RUNNING).person_set_source(first["id"], "a = 11")
    made = plan(b, RUNNING, second["id"])
    assert steps(made) == [(first["index"], "edited", []), (second["index"], "stale", ["a"])]
    assert "staleAfterIds" not in made
    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [c["id"] for c in made["cells"]]})
    now = {c["id"]: c for c in cells(b, RUNNING)}
    assert "outputsStale" not in now[first["id"]] and "outputsStale" not in now[second["id"]]
    assert b.nb(RUNNING).nb["cells"][now[second["id"]]["index"]]["outputs"][0]["text"] == "11\n"
    assert plan(b, RUNNING)["cells"] == [] and plan(b, RUNNING, second["id"])["cells"] == []


def test_a_provider_that_never_ran_or_was_rebound_by_a_cell_below_comes_first():
    b = planning_bridge(DEMO)
    raw = b.nb(DEMO)
    cells = by_index(b, DEMO)
    assign, show = cells[3], cells[4]  # a = 3 / a
    assert (assign["source"], show["source"]) == ("a = 3", "a")
    below = raw.person_insert_cell(len(raw.nb["cells"]), "code", "a = 100")
    b.ok("jupyter_run_cells", {"notebookPath": DEMO, "cellIds": [below, show["id"]]})  # `a` shows 100
    assert by_index(b, DEMO)[4]["outputsStale"]["readsChanged"] == {"a": assign["id"]}  # a = 3 never ran
    made = plan(b, DEMO, show["id"])
    assert steps(made) == [(3, "provides", ["a"]), (4, "stale", ["a"])]

    b.ok("jupyter_run_cells", {"notebookPath": DEMO, "cellIds": [assign["id"], below, show["id"]]})
    # a = 3 ran, but the cell below rebound a before `a` ran: `a` shows what the notebook's order does not give
    assert by_index(b, DEMO)[4]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 0,
        "earlierEdited": 0,
        "readsChanged": {"a": below},
    }
    assert steps(plan(b, DEMO, show["id"])) == [(3, "provides", ["a"]), (4, "stale", ["a"])]
    b.ok("jupyter_run_cells", {"notebookPath": DEMO, "cellIds": [assign["id"], show["id"]]})
    assert "outputsStale" not in by_index(b, DEMO)[4]


def test_a_name_only_a_cell_below_binds_is_an_orphan_no_plan_can_give():
    b = planning_bridge(DEMO)
    raw = b.nb(DEMO)
    cells = by_index(b, DEMO)
    squares = cells[5]  # b = 89; def sq(x): ...; sq(b)
    early = raw.person_insert_cell(0, "code", "sq(12)")
    b.ok("jupyter_run_cells", {"notebookPath": DEMO, "cellIds": [squares["id"], early]})
    stale = by_index(b, DEMO)[0]["outputsStale"]
    assert stale["readsChanged"] == {"sq": squares["id"]}
    whole = plan(b, DEMO)
    assert whole["cells"] == [] and whole["orphans"] == [{"cellId": early, "name": "sq"}]
    assert whole["staleAfterIds"] == [early] and whole["staleAfterCount"] == 1


def test_an_edited_cell_magic_may_have_rebound_what_a_later_cell_reads_and_never_names_it():
    b = planning_bridge(BEYOND)
    cells = by_index(b, BEYOND)
    ruby, reader = cells[68], cells[71]  # %%ruby ... / mod.g(0), whose module a cell above imported
    assert ruby["source"].startswith("%%ruby") and reader["source"] == "mod.g(0)"
    b.nb(BEYOND).person_set_source(ruby["id"], ruby["source"] + "\n")
    now = by_index(b, BEYOND)
    assert now[71]["outputsStale"]["unreadableIds"] == [ruby["id"]] and "readsChanged" not in now[71]["outputsStale"]
    assert "readsChanged" not in now[79]["outputsStale"]  # np and plt: bound by the cell above it, which did not change
    assert "unreadableIds" not in now[74]["outputsStale"]  # input and print: builtins, not taken from a magic
    assert steps(plan(b, BEYOND)) == [(68, "edited", []), (71, "unreadable", []), (72, "unreadable", [])]


def test_a_hidden_cell_is_never_in_a_plan_and_what_it_does_changes_no_answer():
    b = Bridge({RUNNING: corpus_text(RUNNING)}, toolsets=[notebooks_toolset(), variables_toolset()])
    b.open(RUNNING)
    raw = b.nb(RUNNING)
    first, second = cells(b, RUNNING)[:2]  # a = 10 / print(a)
    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [first["id"], second["id"]]})
    set_cell_levels(raw, [first["id"]], "none")
    before = (plan(b, RUNNING), plan(b, RUNNING, second["id"]), cells(b, RUNNING))
    raw.person_set_source(first["id"], "a = 12")  # the person edits the hidden cell that binds a
    after = (plan(b, RUNNING), plan(b, RUNNING, second["id"]), cells(b, RUNNING))
    assert before == after
    assert before[0] == {"path": RUNNING, "cells": [], "hiddenCellCount": 1}
    assert first["id"] not in json.dumps(after)
    b.fails("jupyter_rerun_plan", {"notebookPath": RUNNING, "cellId": first["id"]}, "CELL_NOT_FOUND")


def test_a_plan_is_for_a_code_cell():
    b = planning_bridge(RUNNING)
    markdown = next(c for c in b.ok("jupyter_get_cells", {"notebookPath": RUNNING})["cells"] if c["type"] == "markdown")
    error = b.fails("jupyter_rerun_plan", {"notebookPath": RUNNING, "cellId": markdown["id"]}, "INVALID_ARGUMENT")
    assert error["cellType"] == "markdown"
    b.fails("jupyter_rerun_plan", {"notebookPath": RUNNING, "cellId": "no-such-cell"}, "CELL_NOT_FOUND")
