"""The bridge's Python in its dedicated worker, end to end (docs/WORKER.md, "Choosing the thread"): the demo site
opened with
``?webmcpBridgeThread=worker`` on the cross-origin isolated server (the worker crosses through shared memory) and on a
server without COOP/COEP headers (JSPI), the agent acting through native WebMCP (``page.webmcp``, and the DevTools
protocol's WebMCP domain to abort an invocation), compared with the same page in today's main-thread mode.

Checked: the status reaches ready with the tools main mode registers; a read of a real bundled notebook answers as in
main mode and an update lands in the page's notebook model; ``jupyter_toolsets`` changes the registered tools; Python
is not on the page's main thread (no Pyodide loaded there, no long script of the bridge's in a long animation frame,
which main mode does show); an aborted call stops. Every wait is bounded."""

from __future__ import annotations

import re
import shutil

import pytest
from playwright.sync_api import Page

from lite_site import (
    KERNEL_TIMEOUT_MS,
    PageLog,
    bring_to_front,
    lab_url,
    new_recorded_page,
    result_payload,
    serve,
    wait_for_bridge,
)

READY_MS = 180_000
NOTEBOOK = "pytudes-euler.ipynb"
#: the source of a script the bridge runs on the page: the loader and its modules, the JS halves
#: (``webmcp-bridge/...``), the Pyodide runtime (the site's ``static/pyodide/``, which the kernel runs in its own
#: worker, or the one shipped beside the loader). A frame's script entry names the function's source; its invoker
#: only says how it was entered (JupyterLab's handler of the loader's script element loading is JupyterLab's work),
#: and the kernel extension's own main-thread code (``@jupyterlite/pyodide-kernel-extension``) is not the bridge's.
BRIDGE_SCRIPT = re.compile(r"jupyterlab-webmcp-bridge/static/|webmcp-bridge/|/static/pyodide/")
#: the Pyodide runtime's scripts (the loader's shipped copy or the site's ``static/pyodide/``)
RUNTIME_SCRIPT = re.compile(r"/static/pyodide/|/pyodide(\.asm)?\.m?js")
#: the shortest script stretch that is a long task (ms; the Long Tasks API's threshold), for the printed figure
LONG_MS = 50

#: installed before any script of the page: every script of every long animation frame, kept on window
OBSERVE_FRAMES = """(() => {
  window.__scripts = [];
  window.__longTasks = 0;
  try {
    new PerformanceObserver(list => {
      for (const frame of list.getEntries()) for (const s of frame.scripts || [])
        window.__scripts.push({ url: String(s.sourceURL || ''), invoker: String(s.invoker || ''),
                                duration: Math.round(s.duration) });
    }).observe({ type: 'long-animation-frame', buffered: true });
    new PerformanceObserver(list => { window.__longTasks += list.getEntries().length; })
      .observe({ type: 'longtask', buffered: true });
  } catch (error) { window.__scripts = null; }
})()"""

#: the registered tools' names, sorted
TOOL_NAMES = "async () => (await document.modelContext.getTools()).map(t => t.name).sort()"


def call(page: Page, name: str, args: dict | None = None, timeout: float = 60_000) -> dict:
    """Call a tool as the agent; return its payload (the envelope checked, isError False)."""
    result = page.webmcp.call_tool(name, args or {}, timeout=timeout)
    payload = result_payload(result)
    assert result["isError"] is False, payload
    return payload


def facts(page: Page) -> dict:
    """What the page shows of where the bridge's Python runs, read once the bridge is ready."""
    return page.evaluate(
        """() => ({
        status: JSON.parse(JSON.stringify(window.webmcpBridge.status)),
        shown: document.getElementById('webmcp-bridge-status')?.textContent ?? null,
        pyodideOnPage: typeof window.pyodide !== 'undefined' || typeof window.loadPyodide !== 'undefined',
        runtimeFetched: performance.getEntriesByType('resource').map(e => e.name)
          .filter(name => /pyodide\\.asm\\.wasm|\\.whl$/.test(name)),
        wasm: window.webmcpBridge.wasmMemoryBytes ? window.webmcpBridge.wasmMemoryBytes() : null,
        scripts: window.__scripts,
        longTasks: window.__longTasks,
    })"""
    )


