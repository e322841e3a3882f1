"""The remote halves in a real browser (docs/WORKER.md, "The remote half"): the bridge's worker (``lab/worker.js``,
``lab/worker_boot.js``) loads a real JS half, ``lab/dialogs.js``, through ``lab/ffi.py`` ``load_half``; the page's
``lab/halves.js`` fetches its source from the site, evaluates it on JupyterLab's page and runs the worker's calls of
it there. A JupyterLab dialog opened on the page reaches the worker's Python as the half's watch callback; the
worker's Python reads through the half, synchronously and awaited, and is refused an unknown method, ``attach`` and
a half the site does not have. On the cross-origin isolated site (shared buffers) and on a server without COOP/COEP
headers (JSPI). Every wait is bounded (READY_MS, CALL_MS): a crossing that never resumes fails the test."""

from __future__ import annotations

import pytest

from lite_site import PageLog, new_recorded_page, serve

STATIC = "/extensions/jupyterlab-webmcp-bridge/static/"
READY_MS = 120_000
CALL_MS = 30_000

#: the worker's first calls: dialogs.js loaded twice (the second on a name the site lacks), watched with two
#: callbacks, read synchronously and awaited, then refused what it has not
FIRST = {
    "load": [
        {"as": "dialogs", "package": "webmcp_bridge.lab", "filename": "dialogs.js", "attach": False},
        {"as": "none", "package": "webmcp_bridge.lab", "filename": "no_such_half.js", "attach": False},
    ],
    "calls": [
        {
            "half": "dialogs",
            "method": "watch",
            "args": [
                {"$callback": "notify", "then": {"half": "dialogs", "method": "click", "args": ["d-1", 0]}},
                {"$callback": "opened"},
            ],
        },
        {"half": "dialogs", "method": "snapshot", "args": [200]},
        {"half": "dialogs", "method": "snapshot", "args": [200], "await": True},
        {"half": "dialogs", "method": "click", "args": ["d-1", 0]},
        {"half": "dialogs", "method": "noSuchMethod", "args": []},
        {"half": "dialogs", "method": "attach", "args": [{}]},
    ],
}

#: Opens JupyterLab on the page, starts the worker with halves.js as its responder (the ctx: the live
#: application), runs FIRST, opens a JupyterLab dialog with JupyterLab's own command, waits until the worker's Python
#: saw the watch callback, closes the dialog, removes the callbacks.
DRIVE = """async ([first, readyMs, callMs]) => {
  const within = (promise, ms, what) => Promise.race([promise, new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms))]);
  const app = window.jupyterapp;
  await within(app.restored, readyMs, "JupyterLab's start");
  const base = new URL(__BASE__, location.href);
  const { startWorker } = await import(new URL('worker.js', base).href);
  const { createHalves } = await import(new URL('halves.js', base).href);
  let worker = null;
  const halves = createHalves({ ctx: { app }, sourcesUrl: new URL('halves/', base).href,
                                post: text => worker.event(text) });
  const refuse = call => ({ error: { kind: 'wire', code: 'WireError', message: `not a half: ${call.target}`,
                                     details: {} } });
  worker = startWorker({ manifestUrl: new URL('bridge.json', base).href,
                         respond: call => (halves.owns(call) ? halves.respond(call) : refuse(call)),
                         respondAsync: call => (halves.owns(call) ? halves.respondAsync(call) : refuse(call)),
                         runtimeUrl: new URL('/static/pyodide/pyodide.mjs', location.href).href });
  const calls = async (request, what) =>
    JSON.parse(await within(worker.invoke('half_calls', JSON.stringify(request)), callMs, what));
  try {
    const ready = await within(worker.ready, readyMs, "the worker's start");
    const firstAnswer = await calls(first, 'the first calls');
    // a real JupyterLab dialog, opened by JupyterLab's own command
    const command = ['help:about', 'apputils:display-shortcuts'].find(id => app.commands.hasCommand(id));
    const shown = app.commands.execute(command);
    let seen = null;
    const until = performance.now() + callMs;
    while (performance.now() < until) {
      seen = await calls({}, 'the callbacks');
      if ((seen.callbacks.notify || []).length > 0) break;
      await new Promise(resolve => setTimeout(resolve, 50));
    }
    const dialogs = [...document.querySelectorAll('.jp-Dialog .jp-Dialog-header')].map(n => n.textContent.trim());
    document.querySelector('.jp-Dialog button.jp-Dialog-button')?.click();
    await within(Promise.resolve(shown).catch(() => null), callMs, 'the dialog closing');
    const removed = await calls({ remove: ['notify', 'opened'] }, 'the removal');
    return { ready, isolated: self.crossOriginIsolated, command, dialogs, first: firstAnswer, seen, removed,
             pageCrossings: JSON.parse(halves.crossings('dialogs')), workerCrossings: JSON.parse(worker.crossings()) };
  } catch (error) {
    return { failed: String(error.message || error) };
  } finally {
    worker.terminate();
  }
}""".replace("__BASE__", repr(STATIC))


