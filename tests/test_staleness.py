"""Stale outputs: a code cell's read says when its outputs may no longer match the notebook (its source edited
since the run, an earlier cell run since, or an earlier cell edited since its own run), on real notebooks, with the
person's hidden cells left out."""

from __future__ import annotations

import asyncio
import json

from helpers import Bridge, corpus_json, make_bridge
from webmcp_bridge.access.levels import set_cell_levels
from webmcp_bridge.core.limits import STALE_IDS_SHOWN
from webmcp_bridge.core.raw import RunState
from webmcp_bridge.core.staleness import stale_outputs

RUNNING = "notebook-running-code.ipynb"


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
    }

    b.ok("jupyter_run_cells", {"notebookPath": RUNNING, "cellIds": [first["id"]]})  # a = 11 runs again, alone
    now = {c["id"]: c for c in cells(b, RUNNING)}
    assert "outputsStale" not in now[first["id"]]
    stale = now[second["id"]]["outputsStale"]  # print(a) still shows 10: a cell above ran after it
    assert stale["earlierRanSince"] == 1 and stale["earlierRanSinceIds"] == [first["id"]]
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
