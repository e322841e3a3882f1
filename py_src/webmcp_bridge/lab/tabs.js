// tabs.js: the JS half of webmcp_bridge/lab/tabs.py: the other tabs of this site (same origin) that have a notebook
// open, and saves that cannot silently overwrite what another tab saved.
//
// Evaluated once by tabs.py (lab/ffi.py load_half); the expression's value is the object below. JupyterLite (and a
// JupyterLab server opened in two browser tabs) keeps one copy of a notebook per tab: nothing syncs them, and
// JupyterLab's own "File Changed" check before a save compares modification times with a 0.5 s margin and is not
// atomic (it reads the file's time, then writes), so two saves close together both succeed and one tab's work
// is gone from the file. Here:
// - presence: for every notebook open in this page, the page holds a Web Lock named
//   "<prefix>open:<tab id>:<path>" (released when the notebook closes or the page goes away, also on a crash);
//   navigator.locks.query() lists the locks of every tab of the origin, so the others are counted from it. A
//   BroadcastChannel message ("presence") tells the other tabs to count again; the count is kept here so Python
//   reads it synchronously (a read also starts a new count for the next read).
// - saves: every notebook context of the page gets its check-then-write (JupyterLab's private _maybeSave) run
//   inside the exclusive Web Lock "<prefix>save:<path>", shared by all tabs of the origin, and the check made
//   strict: the file's hash (a server gives one) or its exact modification time must be the one this tab loaded
//   or last saved; within the lock each write waits until the clock is past the file's time, so two writes never
//   share one. A changed file gets JupyterLab's own "File Changed" dialog (Cancel, Revert, Overwrite), after
//   the lock is released. Each save's outcome is recorded ("saved", "overwritten", "reverted", "cancelled")
//   and, when something was written, announced to the other tabs ("saved": path, time, hash).
// Python decides what to report; the lock names' prefix, the channel's name and the recount delay come from Python
// (configure). The page's objects come once, with the loader's context (attach(ctx), lab/ffi.py load_half); Python
// then names a notebook by its path and gets JSON text back.
(() => {
  const STATE = Symbol.for("webmcp-bridge.tabs"); // page-wide: a second evaluation reuses the first one's state
  const GUARDED = Symbol.for("webmcp-bridge.save-guard"); // marks a context whose saves go through the lock
  const state = (globalThis[STATE] ??= {
    tabId: globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    held: new Map(), // path -> {panels, release()}: this page's presence locks
    counts: new Map(), // path -> other tabs with it open, from the last query
    announced: new Map(), // path -> {lastModified, hash}: the last save another tab announced
    outcomes: new WeakMap(), // save token -> outcome
    current: new WeakMap(), // context -> the token of the save Python started (read when its check runs)
    channel: null,
    prefix: "webmcp-bridge:",
    querying: null,
    started: new WeakSet(), // trackers already watched
  });
  let tracker = null; // JupyterLab's notebook tracker (attach)
  let contents = null; // the contents manager (attach)
  const locks = globalThis.navigator?.locks ?? null;

  const openName = (path) => `${state.prefix}open:${state.tabId}:${path}`;
  const saveName = (path) => `${state.prefix}save:${path}`;
  const version = (model) => ({ lastModified: model?.last_modified ?? null, hash: model?.hash ?? null });

  // Whether the file (a contents model without content) is another version than the one this tab knows.
  function changed(mine, disk) {
    if (mine?.hash != null && disk?.hash != null) return mine.hash !== disk.hash;
    return (mine?.last_modified ?? null) !== (disk?.last_modified ?? null);
  }

  function post(message) {
    try { state.channel?.postMessage(message); } catch { /* a closed channel: nobody to tell */ }
  }

  // Count again, from the origin's locks, how many other tabs hold each path open.
  function query() {
    if (!locks) return Promise.resolve();
    state.querying ??= locks.query().then((snapshot) => {
      const tabs = new Map(); // path -> set of other tab ids
      const mark = `${state.prefix}open:`;
      for (const lock of [...(snapshot.held ?? []), ...(snapshot.pending ?? [])]) {
        if (!lock.name?.startsWith(mark)) continue;
        const rest = lock.name.slice(mark.length);
        const cut = rest.indexOf(":");
        const tab = rest.slice(0, cut), path = rest.slice(cut + 1);
        if (tab === state.tabId) continue;
        if (!tabs.has(path)) tabs.set(path, new Set());
        tabs.get(path).add(tab);
      }
      state.counts = new Map([...tabs].map(([path, ids]) => [path, ids.size]));
    }).catch(() => {}).finally(() => { state.querying = null; });
    return state.querying;
  }

  // Hold the presence lock of a path while at least one panel of this page shows it.
  function hold(path) {
    if (!locks) return;
    const entry = state.held.get(path);
    if (entry) { entry.panels++; return; }
    let release;
    const released = new Promise((resolve) => { release = resolve; });
    state.held.set(path, { panels: 1, release });
    // granted at once (the name is this tab's own); held until release() or the page goes away
    locks.request(openName(path), { mode: "shared" }, () => released).catch(() => {});
    setTimeout(() => post({ type: "presence" }), 0);
  }

  function drop(path) {
    const entry = state.held.get(path);
    if (!entry || --entry.panels > 0) return;
    state.held.delete(path);
    entry.release();
    setTimeout(() => post({ type: "presence" }), 0);
  }

  // Run the context's check-then-write inside the origin-wide lock of its path, strictly (see the top).
  function guardSaves(context, contents) {
    if (!locks || context[GUARDED] || typeof context._maybeSave !== "function" || typeof context._raiseConflict !== "function") return;
    if (context.model?.collaborative) return; // a collaborative server saves the shared document itself
    context[GUARDED] = true;
    const jupyterlabs = context._maybeSave;
    context._maybeSave = function (options) {
      const path = context.path;
      const token = state.current.get(context) ?? {};
      state.current.delete(context);
      const record = (outcome, model) => {
        state.outcomes.set(token, { outcome, ...version(model) });
        if (outcome === "saved" || outcome === "overwritten") {
          state.announced.delete(path); // this tab's version is the file's now
          post({ type: "saved", path, tab: state.tabId, ...version(model) });
        }
      };
      return locks.request(saveName(path), async () => {
        let disk;
        try { disk = await contents.get(path, { content: false, hash: true }); }
        catch { return { saved: await jupyterlabs.call(context, options) }; } // no file yet: JupyterLab's own path
        const mine = context.contentsModel;
        if (mine && changed(mine, disk)) return { conflict: disk };
        if (disk?.hash == null && disk?.last_modified) { // times decide: this write's must differ from the last one's
          const last = Date.parse(disk.last_modified);
          while (Date.now() <= last) await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return { saved: await jupyterlabs.call(context, options) };
      }).then(async (done) => {
        if (done.saved) {
          record("saved", done.saved);
          return done.saved;
        }
        let answered;
        try { answered = await context._raiseConflict(done.conflict, options); } // Cancel rejects (ModalCancelError)
        catch (error) { record(error?.name === "ModalCancelError" ? "cancelled" : "failed", null); throw error; }
        // Revert resolves with the disk's model itself; Overwrite with the model of its own write
        record(answered === done.conflict ? "reverted" : "overwritten", answered);
        return answered;
      });
    };
  }

  function watch(panel, contents) {
    const context = panel?.context;
    if (!context) return;
    guardSaves(context, contents);
    let path = context.path;
    hold(path);
    const renamed = (_, to) => { drop(path); path = to; hold(path); };
    context.pathChanged?.connect(renamed);
    panel.disposed?.connect(() => { context.pathChanged?.disconnect(renamed); drop(path); });
  }

  // The document context of the notebook open at path in this page, or null.
  const contextOf = (path) => tracker?.find((p) => p.context?.path === path)?.context ?? null;

  const api = {
    // prefix: the lock names' prefix; channel: the BroadcastChannel's name; recountMs: when to count the other
    // tabs once more after a message (milliseconds). Then watches the attached tracker's notebook panels.
    configure(prefix, channel, recountMs) {
      state.prefix = prefix;
      if (!state.channel && typeof BroadcastChannel === "function") {
        state.channel = new BroadcastChannel(channel);
        state.channel.onmessage = ({ data }) => {
          if (data?.type === "saved" && data.tab !== state.tabId && typeof data.path === "string") {
            state.announced.set(data.path, { lastModified: data.lastModified ?? null, hash: data.hash ?? null });
          }
          // a tab that just opened or closed a notebook: count now, and once more when its locks have settled
          query();
          setTimeout(query, recountMs);
        };
        window.addEventListener("pagehide", () => post({ type: "presence" }));
      }
      // watch every notebook panel of the tracker, now and as they open (once per tracker in the page)
      if (!tracker || state.started.has(tracker)) return;
      state.started.add(tracker);
      for (const panel of tracker.filter(() => true)) watch(panel, contents);
      tracker.widgetAdded.connect((_, panel) => watch(panel, contents));
      query();
    },
    // The loader's context, once: its notebook tracker, whose panels configure() starts watching (their saves go
    // through the application's contents manager).
    attach(ctx) {
      tracker = ctx?.tracker ?? null;
      contents = ctx?.app?.serviceManager?.contents ?? null;
    },
    // JSON text {others: other tabs with the path open (null: this browser cannot tell, no Web Locks),
    // atomic: whether saves go through the lock, announced: {lastModified, hash} of the last save another tab
    // announced | null, mine: {lastModified, hash} of the version this tab loaded or last saved}. From the last
    // count; a new count starts for the next read. path: a notebook open in this page (its panel's context is read;
    // none open: atomic false, mine empty).
    state(path) {
      const context = contextOf(path);
      query();
      return JSON.stringify({
        others: locks ? state.counts.get(path) ?? 0 : null, atomic: !!context?.[GUARDED],
        announced: state.announced.get(path) ?? null, mine: version(context?.contentsModel),
      });
    },
    // A fresh count (a Promise of the same JSON text as state()).
    async fresh(path) {
      await query();
      return stateOf(path);
    },
    // Save the notebook open at path as the person's Save does (context.save()), and resolve to JSON text
    // {outcome: "saved" | "overwritten" | "reverted" | "unguarded", lastModified, hash}, or {failed: {name,
    // message}} when the save rejects (Cancel in "File Changed": an Error named ModalCancelError) or no notebook
    // is open at path.
    async save(path) {
      const context = contextOf(path);
      if (!context) return JSON.stringify({ failed: { name: "NotebookGone", message: `no notebook open at ${path}` } });
      const token = {};
      state.current.set(context, token);
      try {
        await context.save();
      } catch (error) {
        return JSON.stringify({ failed: { name: String(error?.name ?? "Error"), message: String(error?.message ?? error) } });
      }
      const outcome = state.outcomes.get(token);
      return JSON.stringify(outcome ?? { outcome: "unguarded", ...version(context.contentsModel) });
    },
  };

  const stateOf = api.state;
  return api;
})()
