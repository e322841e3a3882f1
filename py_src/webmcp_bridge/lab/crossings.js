// The bridge's one crossing counter (docs/ARCHITECTURE.md, "Crossings of one call"): the loader's ctx functions and
// answers (lite/extension/static/remoteEntry.js), each JS half's methods (lab/ffi.py load_half) and the worker's
// requests (lab/worker.js) count here, by name; json() is what window.webmcpBridge.crossings[name]() returns (the
// worker's side counts in Python, lab/remote_half.py, in the same {name: count} form).
//
// crossingCounter() -> {count(name): one crossing, counted(name, fn): fn counting each call, countAll(api): every
// function property of api replaced in place by counted(its key, it) (returns api), json(): JSON text {name: count}}.
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
