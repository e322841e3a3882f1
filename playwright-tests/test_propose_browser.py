"""Propose mode end to end: a real Chromium with native WebMCP. The test is the agent (``document.modelContext``
and ``page.webmcp``) and the person (``window.jupyterapp`` for the command and the live model, real mouse clicks
and typing on the proposal boxes shown in the notebook). Calls that wait for the person are started without
awaiting (their promise kept on ``window``), the person acts, then the promise is awaited; a result that went
pending meanwhile is collected with jupyter_wait_for_result, as an agent would."""

from __future__ import annotations

import time

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, choose, open_notebook, result_payload
from test_tools import assert_clean, call, ok

NOTEBOOK = "jupyterlite-demo-python.ipynb"
COMMAND = "webmcp-bridge:toggle-propose-mode"
LABEL = "Agent: Propose changes (ask before each change)"
BOX = ".webmcp-bridge-proposal"

# the live model of the notebook at `path`, as the person's JupyterLab holds it
PANEL_JS = "path => [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path)"


def start_call(page: Page, key: str, name: str, args: dict) -> None:
    """Start a tool call as the agent without waiting for its result (kept as window.__calls[key])."""
    page.evaluate(
        """async ([key, name, args]) => {
        const tool = (await document.modelContext.getTools()).find(t => t.name === name);
        window.__calls = window.__calls || {};
        window.__calls[key] = document.modelContext.executeTool(tool, args);
    }""",
        [key, name, args],
    )


def finish_call(page: Page, key: str, timeout: float = 60_000) -> tuple[dict, dict]:
    """Await a started call; collect it with jupyter_wait_for_result while it is pending. Returns (payload, result)."""
    result = page.evaluate(
        "async key => { const r = await window.__calls[key]; return typeof r === 'string' ? JSON.parse(r) : r; }", key
    )
    payload = result_payload(result)
    while payload.get("status") == "pending":
        payload, result = call(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, timeout=timeout)
    return payload, result


def sources(page: Page, path: str = NOTEBOOK) -> list[tuple[str, str]]:
    """(id, source) of every cell of the live model: what the person's notebook holds right now."""
    return page.evaluate(
        f"path => [...({PANEL_JS})(path).content.model.sharedModel.cells].map(c => [c.id, c.getSource()])", path
    )


def set_source_as_person(page: Page, cell_id: str, text: str, path: str = NOTEBOOK) -> None:
    page.evaluate(
        f"""([path, id, text]) => {{
        const cell = [...({PANEL_JS})(path).content.model.sharedModel.cells].find(c => c.id === id);
        cell.setSource(text);
    }}""",
        [path, cell_id, text],
    )


def box_for(page: Page, **attrs: str):
    """The proposal box matching data attributes (cell_id= / tool=), waited for."""
    selector = BOX + "".join(f'[data-{k.replace("_", "-")}="{v}"]' for k, v in attrs.items())
    locator = page.locator(selector)
    locator.wait_for(timeout=15_000)
    assert locator.count() == 1
    return locator


def diff_of(box) -> list[tuple[str, str]]:
    """(kind, text) of each line of a box's diff or code: kind add / del / ctx."""
    lines = box.locator(".webmcp-bridge-diff-line").evaluate_all(
        "nodes => nodes.map(n => [['add', 'del', 'ctx'].filter(k => n.classList.contains('webmcp-bridge-diff-' + k)), "
        "n.textContent])"
    )
    assert all(len(kinds) == 1 for kinds, _ in lines), lines  # exactly one of the three classes each
    return [(kinds[0], text) for kinds, text in lines]


def box_cell_id(box) -> str | None:
    """The id of the cell whose node holds the box (None: not inside a cell), read from the live widgets."""
    return box.evaluate(
        f"""(node, path) => {{
        const panel = ({PANEL_JS})(path);
        const cell = panel.content.widgets.find(w => w.node.contains(node));
        return cell ? cell.model.id : null;
    }}""",
        NOTEBOOK,
    )


def status_text(page: Page) -> str:
    return page.locator(".webmcp-bridge-status").inner_text()


