// host.js: the JS half of webmcp_bridge/lab/host.py (the host protocol's application half): the workspace's files
// through JupyterLab's contents service, and text documents open in an editor. Python passes paths and text and gets
// JSON text back (the contents models stay here); a read that rejects answers null, a write {error: message} (cut to
// the length Python gave). Python decides what the facts mean (a folder, too large, not text).
(() => {
  let contents = null; // the contents manager (attach)
  let docs = null; // the document manager (attach)
  let settings = null; // the service manager's server settings (attach)
  let KEY = null; // the bridge's metadata key (configure)
  let errorChars = 0; // characters of a failure's message handed to Python (configure)

  // a write: JSON text {} once write() settled, {error} when it threw or rejected
  const settled = (write) => Promise.resolve().then(write).then(
    () => "{}", (error) => JSON.stringify({ error: String(error?.message ?? error).slice(0, errorChars) }));

  async function get(path, content) {
    try { return await contents.get(path, { content }); } catch { return null; }
  }

  // The document context of a text document open on path (an editor, a CSV viewer...), whose live model holds
  // the person's unsaved edits; null when none is open, or when what is open is not text (an image viewer's
  // base64 model, a notebook).
  function textContext(path) {
    const context = docs?.findWidget(path)?.context;
    const model = context?.contentsModel;
    if (!context || !model || model.type === "notebook" || model.format !== "text") return null;
    return context;
  }

  const api = {
    attach(ctx) {
      contents = ctx?.app?.serviceManager?.contents ?? null;
      settings = ctx?.app?.serviceManager?.serverSettings ?? null;
      docs = ctx?.docManager ?? null;
    },
    configure(metadataKey, errorLength) {
      KEY = metadataKey;
      errorChars = errorLength;
    },
    // The facts of lab/server_root.py's check, JSON text {url: the page config's value under configKey (the server
    // extension sets it; server_root.py takes a non-empty string only) | null, token: the server settings' | null}.
    serverRoot(configKey) {
      let url = null;
      try {
        const node = globalThis.document?.getElementById('jupyter-config-data');
        url = (node ? JSON.parse(node.textContent)?.[String(configKey)] : null) ?? null;
      } catch { url = null; } // an unreadable page config: nothing to ask
      return JSON.stringify({ url, token: settings?.token ? String(settings.token) : null });
    },
    // The value of the page's cookie `name` (the _xsrf cookie a Jupyter server checks), or null when it has none.
    cookie(name) {
      for (const part of String(globalThis.document?.cookie ?? '').split(';')) {
        const at = part.indexOf('=');
        const key = (at < 0 ? part : part.slice(0, at)).trim();
        if (key === String(name)) return at < 0 ? '' : part.slice(at + 1).trim();
      }
      return null;
    },
    // A file or folder without its content: JSON text {path, name, type (the contents model's: Python reads it),
    // size: bytes | null, lastModified: text | null}, or null when the contents service has nothing there.
    async stat(path) {
      const model = await get(path, false);
      if (!model) return null;
      return JSON.stringify({ path: String(model.path), name: String(model.name), type: String(model.type),
                              size: Number.isFinite(model.size) ? model.size : null,
                              lastModified: model.last_modified == null ? null : String(model.last_modified) });
    },
    // A folder's entries: JSON text [[path, name, type as stat's, lastModified as stat's]], or null when path is not
    // a folder.
    async listDir(path) {
      const model = await get(path, true);
      if (!model || model.type !== "directory" || !Array.isArray(model.content)) return null;
      return JSON.stringify(model.content.map((child) => [String(child.path), String(child.name), String(child.type),
                                                          child.last_modified == null ? null : String(child.last_modified)]));
    },
    // The bridge's block of a saved notebook's metadata and those of its cells that have one: JSON text {value: the
    // block or null, cells: [block, ...]}, or null when the file is not a notebook with content.
    async notebookMetadata(path) {
      const model = await get(path, true);
      if (!model || model.type !== "notebook" || model.content == null) return null;
      const cells = Array.isArray(model.content.cells) ? model.content.cells : [];
      return JSON.stringify({ value: model.content.metadata?.[KEY] ?? null,
                              cells: cells.map((cell) => cell?.metadata?.[KEY] ?? null).filter((block) => block != null) });
    },
    // The text of a file (JupyterLite keeps one as text, JSON or base64): JSON text {kind: "directory" | "notebook" |
    // "binary" | "text", text?}, or null when it cannot be read. "binary": base64 that is not strict UTF-8 (an upload
    // of a text file is stored as base64) or no text at all; JSON content as JupyterLab's editor shows it.
    async fileText(path) {
      const m = await get(path, true);
      if (!m) return null;
      if (m.type === "directory" || m.type === "notebook") return JSON.stringify({ kind: m.type });
      let text;
      if (m.format === "json") text = JSON.stringify(m.content);
      else if (m.format === "base64") {
        try {
          const bytes = Uint8Array.from(atob(String(m.content ?? "").replace(/\s/g, "")), (ch) => ch.charCodeAt(0));
          text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch { return JSON.stringify({ kind: "binary" }); }
      } else text = typeof m.content === "string" ? m.content : null;
      return JSON.stringify(text == null ? { kind: "binary" } : { kind: "text", text });
    },
    // The live text of a text document open in an editor (the person's unsaved edits included), or null when none
    // is open on path.
    openText(path) {
      const context = textContext(path);
      return context ? String(context.model.sharedModel.getSource()) : null;
    },
    // Write a text file: through the open editor's model, then saved (the person sees the new text, and JupyterLab
    // does not report the file changed on disk), else a contents save. Resolves to JSON text {} or {error}.
    writeText(path, text) {
      const context = textContext(path);
      return settled(() => {
        if (!context) return contents.save(path, { type: "file", format: "text", content: text });
        context.model.sharedModel.setSource(text);
        return context.save();
      });
    },
    // Save a contents model (JSON text {type, format, content}) at path: resolves to JSON text {} or {error}.
    saveModel(path, modelJson) { return settled(() => contents.save(path, JSON.parse(modelJson))); },
  };

  return api;
})()
