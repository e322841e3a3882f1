"""The bridge's worker in a real browser (docs/WORKER.md, "The crossing protocol"): a dedicated worker started by
``lab/worker.js`` runs the bridge's Python (``lab/worker_boot.js``: the site's runtime and the shipped wheels) and
sends requests through ``lab/wire.py``'s transport (its ``page_calls`` entry), answered on the page's main thread by a
responder of the test, in the envelope of ``lab/messages.py``. On the cross-origin isolated demo site the synchronous
crossings go through the shared buffers (``Atomics.wait``); on a server that sends no COOP/COEP headers (no
SharedArrayBuffer), by message, waited for with JSPI's ``run_sync``, in the entry's own coroutine and in an asyncio
task it awaits. Every wait of the page on the worker is bounded (READY_MS, CALL_MS): a crossing that never resumes
fails the test instead of holding the run."""

from __future__ import annotations

import pytest

from lite_site import PageLog, new_recorded_page, serve

STATIC = "/extensions/jupyterlab-webmcp-bridge/static/"
#: the requests the worker's Python sends (webmcp_bridge.lab.wire.page_calls), one crossing each (``async``: awaited)
CALLS = [
    {"target": "host", "method": "open_documents", "args": {}},
    {"target": "host", "method": "current_notebook", "args": {}},
    {"target": "nb-1", "method": "read_output_text",
     "args": {"cell_id": "big", "output_index": 0, "mime": "text/plain", "offset": 0, "max_bytes": 1 << 23}},
    {"target": "nb-1", "method": "read_output_text",
     "args": {"cell_id": "big", "output_index": 0, "mime": "text/plain", "offset": 0, "max_bytes": 1 << 23}},
    {"target": "nb-1", "method": "read_output_text",
     "args": {"cell_id": "gone", "output_index": 0, "mime": "text/plain", "offset": 0, "max_bytes": 100}},
    {"target": "host", "method": "find_open", "args": {"path": "broken.ipynb"}},
    {"target": "host", "method": "read_text", "args": {"path": "notes.txt", "max_bytes": 1000}, "async": True},
    {"target": "dialogs", "method": "watch", "args": {}},
]  # fmt: skip
#: the calls after the dialogs event, made in an asyncio task the entry awaits (``page_calls``'s ``task``): a
#: synchronous crossing, an asynchronous one, a synchronous one again from the same task's later step
SECOND_CALLS = [
    {"target": "host", "method": "open_documents", "args": {}},
    {"target": "host", "method": "read_text", "args": {"path": "notes.txt", "max_bytes": 1000}, "async": True},
    {"target": "host", "method": "current_notebook", "args": {}},
]

#: Starts the worker with a responder standing in for the live model (a 2 MB answer of mixed 1-3 byte UTF-8
#: characters, a ToolError, a JS exception, an asynchronous answer that waits a timer), runs CALLS in it, sends one
#: dialogs event, asks again; records the page's long tasks from the worker's start on.
DRIVE = """async ([calls, secondCalls, readyMs, callMs]) => {
  // every wait is bounded: a worker that never answers fails the test in seconds, naming the step
  const within = (promise, ms, what) => Promise.race([promise, new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms))]);
  const base = new URL(__BASE__, location.href);
  const { startWorker } = await import(new URL('worker.js', base).href);
  const tasks = [];
  new PerformanceObserver(list => { for (const e of list.getEntries()) tasks.push([e.startTime, e.duration]); })
    .observe({ type: 'longtask' });
  const big = 'x'.repeat(1 << 20) + 'é✓'.repeat(1 << 18);  // 2 MB of UTF-8: 1 MiB ASCII, 256 Ki of 2 + 3 bytes
  const asked = [];
  const respond = call => {
    asked.push([call.target, call.method]);
    if (call.method === 'open_documents') return { value: [{ path: 'demo.ipynb', kind: 'notebook', dirty: true }] };
    if (call.method === 'current_notebook') return { value: { handle: 'nb-1', path: 'demo.ipynb' } };
    if (call.method === 'read_output_text' && call.args.cell_id === 'big')
      return { value: { text: big, offset: 0, next_offset: null, total_bytes: new TextEncoder().encode(big).length } };
    if (call.method === 'read_output_text')
      return { error: { kind: 'tool', code: 'OUTPUT_NOT_FOUND', message: 'No such output.',
                        details: { cellId: call.args.cell_id } } };
    if (call.method === 'find_open') throw new TypeError('the panel is gone');
    if (call.method === 'watch') return { value: null };
    return { error: { kind: 'wire', code: 'WireError', message: `unexpected ${call.method}`, details: {} } };
  };
  // an answer after a timer; what respond throws rejects the promise (thrown inside the timer's callback it would
  // be an uncaught page error and the promise would never settle: the worker's crossing would wait for ever)
  const respondAsync = call => new Promise((resolve, reject) => setTimeout(() => {
    try { resolve(call.method === 'read_text' ? { value: `the text of ${call.args.path}` } : respond(call)); }
    catch (error) { reject(error); }
  }, 20));
  const began = performance.now();
  const worker = startWorker({ manifestUrl: new URL('bridge.json', base).href, respond, respondAsync,
                               runtimeUrl: new URL('/static/pyodide/pyodide.mjs', location.href).href });
  let ready, first, second, readyAt;
  try {
    ready = await within(worker.ready, readyMs, "the worker's start");
    readyAt = performance.now();
    first = JSON.parse(await within(worker.invoke('page_calls', JSON.stringify({ calls })), callMs, 'the calls'));
    worker.event(JSON.stringify({ event: 'dialogs' }));
    second = JSON.parse(await within(worker.invoke('page_calls', JSON.stringify({ calls: secondCalls, task: true })),
                                     callMs, 'the calls after the event'));
  } catch (error) {
    worker.terminate();
    return { failed: String(error.message || error), asked, pageCrossings: JSON.parse(worker.crossings()) };
  }
  const doneAt = performance.now();
  await new Promise(resolve => setTimeout(resolve, 100));  // a long task is reported after it ended
  const longest = (from, to) => Math.max(0, ...tasks.filter(([s]) => s >= from && s < to).map(([, d]) => d));
  const bigResults = first.results.slice(2, 4);
  for (const result of bigResults) {
    if (result.value) {  // compared here: the 2 MB text need not come back to the test
      result.value.sameText = result.value.text === big;
      result.value.text = result.value.text.length;
    }
  }
  worker.terminate();
  return { ready, isolated: self.crossOriginIsolated, first, second, asked,
           pageCrossings: JSON.parse(worker.crossings()), bigChars: big.length,
           startLongestMs: longest(began, readyAt), callsLongestMs: longest(readyAt, doneAt + 100),
           readyMs: Math.round(readyAt - began) };
}""".replace("__BASE__", repr(STATIC))


