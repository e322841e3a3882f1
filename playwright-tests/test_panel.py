"""The person's side, end to end: the Agent panel, the cell context menu and the cell markers in a real
Chromium, with WebMCP off (a person reviews and restricts with no agent present) and on (what the person
does through the real UI is what the agent reads), and the XSS test: notebook and agent text holding script
and event-handler payloads is shown as text, never as markup."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect

from lite_site import choose, open_notebook

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


def choose_filter(page: Page, value: str) -> None:
    """Pick a Comments filter and wait for the list to show it."""
    comments = section(page, "comments")
    choose(comments.locator('select[data-action="filter"]'), value)
    expect(comments.locator(f'[data-filter="{value}"]')).to_have_count(1)


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
    expect(thread.locator(".webmcp-bridge-author")).to_have_text("you")
    expect(page.locator(f"{PANEL} .webmcp-bridge-section-comments > summary")).to_have_text("Comments (1 open)")
    # the cell carries a comment badge, whose click (reported by the markers' half) shows the cell's comments
    badge = cell(page, 2).locator(".webmcp-bridge-badge-comments")
    expect(badge).to_have_text("1")
    badge.click()
    expect(comments.locator('[data-filter="cell"]')).to_have_count(1)
    expect(thread).to_have_count(1)
    choose_filter(page, "open")

    # reply, resolve: the thread leaves the "open" list and the badge goes
    thread.locator("textarea").fill("Because the demo says so.")
    thread.locator('[data-action="reply"]').click()
    expect(thread.locator(".webmcp-bridge-message")).to_have_count(2)
    thread.locator('[data-action="resolve"]').click()
    expect(comments.locator(".webmcp-bridge-thread")).to_have_count(0)
    expect(cell(page, 2).locator(".webmcp-bridge-badge-comments")).to_have_count(0)
    choose_filter(page, "resolved")
    expect(comments.locator(".webmcp-bridge-thread-resolved")).to_have_count(1)

    # restrict a cell through the context menu: write -> read, a lock appears on the cell and in Access
    context_menu(page, 4, "Cycle agent access")
    lock = cell(page, 4).locator(".webmcp-bridge-badge-lock")
    expect(lock).to_have_text("read")
    access = section(page, "access")
    rows = access.locator(".webmcp-bridge-access-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("cell 5")
    # a script in the page pressing the cycle button (element.click()) is not the person: nothing cycles
    rows.first.locator('[data-action="cycle-cell"]').evaluate("n => n.click()")
    # cycle it in the Access section: read -> none (one step: the script's click did not count)
    rows.first.locator('[data-action="cycle-cell"]').click()
    expect(lock).to_have_text("none")
    expect(cell(page, 4)).to_have_class(re.compile(r"\bwebmcp-bridge-cell-none\b"))
    # the lock on the cell cycles it too: none -> write, the lock and the Access row go
    lock.click()
    expect(lock).to_have_count(0)
    expect(rows).to_have_count(0)
    # two restricted cells, the keys on the second one's button: each press redraws Access, and the focus stays on
    # that cell's button (never the first row's, where the next press would cycle a cell the person did not choose)
    context_menu(page, 3, "Cycle agent access")
    context_menu(page, 4, "Cycle agent access")
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_contain_text("cell 5")
    rows.nth(1).locator('[data-action="cycle-cell"]').focus()
    page.keyboard.press("Enter")  # cell 5: read -> none
    expect(lock).to_have_text("none")
    focused = (
        "() => { const a = document.activeElement;"
        " return [a?.dataset.action, a?.closest('.webmcp-bridge-access-row')?.textContent]; }"
    )
    action, row_text = page.evaluate(focused)
    assert action == "cycle-cell" and "cell 5" in row_text, (action, row_text)
    page.keyboard.press("Enter")  # cell 5 again: none -> write, its row goes; cell 4 stays as the person left it
    expect(lock).to_have_count(0)
    expect(rows).to_have_count(1)
    expect(cell(page, 3).locator(".webmcp-bridge-badge-lock")).to_have_text("read")
    cell(page, 3).locator(".webmcp-bridge-badge-lock").click()  # read -> none
    cell(page, 3).locator(".webmcp-bridge-badge-lock").click()  # none -> write
    expect(rows).to_have_count(0)
    # notebook level from the selector
    choose(access.locator('select[data-action="notebook-level"]'), "read")
    expect(page.locator(f"{PANEL} .webmcp-bridge-section-access > summary")).to_contain_text("Access (read")
    # apply to all cells
    choose(access.locator('select[data-action="all-level"]'), "read")
    access.locator('[data-action="apply-all"]').click()
    count = page.locator(CELLS).count()
    expect(access.locator(".webmcp-bridge-subhead")).to_have_text(f"Restricted cells ({count})")
    expect(page.locator(f"{CELLS} .webmcp-bridge-badge-lock").first).to_be_visible()

    # Activity: the person's panel actions and edits, live
    activity = section(page, "activity").locator(".webmcp-bridge-activity-row")
    expect(activity.filter(has_text="commented on").first).to_contain_text(re.compile(r"you\s*commented on\s*cell 3"))
    to_none = activity.filter(has_text="set agent access to none")
    expect(to_none.filter(has_text="cell 4").first).to_be_visible()  # the cells the person set to none
    expect(to_none.filter(has_text="cell 5").first).to_be_visible()
    cell(page, 3).locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type(" + 1")
    expect(activity.first).to_contain_text(re.compile(r"you\s*edited\s*cell 4"))
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
    assert threads["range"]["messages"][0] == {
        **threads["range"]["messages"][0],
        "author": "person",
        "body": "Don't run this: it sleeps.",
    }
    assert threads["output"]["cellId"] == ids[18] and threads["output"]["anchor"]["outputIndex"] == 0
    assert threads["output"]["messages"][0]["body"] == "Is stdout right?"

    # the agent replies: the panel shows it live, as the agent's
    call(page, "jupyter_reply_comment", {"threadId": threads["range"]["id"], "body": "Agreed, I will not run it."})
    agent_message = section(page, "comments").locator(".webmcp-bridge-message.webmcp-bridge-author-agent")
    expect(agent_message).to_contain_text("Agreed, I will not run it.")
    # the person rewrites the quoted text: the thread is orphaned, and re-anchored from a new selection
    line.click()
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.type("time.sleep(1)")
    range_thread = section(page, "comments").locator(".webmcp-bridge-thread", has_text="Don't run this")
    expect(range_thread.locator(".webmcp-bridge-state")).to_contain_text("orphaned")
    line.click()
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    range_thread.locator('[data-action="reanchor"]').click()
    expect(range_thread.locator(".webmcp-bridge-state")).to_have_text("anchored")
    moved = call(page, "jupyter_get_comment", {"threadId": threads["range"]["id"]})["thread"]
    assert moved["anchor"]["quote"] == "time.sleep(1)" and moved["state"] == "exact"
    # a reply typed in the panel and sent with Ctrl+Enter
    range_thread.locator("textarea").fill("Better now.")
    range_thread.locator("textarea").press("Control+Enter")
    expect(range_thread.locator(".webmcp-bridge-message")).to_have_count(3)

    # the agent focuses the output thread: the output is outlined for a moment
    call(page, "jupyter_focus_comment", {"threadId": threads["output"]["id"]})
    expect(cell(page, 18).locator(".jp-OutputArea-child.webmcp-bridge-output-highlight")).to_have_count(1)
    # the agent comments on an output: a badge appears on that cell
    call(page, "jupyter_create_comment", {"cellId": ids[5], "outputIndex": 0, "body": "This prints 10."})
    expect(cell(page, 5).locator(".webmcp-bridge-badge-comments")).to_have_text("1")

    # the agent edits a cell: the agent-at-work ring shows on it, then goes; Activity says who did what
    call(
        page,
        "jupyter_update_cell",
        {"cellId": ids[4], "source": "a = 11", "expectedSourceHash": cells[4]["sourceHash"]},
    )
    expect(cell(page, 4)).to_have_class(re.compile(r"\bwebmcp-bridge-cell-working\b"))
    expect(cell(page, 4)).not_to_have_class(re.compile(r"\bwebmcp-bridge-cell-working\b"), timeout=10_000)
    activity = section(page, "activity").locator(".webmcp-bridge-activity-row")
    # in the person's words: what the agent did (its tool's name is the row's tooltip), and its edit with Diff and
    # Revert one Tab away
    expect(activity.filter(has_text="changed a cell").first).to_contain_text("done")
    expect(activity.filter(has_text="changed a cell").first).to_have_attribute(
        "title", re.compile("jupyter_update_cell")
    )
    edited = activity.filter(has_text="edited").first
    expect(edited).to_contain_text(re.compile(r"agent\s*edited\s*cell 5\s*Diff\s*Revert"))

    assert page_log.own_page_errors() == []


# -- (c): the XSS test ------------------------------------------------------------------------------------
#: each sets window.__xss if it ever runs as markup
PAYLOADS = (
    '<img src=x onerror="window.__xss=1">',
    "<script>window.__xss=2</script>",
    '"><svg onload="window.__xss=3"></svg>',
    "' onmouseover='window.__xss=4' x='",
    '<iframe srcdoc="<script>parent.__xss=5</script>"></iframe>',
    '<a href="javascript:window.__xss=6" onclick="window.__xss=7">x</a>',
)
P = PAYLOADS
T0 = 1_700_000_000.0


def hostile_notebook() -> dict:
    """Sources, outputs, cell metadata and review threads holding the payloads, as a file on disk would."""
    code0 = f"x = 1  # {P[0]}\ny = '{P[1]}'"
    cells = [
        {
            "cell_type": "code",
            "id": "c0",
            "metadata": {"webmcp_bridge": {"access": "read"}},
            "source": code0,
            "outputs": [],
            "execution_count": None,
        },
        {
            "cell_type": "code",
            "id": "c1",
            "metadata": {"webmcp_bridge": {"access": P[0]}},
            "source": P[2],
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": P[0] + P[1]},
                {"output_type": "display_data", "metadata": {}, "data": {"text/html": P[0] + P[4], "text/plain": P[5]}},
            ],
            "execution_count": 3,
        },
        {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": P[3] + "\n\n" + P[4]},
        {"cell_type": "raw", "id": "c3", "metadata": {"webmcp_bridge": {"access": "none"}}, "source": P[5]},
        {"cell_type": "code", "id": "c4", "metadata": {}, "source": "z = 2", "outputs": [], "execution_count": None},
    ]
    message = lambda author, body: {"author": author, "body": body, "time": T0}  # noqa: E731
    threads = [
        {
            "id": "t1",
            "status": "open",
            "anchor": {"kind": "cell", "cellId": "c0"},
            "messages": [message("agent", P[0] + P[1]), message("person", P[2])],
            "createdAt": T0,
            "updatedAt": T0,
        },
        {
            "id": "t2",
            "status": "resolved",
            "anchor": {
                "kind": "range",
                "cellId": "c0",
                "quote": P[1],
                "prefix": "",
                "suffix": "",
                "selection": {"start": {"line": 1, "column": 5}, "end": {"line": 1, "column": 5 + len(P[1])}},
            },
            "messages": [message("person", P[3])],
            "createdAt": T0,
            "updatedAt": T0,
            "resolvedAt": T0,
            "resolvedBy": "person",
        },
        {
            "id": "t3",
            "status": "open",
            "anchor": {
                "kind": "output",
                "cellId": "c1",
                "outputIndex": 1,
                "fingerprint": "0" * 16,
                "outputType": P[0],
                "mimeTypes": [P[1]],
            },
            "messages": [message("agent", P[4]), message(P[0], P[5])],
            "createdAt": T0,
            "updatedAt": T0,
        },
        {
            "id": "t4",
            "status": "open",
            "anchor": {
                "kind": "range",
                "cellId": "c4",
                "quote": P[5],
                "prefix": P[0],
                "suffix": P[1],
                "selection": {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 3}},
            },
            "messages": [message("person", P[5])],
            "createdAt": T0,
            "updatedAt": T0,
        },
        {"id": P[0], "status": P[1], "anchor": {"kind": P[2], "cellId": "c0"}, "messages": [message("agent", P[3])]},
    ]
    return {
        "cells": cells,
        "metadata": {
            "title": P[1],
            "webmcp_bridge": {"schemaVersion": 1, "threads": threads},
            "kernelspec": {"name": "python", "display_name": "Python (Pyodide)", "language": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def upload(page: Page, name: str, content: dict) -> None:
    """Upload a notebook through the file browser's Upload button."""
    with page.expect_file_chooser() as chooser:
        page.locator(".jp-FileBrowser-toolbar .jp-id-upload jp-button").click()
    chooser.value.set_files(
        {"name": name, "mimeType": "application/x-ipynb+json", "buffer": json.dumps(content).encode()}
    )
    expect(page.locator(".jp-DirListing-item", has_text=name)).to_have_count(1)