def turn_propose_on(page: Page) -> None:
    """The person switches to Propose mode with the command (the palette's item shows the check mark)."""
    assert page.evaluate("c => window.jupyterapp.commands.isToggled(c)", COMMAND) is False
    page.evaluate("c => window.jupyterapp.commands.execute(c)", COMMAND)
    page.wait_for_function("() => document.querySelector('.webmcp-bridge-status').textContent.includes('· Propose')")
    # the check mark and the status item are told by two messages of the worker's: each in its own time
    page.wait_for_function("c => window.jupyterapp.commands.isToggled(c)", arg=COMMAND)


def test_the_switch_is_in_the_command_palette(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    page.wait_for_function("c => window.jupyterapp.commands.hasCommand(c)", arg=COMMAND)
    assert "Propose" not in status_text(page)
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:activate-command-palette')")
    page.keyboard.type("Propose changes")
    item = page.locator(".lm-CommandPalette-item", has_text=LABEL)
    item.wait_for()
    assert "lm-mod-toggled" not in (item.get_attribute("class") or "")
    item.click()  # the person picks it in the palette
    page.wait_for_function("() => document.querySelector('.webmcp-bridge-status').textContent.endsWith('· Propose')")
    assert page.evaluate("c => window.jupyterapp.commands.isToggled(c)", COMMAND) is True
    assert page.evaluate("() => window.webmcpBridge.status.mode") == "propose"
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:activate-command-palette')")
    page.keyboard.type("Propose changes")
    assert "lm-mod-toggled" in (page.locator(".lm-CommandPalette-item", has_text=LABEL).get_attribute("class") or "")
    page.keyboard.press("Escape")
    page.evaluate("c => window.jupyterapp.commands.execute(c)", COMMAND)  # and back to Direct
    page.wait_for_function("() => !document.querySelector('.webmcp-bridge-status').textContent.includes('Propose')")
    assert_clean(page_log, site_url)


def test_the_switch_is_in_the_agent_panel_too(page, page_log, site_url):
    from test_panel import PANEL, open_panel

    open_notebook(page, site_url, NOTEBOOK)
    open_panel(page)
    select = page.locator(f'{PANEL} select[data-action="mode"]')
    assert select.input_value() == "direct"
    choose(select, "propose")  # the person's choice in the panel
    page.wait_for_function("() => document.querySelector('.webmcp-bridge-status').textContent.endsWith('· Propose')")
    assert ok(page, "jupyter_get_context")["mode"] == "propose"
    page.evaluate("c => window.jupyterapp.commands.execute(c)", COMMAND)  # the palette command: the panel follows
    page.wait_for_function(
        "s => document.querySelector(s).value === 'direct'", arg=f'{PANEL} select[data-action="mode"]'
    )
    assert ok(page, "jupyter_get_context")["mode"] == "direct"
    assert_clean(page_log, site_url)


def test_update_insert_delete_and_run_wait_for_accept_or_deny(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 6})["cells"]
    assert [c["source"] for c in cells[3:5]] == ["a = 3", "a"]
    heading, target = cells[2], cells[3]
    turn_propose_on(page)

    # update: held with its diff under the cell; nothing changes until the person's Accept
    before = sources(page)
    revision = ok(page, "jupyter_get_context")["notebook"]["revision"]
    start_call(
        page,
        "update",
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "a = 4\nb = 5", "expectedSourceHash": target["sourceHash"]},
    )
    box = box_for(page, tool="jupyter_update_cell")
    assert box.get_attribute("data-cell-id") == target["id"] and box_cell_id(box) == target["id"]
    assert diff_of(box) == [("del", "- a = 3"), ("add", "+ a = 4"), ("add", "+ b = 5")]
    assert box.locator(".webmcp-bridge-proposal-summary").inner_text() == "Replace the cell's source"
    assert "1 waiting" in status_text(page)
    page.wait_for_timeout(500)
    assert sources(page) == before
    assert (
        ok(page, "jupyter_get_cells", {"cellIds": [target["id"]]})["cells"][0]["source"] == "a = 3"
    )  # reads are not held
    assert ok(page, "jupyter_get_context")["notebook"]["revision"] == revision
    box.locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "update")
    assert result["isError"] is False and payload["cell"]["id"] == target["id"]
    assert dict(sources(page))[target["id"]] == "a = 4\nb = 5"
    assert page.locator(BOX).count() == 0 and "waiting" not in status_text(page)

    # insert at the end: shown after the last cell; denied with the reason the person types
    start_call(page, "insert", "jupyter_insert_cell", {"source": "print('inserted')"})
    box = box_for(page, tool="jupyter_insert_cell")
    assert box.get_attribute("data-cell-id") == "" and box_cell_id(box) is None
    assert box.evaluate("n => !!n.closest('.jp-Notebook') && !n.closest('.jp-Cell')")
    assert diff_of(box) == [("add", "+ print('inserted')")]
    count = len(sources(page))
    box.locator(".webmcp-bridge-proposal-reason").click()
    page.keyboard.type("no prints at the end, please")
    box.locator(".webmcp-bridge-proposal-deny").click()
    payload, result = finish_call(page, "insert")
    assert result["isError"] is False
    assert (
        payload["status"] == "denied"
        and payload["reason"] == "no prints at the end, please"
        and payload["tool"] == "jupyter_insert_cell"
    )
    assert len(sources(page)) == count and page.locator(BOX).count() == 0

    # delete: every line of the cell shown as removed; applied on Accept
    start_call(
        page, "delete", "jupyter_delete_cell", {"cellId": heading["id"], "expectedSourceHash": heading["sourceHash"]}
    )
    box = box_for(page, tool="jupyter_delete_cell")
    assert box_cell_id(box) == heading["id"]
    assert diff_of(box) == [("del", f"- {line}") for line in heading["source"].splitlines()]
    page.wait_for_timeout(300)
    assert heading["id"] in dict(sources(page))
    box.locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "delete")
    assert result["isError"] is False and payload["deleted"]["id"] == heading["id"]
    assert heading["id"] not in dict(sources(page))

    # run: the code to be run is shown; Deny (no reason) runs nothing, Accept runs it
    start_call(page, "run", "jupyter_run_cells", {"cellIds": [target["id"]]})
    box = box_for(page, tool="jupyter_run_cells")
    assert box_cell_id(box) == target["id"]
    assert diff_of(box) == [("ctx", f"# cell {target['id']}"), ("ctx", "a = 4"), ("ctx", "b = 5")]
    assert box.locator(".webmcp-bridge-proposal-caption").inner_text() == "Code to run:"
    box.locator(".webmcp-bridge-proposal-deny").click()
    payload, result = finish_call(page, "run")
    assert result["isError"] is False and payload["status"] == "denied" and payload["reason"] is None
    assert ok(page, "jupyter_get_cells", {"cellIds": [target["id"]]})["cells"][0].get("executionCount") is None

    start_call(page, "run2", "jupyter_run_cells", {"cellIds": [target["id"]]})
    box_for(page, tool="jupyter_run_cells").locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "run2", timeout=KERNEL_TIMEOUT_MS)  # the kernel starts now: may go pending
    assert result["isError"] is False and "results" in payload, payload
    run = payload["results"][0]
    assert run["cellId"] == target["id"], payload
    assert run["status"] == "ok", run
    assert ok(page, "jupyter_get_cells", {"cellIds": [target["id"]]})["cells"][0]["executionCount"] == 1
    assert_clean(page_log, site_url)