def scenario(page: Page) -> dict:
    """The agent's calls made on every page, whose answers are compared between the modes: a read of the first cells,
    an update of cell 1 (what the page's notebook model then holds), a toolset turned on."""
    read = call(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 3})
    cell = read["cells"][1]
    source = "# edited by the agent\nx = 1 + 1\n"
    updated = call(
        page, "jupyter_update_cell", {"cellId": cell["id"], "source": source, "expectedSourceHash": cell["sourceHash"]}
    )
    model = page.evaluate(
        "id => { const cells = window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells;"
        " return cells.find(c => c.id === id)?.getSource() ?? null; }",
        cell["id"],
    )
    before = page.evaluate(TOOL_NAMES)
    turned = call(page, "jupyter_toolsets", {"enable": ["review"]})
    page.wait_for_function(
        "n => window.webmcpBridge.status.state === 'ready' && window.webmcpBridge.status.tools > n",
        arg=len(before),
        timeout=30_000,
    )
    review = next(ts for ts in turned["toolsets"] if ts["name"] == "review")
    return {
        "read": read,
        "updated": updated,
        "model": model,
        "source": source,
        "before": before,
        "after": page.evaluate(TOOL_NAMES),
        "review": review,
    }


def open_page(browser, url: str, thread: str) -> tuple:
    """A fresh context on the demo notebook with the page's default toolsets and ``thread``; returns (context, page,
    log, facts, scenario)."""
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.add_init_script(OBSERVE_FRAMES)
    page.goto(lab_url(url, NOTEBOOK, toolsets=None, thread=thread))
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=READY_MS)
    bring_to_front(page, NOTEBOOK, READY_MS)
    wait_for_bridge(page, READY_MS)
    seen = facts(page)
    return context, page, log, seen, scenario(page)


@pytest.fixture(scope="module")
def main_mode(browser, site_url):
    """The same page in today's main-thread mode (isolated server): what the worker's answers are compared with."""
    context, page, log, seen, done = open_page(browser, site_url, "main")
    yield {"facts": seen, "scenario": done, "log": log}
    context.close()


@pytest.fixture(scope="module", params=["isolated", "no-headers"])
def worker_mode(request, browser, site_dir):
    """The page in worker mode: on the site's server with its headers, asked for by ?webmcpBridgeThread=worker; on a
    server without any header, the page's default thread ("auto", no parameter), which is the worker wherever the
    browser has JSPI."""
    server, url = serve(site_dir, None if request.param == "isolated" else {})
    context, page, log, seen, done = open_page(browser, url, "worker" if request.param == "isolated" else "")
    try:
        yield {"kind": request.param, "page": page, "log": log, "url": url, "facts": seen, "scenario": done}
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def bridge_long_scripts(seen: dict) -> list[dict]:
    """The bridge's scripts (by source) that ran 50 ms or more in one long animation frame of the page's main
    thread (a figure printed by the test; the benchmark measures it, a test does not assert a duration)."""
    assert seen["scripts"] is not None, "this browser has no long-animation-frame entries"
    return [s for s in seen["scripts"] if s["duration"] >= LONG_MS and BRIDGE_SCRIPT.search(s["url"])]


def runtime_scripts(scripts: list[dict]) -> list[dict]:
    """The scripts of the Pyodide runtime among a page's long-animation-frame script entries, of any duration."""
    return [s for s in scripts if RUNTIME_SCRIPT.search(s["url"])]


