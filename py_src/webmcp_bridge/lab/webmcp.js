// webmcp.js: the JS half of webmcp_bridge/lab/webmcp.py and resources.py: the dispatcher the loader calls for every
// WebMCP tool call, the reader it calls for every MCP resource read, and the loader's connect, disconnect,
// (dis)connectResources, (dis)connectPrompts, reportCall and emit. The loader's execute awaits dispatch(name,
// inputJson, invocation, optionsJson) -> the answer's JSON text or a Promise of it, and a read awaits read(uri) -> JSON
// text {result} | {error}: each hands the request to Python's listener (onCall(id, ...), onRead(id, uri)) and Python
// answers by answer(id, text) or fail(id, message) (a call), answerRead(id, text) (a read); one answered before the
// listener returned (most calls, on the page's main thread) gets the text itself. cancel(invocation) goes to Python's
// onCancel(invocation). The listeners' return values are unused, so in a worker they are events.
(() => {
  let ctx = null; // the loader's context (attach)
  let onCall = null; // Python's listeners (proxies Python holds; dropped by disconnect)
  let onCancel = null;
  let onRead = null;
  let next = 0;
  const waiting = new Map(); // call or read id -> {text} once answered, or {resolve, reject} while a Promise waits

  // A request handed to Python's listener(id, ...args): its answer, or a Promise of it.
  function ask(listener, args) {
    const id = ++next;
    const entry = {};
    waiting.set(id, entry);
    try {
      listener(id, ...args);
    } catch (error) {
      waiting.delete(id);
      throw error;
    }
    if ("text" in entry || "error" in entry) waiting.delete(id);
    if ("text" in entry) return entry.text;
    if ("error" in entry) return Promise.reject(new Error(entry.error));
    return new Promise((resolve, reject) => { entry.resolve = resolve; entry.reject = reject; });
  }

  // optionsJson: the loader's options for a call it held while Python was starting ({pendingId} or {waitSeconds},
  // webmcp.py call_options), or nothing
  function dispatch(name, inputJson, invocation, optionsJson) {
    if (!onCall) return Promise.reject(new Error("the bridge's tools are not connected"));
    return ask(onCall, [String(name), String(inputJson), invocation == null ? undefined : String(invocation),
                        optionsJson == null ? undefined : String(optionsJson)]);
  }

  async function read(uri) {
    if (!onRead) return JSON.stringify({ error: { error: "UNAVAILABLE", message: "No reader." } });
    return ask(onRead, [String(uri)]);
  }

  const cancel = (invocation) => { onCancel?.(String(invocation)); };

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

  const has = (name) => typeof ctx?.[name] === "function";

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
    // The loader's connectResources with this half's reader: how many templates it registered (0: no resources).
    connectResources(templatesJson, readListener) {
      if (!has("connectResources")) return 0;
      onRead = readListener;
      return ctx.connectResources(String(templatesJson), read);
    },
    // A read still waiting is answered when Python answers it.
    disconnectResources() {
      if (has("disconnectResources")) ctx.disconnectResources();
      onRead = null;
    },
    // The loader's: how many prompts the runtime registered (0 when the loader has none).
    connectPrompts(promptsJson) { return has("connectPrompts") ? ctx.connectPrompts(String(promptsJson)) : 0; },
    disconnectPrompts() { if (has("disconnectPrompts")) ctx.disconnectPrompts(); },
    // The page's WebMCP runtime as the loader saw it: "native" or "mcp-b" (webmcp.py structured_for).
    runtime() { return String(ctx.webmcpRuntime || "native"); },
    // The session's worker is gone: reject the calls and reads still waiting and unregister the resources; the tools
    // stay registered for the next session, which registers its own resources and prompts.
    dispose() {
      api.disconnectResources();
      api.disconnectPrompts();
      onCall = onCancel = null;
      for (const id of [...waiting.keys()]) settle(id, "error", "the bridge's worker was stopped");
    },
    // Call `id` failed in the bridge itself (its task was cancelled): its Promise rejects.
    fail(id, message) { return settle(id, "error", String(message)); },
    // Read `id`'s JSON text; false when no read waits under that id.
    answerRead(id, text) { return settle(id, "text", String(text)); },
    // reportCall(line) and emit(type, detailJson): the loader's, for a call that finished after its invocation.
    reportCall(line) { ctx.reportCall(String(line)); },
    emit(type, detailJson) { ctx.emit(String(type), String(detailJson)); },
  };
  // answer(id, text): call `id`'s answer, JSON text {result, report, event}. Not enumerable, so lab/ffi.py's counter
  // leaves it out: the loader already counts this one crossing of the answer as `result` when it receives it.
  Object.defineProperty(api, "answer", { value: (id, text) => settle(id, "text", String(text)), enumerable: false });
  return api;
})()