def test_a_stale_accept_is_refused_and_the_persons_text_kept(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 6})["cells"]
    target, other = cells[3], cells[4]
    turn_propose_on(page)
    start_call(
        page,
        "update",
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "a = 100", "expectedSourceHash": target["sourceHash"]},
    )
    box = box_for(page, cell_id=target["id"])

    # one proposal per cell: a second change to the same cell is refused at once
    payload, result = call(page, "jupyter_edit_cell_source", {"cellId": target["id"], "oldText": "3", "newText": "7"})
    assert result["isError"] is True and payload["error"] == "PROPOSAL_ALREADY_PENDING"
    assert page.locator(BOX).count() == 1

    set_source_as_person(page, target["id"], "a = 3  # the person's choice")
    box.locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "update")
    assert result["isError"] is True and payload["error"] == "STALE_CELL"
    assert "the person's choice" in payload["currentSourcePreview"]
    assert dict(sources(page))[target["id"]] == "a = 3  # the person's choice"
    editor = page.locator(".jp-Notebook .jp-Cell").nth(target["index"]).locator(".cm-content")
    assert editor.inner_text() == "a = 3  # the person's choice"
    assert page.locator(BOX).count() == 0

    # the person deletes the cell a proposal waits on: denied for them, the box goes
    start_call(
        page, "delete", "jupyter_delete_cell", {"cellId": other["id"], "expectedSourceHash": other["sourceHash"]}
    )
    box_for(page, cell_id=other["id"])
    page.evaluate(
        f"""([path, id]) => {{
        const shared = ({PANEL_JS})(path).content.model.sharedModel;
        shared.deleteCell([...shared.cells].findIndex(c => c.id === id));
    }}""",
        [NOTEBOOK, other["id"]],
    )
    payload, result = finish_call(page, "delete")
    assert result["isError"] is False and payload["status"] == "denied" and payload["reason"] == "the cell was deleted"
    assert page.locator(BOX).count() == 0 and "waiting" not in status_text(page)
    assert_clean(page_log, site_url)


