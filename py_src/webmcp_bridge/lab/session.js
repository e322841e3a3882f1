// session.js: the JS half of webmcp_bridge/lab/session.py: the loader's facts the session decides by, and the
// loader's status item. Only primitives and JSON text cross, so the session's Python can run in the bridge's worker.
(() => {
  let ctx = null; // the loader's context (attach)
  return {
    attach(loaderCtx) { ctx = loaderCtx; },
    // facts(): JSON text {modelContext: whether the page has document.modelContext (WebMCP), pageSearch: the page
    // URL's query as the loader read it (a string, or null), widgets: whether JupyterLab's share scope gave
    // @lumino/widgets (the Agent panel needs it)}.
    facts() {
      return JSON.stringify({
        modelContext: ctx?.modelContext != null,
        pageSearch: typeof ctx?.pageSearch === 'string' ? ctx.pageSearch : null,
        widgets: ctx?.modules?.widgets != null,
      });
    },
    // The loader's status item (a loader without one: nothing).
    setStatus(state, detail) {
      if (typeof ctx?.setStatus === 'function') ctx.setStatus(String(state), detail ?? null);
    },
    // The problems of the site's own contributions (JSON text), to the loader's status item.
    setDiagnostics(json) {
      if (typeof ctx?.setDiagnostics === 'function') ctx.setDiagnostics(String(json));
    },
  };
})()
