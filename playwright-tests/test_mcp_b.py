"""Browsers without native WebMCP: on a site that turns the MCP-B option on (``"webmcpBridgePolyfill": true`` in
jupyter-lite.json; ``python build.py --mcp-b``), the loader runs the @mcp-b/global runtime shipped in the
extension and the same tools reach an agent through it. Run in Chromium launched without the WebMCP flag."""

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
        assert any(u.endswith("/extensions/webmcp-bridge/static/mcp-b/global.iife.js") for u in log.requests)
        # the MCP-B layer an agent connects to lists the same tools
        listed = page.evaluate("async () => (await navigator.modelContextTesting.listTools()).map(t => t.name)")
        assert set(listed) == {t["name"] for t in McpBTools(page).tools()} and len(listed) == status["tools"]
        assert page.evaluate("() => window.__webModelContextOptions.transport.tabServer.allowedOrigins") == [mcp_b_site]
    finally:
        context.close()


def test_without_the_option_no_mcp_b_runtime_is_loaded(page_without_webmcp, page_without_webmcp_log, site_url):
    """The demo site (option off) in the same browser: nothing polyfills WebMCP; the bridge says unavailable."""
    status = open_notebook(page_without_webmcp, site_url, "jupyterlite-empty.ipynb")
    assert status["state"] == "unavailable" and status["polyfill"] is None
    assert not any("/mcp-b/" in u for u in page_without_webmcp_log.requests)
    config = json.loads((ROOT / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert "webmcpBridgePolyfill" not in config
