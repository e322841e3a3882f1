"""Review and undo after the fact, in a real Chromium on the demo site, acting as the agent.

The agent changes three cells in Direct mode; the person opens an Activity row (the diff, as text), reverts one
change through the panel, and the two others stay; the person's own later edit of a cell blocks the revert of the
agent's change of it, with the reason shown; the revert reaches the agent in jupyter_get_changes as the person's.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from lite_site import open_notebook
from test_panel import PANEL, call, cell, open_panel, section

NOTEBOOK = "notebook-running-code.ipynb"
#: a source that would set window.__xss if the panel ever rendered it as markup
HOSTILE = 'time.sleep(0)  # <img src=x onerror="window.__xss=1">'


def edit_row(page, label: str):
    """The newest Activity row of the agent's edit of the cell shown as ``label``."""
    rows = section(page, "activity").locator('.webmcp-bridge-activity-row[data-key^="change:"]')
    return rows.filter(has_text=re.compile(rf"agent\s*edited\s*{label}(?!\d)")).first


def test_the_person_reverts_one_agent_change_and_a_later_edit_blocks_another(page, page_log, site_url):
    assert open_notebook(page, site_url, NOTEBOOK)["state"] == "ready"
    open_panel(page)
    cells = call(page, "jupyter_get_cells", {"includeSource": True})["cells"]
    ids = [c["id"] for c in cells]
    new = {4: "a = 11", 5: "print(a, 'from the agent')", 9: f"import time\n\n{HOSTILE}"}
    for index, source in new.items():
        call(
            page,
            "jupyter_update_cell",
            {"cellId": ids[index], "source": source, "expectedSourceHash": cells[index]["sourceHash"]},
        )
    # the three cells carry the marker until the person looks at them
    for index in new:
        badge = cell(page, index).locator(".webmcp-bridge-badge-agent-changed")
        expect(badge).to_have_attribute("aria-label", re.compile("The agent changed this cell"))
        expect(cell(page, index)).to_have_class(re.compile(r"\bwebmcp-bridge-cell-agent-changed\b"))

    # the person opens the row of the agent's change of cell 10 with one key (Enter on its Diff): its diff, as text
    edit_row(page, "cell 10").locator('[data-action="show-edits"]').press("Enter")
    review = section(page, "activity").locator(".webmcp-bridge-edits")
    expect(review).to_be_visible()
    expect(review.locator(".webmcp-bridge-diff-del")).to_have_text(["- time.sleep(10)"])
    expect(review.locator(".webmcp-bridge-diff-add")).to_have_text([f"+ {HOSTILE}"])
    assert page.evaluate("window.__xss") is None
    # opening the diff is looking at the cell: its marker goes
    expect(cell(page, 9).locator(".webmcp-bridge-badge-agent-changed")).to_have_count(0)

    # Revert: cell 10 is back, the two other changes stay
    review.locator('[data-action="revert-edit"]').click()
    expect(page.locator(f"{PANEL} .webmcp-bridge-notice")).to_have_text("Reverted 1 change of the agent.")
    expect(review.locator('.webmcp-bridge-edit[data-state="reverted"]')).to_have_count(1)
    now = {c["id"]: c["source"] for c in call(page, "jupyter_get_cells", {"includeSource": True})["cells"]}
    assert now[ids[9]] == cells[9]["source"]
    assert now[ids[4]] == new[4] and now[ids[5]] == new[5]

    # the person types in cell 6 (the agent's change of it still there): its revert is refused, with the reason
    editor = cell(page, 5).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    page.keyboard.type("  # mine")
    expect(cell(page, 5).locator(".cm-content")).to_contain_text("# mine")
    # the row's own Revert, pressed with Space: refused, the reason said
    edit_row(page, "cell 6").locator('[data-action="revert-row"]').press(" ")
    expect(page.locator(f"{PANEL} .webmcp-bridge-notice")).to_contain_text(
        "Not reverted: The cell changed since the agent's edit"
    )
    now = {c["id"]: c["source"] for c in call(page, "jupyter_get_cells", {"includeSource": True})["cells"]}
    assert now[ids[5]] == new[5] + "  # mine"  # the person's text was not overwritten
    assert now[ids[4]] == new[4]

    # the agent is told of the revert, as the person's
    changes = call(page, "jupyter_get_changes", {})["changes"]
    reverts = [ch for ch in changes if ch["kind"] == "revert"]
    assert [(ch["actor"], ch["cellId"]) for ch in reverts] == [("person", ids[9])]
    # the person made cell 6 active to type in it: looked at; cell 5 was never looked at and keeps its marker
    expect(cell(page, 5).locator(".webmcp-bridge-badge-agent-changed")).to_have_count(0)
    expect(cell(page, 4).locator(".webmcp-bridge-badge-agent-changed")).to_have_count(1)
    assert page_log.own_page_errors() == []
