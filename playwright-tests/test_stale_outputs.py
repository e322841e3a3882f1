"""Stale outputs in a real JupyterLite page: after the agent ran two cells, the person's typing in the first marks
its outputs (and the cell below it) as possibly stale in jupyter_get_cells, and the person's rerun of the first
marks the second as run before a cell above it."""

from __future__ import annotations

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_tools import ok


def code_cells(page) -> dict[str, dict]:
    return {c["id"]: c for c in ok(page, "jupyter_get_cells")["cells"]}


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

    # the person types into the first cell: JupyterLab marks it edited since its run
    page.locator(".jp-Notebook .jp-Cell").first.locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("1")
    page.wait_for_timeout(300)
    cells = code_cells(page)
    assert cells[only["id"]]["source"] == "a = 101"
    assert cells[only["id"]]["outputsStale"] == {"sourceEdited": True, "earlierRanSince": 0, "earlierEdited": 0}
    assert cells[second]["outputsStale"] == {
        "sourceEdited": False,
        "earlierRanSince": 0,
        "earlierEdited": 1,
        "earlierEditedIds": [only["id"]],
    }

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
    }
    assert not page_log.own_page_errors()
