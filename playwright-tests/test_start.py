"""The bridge's start as a person and an agent meet it on a cold page whose Python is slow to come (the test holds the
runtime's wasm, so the bridge's Python cannot start until it lets it go):

- the Agent panel is in the right sidebar once JupyterLab is restored, drawn by the loader before Python is up,
  with the start-up's step, which the status item says too; once Python is up its panel takes the same tab over;
- an agent's call made then is answered ``pending`` with the loader's own id within the loader's bound instead of
  leaving the client waiting, a collect of that id while Python is still not up is answered ``pending`` again, and
  once Python is up ``jupyter_wait_for_result`` collects the call's real result.

The service worker is blocked so that the worker's requests reach the test's route (docs: PLATFORM, Playwright's
``page.route`` does not see a dedicated worker's requests while JupyterLite's service worker runs)."""

from __future__ import annotations

import json

from lite_site import BRIDGE_TIMEOUT_MS, PageLog, bridge_status, lab_url, record_page_error, wait_for_bridge

NOTEBOOK = "notebook-running-code.ipynb"
WASM = "**/pyodide.asm.wasm"
PANEL = "#webmcp-bridge-panel"
TAB = 'li.lm-TabBar-tab[data-id="webmcp-bridge-panel"]'

#: an agent's call on the page (native WebMCP), its answer's payload and isError
CALL = """async ([name, args]) => {
    const tool = (await document.modelContext.getTools()).find(t => t.name === name);
    const answer = await document.modelContext.executeTool(tool, args);
    const result = typeof answer === 'string' ? JSON.parse(answer) : answer;
    return [JSON.parse(result.content[0].text), result.isError];
}"""


#: the one uncaught error JupyterLite raises on a page whose service worker is blocked (its service worker manager's
#: rejection has no reason: message "undefined", no stack), seen on the site before this feature too
SERVICE_WORKER_BLOCKED = ("undefined", "")


class HeldRuntime:
    """A fresh context (service worker blocked) whose requests for the runtime's wasm wait until :meth:`release`."""

    def __init__(self, browser) -> None:
        self.log = PageLog()
        self.context = browser.new_context(service_workers="block")
        self.held: list = []
        self.released = False
        self.context.route(WASM, self._hold)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: record_page_error(self.log, error))

    def _hold(self, route) -> None:
        if self.released:
            route.continue_()
        else:
            self.held.append(route)

    def wait_until_held(self) -> None:
        """Wait until the bridge's start asked for the wasm (it starts once the page is idle or an agent calls)."""
        for _ in range(1200):
            if self.held:
                return
            self.page.wait_for_timeout(100)
        raise AssertionError("the runtime's wasm was never requested")

    def release(self) -> None:
        self.released = True
        for route in self.held:
            route.continue_()

    def page_errors(self) -> list[tuple[str, str]]:
        """The page's uncaught errors but :data:`SERVICE_WORKER_BLOCKED`."""
        return [error for error in self.log.page_error_stacks if error != SERVICE_WORKER_BLOCKED]

    def close(self) -> None:
        self.context.close()


def test_the_agent_panel_and_its_start_step_show_before_python_is_up_and_the_panel_takes_the_tab_over(
    browser, site_url
):
    held = HeldRuntime(browser)
    page = held.page
    try:
        page.goto(lab_url(site_url, NOTEBOOK, toolsets=None))
        page.wait_for_function("() => window.jupyterapp", timeout=BRIDGE_TIMEOUT_MS)
        page.evaluate("() => window.jupyterapp.restored")
        # once JupyterLab is restored the panel's tab is there, before any of the bridge's Python ran
        page.locator(TAB).wait_for(timeout=BRIDGE_TIMEOUT_MS)
        assert bridge_status(page)["state"] == "loading"
        page.locator(TAB).click()  # the person opens it
        panel = page.locator(PANEL)
        panel.wait_for(state="visible")
        held.wait_until_held()
        page.wait_for_function(
            "() => window.webmcpBridge.status.step === 'runtime'", timeout=BRIDGE_TIMEOUT_MS
        )  # the worker's stage reaches the page as a message
        text = panel.inner_text()
        assert "The agent bridge is starting…" in text
        assert "Python runtime …" in text and "Packages" in text and "Tools" in text
        assert page.locator("#webmcp-bridge-status").inner_text() == "WebMCP: starting (Python runtime)…"
        assert bridge_status(page)["state"] == "loading"
        held.release()
        status = wait_for_bridge(page)
        assert status["state"] == "ready", status
        # Python's panel took the same widget over: the tab stayed open, its content is the panel's own
        page.locator(f'{PANEL} [data-role="activity-list"]').wait_for(timeout=BRIDGE_TIMEOUT_MS)
        assert panel.is_visible()
        assert "The agent bridge is starting" not in panel.inner_text()
        assert page.locator(TAB).count() == 1
        assert page.locator(PANEL).count() == 1
        assert held.page_errors() == []
    finally:
        held.close()


def test_a_call_made_while_python_cannot_start_is_answered_pending_and_collected_once_it_is_up(browser, site_url):
    held = HeldRuntime(browser)
    page = held.page
    try:
        page.goto(lab_url(site_url, NOTEBOOK, toolsets=None))
        page.wait_for_function(
            "() => window.webmcpBridge && window.webmcpBridge.status.timings.toolsRegistered",
            timeout=BRIDGE_TIMEOUT_MS,
        )
        # the agent's first call: Python cannot come while the wasm is held, and the call is not left waiting
        payload, failed = page.evaluate(CALL, ["jupyter_get_context", {}])
        assert held.held, "the call started the bridge, whose runtime is held"
        assert failed is False
        assert payload["status"] == "pending" and payload["pendingId"] == "s-1", payload
        assert payload["tool"] == "jupyter_get_context"
        assert "jupyter_wait_for_result" in payload["message"]
        # collected while Python is still not up: the same call, still pending
        again, failed = page.evaluate(CALL, ["jupyter_wait_for_result", {"pendingId": "s-1"}])
        assert (again["status"], again["pendingId"], failed) == ("pending", "s-1", False), again
        held.release()
        for _ in range(30):  # each collect waits at most the bound (a slow machine's start may outlast one)
            result, failed = page.evaluate(CALL, ["jupyter_wait_for_result", {"pendingId": "s-1"}])
            if result.get("status") != "pending":
                break
        assert failed is False, result
        direct, _ = page.evaluate(CALL, ["jupyter_get_context", {}])  # Python is up: answered as usual
        assert "status" not in result and "notebook" in result and "kernel" in result, result
        assert json.dumps(result["notebook"]) == json.dumps(direct["notebook"])
        assert [p["pendingId"] for p in direct["pending"]] == ["s-1"]  # collected by the loader's id
        assert held.page_errors() == []
    finally:
        held.close()