INJECTED = """() => {
  const scopes = [...document.querySelectorAll('#webmcp-bridge-panel, .webmcp-bridge-markers, .jp-Dialog')];
  // the icons dom.js draws (JupyterLab's LabIcons and the bridge's, in their .webmcp-bridge-icon spans) are the only
  // SVG the panel and markers may hold
  const icon = e => !!e.closest('.webmcp-bridge-icon') && /^(ui-components|webmcp-bridge):/.test(
    e.closest('svg')?.getAttribute('data-icon') ?? '');
  const inside = scopes.flatMap(s => [...s.querySelectorAll('*')]).filter(e => !icon(e));
  return {
    xss: window.__xss ?? null,
    tags: inside.filter(e => ['IMG', 'SCRIPT', 'SVG', 'svg', 'IFRAME', 'A', 'OBJECT', 'EMBED',
      'STYLE'].includes(e.tagName)).map(e => e.outerHTML),
    handlers: inside.filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).map(e => e.outerHTML.slice(0,
      200)),
    pageHandlers: [...document.querySelectorAll('[onerror], [onload], [onclick], [onmouseover]')].map(e =>
      e.outerHTML.slice(0, 200)),
    scripts: [...document.scripts].filter(s => s.textContent.includes('__xss')).length,
    markers: document.querySelectorAll('.webmcp-bridge-markers').length,
  };
}"""


