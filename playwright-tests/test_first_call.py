"""An agent's first call on a cold page: ``jupyter_toolsets {"enable": ["review"]}`` made while the bridge's Python is
still starting (the loader holds it until Python connects) answers only once the tools it reports are registered,
in native WebMCP and through the MCP-B runtime. The bridge's wheel is held back by the test until the call is
queued, so the call is the page's first whatever the machine's speed."""

from __future__ import annotations

import json

from lite_site import BRIDGE_TIMEOUT_MS, PageLog, lab_url, new_recorded_page
from test_mcp_b import mcp_b_site  # noqa: F401  (the module fixture: the demo site built with the MCP-B option)
from test_platform_browser import toolset_tools

NOTEBOOK = "notebook-running-code.ipynb"
WHEEL = "**/extensions/jupyterlab-webmcp-bridge/static/webmcp_bridge-*.whl"

#: the agent's call, started on the page and left running (``args_as_text``: MCP-B's executeTool takes JSON text)
START_CALL = """([name, args, argsAsText]) => {
    window.firstCall = (async () => {
        const tool = (await document.modelContext.getTools()).find(t => t.name === name);
        const result = await document.modelContext.executeTool(tool, argsAsText ? JSON.stringify(args) : args);
        window.firstCallAnswered = true;
        return typeof result === 'string' ? JSON.parse(result) : result;
    })();
}"""
TOOL_NAMES = "async () => (await document.modelContext.getTools()).map(t => t.name)"


def first_call_enables_review(page, site_url: str, args_as_text: bool) -> None:
    held: list = []
    released: list = []

    def hold(route) -> None:  # the wheel waits until the agent's call is queued; later requests go through
        if released:
            route.continue_()
        else:
            held.append(route)

    page.context.route(WHEEL, hold)
    page.goto(lab_url(site_url, NOTEBOOK, toolsets=None))
    default = toolset_tools("notebooks", "calls", "toolsets")
    # the loader registers the default page's tools from tools.json before Python starts
    page.wait_for_function(
        "() => window.webmcpBridge && window.webmcpBridge.status.timings.toolsRegistered", timeout=BRIDGE_TIMEOUT_MS
    )
    assert set(page.evaluate(TOOL_NAMES)) == default
    page.evaluate(START_CALL, ["jupyter_toolsets", {"enable": ["review"]}, args_as_text])
    for _ in range(1200):  # the wheel is requested once Pyodide and pydantic are loaded
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the bridge's wheel was never requested"
    # queued: Python is not up yet (or, past the loader's bound on a slow machine, answered pending with its own id)
    early = page.evaluate("async () => window.firstCallAnswered === undefined ? null : await window.firstCall")
    assert early is None or json.loads(early["content"][0]["text"])["pendingId"].startswith("s-"), early
    released.append(True)
    for route in held:
        route.continue_()
    answer = page.evaluate("async () => await window.firstCall")
    payload = json.loads(answer["content"][0]["text"])
    for _ in range(30):  # a machine slower than the loader's bound: the call went pending, collected as an agent does
        if payload.get("status") != "pending":
            break
        page.evaluate(START_CALL, ["jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, args_as_text])
        answer = page.evaluate("async () => await window.firstCall")
        payload = json.loads(answer["content"][0]["text"])
    wanted = default | toolset_tools("review")
    assert answer["isError"] is False and payload["changed"] == ["review"], payload
    assert payload["registeredToolCount"] == len(wanted) == 27
    # when the tool answers, the tools it reports are the page's (on the old code the page kept its 20 for good)
    assert set(page.evaluate(TOOL_NAMES)) == wanted


def test_a_toolset_turned_on_by_the_first_call_is_registered_when_it_answers(page, page_log, site_url):
    first_call_enables_review(page, site_url, args_as_text=False)
    assert page_log.own_page_errors() == []


def test_a_toolset_turned_on_by_the_first_call_through_mcp_b_is_registered_when_it_answers(
    browser_without_webmcp,
    mcp_b_site,  # noqa: F811
):
    log = PageLog()
    context, page = new_recorded_page(browser_without_webmcp, log)
    try:
        first_call_enables_review(page, mcp_b_site, args_as_text=True)
        listed = page.evaluate("async () => (await navigator.modelContextTesting.listTools()).map(t => t.name)")
        assert len(listed) == 27
        assert log.own_page_errors() == []
    finally:
        context.close()