def test_the_worker_reaches_ready_with_the_tools_of_main_mode(worker_mode, main_mode):
    """The status item says ready with the count main mode shows, the same tools are registered, and the status
    says where Python runs: the worker, crossing by shared memory where the page is isolated, else by JSPI."""
    status, main_status = worker_mode["facts"]["status"], main_mode["facts"]["status"]
    assert status["state"] == "ready" and status["thread"] == "worker" and main_status["thread"] == "main"
    assert status["threadAsked"] == ("worker" if worker_mode["kind"] == "isolated" else "auto")
    assert status["worker"] == {
        "mode": "sab" if worker_mode["kind"] == "isolated" else "jspi",
        "fallback": None,
        # the site's memory snapshot (docs/loader.md, 2g): on an isolated page only
        "snapshot": {"used": True, "reason": None}
        if worker_mode["kind"] == "isolated"
        else {"used": False, "reason": "the page is not cross-origin isolated (JSPI crossings)"},
    }
    assert status["tools"] == main_status["tools"] and status["failures"] == []
    assert worker_mode["scenario"]["before"] == main_mode["scenario"]["before"]
    assert worker_mode["facts"]["shown"].startswith(f"WebMCP: ready ({status['tools']} tools)")
    timings = status["timings"]
    assert timings["pythonStart"] <= timings["bridgeReady"] and "registry" in timings["python"]
    # the runtime, then the site's memory snapshot (fetched and checked; restored on an isolated page only), Python
    steps = [step[0] for step in timings["steps"]]
    assert steps[:4] == ["manifest", "runtime", "snapshot", "loadPyodide"], steps
    assert ("bridge" in steps) is (worker_mode["kind"] != "isolated"), steps  # a normal start installs the bridge
    assert worker_mode["facts"]["wasm"] > 0  # the worker's wasm memory, as its last message said


def test_reads_and_writes_answer_as_in_main_mode(worker_mode, main_mode):
    """jupyter_get_cells answers exactly what main mode answers on the same notebook; jupyter_update_cell answers
    the same and its edit is in the page's notebook model."""
    done, main = worker_mode["scenario"], main_mode["scenario"]
    assert done["read"] == main["read"] and len(done["read"]["cells"]) == 3
    assert done["updated"] == main["updated"]
    assert done["model"] == done["source"] == main["model"]


def test_a_toolset_turned_on_registers_its_tools(worker_mode, main_mode):
    """jupyter_toolsets enable review registers the review tools on the page, as in main mode."""
    done = worker_mode["scenario"]
    assert done["review"]["enabled"] is True and not set(done["review"]["tools"]) <= set(done["before"])
    assert set(done["after"]) == set(done["before"]) | set(done["review"]["tools"])
    assert done["after"] == main_mode["scenario"]["after"]


def test_python_is_not_on_the_pages_main_thread(worker_mode, main_mode):
    """In worker mode the page's main thread loads no Pyodide and no wheel, and no script of the runtime runs there
    in any long animation frame, from the page's start until after the calls; main mode, observed the same way,
    loads the runtime there and its scripts run there (Python's start-up), so the observation can tell. The
    bridge's own long scripts on the page (the loader, the halves) are printed as a figure, not asserted: their
    durations are the benchmark's (bench/run.py --thread worker), not a test's."""
    seen, main = worker_mode["facts"], main_mode["facts"]
    assert seen["pyodideOnPage"] is False and seen["runtimeFetched"] == []
    assert main["runtimeFetched"] != [] and runtime_scripts(main["scripts"]) != []
    after = worker_mode["page"].evaluate("() => window.__scripts")
    assert after is not None and runtime_scripts(after) == [], runtime_scripts(after)
    long = [
        (s["url"].rsplit("/", 1)[-1], s["invoker"][:40], s["duration"]) for s in bridge_long_scripts({"scripts": after})
    ]
    print(
        f"[{worker_mode['kind']}] long tasks on the page: {seen['longTasks']} (main mode: {main['longTasks']}); "
        f"the bridge's scripts of 50 ms or more: {long}"
    )
    assert worker_mode["log"].own_page_errors() == []
    assert worker_mode["log"].foreign_requests(worker_mode["url"]) == []


