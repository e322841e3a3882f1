"""Following the person: jupyter_get_changes sees what the person typed (in the real editor), who ran what
(jupyter_get_cell_access), and output text the person shares through the output's context menu."""

from __future__ import annotations

import json

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_tools import ok


def test_get_changes_reports_the_persons_typing_and_the_agents_edit(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-demo-python.ipynb")
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 4})["cells"]
    seq = ok(page, "jupyter_get_changes")["seq"]
    target = next(c for c in cells if c["type"] == "code")
    # the person types into the cell's editor
    editor = page.locator(".jp-Notebook .jp-Cell").nth(target["index"]).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    typed = "  # typed by the person"
    page.keyboard.type(typed)
    page.wait_for_timeout(300)
    changes = ok(page, "jupyter_get_changes", {"since": seq})
    mine = [c for c in changes["changes"] if c["cellId"] == target["id"]]
    assert [(c["actor"], c["kind"]) for c in mine] == [("person", "edit")], (
        changes
    )  # keystrokes coalesce into one entry
    assert mine[0]["count"] == len(typed), mine  # one change per key typed, all merged
    assert "missed" not in changes, changes  # merged changes are not dropped ones
    assert "missed" not in ok(page, "jupyter_get_changes", {"since": 0})
    # the agent's own edit is reported as the agent's; a wait returns at once when there is something new
    current = ok(page, "jupyter_get_cells", {"cellIds": [cells[0]["id"]]})["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": current["id"], "source": "# Agent heading", "expectedSourceHash": current["sourceHash"]},
    )
    later = ok(page, "jupyter_get_changes", {"since": changes["seq"], "wait": 5})["changes"]
    assert [(c["actor"], c["kind"], c["cellId"]) for c in later] == [("agent", "edit", cells[0]["id"])]
    provenance = ok(page, "jupyter_get_cell_access", {"cellIds": [target["id"]]})["cells"][0]["provenance"]
    assert provenance[0]["actor"] == "person"
    # the person moves the third cell up (JupyterLab makes it again): one move of that cell, no other cell deleted
    seq = ok(page, "jupyter_get_changes")["seq"]
    page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-InputArea").click()
    page.keyboard.press("Escape")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:move-cell-up')")
    moved = ok(page, "jupyter_get_changes", {"since": seq, "wait": 5})["changes"]
    assert [(c["actor"], c["kind"], c["cellId"]) for c in moved] == [("person", "move", cells[2]["id"])], moved
    assert [c["id"] for c in ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 3})["cells"]] == [
        cells[0]["id"],
        cells[2]["id"],
        cells[1]["id"],
    ]
    assert not page_log.own_page_errors()


def test_person_shares_selected_output_text(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": "print('alpha beta gamma')", "expectedSourceHash": only["sourceHash"]},
    )
    # the cell's output as a run would leave it (put in the model directly: this test is about sharing, not the kernel)
    page.evaluate("""() => window.jupyterapp.shell.currentWidget.context.model.cells.get(0).outputs.add(
        {output_type: 'stream', name: 'stdout', text: 'alpha beta gamma\\n'})""")
    assert ok(page, "jupyter_get_output_selection")["selection"] is None
    output = page.locator(".jp-OutputArea-child .jp-OutputArea-output").first
    output.wait_for()
    # the person selects "beta" in the output and shares it from the output's context menu
    page.evaluate("""() => {
      const node = document.querySelector('.jp-OutputArea-child .jp-OutputArea-output pre');
      const text = node.firstChild;
      const start = text.textContent.indexOf('beta');
      const range = document.createRange();
      range.setStart(text, start); range.setEnd(text, start + 4);
      const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
    }""")
    output.click(button="right")
    page.locator(".lm-Menu-itemLabel", has_text="Share selected output text with the agent").click()
    selection = ok(page, "jupyter_get_output_selection")["selection"]
    assert selection["cellId"] == only["id"] and selection["outputIndex"] == 0 and selection["text"] == "beta", (
        json.dumps(selection)
    )
    assert not page_log.own_page_errors()


def test_runs_and_outputs_are_attributed_to_whoever_ran_the_cell(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    seq = ok(page, "jupyter_get_changes")["seq"]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": "print('by the agent')", "expectedSourceHash": only["sourceHash"]},
    )
    run = ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert run["status"] == "ok", run
    agent_side = ok(page, "jupyter_get_changes", {"since": seq})
    kinds = {(c["actor"], c["kind"]) for c in agent_side["changes"]}
    # a run's output changes and its execution count are one "run" change, the agent's
    assert {("agent", "edit"), ("agent", "run")} <= kinds and ("person", "run") not in kinds, agent_side
    # the person runs it from JupyterLab (Shift+Enter's command; not awaited: its promise ends with the run)
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-cell'); }")
    later = ok(page, "jupyter_get_changes", {"since": agent_side["seq"], "wait": 15})["changes"]
    page.wait_for_timeout(1000)
    later += ok(page, "jupyter_get_changes", {"since": agent_side["seq"]})["changes"]
    assert ("person", "run") in {(c["actor"], c["kind"]) for c in later}, later
    assert not {("agent", "clear"), ("agent", "output"), ("agent", "run")} & {(c["actor"], c["kind"]) for c in later}, (
        later
    )


REPLACE_ALL = """rounds => {  // the person's find-and-replace over every cell, `rounds` times, in one go
    const cells = window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells;
    for (let r = 0; r < rounds; r++) for (const cell of cells) cell.setSource(cell.getSource() + ' ');
    return cells.length;
}"""


def test_changes_the_page_could_not_buffer_are_reported_missed_and_only_then(page, page_log, site_url):
    """The page buffers 500 raw changes between two reads of the bridge; a replace-all over the 223 cells of the Euler
    notebook, three times over, makes 669 at once. The oldest are dropped, and an agent following the log is told it
    missed some (then rereads); two rounds (446 changes) fit, and nothing is reported missed."""
    open_notebook(page, site_url, "pytudes-euler.ipynb")
    before = ok(page, "jupyter_get_changes")
    assert "missed" not in before
    assert page.evaluate(REPLACE_ALL, 2) == 223
    held = ok(page, "jupyter_get_changes", {"since": before["seq"], "limit": 200})
    assert "missed" not in held and held["changes"], {k: v for k, v in held.items() if k != "changes"}
    page.evaluate(REPLACE_ALL, 3)
    burst = ok(page, "jupyter_get_changes", {"since": held["seq"], "limit": 200})
    assert burst.get("missed") is True, {k: v for k, v in burst.items() if k != "changes"}
    assert {(c["actor"], c["kind"]) for c in burst["changes"]} == {("person", "edit")}, burst["changes"][:5]
    assert "missed" not in ok(
        page, "jupyter_get_changes", {"since": burst["seq"]}
    )  # read up to here: nothing missed since
    assert not page_log.own_page_errors()