def test_the_box_follows_its_cell_when_jupyterlab_renders_it_again(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    target = ok(page, "jupyter_get_cells", {"startIndex": 3, "endIndex": 4})["cells"][0]
    turn_propose_on(page)
    start_call(page, "edit", "jupyter_edit_cell_source", {"cellId": target["id"], "oldText": "3", "newText": "33"})
    box = box_for(page, cell_id=target["id"])
    assert diff_of(box) == [("del", "- a = 3"), ("add", "+ a = 33")]
    # the person moves the cell up: JupyterLab builds a new widget (and node) for it
    page.evaluate(
        f"""([path, id]) => {{
        const nb = ({PANEL_JS})(path).content;
        nb.activeCellIndex = nb.widgets.findIndex(w => w.model.id === id);
        return window.jupyterapp.commands.execute('notebook:move-cell-up');
    }}""",
        [NOTEBOOK, target["id"]],
    )
    page.wait_for_function(
        f"""([path, id]) => {{
        const nb = ({PANEL_JS})(path).content;
        const cell = nb.widgets.find(w => w.model.id === id);
        return nb.widgets.indexOf(cell) === 2 && cell.node.querySelectorAll('.webmcp-bridge-proposal').length === 1;
    }}""",
        arg=[NOTEBOOK, target["id"]],
        timeout=5_000,
    )
    assert page.locator(BOX).count() == 1 and box_cell_id(page.locator(BOX)) == target["id"]
    page.locator(BOX).locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "edit")
    assert result["isError"] is False and dict(sources(page))[target["id"]] == "a = 33"
    assert_clean(page_log, site_url)


SETTINGS_JS = """async () => {
    // the person's settings, as the Settings Editor changes them: ISettingRegistry.load(plugin).set(key, value)
    if (!window.__bridgeSettings) {
        const app = window.jupyterapp;
        const token = [...app.pluginRegistry._services.keys()].find(t => t.name.endsWith(':ISettingRegistry'));
        const registry = await app.resolveRequiredService(token);
        window.__bridgeSettings = await registry.load('jupyterlab-webmcp-bridge:plugin');
    }
    return window.__bridgeSettings.composite;
}"""


def set_setting(page: Page, key: str, value) -> dict:
    page.evaluate(SETTINGS_JS)
    page.evaluate("async ([key, value]) => { await window.__bridgeSettings.set(key, value); }", [key, value])
    return page.evaluate(SETTINGS_JS)