def assert_nothing_injected(page: Page) -> dict:
    found = page.evaluate(INJECTED)
    assert found["xss"] is None, found
    assert found["tags"] == [] and found["handlers"] == [] and found["pageHandlers"] == [] and found["scripts"] == 0, (
        found
    )
    return found


def test_payloads_in_sources_outputs_and_comments_are_shown_as_text(page, page_log, site_url):
    open_notebook(page, site_url, DEMO)
    upload(page, "hostile.ipynb", hostile_notebook())
    status = open_notebook(page, site_url, "hostile.ipynb")
    assert status["state"] == "ready"
    open_panel(page)
    comments = section(page, "comments")

    # what the file holds: every filter, every thread's navigation, every section
    for chosen in ("open", "resolved", "all"):
        choose_filter(page, chosen)
        for anchor in comments.locator('[data-action="reveal-thread"]').all():
            anchor.click()
    expect(comments.locator(".webmcp-bridge-body").first).to_be_visible()
    assert_nothing_injected(page)
    # the payloads are there, as text
    panel_text = page.locator(PANEL).inner_text()
    for payload in (P[0] + P[1], P[2], P[3], P[4], P[5]):
        assert payload in panel_text
    expect(comments.locator(".webmcp-bridge-quote").first).to_have_text(P[1])
    # an unknown level in a cell's metadata fails closed: the cell reads as "none"
    expect(cell(page, 1).locator(".webmcp-bridge-badge-lock")).to_have_text("none")
    expect(section(page, "access").locator(".webmcp-bridge-access-row")).to_have_count(3)
    expect(section(page, "access")).to_contain_text(P[5])

    # what an agent writes through the tools
    ids = [c["id"] for c in call(page, "jupyter_get_cells", {})["cells"]]
    assert "c1" not in ids and "c3" not in ids  # hidden: "none"
    call(page, "jupyter_create_comment", {"cellId": "c0", "body": P[0] + P[4], "quote": P[1]})
    created = call(page, "jupyter_create_comment", {"cellId": "c4", "body": P[2]})
    call(
        page,
        "jupyter_reply_comment",
        {"threadId": created["thread"]["id"] if "thread" in created else created["id"], "body": P[3]},
    )
    inserted = call(
        page,
        "jupyter_insert_cell",
        {"referenceCellId": "c4", "position": "below", "cellType": "code", "source": P[0] + "\n" + P[1]},
    )
    call(
        page,
        "jupyter_insert_cell",
        {"referenceCellId": "c4", "position": "below", "cellType": "markdown", "source": P[4] + P[5]},
    )

    # what the person writes through the UI
    context_menu(page, 4, "Comment on cell")
    answer_dialog(page, P[0] + P[2])
    choose_filter(page, "all")
    thread = comments.locator(".webmcp-bridge-thread").first
    thread.locator("textarea").fill(P[1] + P[3])
    thread.locator('[data-action="reply"]').click()
    context_menu(page, 5, "Cycle agent access")
    choose_filter(page, "cell")
    expect(cell(page, 5).locator(".webmcp-bridge-badge-lock")).to_have_text("read")
    expect(
        section(page, "activity").locator(".webmcp-bridge-activity-row").filter(has_text="inserted a cell").first
    ).to_be_visible()
    choose_filter(page, "all")
    expect(comments).to_contain_text(P[1] + P[3])
    page.wait_for_timeout(500)  # one more debounced render of every section

    found = assert_nothing_injected(page)
    assert found["markers"] >= 4
    panel_text = page.locator(PANEL).inner_text()
    for payload in (P[0] + P[4], P[0] + P[2], P[1] + P[3]):
        assert payload in panel_text
    assert inserted
    assert page_log.own_page_errors() == []


