"""Browsers without native WebMCP: on a site that turns the MCP-B option on (``"webmcpBridgePolyfill": true`` in
jupyter-lite.json; ``python build.py --mcp-b``), the loader runs the @mcp-b/global runtime shipped in the
extension and the same tools reach an agent through it: through the page's ``document.modelContext`` and through
an MCP client on MCP-B's tab transport (postMessage). Run in Chromium launched without the WebMCP flag."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from agent_scenarios import core_agent_scenario
from lite_site import PageLog, new_recorded_page, open_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402
from sitebuild.util import CACHE, BuildError  # noqa: E402

CALL_JS = """async ([name, args]) => {
    const tool = (await document.modelContext.getTools()).find(t => t.name === name);
    const result = await document.modelContext.executeTool(tool, JSON.stringify(args));
    return typeof result === 'string' ? JSON.parse(result) : result;
}"""
TOOLS_JS = """async () => (await document.modelContext.getTools()).map(t => ({
    name: t.name, inputSchema: typeof t.inputSchema === 'string' ? JSON.parse(t.inputSchema) : t.inputSchema}))"""


#: an MCP client on MCP-B's tab transport, as the MCP-B browser extension's content script is one: JSON-RPC messages
#: posted on the page's window in the transport's envelope ({channel, type: 'mcp', direction, payload}), answers
#: read from the server's posts. initialize, notifications/initialized, tools/list, then one tools/call.
TAB_CLIENT_JS = """async ([tool, args]) => {
    const channel = 'mcp-default';
    const waiting = new Map();
    const listener = event => {
        const d = event.data;
        if (event.source !== window || !d || d.channel !== channel || d.type !== 'mcp' ||
          d.direction !== 'server-to-client') return;
        const m = d.payload;
        if (m && typeof m === 'object' && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
    };
    window.addEventListener('message', listener);
    const post = payload => window.postMessage({channel, type: 'mcp', direction: 'client-to-server', payload},
      window.location.origin);
    let next = 0;
    const request = (method, params) => new Promise((resolve, reject) => {
        const id = ++next;
        waiting.set(id, resolve);
        setTimeout(() => reject(new Error(`no answer to ${method}`)), 60000);
        post({jsonrpc: '2.0', id, method, params});
    });
    try {
        const init = await request('initialize', {protocolVersion: '2025-06-18', capabilities: {},
                                                  clientInfo: {name: 'webmcp-bridge-test', version: '1'}});
        post({jsonrpc: '2.0', method: 'notifications/initialized'});
        const list = await request('tools/list', {});
        const call = await request('tools/call', {name: tool, arguments: args});
        return {init, list, call};
    } finally {
        window.removeEventListener('message', listener);
    }
}"""


#: an MCP client in the page, as the MCP-B browser extension is one: JSON-RPC over the tab transport's postMessage
#: channel (same origin). Initializes, then sends each [method, params] and returns every response.
MCP_CLIENT = """async (requests) => {
    const channel = 'mcp-default', pending = new Map();
    const listener = (event) => {
        const d = event.data;
        if (!d || d.channel !== channel || d.type !== 'mcp' || d.direction !== 'server-to-client') return;
        if (d.payload && typeof d.payload === 'object' && pending.has(d.payload.id)) {
            pending.get(d.payload.id)(d.payload);
            pending.delete(d.payload.id);
        }
    };
    window.addEventListener('message', listener);
    let id = 0;
    const post = (payload) => window.postMessage({channel, type: 'mcp', direction: 'client-to-server', payload},
      window.location.origin);
    const send = (method, params) => new Promise((resolve) => {
        const mid = ++id;
        pending.set(mid, resolve);
        post({jsonrpc: '2.0', id: mid, method, params});
    });
    const out = [await send('initialize', {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'test',
      version: '1'}})];
    post({jsonrpc: '2.0', method: 'notifications/initialized'});
    for (const [method, params] of requests) out.push(await send(method, params));
    window.removeEventListener('message', listener);
    return out;
}"""


def mcp(page, *requests: tuple[str, dict]) -> list[dict]:
    """The responses to ``requests`` ([method, params]) of an MCP client in the page (after its initialize)."""
    return page.evaluate(MCP_CLIENT, [list(r) for r in requests])[1:]


def tool_payload(response: dict) -> dict:
    """The structured content of a successful tools/call response (MCP-B checked it against the tool's outputSchema)."""
    result = response["result"]
    assert result.get("isError") is not True, result
    return result["structuredContent"]


class McpBTools:
    """page.webmcp's two calls, made through the MCP-B runtime's document.modelContext instead."""

    def __init__(self, page):
        self.page = page

    def call_tool(self, name: str, args: dict, timeout: float = 60_000) -> dict:
        return self.page.evaluate(CALL_JS, [name, args])

    def tools(self) -> list[dict]:
        return self.page.evaluate(TOOLS_JS)


class McpBPage:
    """A Playwright page whose ``webmcp`` goes through the MCP-B runtime (everything else is the page's)."""

    def __init__(self, page):
        self._page = page
        self.webmcp = McpBTools(page)

    def __getattr__(self, name):
        return getattr(self._page, name)


@pytest.fixture(scope="module")
def mcp_b_site():
    """The demo site built with the MCP-B option on, served on a free port."""
    try:
        folder = build_site(output=CACHE / "site-mcp-b", mcp_b=True)
    except BuildError as exc:
        pytest.fail(f"site build failed: {exc}")
    server = make_server(folder, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_core_agent_scenarios_through_mcp_b(browser_without_webmcp, mcp_b_site):
    log = PageLog()
    context, page = new_recorded_page(browser_without_webmcp, log)
    try:
        status = core_agent_scenario(McpBPage(page), log, mcp_b_site)
        assert status["polyfill"] == "mcp-b"
        assert any(u.endswith("/extensions/jupyterlab-webmcp-bridge/static/mcp-b/global.iife.js") for u in log.requests)
        # the MCP-B layer an agent connects to lists the same tools
        listed = page.evaluate("async () => (await navigator.modelContextTesting.listTools()).map(t => t.name)")
        assert set(listed) == {t["name"] for t in McpBTools(page).tools()} and len(listed) == status["tools"]
        assert page.evaluate("() => window.__webModelContextOptions.transport.tabServer.allowedOrigins") == [mcp_b_site]
        # an MCP client connected over the tab transport lists the same tools and calls one
        session = page.evaluate(TAB_CLIENT_JS, ["jupyter_get_cells", {}])
        assert session["init"]["result"]["serverInfo"]["name"], session["init"]
        assert {t["name"] for t in session["list"]["result"]["tools"]} == set(listed), session["list"]
        called = session["call"]["result"]
        assert called.get("isError") is not True, called
        cells = json.loads(called["content"][0]["text"])["cells"]
        assert [c["id"] for c in cells] == [
            c["id"] for c in McpBTools(page).call_tool("jupyter_get_cells", {})["structuredContent"]["cells"]
        ]

        # MCP-B keeps the tools' outputSchema and checks every result against it: calls through its MCP server succeed
        assert status["outputSchema"] == {"state": "kept"}, status
        name = "jupyterlite-empty.ipynb"
        cell = tool_payload(
            mcp(page, ("tools/call", {"name": "jupyter_insert_cell", "arguments": {"source": "print(6 * 7)"}}))[0]
        )["cell"]
        ran, listed = mcp(
            page,
            ("tools/call", {"name": "jupyter_run_cells", "arguments": {"cellIds": [cell["id"]]}}),
            (
                "tools/call",
                {"name": "jupyter_get_cells", "arguments": {"cellIds": [cell["id"]], "includeOutputs": True}},
            ),
        )
        assert tool_payload(ran)["results"][0]["status"] == "ok"
        listing = tool_payload(listed)
        # on MCP-B both parts of a result hold the payload (an MCP host shows the model one of them)
        assert json.loads(listed["result"]["content"][0]["text"]) == listing
        output = {"uri": f"{listing['uri']}/cells/{cell['id']}/outputs/{listing['cells'][0]['outputs'][0]['index']}"}
        # the same addresses as MCP resources: three templates, reads with cache hints, a missing notebook an error
        assert status["resources"] == 3
        templates, read_output, read_cell, missing = mcp(
            page,
            ("resources/templates/list", {}),
            ("resources/read", {"uri": output["uri"]}),
            ("resources/read", {"uri": f"notebook://{name}/cells/{cell['id']}"}),
            ("resources/read", {"uri": "notebook://nope.ipynb"}),
        )
        assert [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]] == [
            "notebook://{+path}/cells/{cellId}/outputs/{index}",
            "notebook://{+path}/cells/{cellId}",
            "notebook://{+path}",
        ]
        assert read_output["result"]["contents"] == [{"uri": output["uri"], "mimeType": "text/plain", "text": "42\n"}]
        assert (read_output["result"]["ttlMs"], read_output["result"]["cacheScope"]) == (60_000, "private")
        cell_json = json.loads(read_cell["result"]["contents"][0]["text"])
        assert cell_json["cells"][0]["source"] == "print(6 * 7)" and read_cell["result"]["ttlMs"] == 1000
        assert "NOTEBOOK_NOT_FOUND" in missing["error"]["message"]
        assert log.own_page_errors() == []
    finally:
        context.close()


def test_without_the_option_no_mcp_b_runtime_is_loaded(page_without_webmcp, page_without_webmcp_log, site_url):
    """The demo site (option off) in the same browser: nothing polyfills WebMCP; the bridge says unavailable."""
    status = open_notebook(page_without_webmcp, site_url, "jupyterlite-empty.ipynb")
    assert status["state"] == "unavailable" and status["polyfill"] is None
    assert not any("/mcp-b/" in u for u in page_without_webmcp_log.requests)
    config = json.loads((ROOT / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert "webmcpBridgePolyfill" not in config


def test_mcp_hints_and_the_guidance_prompt_through_mcp_b(browser_without_webmcp, mcp_b_site):
    """An MCP client on MCP-B's tab transport sees every tool's MCP hints in tools/list (deletes, overwrites, restarts
    marked destructive; reads idempotent; none open world) and the guidance as the prompt jupyter_guidance, the same
    text jupyter_get_context gives with includeGuidance. MCP-B's listing leaves WebMCP's untrustedContentHint and
    consequentialHint out."""
    log = PageLog()
    context, page = new_recorded_page(browser_without_webmcp, log)
    try:
        status = open_notebook(page, mcp_b_site, "jupyterlite-empty.ipynb")
        assert status["state"] == "ready" and status["polyfill"] == "mcp-b" and status["prompts"] == 1
        listed, prompts, prompt, ctx = mcp(
            page,
            ("tools/list", {}),
            ("prompts/list", {}),
            ("prompts/get", {"name": "jupyter_guidance"}),
            ("tools/call", {"name": "jupyter_get_context", "arguments": {"includeGuidance": True}}),
        )
        hints = {t["name"]: t.get("annotations", {}) for t in listed["result"]["tools"]}
        assert len(hints) == status["tools"]
        for name in (
            "jupyter_delete_cell",
            "jupyter_update_cell",
            "jupyter_clear_outputs",
            "jupyter_kernel_action",
            "jupyter_write_file",
            "jupyter_save_notebook",
            "jupyter_run_code",
        ):
            assert hints[name]["destructiveHint"] is True and hints[name]["readOnlyHint"] is False, (name, hints[name])
        for name in ("jupyter_insert_cell", "jupyter_move_cell", "jupyter_create_comment"):
            assert hints[name]["destructiveHint"] is False, (name, hints[name])
        assert (
            hints["jupyter_get_cells"]["readOnlyHint"] is True and hints["jupyter_get_cells"]["idempotentHint"] is True
        )
        assert hints["jupyter_insert_cell"]["idempotentHint"] is False
        builtin = {name: h for name, h in hints.items() if name.startswith("jupyter_")}
        assert all(h["openWorldHint"] is False for h in builtin.values())
        assert not any("untrustedContentHint" in h or "consequentialHint" in h for h in hints.values())
        # the guidance prompt
        [entry] = [p for p in prompts["result"]["prompts"] if p["name"] == "jupyter_guidance"]
        assert "Propose mode" in entry["description"]
        [message] = prompt["result"]["messages"]
        guidance = tool_payload(ctx)["guidance"]
        assert message == {"role": "user", "content": {"type": "text", "text": guidance}}
        assert guidance.startswith("How to work in this notebook page") and "course/answers/" in guidance
        assert log.own_page_errors() == []
    finally:
        context.close()
