"""The person's side, end to end: the Agent panel, the cell context menu and the cell markers in a real
Chromium, with WebMCP off (a person reviews and restricts with no agent present) and on (what the person
does through the real UI is what the agent reads), and the XSS test: notebook and agent text holding script
and event-handler payloads is shown as text, never as markup."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from lite_site import open_notebook

PANEL = "#webmcp-bridge-panel"
CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
DEMO = "jupyterlite-demo-python.ipynb"


def open_panel(page: Page) -> None:
    """Wait for the panel to be ready and open it from the right sidebar's "Agent" tab."""
    page.wait_for_selector(f'{PANEL}[data-state="ready"]', state="attached", timeout=60_000)
    if not page.locator(PANEL).is_visible():
        page.locator(".jp-SideBar.jp-mod-right .lm-TabBar-tab", has_text="Agent").click()
    expect(page.locator(PANEL)).to_be_visible()


def cell(page: Page, index: int):
    return page.locator(CELLS).nth(index)


def context_menu(page: Page, index: int, item: str, on: str | None = None) -> None:
    """Right-click cell ``index`` (or an element of it matching ``on``) and choose ``item`` in the menu."""
    target = cell(page, index)
    if on:
        target = target.locator(on).first
    target.click(button="right")
    page.locator(".lm-Menu .lm-Menu-item:not(.lm-mod-disabled)", has_text=item).first.click()


def answer_dialog(page: Page, text: str) -> None:
    """Type ``text`` into JupyterLab's input dialog and accept it."""
    dialog = page.locator(".jp-Dialog")
    dialog.locator("input").fill(text)
    dialog.locator(".jp-mod-accept").click()
    expect(dialog).to_have_count(0)


def section(page: Page, name: str):
    return page.locator(f"{PANEL} .webmcp-bridge-section-{name}")


