// The bridge's one crossing counter (docs/ARCHITECTURE.md, "Crossings of one call"). Every JS place a call from the
// bridge's Python arrives at counts it here, by name: the loader's functions in its ctx and each answer handed back
// to it (lite/extension/static/remoteEntry.js), the methods of each JS half Python evaluates (lab/ffi.py load_half,
// through the loader's window.webmcpBridge.countCalls), and the worker's requests (lab/worker.js). Each counter's
// json() is what window.webmcpBridge.crossings[name]() returns. The worker's own side counts the same crossings in
// Python (webmcp_bridge/lab/remote_half.py RemoteHalves.crossings), in the same {name: count} form.
//
// crossingCounter() -> {count(name), counted(name, fn), countAll(api), json()}:
//   count(name)         one crossing of `name`
//   counted(name, fn)   fn wrapped so that each call of it is one crossing of `name` (arguments and result as they are)
//   countAll(api)       every function property of the object `api` replaced, in place, by counted(its key, it); api
//   json()              the counts as JSON text {name: count}, names never crossed left out (not counted itself)
// Nothing here throws; a name is any string.
export function crossingCounter() {
  const counts = {};
  const count = name => { counts[name] = (counts[name] ?? 0) + 1; };
  const counted = (name, fn) => (...args) => { count(name); return fn(...args); };
  const countAll = api => {
    for (const [name, fn] of Object.entries(api)) if (typeof fn === 'function') api[name] = counted(name, fn);
    return api;
  };
  return { count, counted, countAll, json: () => JSON.stringify(counts) };
}
