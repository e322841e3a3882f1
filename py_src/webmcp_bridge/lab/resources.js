// resources.js: the JS half of webmcp_bridge/lab/resources.py: the reader the loader calls for every MCP resource
// read, and the loader's (dis)connectResources and (dis)connectPrompts. The loader awaits read(uri) -> a Promise of
// JSON text {result} | {error}: read hands the URI to Python's listener onRead(id, uri) (its return value unused: in a
// worker, an event) and Python answers later by answer(id, text), which settles the Promise.
(() => {
  let ctx = null; // the loader's context (attach)
  let onRead = null; // Python's listener (a proxy Python holds; dropped by disconnect)
  let next = 0;
  const waiting = new Map(); // read id -> resolve

  function read(uri) {
    if (!onRead) return Promise.resolve(JSON.stringify({ error: { error: "UNAVAILABLE", message: "No reader." } }));
    const id = ++next;
    const promise = new Promise((resolve) => waiting.set(id, resolve));
    onRead(id, String(uri));
    return promise;
  }

  const has = (name) => typeof ctx?.[name] === "function";

  function disconnect() {
    if (has("disconnectResources")) ctx.disconnectResources();
    onRead = null;
  }

  return {
    attach(loaderCtx) { ctx = loaderCtx; },
    // The loader's: how many prompts the runtime registered (0 when the loader has none).
    connectPrompts(promptsJson) { return has("connectPrompts") ? ctx.connectPrompts(String(promptsJson)) : 0; },
    disconnectPrompts() { if (has("disconnectPrompts")) ctx.disconnectPrompts(); },
    // The loader's connectResources with this half's reader: how many templates it registered (0: no resources).
    connect(templatesJson, readListener) {
      if (!has("connectResources")) return 0;
      onRead = readListener;
      return ctx.connectResources(String(templatesJson), read);
    },
    // A read still waiting is answered when Python answers it.
    disconnect,
    // The session's worker is gone: unregister its resources and prompts (the next session registers its own).
    dispose() {
      disconnect();
      if (has("disconnectPrompts")) ctx.disconnectPrompts();
    },
    // Read `id`'s JSON text; false when no read waits under that id.
    answer(id, text) {
      const resolve = waiting.get(id);
      if (!resolve) return false;
      waiting.delete(id);
      resolve(String(text));
      return true;
    },
  };
})()