@pytest.fixture(scope="module", params=["isolated", "no-headers"])
def drive(request, browser, site_dir):
    """The worker driven on JupyterLab's page of the built site, with the site's headers or with none."""
    server, url = serve(site_dir, None if request.param == "isolated" else {})
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    try:
        page.goto(url + "/lab/index.html")
        page.wait_for_function("() => !!window.jupyterapp", timeout=READY_MS)
        result = page.evaluate(DRIVE, [FIRST, READY_MS, CALL_MS])
        if "failed" in result:
            pytest.fail(f"[{request.param}] {result['failed']}")
        yield request.param, result, log, url
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_a_real_half_runs_on_the_page_for_the_workers_python(drive):
    """dialogs.js, loaded by the worker's load_half, runs on JupyterLab's page: its watch (unattached: no Dialog class,
    it watches the page's DOM) answers false, its snapshot "[]" synchronously and awaited, a click of no dialog
    "gone"; an unknown method, attach, and a half the site lacks are refused as WireErrors."""
    kind, result, log, url = drive
    assert result["isolated"] is (kind == "isolated")
    assert result["ready"]["mode"] == ("sab" if kind == "isolated" else "jspi")
    first = result["first"]
    assert first["loaded"][0] == {"value": None}
    missing = first["loaded"][1]["error"]
    assert missing["type"] == "WireError" and "HTTP 404" in missing["message"]
    values = first["results"]
    assert values[:4] == [{"value": False}, {"value": "[]"}, {"value": "[]"}, {"value": "gone"}]
    assert values[4]["error"]["type"] == "WireError" and 'no method "noSuchMethod"' in values[4]["error"]["message"]
    assert values[5]["error"]["type"] == "WireError" and "made by the page" in values[5]["error"]["message"]
    assert first["alive"] == 2  # the two watch callbacks, kept by the worker's Proxies
    assert log.own_page_errors() == []
    assert log.foreign_requests(url) == []  # the half's source came from the site


def test_a_dialog_on_the_page_reaches_the_worker_as_the_halfs_callback(drive):
    """A JupyterLab dialog opened on the page fires dialogs.js's watch callback, which arrives in the worker's
    Python as an event, where the listener crosses synchronously to the half again; removing the callbacks
    (Proxies.remove) empties the worker's table. The page's count of the half's calls is the worker's, less the
    loads (counted only in the worker)."""
    _, result, _, _ = drive
    assert result["dialogs"], f"no dialog on the page after {result['command']}"
    assert result["seen"]["callbacks"]["notify"][0] == []  # called with no arguments, as dialogs.js calls it
    # a synchronous crossing made from the callback's dispatch on the worker's loop (JSPI waits there too)
    assert result["seen"]["callbacks"]["notify:then"][0] == {"value": "gone"}
    assert result["removed"]["alive"] == 0
    worker_counts = result["removed"]["crossings"]["dialogs"]
    assert worker_counts.pop("load") == 1
    assert worker_counts.pop("attach", 0) == 0 and worker_counts.pop("noSuchMethod") == 1
    assert result["pageCrossings"] == worker_counts  # the calls that reached the half, counted by crossings.js
