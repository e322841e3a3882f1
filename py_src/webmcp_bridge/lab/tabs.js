// tabs.js: the JS half of webmcp_bridge/lab/tabs.py: the other tabs of this site (same origin) that have a notebook
// open, and saves that cannot silently overwrite what another tab saved. JupyterLite (and a JupyterLab server open in
// two tabs) keeps one copy of a notebook per tab, and JupyterLab's "File Changed" check compares modification times
// with a 0.5 s margin, not atomically: two saves close together both succeed and one tab's work is gone. Here:
// - presence: for every notebook open in this page the page holds the Web Lock "<prefix>open:<tab id>:<tag>:<path>"
//   (released when it closes or the page goes away, also on a crash); navigator.locks.query() lists every tab's
//   locks, so the others are counted from it, again on each "presence" message of the BroadcastChannel.
// - saves: every notebook context's check-then-write (JupyterLab's private _maybeSave) runs inside the origin-wide
//   lock "<prefix>save:<path>", the check strict (the file's hash, else its exact modification time, must be the one
//   this tab loaded or saved last); a write waits until the clock is past the file's time. A changed file gets
//   JupyterLab's own "File Changed" dialog after the lock is released. Each outcome is recorded for Python.
// Code in JupyterLite's Pyodide kernel runs in a worker of the same origin: it can take these locks, list them and post
// on the channel (docs/SECURITY.md). So a save waits for its lock at most saveWaitMs, then runs the same check-then-
// write without it, the person is warned and the outcome says "unlocked". Every message is sealed: {body, mac}, body
// the JSON of {value, at (ms), nonce}, mac its HMAC-SHA-256 keyed by the page secret, which the kernel cannot read
// (localStorage; lab/page_secret.py makes it). A message that does not verify, is longer than messageChars, is
// further than messageMs from this clock or comes twice (nonce) is dropped unread. A presence lock's <tag> is the
// first 32 hex digits of the HMAC of "open\n<tab id>\n<path>": kernel code cannot make up a tab (it can copy or steal
// a real tab's lock name). The count is the agent's hint; nothing is decided by it. Without a page secret nothing is
// sealed, believed or counted (others: null).
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
    options: {}, // configure's: prefix, channel, secretKey, recountMs, saveWaitMs, messageMs, messageChars, warning, domain
    key: { hex: null, value: null }, // the CryptoKey made from the page secret last read
    nonces: new Map(), // nonce -> time (ms) of the messages opened, kept while within messageMs
    tags: new Map(), // presence lock name -> whether its tag verified (the names of the last query)
    warnings: new Map(), // path -> the id of the warning shown for its last save without the lock
    querying: null,
    counting: false, // whether the last count could verify the tags (there is a page secret)
    started: new WeakSet(), // trackers already watched
  });
  const options = state.options;
  let tracker = null; // JupyterLab's notebook tracker (attach)
  let contents = null; // the contents manager (attach)
  let notification = null; // JupyterLab's Notification (attach; null: the warning goes to the console)
  let translator = null; // the document manager's translator (attach), for the warning
  const locks = globalThis.navigator?.locks ?? null;
  const subtle = globalThis.crypto?.subtle ?? null; // a secure context only (https, localhost)
  const encoder = new TextEncoder();

  const saveName = (path) => `${options.prefix}save:${path}`;
  const version = (model) => ({ lastModified: model?.last_modified ?? null, hash: model?.hash ?? null });
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

  // -- the page secret: read (never made) here; webmcp_bridge/lab/page_secret.py makes it --------------------
  async function key() {
    let secret = null;
    try { secret = globalThis.localStorage?.getItem(options.secretKey) ?? null; } catch { /* storage refused */ }
    if (!subtle || !/^[0-9a-f]{64}$/.test(secret ?? "")) return null;
    if (state.key.hex !== secret) {
      const raw = Uint8Array.from(secret.match(/../g), (pair) => parseInt(pair, 16));
      const made = await subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
      state.key = { hex: secret, value: made };
    }
    return state.key.value;
  }
  // the HMAC-SHA-256 of text as hex, or null without a secret
  async function mac(text) {
    const made = await key();
    return made ? hex(new Uint8Array(await subtle.sign("HMAC", made, encoder.encode(text)))) : null;
  }

  // {body, mac} for value (see the top), or null without a secret
  async function seal(value) {
    const body = JSON.stringify({ value, at: Date.now(), nonce: hex(crypto.getRandomValues(new Uint8Array(16))) });
    const tag = await mac(body);
    return tag === null ? null : { body, mac: tag };
  }

  // the value of a sealed message, or null when it is not to be believed (see the top)
  async function unseal(sealed) {
    if (typeof sealed?.body !== "string" || sealed.body.length > options.messageChars) return null;
    if (typeof sealed.mac !== "string" || !/^[0-9a-f]{64}$/.test(sealed.mac)) return null;
    const made = await key();
    if (!made) return null;
    const tag = Uint8Array.from(sealed.mac.match(/../g), (pair) => parseInt(pair, 16));
    if (!(await subtle.verify("HMAC", made, tag, encoder.encode(sealed.body)))) return null;
    let data;
    try { data = JSON.parse(sealed.body); } catch { return null; }
    const now = Date.now();
    for (const [nonce, at] of state.nonces) if (Math.abs(now - at) > options.messageMs) state.nonces.delete(nonce);
    if (typeof data?.at !== "number" || Math.abs(now - data.at) > options.messageMs) return null;
    if (typeof data.nonce !== "string" || state.nonces.has(data.nonce)) return null;
    state.nonces.set(data.nonce, data.at);
    return data.value ?? null;
  }

  // Whether the file (a contents model without content) is another version than the one this tab knows.
  function changed(mine, disk) {
    if (mine?.hash != null && disk?.hash != null) return mine.hash !== disk.hash;
    return (mine?.last_modified ?? null) !== (disk?.last_modified ?? null);
  }

  function post(message) {
    if (!state.channel) return;
    seal(message).then((sealed) => sealed && state.channel?.postMessage(sealed))
      .catch(() => { /* a closed channel: nobody to tell */ });
  }

  // A message on the channel, once opened: another tab saved a notebook, or opened or closed one.
  function received(message) {
    if (message?.type === "saved" && message.tab !== state.tabId && typeof message.path === "string") {
      state.announced.set(message.path, { lastModified: message.lastModified ?? null, hash: message.hash ?? null });
    }
    // count now, and once more when the other tab's locks have settled
    query();
    setTimeout(query, options.recountMs);
  }

  // The tag of this page's presence lock of a path (see the top), or null without a secret.
  const tagOf = async (tab, path) => (await mac(`open\n${tab}\n${path}`))?.slice(0, 32) ?? null;

  // Count again, from the origin's locks, how many other tabs hold each path open (only locks whose tag verifies).
  function query() {
    if (!locks) return Promise.resolve();
    state.querying ??= Promise.all([locks.query(), key()]).then(async ([snapshot, made]) => {
      state.counting = made !== null; // no secret: no tag verifies, and the count is not known
      const tabs = new Map(); // path -> set of other tab ids
      const mark = `${options.prefix}open:`;
      const tags = new Map();
      for (const lock of [...(snapshot.held ?? []), ...(snapshot.pending ?? [])]) {
        if (!lock.name?.startsWith(mark) || tags.has(lock.name)) continue;
        const [tab, tag] = lock.name.slice(mark.length).split(":", 2);
        const path = lock.name.slice(mark.length + tab.length + (tag ?? "").length + 2);
        const valid = state.tags.get(lock.name) ?? (tag !== undefined && tag === (await tagOf(tab, path)));
        tags.set(lock.name, valid);
        if (!valid || tab === state.tabId) continue;
        if (!tabs.has(path)) tabs.set(path, new Set());
        tabs.get(path).add(tab);
      }
      state.tags = tags;
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
    tagOf(state.tabId, path).then((tag) => {
      if (tag !== null) return locks.request(`${options.prefix}open:${state.tabId}:${tag}:${path}`, { mode: "shared" }, () => released);
    }).catch(() => {});
    setTimeout(() => post({ type: "presence" }), 0);
  }

  function drop(path) {
    const entry = state.held.get(path);
    if (!entry || --entry.panels > 0) return;
    state.held.delete(path);
    entry.release();
    setTimeout(() => post({ type: "presence" }), 0);
  }

  // The person is told a save went ahead without the lock (one warning per notebook at a time).
  function warn(path) {
    const seconds = String(Math.round(options.saveWaitMs / 100) / 10);
    let text = options.warning.replace("%1", path).replace("%2", seconds);
    try { text = translator?.load(options.domain).__(options.warning, path, seconds) ?? text; } catch { /* as given */ }
    if (!notification) { console.warn(`[webmcp-bridge] ${text}`); return; }
    const shown = state.warnings.get(path);
    if (shown) notification.dismiss(shown);
    state.warnings.set(path, notification.warning(text, { autoClose: false }));
  }

  // Run the context's check-then-write inside the origin-wide lock of its path, strictly (see the top).
  function guardSaves(context, contents) {
    if (!locks || context[GUARDED] || typeof context._maybeSave !== "function" || typeof context._raiseConflict !== "function") return;
    if (context.model?.collaborative) return; // a collaborative server saves the shared document itself
    context[GUARDED] = true;
    const jupyterlabs = context._maybeSave;
    context._maybeSave = function (saveOptions) {
      const path = context.path;
      const token = state.current.get(context) ?? {};
      state.current.delete(context);
      let unlocked = false;
      const record = (outcome, model) => {
        state.outcomes.set(token, { outcome, ...version(model), ...(unlocked ? { unlocked } : {}) });
        if (outcome === "saved" || outcome === "overwritten") {
          state.announced.delete(path); // this tab's version is the file's now
          post({ type: "saved", path, tab: state.tabId, ...version(model) });
        }
      };
      const checkThenWrite = async () => {
        let disk;
        try { disk = await contents.get(path, { content: false, hash: true }); }
        catch { return { saved: await jupyterlabs.call(context, saveOptions) }; } // no file yet: JupyterLab's own path
        const mine = context.contentsModel;
        if (mine && changed(mine, disk)) return { conflict: disk };
        if (disk?.hash == null && disk?.last_modified) { // times decide: this write's must differ from the last one's
          const last = Date.parse(disk.last_modified);
          while (Date.now() <= last) await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return { saved: await jupyterlabs.call(context, saveOptions) };
      };
      let inside = null; // the check-then-write once the lock was granted
      const signal = AbortSignal.timeout(options.saveWaitMs);
      return locks.request(saveName(path), { signal }, () => (inside = checkThenWrite())).catch(async (error) => {
        if (inside) return inside; // the lock was stolen from it: the step goes on, its outcome stands
        if (!signal.aborted) throw error;
        unlocked = true; // nobody released the lock in time: the same step without it, and the person is told
        warn(path);
        return checkThenWrite();
      }).then(async (done) => {
        if (done.saved) {
          record("saved", done.saved);
          return done.saved;
        }
        let answered;
        try { answered = await context._raiseConflict(done.conflict, saveOptions); } // Cancel rejects (ModalCancelError)
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
    // JSON text {prefix (of the lock names), channel (the BroadcastChannel's name), secretKey (the page secret's
    // localStorage key), recountMs, saveWaitMs, messageMs, messageChars, warning ("%1": the path, "%2": the seconds
    // waited), domain (the warning's gettext domain)}; then watches the attached tracker's notebook panels.
    configure(text) {
      const given = JSON.parse(text);
      Object.assign(options, given);
      if (!state.channel && typeof BroadcastChannel === "function") {
        state.channel = new BroadcastChannel(given.channel);
        state.channel.onmessage = ({ data }) => {
          unseal(data).then((message) => message && received(message)).catch(() => {});
        };
        window.addEventListener("pagehide", () => post({ type: "presence" })); // if the page lives long enough
      }
      // watch every notebook panel of the tracker, now and as they open (once per tracker in the page)
      if (!tracker || state.started.has(tracker)) return;
      state.started.add(tracker);
      for (const panel of tracker.filter(() => true)) watch(panel, contents);
      tracker.widgetAdded.connect((_, panel) => watch(panel, contents));
      query();
    },
    attach(ctx) {
      tracker = ctx?.tracker ?? null;
      contents = ctx?.app?.serviceManager?.contents ?? null;
      notification = ctx?.modules?.apputils?.Notification ?? null;
      translator = ctx?.docManager?.translator ?? null;
    },
    // JSON text {others: other tabs with the path open (null: no Web Locks or no page secret), atomic: whether its
    // saves go through the lock, announced: {lastModified, hash} of another tab's last save | null, mine:
    // {lastModified, hash} this tab loaded or saved last}, from the last count (a new one starts for the next read).
    state(path) {
      const context = contextOf(path);
      query();
      return JSON.stringify({
        others: locks && state.counting ? state.counts.get(path) ?? 0 : null, atomic: !!context?.[GUARDED],
        announced: state.announced.get(path) ?? null, mine: version(context?.contentsModel),
      });
    },
    // A fresh count (a Promise of the same JSON text as state()).
    async fresh(path) {
      await query();
      return api.state(path);
    },
    // Save the notebook open at path as the person's Save does: JSON text {outcome: "saved" | "overwritten" |
    // "reverted" | "unguarded", lastModified, hash, unlocked?: true (went ahead without the lock)}, or {failed: {name,
    // message}} (Cancel in "File Changed" rejects with ModalCancelError; no notebook open at path).
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
  return api;
})()
