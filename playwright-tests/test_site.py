"""The built site in a real browser: the bridge starts, the kernel runs code, nothing leaves the site's origin."""

from __future__ import annotations

import pytest

from lite_site import (
    KERNEL_TIMEOUT_MS,
    PageLog,
    bridge_status,
    new_recorded_page,
    open_notebook,
    result_payload,
)

NOTEBOOK = "jupyterlite-empty.ipynb"


@pytest.fixture(scope="module")
def kernel_run(browser, site_url):
    """Open a notebook with WebMCP on, wait for the bridge, run `print(21*2)` through the UI; record it all."""
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    status = open_notebook(page, site_url, NOTEBOOK)
    status_text = page.locator(".webmcp-bridge-status").text_content()
    page.locator(".jp-Notebook .jp-Cell .cm-content").first.click()
    page.keyboard.type("print(21*2)")
    page.keyboard.press("Shift+Enter")
    output = page.locator(".jp-Notebook .jp-OutputArea-output").first
    output.wait_for(timeout=KERNEL_TIMEOUT_MS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('42'))",
        timeout=KERNEL_TIMEOUT_MS,
    )
    result = {
        "status": status,
        "status_text": status_text,
        "output": output.text_content(),
        "final_status": bridge_status(page),
        "log": log,
        "page": page,
    }
    yield result
    context.close()


def test_bridge_ready_and_kernel_runs_a_cell(kernel_run):
    """(a) With WebMCP the status reaches ready, and the Pyodide kernel runs print(21*2) -> 42."""
    status = kernel_run["status"]
    assert status["state"] == "ready", status
    assert kernel_run["status_text"].startswith("WebMCP: ready ("), kernel_run["status_text"]
    assert kernel_run["status_text"] == f"WebMCP: ready ({status['tools']} tools)"
    assert status["timings"]["pyodideReady"] > 0
    assert status["timings"]["bridgeReady"] >= status["timings"]["pyodideReady"]
    assert "42" in kernel_run["output"]
    # the bridge runs on the site's own runtime (the kernel's pyodideUrl), the one download both share
    assert status["runtime"]["source"] == "page", status["runtime"]
    assert status["runtime"]["url"].endswith("/static/pyodide/pyodide.mjs")
    assert "/extensions/" not in status["runtime"]["url"]
    # a JupyterLite page with the Pyodide kernel: the loader's page-wide waitAsync fix is in place
    fix = "() => [window.webmcpBridge.waitAsyncFix, Atomics.waitAsync.webmcpBridge === true]"
    assert kernel_run["page"].evaluate(fix) == ["installed", True]


#: Loads the kernel's main-thread messaging module (the `coincident` library, as served in the built chunk), points
#: it at a stand-in worker that writes each reply *inside* postMessage, so the reply is in place before the
#: caller starts to wait (the race a real worker wins now and then), and makes one call.
EARLY_REPLY_JS = """async () => {
  const chunks = self.rspackChunk_jupyterlite_pyodide_kernel_extension || [];
  const factories = chunks.flatMap(([, modules]) => Object.values(modules || {}))
    .filter(f => String(f).includes('Atomics') && String(f).includes('waitAsync'));
  if (factories.length !== 1) return {error: `found ${factories.length} messaging modules`};
  const exports = {};
  const require = {d(target, getters) {
    for (const k in getters) Object.defineProperty(target, k, {get: getters[k], enumerable: true});
  }};
  // count the waits answered synchronously: the race this replays must really happen (on the browser's own
  // waitAsync, under the loader's page-wide fix, so the chunk itself meets the synchronous answer)
  const pageWaitAsync = Atomics.waitAsync;
  const nativeWaitAsync = pageWaitAsync.original || pageWaitAsync;
  let synchronous = 0;
  Atomics.waitAsync = (...args) => { const r = nativeWaitAsync(...args); if (!r.async) synchronous++; return r; };
  try { factories[0]({}, exports, require); } finally { Atomics.waitAsync = pageWaitAsync; }
  const coincident = Object.values(exports)[0];
  const reply = JSON.stringify({status: 'ok', execution_count: 7, text: 'early ✓'});
  const worker = {
    addEventListener() {},
    postMessage(data) {
      const [, buffer, action] = Object.values(data)[0];  // [call id, Int32Array on a SharedArrayBuffer, name, args]
      if (action !== undefined) {  // the call: answer with the reply's length, flag set
        buffer[1] = reply.length;
        Atomics.store(buffer, 0, 1);
      } else {  // the fetch of the reply: its UTF-16 text from the buffer's start
        const chars = new Uint16Array(buffer.buffer);
        for (let i = 0; i < reply.length; i++) chars[i] = reply.charCodeAt(i);
      }
    },
  };
  try {
    return {value: await coincident(worker).execute({code: '1'}), synchronous};
  } catch (e) {
    return {error: String((e && e.message) || e), synchronous};
  }
}"""