def test_activity_shows_a_run_as_ran_and_a_clear_as_cleared(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    open_panel(page)
    only = call(page, "jupyter_get_cells")["cells"][0]
    call(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": "print('hello')", "expectedSourceHash": only["sourceHash"]},
    )
    ran = call(page, "jupyter_run_cells", {"cellIds": [only["id"]]})["results"][0]
    assert ran["status"] == "ok", ran
    # the cells' changes (the agent's calls have rows of their own: "ran cells", "cleared outputs")
    rows = section(page, "activity").locator('.webmcp-bridge-activity-row[data-key^="change:"]')
    expect(rows.filter(has_text="ran").first).to_contain_text(re.compile(r"agent\s*ran\s*cell 1$"))
    expect(rows.filter(has_text="cleared the outputs")).to_have_count(0)  # the run's own output changes are the run
    call(page, "jupyter_clear_outputs", {"cellIds": [only["id"]]})
    expect(rows.filter(has_text="cleared the outputs").first).to_contain_text(
        re.compile(r"agent\s*cleared the outputs of\s*cell 1$")
    )
    expect(rows.filter(has_text="ran")).to_have_count(1)
    assert page_log.own_page_errors() == []


def test_a_change_of_the_agent_never_closes_the_list_the_person_is_choosing_in(page, page_log, site_url):
    """The person opens the Comments filter's list and moves to "all"; meanwhile the agent comments on a cell. The
    panel takes the agent's change (Activity shows it) but does not redraw Comments under the person's hands: the
    select is the same element, with the person's pending choice; once they choose (Enter), Comments shows "all",
    the agent's new thread included. A later drawing replaces the select and keeps the person's focus on it."""
    status = open_notebook(page, site_url, DEMO)
    assert status["state"] == "ready"
    open_panel(page)
    comments = section(page, "comments")
    expect(comments.locator('[data-filter="open"]')).to_have_count(1)
    target = call(page, "jupyter_get_cells", {"startIndex": 1, "endIndex": 2})["cells"][0]
    select = comments.locator('select[data-action="filter"]')
    select.evaluate("s => { s.dataset.mark = 'the one the person opened'; }")
    activity_draws = (
        "() => JSON.parse(document.querySelector('#webmcp-bridge-panel').dataset.draws || '{}').activity || 0"
    )

    select.focus()
    page.keyboard.press("Alt+ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # open → resolved → all, not chosen yet
    call(page, "jupyter_create_comment", {"cellId": target["id"], "body": "Is this import needed?"})
    # the bridge has seen the new thread (the cell's badge shows it), then drawn the panel once more after that (a
    # later call's Activity row): a Comments drawing it did not put off would have replaced the select by now
    expect(cell(page, 1).locator(".webmcp-bridge-badge-comments")).to_have_text("1")
    drawn = page.evaluate(activity_draws)
    call(page, "jupyter_get_context")
    page.wait_for_function(f"n => ({activity_draws})() > n", arg=drawn, timeout=30_000)
    assert select.evaluate("s => s.dataset.mark") == "the one the person opened"  # not replaced, not closed
    expect(comments.locator('[data-filter="open"]')).to_have_count(1)

    page.keyboard.press("Enter")
    expect(comments.locator('[data-filter="all"]')).to_have_count(1)
    expect(comments.locator(".webmcp-bridge-thread", has_text="Is this import needed?")).to_have_count(1)
    # once chosen, the select holds nothing back: the agent's next comment shows at once
    call(page, "jupyter_create_comment", {"cellId": target["id"], "body": "And this one?"})
    expect(comments.locator(".webmcp-bridge-thread", has_text="And this one?")).to_have_count(1)
    # that drawing replaced the select, and the person's keyboard focus moved to the new one (not to the page)
    assert select.evaluate("s => s.dataset.mark") is None
    assert page.evaluate("() => document.activeElement?.getAttribute('data-action')") == "filter"
    assert page_log.own_page_errors() == []
