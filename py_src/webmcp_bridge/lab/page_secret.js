// page_secret.js: the JS half of webmcp_bridge/lab/page_secret.py: the page's localStorage, which only a window has
// (neither the bridge's worker nor the kernel's). Python chooses the key and what a value means.
(() => {
  const storage = () => {
    try { return globalThis.localStorage ?? null; } catch { return null; } // a sandboxed page may refuse access
  };
  return {
    // The stored string, or null when there is none or the storage cannot be read.
    get(key) {
      try { return storage()?.getItem(String(key)) ?? null; } catch { return null; }
    },
    // false when the storage refused.
    set(key, value) {
      const store = storage();
      if (!store) return false;
      try { store.setItem(String(key), String(value)); } catch { return false; }
      return true;
    },
  };
})()