def test_a_kernel_reply_that_arrives_before_the_wait_is_not_lost(kernel_run):
    """The kernel's reply wait works when the worker answers before the main thread starts waiting.

    Unpatched, the pinned kernel throws `A(...).value.then is not a function` there and the run never ends
    (build.patch_kernel_messaging); this replays that race deterministically on the served chunk.
    """
    got = kernel_run["page"].evaluate(EARLY_REPLY_JS)
    # both waits (the call's, then the fetch of its reply) found the reply already there, and it arrived whole
    assert got == {"value": {"status": "ok", "execution_count": 7, "text": "early ✓"}, "synchronous": 2}, got


#: Loads the same messaging module, gives it a stand-in worker with a handler that answers a 2 MB text, and lets a
#: real worker read the shared buffer the way the kernel's worker does (wait while its first 32 bits are 0, then
#: read the text) while the main thread copies the answer in: the reader must see the whole text, never a half
#: written one (build.patch_kernel_transfer: unpatched, the first unit written releases the reader at once).
TRANSFER_JS = """async () => {
  const chunks = self.rspackChunk_jupyterlite_pyodide_kernel_extension || [];
  const factories = chunks.flatMap(([, modules]) => Object.values(modules || {}))
    .filter(f => String(f).includes('Atomics') && String(f).includes('waitAsync'));
  if (factories.length !== 1) return {error: `found ${factories.length} messaging modules`};
  const exports = {};
  factories[0]({}, exports, {d(target, getters) {
    for (const k in getters) Object.defineProperty(target, k, {get: getters[k], enumerable: true});
  }});
  const coincident = Object.values(exports)[0];
  const key = String(factories[0]).match(/"([0-9a-f]{8}-[0-9a-f-]{27})"/)[1];  // the module's message key
  const size = 2000000;
  const worker = new EventTarget();
  worker.postMessage = () => {};
  coincident(worker).processDriveRequest = async () => 'x'.repeat(size);  // answered as JSON text: '"xx...x"'
  const send = (payload) => worker.dispatchEvent(new MessageEvent('message', {data: {[key]: payload}}));
  const head = new Int32Array(new SharedArrayBuffer(8));
  send([1, head, 'processDriveRequest', [{}]]);  // the request: the length comes back with the flag
  for (let i = 0; i < 200 && Atomics.load(head, 0) === 0; i++) await new Promise(r => setTimeout(r, 10));
  const length = head[1];
  const text = new Int32Array(new SharedArrayBuffer(2 * length + (2 * length) % 4));
  const reader = new Worker(URL.createObjectURL(new Blob([`onmessage = ({data: buffer}) => {
      postMessage('waiting');
      while (Atomics.load(buffer, 0) === 0) {}
      const units = new Uint16Array(buffer.buffer);
      const last = units[${length} - 1];  // at once: the end of a text still being copied is not there yet
      let whole = 0;
      for (let i = 0; i < ${length}; i++) if (units[i] !== 0) whole++;
      postMessage({last, whole});
    }`], {type: 'text/javascript'})));
  const result = new Promise(resolve => reader.onmessage = ({data}) => data !== 'waiting' && resolve(data));
  await new Promise(resolve => { reader.addEventListener('message', resolve, {once: true}); reader.postMessage(text);
    });
  await new Promise(r => setTimeout(r, 50));  // the reader spins on the buffer now
  send([1, text]);  // the fetch of the text: the main thread copies it in
  const read = await result;
  reader.terminate();
  return {length, read};
}"""


def test_a_long_reply_is_read_only_once_it_is_written_whole(kernel_run):
    """The kernel's messaging hands a reply over a shared buffer; a reader that starts waiting while the writer is
    still copying must not read half of it (the CI flake where the kernel never started: a half-written drive
    answer, "Bad control character in string literal in JSON", a Pyodide fatal error). Replayed on the served
    chunk with a real reader thread and a 2 MB answer."""
    got = kernel_run["page"].evaluate(TRANSFER_JS)
    assert got.get("length") == 2_000_002 and got.get("read") == {"last": ord('"'), "whole": 2_000_002}, got


def test_every_request_is_same_origin(kernel_run, site_url):
    """(b) Every request of that run (page, kernel worker, main-thread Pyodide) went to the site itself."""
    log: PageLog = kernel_run["log"]
    assert log.foreign_requests(site_url, allow_content_links=False) == []
    # the record covers both runtimes: the kernel's wheels and the bridge's own wheel were fetched
    assert any("/static/pyodide/ipython-" in url for url in log.requests), "kernel wheel requests not seen"
    assert any("/extensions/jupyterlab-webmcp-bridge/static/webmcp_bridge-" in url for url in log.requests)


