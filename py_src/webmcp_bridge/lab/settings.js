// settings.js: the JS half of webmcp_bridge/lab/settings.py (and contributions.py): the bridge's plugin settings in
// JupyterLab's setting registry, as JSON text; Python decides what they mean.
(() => {
  let app = null;
  let token = null; // ISettingRegistry, or null when the share scope has no @jupyterlab/settingregistry
  let settings = null; // the plugin's ISettings once loaded
  let listener = null; // Python's listener of changes (a proxy Python holds; its return value is not used)
  const changed = () => { if (listener && settings) listener(JSON.stringify(settings.composite)); };
  const unwatch = () => {
    if (settings && listener) settings.changed.disconnect(changed);
    listener = null;
  };

  return {
    attach(ctx) {
      app = ctx?.app ?? null;
      token = ctx?.modules?.settingregistry?.ISettingRegistry ?? null;
    },
    // load(pluginId): a Promise of JSON text: {"state": "loaded", "composite": {...}} (the defaults merged with the
    // person's values), {"state": "no-registry"} (no token in the share scope) or {"state": "no-service"} (the
    // application has no setting registry). Rejects when JupyterLab cannot load the plugin's settings.
    async load(pluginId) {
      if (!token || !app) return JSON.stringify({ state: "no-registry" });
      const registry = await app.resolveOptionalService(token);
      if (!registry) return JSON.stringify({ state: "no-service" });
      settings = await registry.load(String(pluginId));
      return JSON.stringify({ state: "loaded", composite: settings.composite });
    },
    // Call onChanged(compositeJson) after every change of the loaded settings; false when none are loaded.
    watch(onChanged) {
      if (!settings) return false;
      if (listener) settings.changed.disconnect(changed);
      listener = onChanged;
      settings.changed.connect(changed);
      return true;
    },
    unwatch,
    dispose: unwatch,
    warn(text) { console.warn(String(text)); },
  };
})()