def test_an_aborted_call_stops(worker_mode):
    """A run the agent's client cancels (the DevTools protocol aborts the invocation's signal) reaches the worker's
    Python as the abort event: the call ends ABORTED (the status item's recent calls say so) and the cell after the
    sleeping one never runs."""
    page = worker_mode["page"]
    cdp = page.context.new_cdp_session(page)
    responses: dict[str, dict] = {}
    cdp.on("WebMCP.toolResponded", lambda event: responses.__setitem__(event["invocationId"], event))
    cdp.send("WebMCP.enable")
    frame = cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
    slow = call(
        page, "jupyter_insert_cell", {"source": "import time\nprint('start', flush=True)\ntime.sleep(8)\nprint('end')"}
    )["cell"]
    after = call(page, "jupyter_insert_cell", {"source": "print('after')"})["cell"]
    invocation = cdp.send(
        "WebMCP.invokeTool",
        {"frameId": frame, "toolName": "jupyter_run_cells", "input": {"cellIds": [slow["id"], after["id"]]}},
    )["invocationId"]
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('start'))",
        timeout=KERNEL_TIMEOUT_MS,
    )
    cdp.send("WebMCP.cancelInvocation", {"invocationId": invocation})
    page.wait_for_function(
        "() => window.webmcpBridge.status.recent.some(l => l.startsWith('jupyter_run_cells ABORTED'))", timeout=30_000
    )
    for _ in range(40):  # the sleeping cell ends on its own (JupyterLite's kernel cannot stop running code)
        if call(page, "jupyter_get_context")["kernel"]["status"] == "idle":
            break
        page.wait_for_timeout(500)
    cells = {c["id"]: c for c in call(page, "jupyter_get_cells", {"cellIds": [after["id"]]})["cells"]}
    assert cells[after["id"]]["executionCount"] is None
    assert responses.get(invocation, {}).get("status") == "Canceled"
    assert worker_mode["log"].own_page_errors() == []


#: installed before any script of the page: this page has no JSPI (an engine without WebAssembly.Suspending), so on a
#: server without isolation headers no worker of it could call the page synchronously
NO_JSPI = "delete WebAssembly.Suspending;"


@pytest.fixture(scope="module", params=["no-crossing", "worker-failed"])
def fallback(request, browser, site_dir, tmp_path_factory):
    """The page's default thread where the worker cannot serve: "no-crossing", a server without headers and a page
    without JSPI (the loader does not start the worker); "worker-failed", the isolated server of a copy of the site
    without the extension's worker.js (a host that does not serve it: 404). Both fall back to the main thread."""
    if request.param == "worker-failed":
        copy = tmp_path_factory.mktemp("site") / "site"
        shutil.copytree(site_dir, copy)
        (copy / "extensions" / "jupyterlab-webmcp-bridge" / "static" / "worker.js").unlink()
        site_dir = copy
    server, url = serve(site_dir, {} if request.param == "no-crossing" else None)
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    warnings: list[str] = []
    page.on("console", lambda message: warnings.append(message.text) if message.type == "warning" else None)
    if request.param == "no-crossing":
        page.add_init_script(NO_JSPI)
    page.goto(lab_url(url, NOTEBOOK, toolsets=None, thread=""))
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=READY_MS)
    bring_to_front(page, NOTEBOOK, READY_MS)
    page.wait_for_function(
        "() => ['ready', 'unavailable', 'failed'].includes(window.webmcpBridge?.status?.state)", timeout=READY_MS
    )
    try:
        seen = facts(page)
        yield {
            "kind": request.param,
            "log": log,
            "warnings": warnings,
            "url": url,
            "facts": seen,
            "scenario": scenario(page),
        }
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_the_fallback_runs_python_on_the_main_thread_and_answers_as_main_mode(fallback, main_mode):
    """Where the worker cannot serve, the default page still starts the bridge, on the main thread, and says why in
    its status (status.worker.fallback) and, for a worker that failed, in the console; the agent's read, update and
    toolset answer exactly as in main mode."""
    status = fallback["facts"]["status"]
    assert status["state"] == "ready" and status["threadAsked"] == "auto" and status["thread"] == "main"
    assert status["tools"] == main_mode["facts"]["status"]["tools"] and status["failures"] == []
    reason = status["worker"]["fallback"]
    assert status["worker"]["mode"] == "none"
    if fallback["kind"] == "no-crossing":
        assert reason == "the page has neither cross-origin isolation (SharedArrayBuffer) nor JSPI"
    else:
        assert reason.startswith("the worker did not start (")
        assert any("the worker did not start" in line for line in fallback["warnings"]), fallback["warnings"]
    assert fallback["facts"]["runtimeFetched"] != []  # Python's runtime loaded on the page: the main thread
    done, main = fallback["scenario"], main_mode["scenario"]
    assert done["read"] == main["read"] and done["updated"] == main["updated"] and done["model"] == done["source"]
    assert done["after"] == main["after"]
    assert fallback["log"].foreign_requests(fallback["url"]) == []
