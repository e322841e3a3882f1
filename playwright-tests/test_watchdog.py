"""The worker's watchdog: a call that holds the bridge's Python (here a site's own tool caught in an endless loop, as
a site author's bug or a pathological input would) is ended within the loader's bound: the worker is stopped and a new
one started, the agent gets a TIMEOUT error that says the bridge restarted, the Agent panel comes back with the new
worker (its tab open again, the placeholder saying why meanwhile) and the agent's next call is answered as usual.

The site's tool comes as the site's own contribution file (``webmcpBridgeContributions``), which the test adds to the
served page configuration and serves itself; the service worker is blocked so the worker's fetch of it reaches the
test's route."""

from __future__ import annotations

import json

from lite_site import BRIDGE_TIMEOUT_MS, bridge_status, lab_url, wait_for_bridge
from test_start import CALL, PANEL, TAB, HeldRuntime

NOTEBOOK = "notebook-running-code.ipynb"
SPIN_FILE = ".webmcp/spin_tools.py"
#: a site's tool whose handler never returns nor yields
SPIN_TOOLS = """
from webmcp_bridge.contrib import Annotations, Contribution, Tool, Toolset, ToolInput


class SpinInput(ToolInput):
    pass


async def spin(ctx, args):
    while True:
        pass


CONTRIBUTIONS = [Contribution("spin", toolsets=(Toolset("spin", "A tool that never ends.", (
    Tool("spin_forever", "Spin", "Never returns.", SpinInput, spin, Annotations(read_only=True)),)),))]
"""


def add_the_spinning_tool(context) -> None:
    """The page configuration lists the spinning tool's file, which the test serves."""

    def config(route) -> None:
        response = route.fetch()
        data = response.json()
        extra = data.get("jupyter-config-data", {})
        if "webmcpBridgeContributions" in extra:
            extra["webmcpBridgeContributions"] = [*extra["webmcpBridgeContributions"], SPIN_FILE]
        route.fulfill(response=response, body=json.dumps(data))

    context.route("**/jupyter-lite.json", config)
    context.route(f"**/files/{SPIN_FILE}", lambda route: route.fulfill(body=SPIN_TOOLS, content_type="text/x-python"))


def test_a_call_that_holds_the_worker_is_ended_the_worker_restarted_and_the_next_call_answered(browser, site_url):
    held = HeldRuntime(browser)  # nothing held: its context blocks the service worker and records page errors
    held.release()
    page = held.page
    try:
        add_the_spinning_tool(held.context)
        page.goto(lab_url(site_url, NOTEBOOK, toolsets="default,spin"))
        status = wait_for_bridge(page)
        assert status["state"] == "ready" and status["thread"] == "worker", status
        page.locator(TAB).click()  # the person has the Agent panel open
        page.locator(f'{PANEL} [data-role="activity-list"]').wait_for(timeout=BRIDGE_TIMEOUT_MS)

        payload, failed = page.evaluate(CALL, ["spin_forever", {}])
        assert failed is True
        assert payload["error"] == "TIMEOUT" and payload["bridgeRestarted"] is True, payload
        assert payload["tool"] == "spin_forever" and payload["running"] == ["spin_forever"], payload
        assert "restarted" in payload["message"], payload
        restarted = bridge_status(page)["worker"]
        assert restarted["restarts"] == 1 and restarted["restarted"]["tools"] == ["spin_forever"], restarted

        # the new worker's session: ready again, its panel back in the open tab, the status item saying what happened
        status = wait_for_bridge(page)
        assert status["state"] == "ready" and status["thread"] == "worker", status
        page.locator(f'{PANEL} [data-role="activity-list"]').wait_for(timeout=BRIDGE_TIMEOUT_MS)
        assert page.locator(PANEL).is_visible() and page.locator(TAB).count() == 1
        assert "restarted 1×" in page.locator("#webmcp-bridge-status").get_attribute("title")
        cells, failed = page.evaluate(CALL, ["jupyter_get_cells", {"startIndex": 0, "endIndex": 2}])
        assert failed is False and len(cells["cells"]) == 2, cells
        assert held.page_errors() == []
    finally:
        held.close()