def test_no_page_errors(kernel_run):
    """(c) No uncaught error in the page, and the loader logged no error."""
    log: PageLog = kernel_run["log"]
    assert log.own_page_errors() == []
    assert not [m for m in log.console_errors if "webmcp-bridge" in m], log.console_errors


def test_without_webmcp_the_status_is_unavailable(page_without_webmcp, page_without_webmcp_log, site_url):
    """(d) Without the WebMCP flag the site still works: a notebook opens and the bridge says unavailable."""
    page = page_without_webmcp
    status = open_notebook(page, site_url, "notebook-running-code.ipynb")
    assert page.evaluate("() => document.modelContext === undefined")
    assert status["state"] == "unavailable", status
    assert page.locator(".webmcp-bridge-status").text_content() == "WebMCP: unavailable"
    # the notebook's 28 cells render (JupyterLab attaches them progressively)
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell').length > 10", timeout=30_000)
    assert page_without_webmcp_log.own_page_errors() == []
    assert page_without_webmcp_log.foreign_requests(site_url, allow_content_links=False) == []


def test_without_the_sites_runtime_the_bridge_uses_the_one_it_ships(page, page_log, site_url):
    """When the kernel's configured Pyodide cannot be loaded, the bridge starts on the runtime shipped in its
    own extension folder (found relative to its script), still on the site's origin."""
    site_runtime = f"{site_url}/static/pyodide/pyodide.mjs"
    page.context.route(lambda url: url == site_runtime, lambda route: route.fulfill(status=404, body="not here"))
    status = open_notebook(page, site_url, NOTEBOOK)
    assert status["state"] == "ready", status
    assert status["runtime"] == {
        "source": "shipped",
        "url": f"{site_url}/extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs",
    }
    result = page.webmcp.call_tool("jupyter_get_context", {})
    assert result["isError"] is False and result_payload(result)["notebook"]["path"] == NOTEBOOK
    assert page_log.foreign_requests(site_url, allow_content_links=False) == []


def test_a_loader_failure_shows_in_the_status_item(page, page_log, site_url):
    """If the bridge cannot load, JupyterLab still works and the status item says why; nothing is thrown."""
    page.context.route("**/extensions/jupyterlab-webmcp-bridge/static/webmcp_bridge-*.whl", lambda route: route.abort())
    status = open_notebook(page, site_url, NOTEBOOK)
    assert status["state"] == "failed", status
    assert status["reason"]
    text = page.locator(".webmcp-bridge-status").text_content()
    assert text.startswith("WebMCP: failed (") and text.endswith(")"), text
    assert page.locator(".jp-Notebook .jp-Cell").count() >= 1
    # the tools registered early from tools.json answer with a structured error instead of hanging
    result = page.webmcp.call_tool("jupyter_get_context", {})
    error = result_payload(result)  # the loader's own answer, shaped as the bridge's: the payload once, as text
    assert result["isError"] is True and "structuredContent" not in result and error["error"] == "INTERNAL_ERROR"
    assert "not available" in error["message"]
    assert page_log.own_page_errors() == []


def run_code(page, code: str) -> dict:
    """jupyter_run_code as the agent, collected if it goes pending; the payload."""
    result = page.webmcp.call_tool("jupyter_run_code", {"code": code}, timeout=KERNEL_TIMEOUT_MS)
    payload = result_payload(result)
    while payload.get("status") == "pending":
        payload = result_payload(
            page.webmcp.call_tool(
                "jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, timeout=KERNEL_TIMEOUT_MS
            )
        )
    return payload


def test_a_file_gone_from_the_drive_is_an_oserror_not_a_dead_kernel(kernel_run):
    """The kernel sees the page's files under /drive. A file it has looked at, then deleted from the file browser,
    is a FileNotFoundError for the next stat, and the kernel goes on (build.patch_kernel_drive: unpatched, the
    drive's stat reads a field of undefined inside the system call and Pyodide stops for good)."""
    page, log = kernel_run["page"], kernel_run["log"]
    made = run_code(
        page, "import os\nopen('/drive/probe.txt', 'w').write('x')\nprint(os.stat('/drive/probe.txt').st_size)"
    )
    assert made["status"] == "ok" and made["outputs"][0]["text"] == "1\n", made
    page.evaluate("async () => { await window.jupyterapp.serviceManager.contents.delete('probe.txt'); }")
    gone = run_code(
        page, "try:\n    os.stat('/drive/probe.txt')\nexcept FileNotFoundError as e:\n    print('gone', e.errno)"
    )
    assert gone["status"] == "ok" and gone["outputs"][0]["text"].startswith("gone "), gone
    assert run_code(page, "print(6 * 7)")["outputs"][0]["text"] == "42\n"
    assert log.own_page_errors() == []
