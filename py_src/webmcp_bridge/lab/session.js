// session.js: the JS half of webmcp_bridge/lab/session.py, contributions.py, settings.py, page_secret.py and
// webmcp.py's PageEvents: the loader's facts the session decides by, its status item, its emit of the kernel-run
// events, the facts Python needs to find the site's own contribution files (Python fetches them and decides
// everything), the bridge's plugin settings in JupyterLab's setting registry and the page's localStorage. Only
// primitives and JSON text cross, so the session's Python can run in the bridge's worker.
(() => {
  let ctx = null; // the loader's context (attach)
  let settings = null; // the plugin's ISettings once loaded (loadSettings)
  let listener = null; // Python's listener of settings changes (a proxy Python holds; its return value is not used)
  const changed = () => { if (listener && settings) listener(JSON.stringify(settings.composite)); };
  const unwatchSettings = () => {
    if (settings && listener) settings.changed.disconnect(changed);
    listener = null;
  };
  return {
    attach(loaderCtx) { ctx = loaderCtx; },
    // loadSettings(pluginId): a Promise of JSON text: {"state": "loaded", "composite": {...}} (the defaults merged
    // with the person's values), {"state": "no-registry"} (no @jupyterlab/settingregistry in the share scope) or
    // {"state": "no-service"} (the application has no setting registry). Rejects when JupyterLab cannot load them.
    async loadSettings(pluginId) {
      const token = ctx?.modules?.settingregistry?.ISettingRegistry;
      if (!token || !ctx?.app) return JSON.stringify({ state: "no-registry" });
      const registry = await ctx.app.resolveOptionalService(token);
      if (!registry) return JSON.stringify({ state: "no-service" });
      settings = await registry.load(String(pluginId));
      return JSON.stringify({ state: "loaded", composite: settings.composite });
    },
    // Call onChanged(compositeJson) after every change of the loaded settings; false when none are loaded.
    watchSettings(onChanged) {
      if (!settings) return false;
      if (listener) settings.changed.disconnect(changed);
      listener = onChanged;
      settings.changed.connect(changed);
      return true;
    },
    unwatchSettings,
    dispose: unwatchSettings,
    warn(text) { console.warn(String(text)); },
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
    setStatus(state, detail) { ctx?.setStatus?.(String(state), detail ?? null); },
    // setMode(mode, waiting): the proposals' mode and how many wait, to the loader's status item.
    setMode(mode, waiting) { ctx?.setMode?.(String(mode), Number(waiting)); },
    // The problems of the site's own contributions (JSON text), to the loader's status item.
    setDiagnostics(json) { ctx?.setDiagnostics?.(String(json)); },
    // emit(type, detailJson): one kernel-run event through the loader's emit, which dispatches it on window; false when
    // the loader has no emit (an older one). A page listener that throws is the page's: it is reported to the console
    // and never reaches Python (nothing comes back from an event).
    emit(type, detailJson) {
      if (typeof ctx?.emit !== 'function') return false;
      try { ctx.emit(String(type), String(detailJson)); } catch (error) { console.error('[webmcp-bridge] event', error); }
      return true;
    },
    // The page's localStorage, which only a window has (neither the bridge's worker nor the kernel's), for
    // lab/page_secret.py, which chooses the key and what a value means. readStorage(key): the stored string, or null
    // when there is none or the storage cannot be read (a sandboxed page may refuse access).
    readStorage(key) {
      try { return globalThis.localStorage?.getItem(String(key)) ?? null; } catch { return null; }
    },
    // writeStorage(key, value): false when there is no storage or it refused.
    writeStorage(key, value) {
      try { globalThis.localStorage.setItem(String(key), String(value)); } catch { return false; }
      return true;
    },
    // site(): JSON text {pageContributions: the page config's list as the loader read it (JSON text or null), baseUrl
    // and token: the server settings'}.
    site() {
      const server = ctx?.app?.serviceManager?.serverSettings;
      return JSON.stringify({
        pageContributions: typeof ctx?.pageContributions === 'string' ? ctx.pageContributions : null,
        baseUrl: String(server?.baseUrl ?? ''), token: server?.token ? String(server.token) : '',
      });
    },
  };
})()
