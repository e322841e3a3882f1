"""The loader's cancel fallback, end to end: a call whose ``execute`` got no AbortSignal (a runtime that passes
none, as the MCP-B runtime does) is stopped by WebMCP's ``toolcancel`` event on ``document.modelContext`` when it
is the only running call of the tool the event names; with two such calls running, none is stopped.

Real Chromium with native WebMCP. An init script (NO_SIGNAL) makes the page's ``registerTool`` hand the browser an
``execute`` that passes the tool's input only, so every call reaches the loader without a signal, as from such a
runtime. The agent invokes tools through the DevTools protocol's ``WebMCP`` domain (the answer arrives as
``WebMCP.toolResponded``), and the cancel is the event in the shape the WebMCP draft defines and this Chromium
fires itself: ``new ToolCancelEvent('toolcancel', {toolName})`` dispatched at ``document.modelContext``. What the
person sees is read from the page."""

from __future__ import annotations

import json

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, open_notebook, result_payload
from test_dialogs_abort import DevToolsWebMCP, assert_clean, call, collected, ok
from test_propose_browser import set_setting

NOTEBOOK = "jupyterlite-empty.ipynb"

#: registerTool wrapped before the page's scripts run: the browser's execute(input, {signal}) reaches the loader as
#: execute(input); window.__executions counts the calls per tool as they reach the loader
NO_SIGNAL = """(() => {
    const proto = Object.getPrototypeOf(document.modelContext);
    const register = proto.registerTool;
    window.__executions = {};
    proto.registerTool = function (tool, options) {
        const execute = tool.execute;
        const unsignalled = input => {
            window.__executions[tool.name] = (window.__executions[tool.name] || 0) + 1;
            return execute(input);
        };
        return register.call(this, { ...tool, execute: unsignalled }, options);
    };
})();"""
TOOL_CANCEL = "name => document.modelContext.dispatchEvent(new ToolCancelEvent('toolcancel', { toolName: name }))"
COUNT_INTERRUPTS = """() => {  // count the interrupts the bridge asks for
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const interrupt = kernel.interrupt.bind(kernel);
    window.interrupts = 0;
    kernel.interrupt = () => { window.interrupts += 1; return interrupt(); };
}"""
OUTPUTS = "() => [...document.querySelectorAll('.jp-OutputArea-output')].map(n => n.textContent.trim())"


def answer(devtools: DevToolsWebMCP, invocation: str) -> tuple[dict, bool]:
    """The agent's answer to a DevTools invocation the browser did not cancel itself: (payload, isError)."""
    response = devtools.response(invocation, timeout_ms=KERNEL_TIMEOUT_MS)
    assert response["status"] == "Completed", response
    result = response["output"]
    if isinstance(result, str):
        result = json.loads(result)
    return result_payload(result), result["isError"]


def executions(page: Page, tool: str) -> int:
    return page.evaluate("tool => window.__executions[tool] || 0", tool)


def wait_idle(page: Page) -> None:
    """JupyterLite's kernel cannot stop a running cell (docs/TOOLS.md, "Aborting a call"): wait until it ends."""
    for _ in range(120):
        if ok(page, "jupyter_get_context")["kernel"]["status"] == "idle":
            return
        page.wait_for_timeout(500)
    raise AssertionError("the kernel stayed busy")


