"""Stale outputs in a real JupyterLite page: after the agent ran two cells, the person's typing in the first marks
its outputs (and the cell below it, which read the name it binds) as possibly stale in jupyter_get_cells, and the
person's rerun of the first marks the second as run before a cell above it; jupyter_rerun_plan lists the cells to run
and running them makes the outputs fresh again. On a real notebook saved with its outputs (the calculus chapter of
tests/notebooks, planted in the page's storage), the person's edit of cell 3 (its imports) flags cell 9 with the
names it read from cell 3, and the plan for cell 9 is cell 3, then cell 9."""

from __future__ import annotations

import json
from pathlib import Path

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_tools import ok

TESTS_NOTEBOOKS = Path(__file__).resolve().parents[1] / "tests" / "notebooks"
PLANT = """async ({path, content}) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
}"""


def code_cells(page) -> dict[str, dict]:
    return {c["id"]: c for c in ok(page, "jupyter_get_cells")["cells"]}


#: the cells of the notebook in front (the other notebook panels are hidden, not gone)
SHOWN_CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"


def person_types(page, index: int, text: str) -> None:
    """The person clicks into the cell at ``index`` of the notebook in front, goes to the end of its first line and
    types ``text``."""
    page.locator(SHOWN_CELLS).nth(index).locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("End")
    page.keyboard.type(text)
    page.wait_for_timeout(300)


def steps(plan: dict) -> list[tuple[int, str, list[str]]]:
    return [(c["index"], c["why"], c.get("names", [])) for c in plan["cells"]]


def test_the_persons_edit_and_rerun_mark_the_outputs_that_may_no_longer_match(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": "a = 10", "expectedSourceHash": only["sourceHash"]},
    )
    below = ok(page, "jupyter_insert_cell", {"referenceCellId": only["id"], "position": "below", "source": "print(a)"})
    second = below["cell"]["id"]
    runs = ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS)["results"]
    assert [r["status"] for r in runs] == ["ok", "ok"], runs
    assert all("outputsStale" not in c for c in code_cells(page).values())
    assert ok(page, "jupyter_rerun_plan")["cells"] == []

    # the person types into the first cell: JupyterLab marks it edited since its run
    person_types(page, 0, "1")
    cells = code_cells(page)
    assert cells[only["id"]]["source"] == "a = 101"
    assert cells[only["id"]]["outputsStale"] == {"sourceEdited": True, "earlierRanSince": 0, "earlierEdited": 0}
    assert cells[second]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 0,
        "earlierEdited": 1,
        "earlierEditedIds": [only["id"]],
        "readsChanged": {"a": only["id"]},
    }
    plan = ok(page, "jupyter_rerun_plan", {"cellId": second})
    assert steps(plan) == [(0, "edited", []), (1, "stale", ["a"])] and plan["hiddenCellCount"] == 0

    # the person runs the first cell again (Shift+Enter's command): print(a)'s output now predates it
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell'); }")
    page.wait_for_function(
        """() => {
        const cell = window.jupyterapp.shell.currentWidget.content.model.cells.get(0);
        return cell.executionCount === 3 && cell.executionState !== 'running'; }""",
        timeout=KERNEL_TIMEOUT_MS,
    )
    cells = code_cells(page)
    assert "outputsStale" not in cells[only["id"]]
    assert cells[second]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 1,
        "earlierEdited": 0,
        "earlierRanSinceIds": [only["id"]],
        "readsChanged": {"a": only["id"]},
    }
    plan = ok(page, "jupyter_rerun_plan")
    assert steps(plan) == [(1, "stale", ["a"])]

    # the agent runs the plan: every output is fresh again, and print(a) shows what the notebook says
    ok(page, "jupyter_run_cells", {"cellIds": [c["id"] for c in plan["cells"]]}, timeout=KERNEL_TIMEOUT_MS)
    cells = code_cells(page)
    assert all("outputsStale" not in c for c in cells.values()), cells
    shown = ok(page, "jupyter_get_cells", {"cellIds": [second], "includeOutputs": True})["cells"][0]
    assert shown["outputs"][0]["preview"] == "101\n"
    assert ok(page, "jupyter_rerun_plan")["cells"] == []
    assert not page_log.own_page_errors()


def test_cell_3_rebinding_names_cell_9_read_flags_cell_9_and_the_plan_runs_3_then_9(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    calculus = json.loads((TESTS_NOTEBOOKS / "handson-ml2-math-calculus.ipynb").read_text(encoding="utf-8"))
    page.evaluate(PLANT, {"path": "calculus.ipynb", "content": calculus})
    ok(page, "jupyter_open_notebook", {"path": "calculus.ipynb"})
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget?.context?.path === 'calculus.ipynb'")
    page.locator(SHOWN_CELLS).nth(3).wait_for()
    cells = {c["index"]: c for c in ok(page, "jupyter_get_cells", {"endIndex": 80})["cells"]}
    assert all("outputsStale" not in c for c in cells.values())  # saved as run, top to bottom
    imports, plot = cells[3], cells[9]
    assert "import numpy as np" in imports["source"] and "np.linspace" in plot["source"]
    assert ok(page, "jupyter_rerun_plan")["cells"] == []

    person_types(page, 3, " imports")  # the person edits cell 3: what it binds is no longer what ran
    cells = {c["index"]: c for c in ok(page, "jupyter_get_cells", {"endIndex": 80})["cells"]}
    assert cells[3]["source"].startswith("#@title imports\n")
    assert cells[3]["outputsStale"]["sourceEdited"] is True
    assert cells[9]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 0,
        "earlierEdited": 1,
        "earlierEditedIds": [imports["id"]],
        "readsChanged": {"np": imports["id"], "plt": imports["id"]},
    }
    plan = ok(page, "jupyter_rerun_plan", {"cellId": plot["id"]})
    assert steps(plan) == [(3, "edited", []), (9, "stale", ["np", "plt"])]
    assert [c["id"] for c in plan["cells"]] == [imports["id"], plot["id"]]
    assert plan["staleAfterCount"] == 11  # the other run cells that read np or plt, left for the whole plan
    whole = ok(page, "jupyter_rerun_plan")
    assert [c["index"] for c in whole["cells"]] == [3, 5, 9, 12, 15, 17, 34, 41, 44, 46, 49, 54, 72]
    assert not page_log.own_page_errors()
