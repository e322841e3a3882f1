// webmcp.js: the JS half of webmcp_bridge/lab/webmcp.py: the dispatcher the loader calls for every WebMCP tool call,
// and the loader's connect, disconnect, reportCall and emit. The loader's execute awaits dispatch(name, inputJson,
// invocation, optionsJson) -> the answer's JSON text or a Promise of it: dispatch hands the call to Python's listener
// onCall(id, ...) and Python answers by answer(id, text) or fail(id, message); a call answered before onCall returned
// (most, on the page's main thread) gets the text itself. cancel(invocation) goes to Python's onCancel(invocation).
// The listeners' return values are unused, so in a worker they are events.
(() => {
  let ctx = null; // the loader's context (attach): connect, disconnect, reportCall, emit
  let onCall = null; // Python's listeners (proxies Python holds; dropped by disconnect)
  let onCancel = null;
  let next = 0;
  const waiting = new Map(); // call id -> {text} once answered, or {resolve, reject} while a Promise waits

  // optionsJson: the loader's options for a call it held while Python was starting ({pendingId} or {waitSeconds},
  // webmcp.py call_options), or nothing
  function dispatch(name, inputJson, invocation, optionsJson) {
    if (!onCall) return Promise.reject(new Error("the bridge's tools are not connected"));
    const id = ++next;
    const entry = {};
    waiting.set(id, entry);
    try {
      onCall(id, String(name), String(inputJson), invocation == null ? undefined : String(invocation),
             optionsJson == null ? undefined : String(optionsJson));
    } catch (error) {
      waiting.delete(id);
      throw error;
    }
    if ("text" in entry || "error" in entry) waiting.delete(id);
    if ("text" in entry) return entry.text;
    if ("error" in entry) return Promise.reject(new Error(entry.error));
    return new Promise((resolve, reject) => { entry.resolve = resolve; entry.reject = reject; });
  }

  function cancel(invocation) {
    if (onCancel) onCancel(String(invocation));
  }

  function settle(id, key, value) {
    const entry = waiting.get(id);
    if (!entry) return false;
    if (entry.resolve) {
      waiting.delete(id);
      if (key === "text") entry.resolve(value);
      else entry.reject(new Error(value));
    } else {
      entry[key] = value;
    }
    return true;
  }

  const api = {
    attach(loaderCtx) { ctx = loaderCtx; },
    // The loader's connect with this half's dispatcher and Python's listeners: how many tools the loader asked for.
    connect(definitionsJson, callListener, cancelListener, inputCap) {
      onCall = callListener;
      onCancel = cancelListener;
      return ctx.connect(String(definitionsJson), dispatch, cancel, Number(inputCap) || 0);
    },
    // The loader's disconnect (every tool unregistered); calls still waiting are answered when Python answers them.
    disconnect() {
      ctx.disconnect();
      onCall = onCancel = null;
    },
    // The page's WebMCP runtime as the loader saw it: "native" or "mcp-b" (webmcp.py structured_for).
    runtime() { return String(ctx.webmcpRuntime || "native"); },
    // The session's worker is gone: reject the calls still waiting; the tools stay registered for the next session.
    dispose() {
      onCall = onCancel = null;
      for (const id of [...waiting.keys()]) settle(id, "error", "the bridge's worker was stopped");
    },
    // Call `id` failed in the bridge itself (its task was cancelled): its Promise rejects.
    fail(id, message) { return settle(id, "error", String(message)); },
    // reportCall(line) and emit(type, detailJson): the loader's, for a call that finished after its invocation.
    reportCall(line) { ctx.reportCall(String(line)); },
    emit(type, detailJson) { ctx.emit(String(type), String(detailJson)); },
  };
  // answer(id, text): call `id`'s answer, JSON text {result, report, event}. Not enumerable, so lab/ffi.py's counter
  // leaves it out: the loader already counts this one crossing of the answer as `result` when it receives it.
  Object.defineProperty(api, "answer", { value: (id, text) => settle(id, "text", String(text)), enumerable: false });
  return api;
})()
