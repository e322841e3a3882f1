// contributions.js: the JS half of webmcp_bridge/lab/contributions.py: the loader's facts Python needs to find the
// site's own contribution files (Python fetches them itself and decides everything).
(() => {
  let facts = { pageContributions: null, baseUrl: "", token: "" };
  return {
    // the page config's list as the loader read it (JSON text or null), the server settings' base URL and token
    attach(ctx) {
      const server = ctx?.app?.serviceManager?.serverSettings;
      facts = {
        pageContributions: typeof ctx?.pageContributions === "string" ? ctx.pageContributions : null,
        baseUrl: String(server?.baseUrl ?? ""),
        token: server?.token ? String(server.token) : "",
      };
    },
    // JSON text {pageContributions, baseUrl, token}.
    site() { return JSON.stringify(facts); },
  };
})()