def test_a_toolcancel_event_stops_the_one_run_or_wait_of_that_tool(page: Page, page_log, site_url):
    page.context.add_init_script(script=NO_SIGNAL)
    open_notebook(page, site_url, NOTEBOOK)
    collected(page, ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS))  # the kernel is up
    assert executions(page, "jupyter_run_cells") == 1  # the calls come through the signal-less execute
    slow = ok(
        page, "jupyter_insert_cell", {"source": "import time\nprint('start', flush=True)\ntime.sleep(8)\nprint('end')"}
    )["cell"]
    after = ok(page, "jupyter_insert_cell", {"source": "print('after')"})["cell"]
    page.evaluate(COUNT_INTERRUPTS)
    devtools = DevToolsWebMCP(page)

    # a run: cancelled by the event while its first cell runs
    invocation = devtools.invoke("jupyter_run_cells", {"cellIds": [slow["id"], after["id"]]})
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('start'))",
        timeout=KERNEL_TIMEOUT_MS,
    )
    assert page.evaluate(TOOL_CANCEL, "jupyter_run_cells") is True
    stopped, is_error = answer(devtools, invocation)  # the browser did not answer for the page: the bridge did
    assert is_error is True and stopped["error"] == "ABORTED" and stopped["tool"] == "jupyter_run_cells", stopped
    assert page.evaluate("() => window.interrupts") == 1  # the bridge interrupted the kernel
    assert page.evaluate("() => window.webmcpBridge.status.recent[0]").startswith("jupyter_run_cells ABORTED")
    wait_idle(page)
    cells = {
        c["id"]: c
        for c in ok(page, "jupyter_get_cells", {"cellIds": [slow["id"], after["id"]], "includeOutputs": True})["cells"]
    }
    assert cells[after["id"]]["executionCount"] is None and "outputs" not in cells[after["id"]]
    outputs = page.evaluate(OUTPUTS)
    assert "start" in "".join(outputs) and "after" not in outputs  # what the person sees

    # the kernel is usable afterwards
    probe = ok(page, "jupyter_insert_cell", {"source": "print(6 * 7)"})["cell"]
    ran = collected(page, ok(page, "jupyter_run_cells", {"cellIds": [probe["id"]]}, timeout=KERNEL_TIMEOUT_MS))
    assert ran["results"][0]["status"] == "ok" and ran["results"][0]["outputs"][0]["preview"] == "42\n", ran

    # a wait for a pending run: the event stops the wait and the run it waited for
    set_setting(page, "executionTimeout", 2)  # the run goes pending after 2 s instead of 20
    pending = ok(page, "jupyter_run_cells", {"cellIds": [slow["id"], after["id"]]})
    assert pending["status"] == "pending" and pending["tool"] == "jupyter_run_cells", pending
    waits = executions(page, "jupyter_wait_for_result")
    invocation = devtools.invoke("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
    page.wait_for_function(
        "n => (window.__executions.jupyter_wait_for_result || 0) > n", arg=waits, timeout=KERNEL_TIMEOUT_MS
    )
    assert page.evaluate(TOOL_CANCEL, "jupyter_wait_for_result") is True
    waited, is_error = answer(devtools, invocation)
    assert is_error is True and waited["error"] == "ABORTED", waited
    assert waited["pendingId"] == pending["pendingId"] and waited["pendingTool"] == "jupyter_run_cells"
    assert waited["stopped"] is True, waited
    assert page.evaluate("() => window.interrupts") == 2  # the run was stopped too
    final, is_error = call(page, "jupyter_wait_for_result", {"pendingId": pending["pendingId"]}, timeout=60_000)
    while final.get("status") == "pending":  # the interrupted run is given a few seconds to end first
        final, is_error = call(page, "jupyter_wait_for_result", {"pendingId": pending["pendingId"]}, timeout=60_000)
    assert is_error is True and final["error"] == "ABORTED" and final["tool"] == "jupyter_run_cells", final
    wait_idle(page)
    (left,) = ok(page, "jupyter_get_cells", {"cellIds": [after["id"]], "includeOutputs": True})["cells"]
    assert "outputs" not in left  # the cell after the running one never ran
    assert "after" not in page.evaluate(OUTPUTS)
    assert_clean(page_log, site_url)


def test_a_toolcancel_event_stops_no_call_when_two_of_that_tool_run(page: Page, page_log, site_url):
    page.context.add_init_script(script=NO_SIGNAL)
    warnings: list[str] = []
    page.on("console", lambda message: message.type == "warning" and warnings.append(message.text))
    open_notebook(page, site_url, NOTEBOOK)
    collected(page, ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS))  # the kernel is up
    slow = ok(
        page, "jupyter_insert_cell", {"source": "import time\nprint('start', flush=True)\ntime.sleep(4)\nprint('end')"}
    )["cell"]
    second = ok(page, "jupyter_insert_cell", {"source": "print('second')"})["cell"]
    page.evaluate(COUNT_INTERRUPTS)
    devtools = DevToolsWebMCP(page)
    runs = executions(page, "jupyter_run_cells")

    first_call = devtools.invoke("jupyter_run_cells", {"cellIds": [slow["id"]]})
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('start'))",
        timeout=KERNEL_TIMEOUT_MS,
    )
    second_call = devtools.invoke("jupyter_run_cells", {"cellIds": [second["id"]]})
    page.wait_for_function(
        "n => window.__executions.jupyter_run_cells === n", arg=runs + 2, timeout=KERNEL_TIMEOUT_MS
    )  # both calls are in the loader
    assert page.evaluate(TOOL_CANCEL, "jupyter_run_cells") is True

    first, is_error = answer(devtools, first_call)
    assert is_error is False and first["results"][0]["status"] == "ok", first
    assert [o["preview"] for o in first["results"][0]["outputs"]] in (["start\n", "end\n"], ["start\nend\n"]), first
    last, is_error = answer(devtools, second_call)
    assert is_error is False and last["results"][0]["status"] == "ok", last
    assert last["results"][0]["outputs"][0]["preview"] == "second\n", last
    assert page.evaluate("() => window.interrupts") == 0  # nothing was stopped
    assert [w for w in warnings if "toolcancel" in w] == [
        "[webmcp-bridge] toolcancel for jupyter_run_cells: 2 calls run, none stopped"
    ]
    outputs = page.evaluate(OUTPUTS)
    assert "second" in outputs and "end" in "".join(outputs)  # what the person sees: both ran
    assert_clean(page_log, site_url)