#: how long the worker's start may take (the runtime, the wheels, the imports: 5-26 s on this 2-core machine under
#: load) and one invoke (eight crossings, two of them 2 MB), in ms: beyond them the test fails instead of waiting
READY_MS = 120_000
CALL_MS = 30_000


@pytest.fixture(scope="module", params=["isolated", "no-headers"])
def drive(request, browser, site_dir):
    """The worker driven on the built site, served with the site's headers (cross-origin isolated) or with none."""
    server, url = serve(site_dir, None if request.param == "isolated" else {})
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    try:
        page.goto(url + STATIC + "bridge.json")  # a page of the site's origin where nothing else runs
        result = page.evaluate(DRIVE, [CALLS, SECOND_CALLS, READY_MS, CALL_MS])
        if "failed" in result:
            pytest.fail(f"[{request.param}] {result['failed']} (page's counts: {result['pageCrossings']})")
        print(
            f"\n[{request.param}] worker ready in {result['readyMs']} ms; longest main-thread task: "
            f"{result['startLongestMs']:.0f} ms during the start, {result['callsLongestMs']:.0f} ms during the calls"
        )
        yield request.param, result, log, url
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_worker_runs_the_bridges_python_and_crosses(drive):
    """Every request crosses in the envelope: small answers, a handle, a 2 MB answer (twice: through a grown
    buffer on the isolated site), a ToolError with its code and details, a JS exception as a HostFailure, an
    asynchronous answer, a watch and an event of the page, then synchronous crossings before and after an
    asynchronous one from an asyncio task; the page's counter and the worker's agree."""
    kind, result, log, url = drive
    mode = result["ready"]["mode"]
    assert result["isolated"] is (kind == "isolated")
    assert mode == ("sab" if kind == "isolated" else "jspi")
    first = result["first"]
    assert first["mode"] == mode
    values = first["results"]
    assert values[0] == {"value": [{"path": "demo.ipynb", "kind": "notebook", "dirty": True}]}
    assert values[1] == {"value": {"handle": "nb-1", "path": "demo.ipynb"}}
    total = (1 << 20) + (2 + 3) * (1 << 18)  # UTF-8 bytes: 1 MiB of ASCII, 256 Ki each of 2- and 3-byte characters
    for big in values[2:4]:
        assert big == {"value": {"text": result["bigChars"], "sameText": True, "offset": 0, "next_offset": None,
                                 "total_bytes": total}}  # fmt: skip
    assert values[4]["error"] == {
        "type": "ToolError", "code": "OUTPUT_NOT_FOUND", "message": "No such output.", "details": {"cellId": "gone"}
    }  # fmt: skip
    assert values[5]["error"]["type"] == "HostFailure"
    assert values[5]["error"]["code"] == "TypeError" and "the panel is gone" in values[5]["error"]["message"]
    assert values[6] == {"value": "the text of notes.txt"}
    assert values[7] == {"value": None}
    second = result["second"]
    assert second["mode"] == mode
    assert second["results"] == [values[0], {"value": "the text of notes.txt"}, values[1]]
    assert first["events"] == {} and second["events"] == {"dialogs": 1}
    expected = {"open_documents": 1, "current_notebook": 1, "read_output_text": 3, "find_open": 1, "read_text": 1,
                "watch": 1}  # fmt: skip
    assert first["crossings"] == expected
    both = {**expected, "open_documents": 2, "current_notebook": 2, "read_text": 2}
    assert second["crossings"] == both
    assert result["pageCrossings"] == both
    # every synchronous request was answered by the page's synchronous responder, whichever way the worker waited
    assert [m for _, m in result["asked"]] == [
        c["method"] for c in [*CALLS, *SECOND_CALLS] if c["method"] != "read_text"
    ]
    assert log.own_page_errors() == []
    assert log.foreign_requests(url) == []  # the runtime, the wheels and both scripts come from the site