def test_settings_change_the_timeout_the_cap_the_tools_and_the_start_up_mode(page, page_log, site_url):
    status = open_notebook(page, site_url, NOTEBOOK)
    tools = status["tools"]
    assert page.evaluate(SETTINGS_JS) == {
        "executionTimeout": 20,
        "resultBytes": 51200,
        "disabledTools": [],
        "defaultMode": "direct",
        "runTimeout": 120,
        "toolsets": None,
        "contributions": [],
    }
    target = ok(page, "jupyter_get_cells", {"startIndex": 3, "endIndex": 4})["cells"][0]

    # executionTimeout: a call waiting for the person returns pending after 2 s instead of 20
    set_setting(page, "executionTimeout", 2)
    turn_propose_on(page)
    started = time.monotonic()
    payload, result = call(
        page,
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "a = 5", "expectedSourceHash": target["sourceHash"]},
    )
    assert (
        payload["status"] == "pending" and payload["tool"] == "jupyter_update_cell" and time.monotonic() - started < 10
    )
    assert [p["pendingId"] for p in ok(page, "jupyter_get_context")["pending"] if p["status"] == "running"] == [
        payload["pendingId"]
    ]
    box_for(page, cell_id=target["id"]).locator(".webmcp-bridge-proposal-accept").click()
    final = ok(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]})
    assert final["cell"]["id"] == target["id"] and dict(sources(page))[target["id"]] == "a = 5"
    page.evaluate("c => window.jupyterapp.commands.execute(c)", COMMAND)  # back to Direct
    page.wait_for_function("() => !document.querySelector('.webmcp-bridge-status').textContent.includes('Propose')")

    # resultBytes: every result fits the new cap, and the agent is told it
    set_setting(page, "resultBytes", 4096)
    assert ok(page, "jupyter_get_context")["limits"]["resultBytes"] == 4096
    listing, result = call(page, "jupyter_get_cells", {"includeOutputs": True})
    assert result["isError"] is False and len(result["content"][0]["text"].encode()) <= 4096

    # disabledTools (names and globs): unregistered from WebMCP at once, and back when enabled again
    set_setting(page, "disabledTools", ["jupyter_run_code", "jupyter_*_comment*"])  # 1 + the 7 review tools
    page.wait_for_function("n => window.webmcpBridge.status.tools === n", arg=tools - 8)
    left = {t["name"] for t in page.webmcp.tools()}
    assert "jupyter_run_code" not in left and not [n for n in left if "_comment" in n]
    assert status_text(page).startswith(f"WebMCP: ready ({tools - 8} tools)")
    set_setting(page, "disabledTools", [])
    page.wait_for_function("n => window.webmcpBridge.status.tools === n", arg=tools)
    assert "jupyter_run_code" in {t["name"] for t in page.webmcp.tools()}
    # toolsets: this page's URL chooses (?toolsets=all), and the URL wins over the setting
    set_setting(page, "toolsets", ["review"])
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.webmcpBridge.status.tools") == tools

    # defaultMode: not applied now (the person's switch wins), applied at the next start-up
    set_setting(page, "defaultMode", "propose")
    page.wait_for_timeout(300)
    assert "Propose" not in status_text(page) and page.evaluate("() => window.webmcpBridge.status.mode") == "direct"
    page.reload()
    open_notebook(page, site_url, NOTEBOOK)
    page.wait_for_function("() => document.querySelector('.webmcp-bridge-status').textContent.includes('· Propose')")
    # the check mark and the status item are told by two messages of the worker's: each in its own time
    page.wait_for_function("c => window.jupyterapp.commands.isToggled(c)", arg=COMMAND)
    assert page.evaluate(SETTINGS_JS)["executionTimeout"] == 2  # kept in the browser across the reload
    start_call(page, "insert", "jupyter_insert_cell", {"source": "held = True"})
    box = box_for(page, tool="jupyter_insert_cell")
    count = len(sources(page))
    box.locator(".webmcp-bridge-proposal-deny").click()
    payload, result = finish_call(page, "insert")
    assert payload["status"] == "denied" and len(sources(page)) == count
    assert_clean(page_log, site_url)


def test_the_switch_works_without_webmcp(page_without_webmcp, page_without_webmcp_log, site_url):
    page = page_without_webmcp
    status = open_notebook(page, site_url, NOTEBOOK)
    assert status["state"] == "unavailable"
    page.wait_for_function("c => window.jupyterapp.commands.hasCommand(c)", arg=COMMAND)
    turn_propose_on(page)
    assert status_text(page) == "WebMCP: unavailable · Propose"
    assert page_without_webmcp_log.own_page_errors() == []