# -- (a) + (d): a person alone -----------------------------------------------------------------------------
def test_a_person_comments_and_restricts_without_webmcp(page_without_webmcp, page_without_webmcp_log, site_url):
    page = page_without_webmcp
    status = open_notebook(page, site_url, DEMO)
    assert status["state"] == "unavailable"
    open_panel(page)
    expect(page.locator(PANEL)).to_contain_text("WebMCP is not available")

    # comment on a cell through the real context menu and JupyterLab's input dialog
    context_menu(page, 2, "Comment on cell")
    answer_dialog(page, "Why is a = 3 here?")
    comments = section(page, "comments")
    thread = comments.locator(".webmcp-bridge-thread")
    expect(thread).to_have_count(1)
    expect(thread).to_contain_text("Why is a = 3 here?")
    expect(thread).to_contain_text("cell 3")
    expect(thread.locator(".webmcp-bridge-author")).to_have_text("person")
    expect(page.locator(f"{PANEL} .webmcp-bridge-section-comments > summary")).to_have_text("Comments (1 open)")
    # the cell carries a comment badge
    expect(cell(page, 2).locator(".webmcp-bridge-badge-comments")).to_have_text("💬 1")

    # reply, resolve: the thread leaves the "open" list and the badge goes
    thread.locator("textarea").fill("Because the demo says so.")
    thread.locator('[data-action="reply"]').click()
    expect(thread.locator(".webmcp-bridge-message")).to_have_count(2)
    thread.locator('[data-action="resolve"]').click()
    expect(comments.locator(".webmcp-bridge-thread")).to_have_count(0)
    expect(cell(page, 2).locator(".webmcp-bridge-badge-comments")).to_have_count(0)
    comments.locator('select[data-action="filter"]').select_option("resolved")
    expect(comments.locator(".webmcp-bridge-thread-resolved")).to_have_count(1)

    # restrict a cell through the context menu: write -> read, a lock appears on the cell and in Access
    context_menu(page, 4, "Cycle agent access")
    lock = cell(page, 4).locator(".webmcp-bridge-badge-lock")
    expect(lock).to_have_text("🔒 read")
    access = section(page, "access")
    rows = access.locator(".webmcp-bridge-access-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("cell 5")
    # cycle it in the Access section: read -> none
    rows.first.locator('[data-action="cycle-cell"]').click()
    expect(lock).to_have_text("🔒 none")
    expect(cell(page, 4)).to_have_class(re.compile(r"\bwebmcp-bridge-cell-none\b"))
    # notebook level from the selector
    access.locator('select[data-action="notebook-level"]').select_option("read")
    expect(page.locator(f"{PANEL} .webmcp-bridge-section-access > summary")).to_contain_text("Access (read")
    # apply to all cells
    access.locator('select[data-action="all-level"]').select_option("read")
    access.locator('[data-action="apply-all"]').click()
    count = page.locator(CELLS).count()
    expect(access.locator(".webmcp-bridge-subhead")).to_have_text(f"Restricted cells ({count})")
    expect(page.locator(f"{CELLS} .webmcp-bridge-badge-lock").first).to_be_visible()

    # Activity: the person's panel actions and edits, live
    activity = section(page, "activity").locator(".webmcp-bridge-activity-row")
    expect(activity.filter(has_text="commented on").first).to_contain_text(re.compile(r"person\s*commented on\s*cell 3"))
    expect(activity.filter(has_text="set agent access to none").first).to_contain_text("cell 5")
    cell(page, 3).locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type(" + 1")
    expect(activity.first).to_contain_text(re.compile(r"person\s*edited\s*cell 4"))
    assert page_without_webmcp_log.own_page_errors() == []


# -- (b): what the person does in the UI is what the agent reads, and the other way round ------------------
def call(page: Page, name: str, args: dict | None = None) -> dict:
    """Call a tool as the agent and return its payload (asserting success)."""
    result = page.webmcp.call_tool(name, args or {}, timeout=120_000)
    payload = json.loads(result["content"][0]["text"])
    while payload.get("status") == "pending":
        result = page.webmcp.call_tool("jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, timeout=120_000)
        payload = json.loads(result["content"][0]["text"])
    assert result["isError"] is False, payload
    return payload


def test_the_agent_reads_what_the_person_wrote_and_the_panel_shows_the_agent(page, page_log, site_url):
    status = open_notebook(page, site_url, "notebook-running-code.ipynb")
    assert status["state"] == "ready"
    open_panel(page)
    cells = call(page, "jupyter_get_cells", {"includeSource": True})["cells"]
    ids = [c["id"] for c in cells]

    # the person comments on a selection of cell 9 and on the output of cell 18, through the context menu
    line = cell(page, 9).locator(".cm-line").nth(2)
    line.click()
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    line.click(button="right")
    page.locator(".lm-Menu .lm-Menu-item:not(.lm-mod-disabled)", has_text="Comment on selection").click()
    answer_dialog(page, "Don't run this: it sleeps.")
    context_menu(page, 18, "Comment on output", on=".jp-OutputArea-child")
    answer_dialog(page, "Is stdout right?")
    expect(section(page, "comments").locator(".webmcp-bridge-thread")).to_have_count(2)

    # the agent reads both, with their anchors
    listed = call(page, "jupyter_list_comments", {})
    threads = {t["anchor"]["kind"]: t for t in listed["threads"]}
    assert listed["counts"] == {"open": 2, "resolved": 0}
    assert threads["range"]["anchor"]["quote"] == "time.sleep(10)" and threads["range"]["cellId"] == ids[9]
    assert threads["range"]["messages"][0] == {**threads["range"]["messages"][0], "author": "person", "body": "Don't run this: it sleeps."}
    assert threads["output"]["cellId"] == ids[18] and threads["output"]["anchor"]["outputIndex"] == 0
    assert threads["output"]["messages"][0]["body"] == "Is stdout right?"

    # the agent replies: the panel shows it live, as the agent's
    call(page, "jupyter_reply_comment", {"threadId": threads["range"]["id"], "body": "Agreed, I will not run it."})
    agent_message = section(page, "comments").locator(".webmcp-bridge-message.webmcp-bridge-author-agent")
    expect(agent_message).to_contain_text("Agreed, I will not run it.")
    # the agent focuses the output thread: the output is outlined for a moment
    call(page, "jupyter_focus_comment", {"threadId": threads["output"]["id"]})
    expect(cell(page, 18).locator(".jp-OutputArea-child.webmcp-bridge-output-highlight")).to_have_count(1)
    # the agent comments on an output: a badge appears on that cell
    call(page, "jupyter_create_comment", {"cellId": ids[5], "outputIndex": 0, "body": "This prints 10."})
    expect(cell(page, 5).locator(".webmcp-bridge-badge-comments")).to_have_text("💬 1")

    # the agent edits a cell: the agent-at-work ring shows on it, then goes; Activity says who did what
    call(page, "jupyter_update_cell", {"cellId": ids[4], "source": "a = 11", "expectedSourceHash": cells[4]["sourceHash"]})
    expect(cell(page, 4)).to_have_class(re.compile(r"\bwebmcp-bridge-cell-working\b"))
    expect(cell(page, 4)).not_to_have_class(re.compile(r"\bwebmcp-bridge-cell-working\b"), timeout=10_000)
    activity = section(page, "activity").locator(".webmcp-bridge-activity-row")
    expect(activity.filter(has_text="jupyter_update_cell").first).to_contain_text("ok")
    expect(activity.filter(has_text="edited").first).to_contain_text(re.compile(r"agent\s*edited\s*cell 5"))

    # the agent runs a cell: "run by agent" on it; the person reruns it: the label goes
    call(page, "jupyter_run_cells", {"cellIds": [ids[5]]})
    expect(cell(page, 5).locator(".webmcp-bridge-badge-agent-run")).to_have_count(1)
    cell(page, 5).locator(".cm-content").click()
    page.keyboard.press("Control+Enter")
    expect(cell(page, 5).locator(".webmcp-bridge-badge-agent-run")).to_have_count(0, timeout=30_000)
    assert page_log.own_page_errors() == []
