// notebook.js: the JS half of the JupyterLab adapter (webmcp_bridge/lab/notebook.py): plain reads and writes on
// a live notebook, so each step of a tool call crosses from Python to JS once.
//
// notebook.py evaluates it once per host (lab/ffi.py load_half), attaches the loader's ctx and configures it with what
// Python decides (the ANSI pattern, binary MIME types, metadata key, bounds). Then only primitives and JSON text
// cross: a panel is named by a handle (this half's table, dropped when the panel is disposed; an unknown handle
// throws NotebookGone), so the half can serve Python in a worker (docs/WORKER.md, "Handles instead of JS objects").
// Reads return plain facts; Python cuts heads and pages (core/limits.py) and decides who made a change from the
// facts recorded here. Output shapes mirror core/nbjson.py; text is ANSI-stripped before it is measured; sizes are
// UTF-8 bytes (binary MIME types: decoded base64 bytes).
(() => {
  const encoder = new TextEncoder();
  // configure's: ansi (the pattern stripped from text), binary (MIME types whose data is base64), key (the bridge's
  // metadata key), maxChanges (what a notebook's log keeps until Python takes it), mergeSeconds (output changes of
  // one cell this close are one record), errorChars (of a failed kernel request's message handed to Python)
  // eslint-disable-next-line no-control-regex -- an ANSI escape sequence starts with ESC (U+001B)
  let config = { ansi: /\x1b\[[0-?]*[ -/]*[@-~]/g, binary: new Set(), key: null, maxChanges: 0, mergeSeconds: 0,
                 errorChars: 0 };
  const texts = new WeakMap(); // output model -> {raw: [[mime, text]], items: Map(mime -> {text, bytes, encoded})}
  // notebook model -> what is kept of it from the first time a method reaches it (startTracking): {panel, revision: the
  // page-wide update clock at its last change, stamp: count of its metadata and cell-list changes (what levels, threads
  // and markers read), log: [change as record() writes it] (bounded, drained by Python), known: [{id, access, type}] by
  // index, walk: accessState's walk {revision, cells, locks}, index: idIndex's Map}
  const tracked = new WeakMap();
  let clock = 0; // counts every update of every tracked notebook, so a reopened notebook never reuses a revision
  // the loader's ctx (attach): tracker, app, docManager, modules (@jupyterlab/cells' CodeCell, apputils' dialogs),
  // kernelTrust (kernel_trust.js: told before every run of the agent's code)
  let page = {};
  const byHandle = new Map(); // handle -> notebook panel, until the panel is disposed
  const handles = new WeakMap(); // notebook panel -> its handle
  const runs = new Map(); // run id -> a runCode run not finished yet (runDone, runFinish)
  let nextRun = 0;
  let following = null; // follow(): {emit, undo: [fn]} of the person's side
  const watched = new Map(); // handle -> [fn] undoing watch(handle)
  let listener = null; // listen(): Python's callback, called once per burst of changes of tracked notebooks
  let listenDelay = 0; // ms from a burst's first change to the callback (listen)
  let listenTimer = null;
  const changedModels = new Set(); // notebook models changed since the callback last ran
  const agentRuns = new Map(); // cell id -> how many of the agent's executions of it have not ended (beginAgentRun .. endAgentRun)
  let agentDepth = 0; // > 0 while a write of the agent (a method of this object) runs
  let revertDepth = 0; // > 0 while the person's revert (setSource with revert) writes: its edit is recorded as kind "revert"
  let retyping = 0; // > 0 while setCellType replaces a cell: its delete and insert are one "type" change

  // Run fn as the agent's write: cell changes it causes are recorded with agentWrite true.
  function asAgent(fn) {
    agentDepth++;
    try { return fn(); } finally { agentDepth--; }
  }

  function accessOf(cell) {
    try { return accessIn(cell.sharedModel.getMetadata(config.key)); } catch { return null; }
  }

  // The raw access value of a bridge metadata block: block.access when the block is a JSON object, else null.
  const accessIn = (block) =>
    (block && typeof block === "object" && !Array.isArray(block) ? block.access ?? null : null);

  // The output (.jp-OutputArea-child) a DOM node of a selection is in, or null.
  const outputChildOf = (node) => (node?.nodeType === 1 ? node : node?.parentElement)?.closest(".jp-OutputArea-child") ?? null;

  // The cell models of a notebook model, as an array.
  const cellList = (m) => Array.from({ length: m.cells.length }, (_, i) => m.cells.get(i));

  const entryOf = (cell) => ({ id: cell.id, access: accessOf(cell), type: cell.type });

  function record(m, kind, cell, known_ = null) {
    const log = tracked.get(m)?.log;
    if (!log) return;
    let cellId = null, access = null;
    if (known_) ({ id: cellId, access } = known_);
    else try { cellId = cell.id; access = accessOf(cell); } catch { /* a disposed model */ }
    if (cellId == null || (quiet > 0 && kind === "edit")) return; // a line-end normalization is nobody's change
    // the facts Python decides the actor from: inside an agent's write, in a cell the agent is running
    if (revertDepth > 0 && kind === "edit") kind = "revert";
    const agentWrite = agentDepth > 0, agentRun = agentRuns.has(cellId), time = Date.now() / 1000;
    // code the agent wrote is the agent's whoever runs it: kernel_trust.js claims its kernel when the person does
    if (agentWrite && cell && ["edit", "insert", "type", "revert"].includes(kind)) page.kernelTrust?.markAgentCell?.(cell);
    const revision = clock + 1; // the change's own update is counted right after
    // A stream of outputs (a print loop: one change per message) is one record: an output change of the same
    // cell with the same facts as the newest record, at most mergeSeconds after it, is counted into it
    // (repeats, lastTime) rather than pushed; Python's change log merges such changes into one entry anyway.
    const last = log[log.length - 1];
    if (kind === "output" && last && last.kind === "output" && last.cellId === cellId && last.agentWrite === agentWrite
        && last.agentRun === agentRun && last.access === access && time - last.lastTime <= config.mergeSeconds) {
      last.repeats++;
      last.lastTime = time;
      last.revision = revision;
      return;
    }
    log.push({ agentWrite, agentRun, kind, cellId, time, access, revision, droppedBefore: 0, repeats: 0, lastTime: time });
    if (log.length > config.maxChanges) { // the oldest go; the oldest kept counts them, so Python can report the gap
      const gone = log.splice(0, log.length - config.maxChanges);
      log[0].droppedBefore += gone.reduce((n, c) => n + 1 + c.repeats + c.droppedBefore, 0);
    }
  }

  const bump = (m) => { tracked.get(m).stamp++; };

  // Make a code cell untrusted: its outputs are re-created untrusted (the model's own trusted setter) and the
  // trusted flag JupyterLab writes into the cell's metadata is removed, so a save and reload keeps it untrusted.
  function untrust(cell) {
    cell.trusted = false;
    if (cell.sharedModel.getMetadata("trusted") !== undefined) cell.sharedModel.deleteMetadata("trusted");
  }

  function watchCell(m, cell) {
    cell.sharedModel.changed.connect((_, change) => {
      if (change.metadataChange) {  // keep the remembered access current (a hidden cell stays hidden once deleted)
        bump(m);
        const entry = tracked.get(m).known.find((k) => k.id === cell.id);
        if (entry) entry.access = accessOf(cell);
      }
      if (change.sourceChange) {
        record(m, "edit", cell);
        lateLineEnds(m, cell);
      }
      if (change.executionCountChange && change.executionCountChange.newValue != null) record(m, "run", cell);
    });
    // outputs: the output area model's own signal (the shared model's outputsChange is not emitted for them); the
    // fact recorded is whether the outputs are empty after the change ("clear") or not ("output")
    if (cell.type === "code" && cell.outputs) {
      const outputs = cell.outputs;
      outputs.changed.connect(() => record(m, outputs.length === 0 ? "clear" : "output", cell));
    }
  }

  // -- line ends -------------------------------------------------------------------------------------------
  // CodeMirror shows "\r\n" and a lone "\r" as one line break, but JupyterLab's editor binding maps positions one
  // to one between the editor and the shared text: with CRs in the source, the person's typing lands at the wrong
  // place and any write throws in the binding after changing the model (the editor keeps the old text). So every
  // cell's source is made what the editor shows (CRs as "\n") as soon as the bridge sees the cell and before each of
  // the agent's writes, in a transaction whose origin is the binding's own configuration (which then leaves the
  // editor alone). Not anyone's change: nothing is recorded.
  let quiet = 0; // > 0 while line ends are normalized: not recorded
  const lineEnds = (text) => text.replace(/\r\n?/g, "\n");

  // The editor binding's configuration of a cell (the origin its observer skips), null when no editor is bound
  // to the cell yet, undefined when an editor is bound but its binding cannot be found.
  function bindingOf(panel, cellModel) {
    const widget = panel?.content?.widgets?.find((w) => w.model === cellModel);
    const view = widget?.editor?.editor;
    const ysource = cellModel.sharedModel?.ysource;
    if (!view) return null;
    if (!ysource) return undefined;
    // The configuration is a facet value (CodeMirror keeps static ones in config.staticValues, dynamic ones in
    // values) and the binding plugin's `conf`; none of these is public API, so each is looked at, defensively.
    const isConf = (v) => v && typeof v === "object" && v.ytext === ysource;
    const candidates = [...(view.state?.config?.staticValues ?? []), ...(view.state?.values ?? []),
                        ...(view.plugins ?? []).map((p) => p?.value?.conf)];
    return candidates.find(isConf);
  }

  // Returns false when the cell still holds CRs (an editor whose binding was not found: left as it is).
  function normalizeCell(panel, cellModel, fresh = false) {
    const shared = cellModel.sharedModel;
    const source = shared.getSource();
    if (!source.includes("\r")) return true;
    const ysource = shared.ysource;
    const origin = bindingOf(panel, cellModel);
    if (origin === undefined || !ysource || !ysource.doc) return false;
    quiet++;
    try {
      ysource.doc.transact(() => { ysource.delete(0, ysource.length); ysource.insert(0, lineEnds(source)); }, origin);
      if (fresh) shared.undoManager?.clear?.(); // just loaded: undo must not bring the CRs back
    } finally { quiet--; }
    return true;
  }

  // CRs arriving in a cell after the bridge saw it (another extension or a kernel payload setting the source; the
  // person's typing never brings any) are made LF too, once the change that brought them is over.
  function lateLineEnds(m, cell) {
    if (quiet > 0 || !cell.sharedModel.getSource().includes("\r")) return;
    queueMicrotask(() => {
      try { normalizeCell(tracked.get(m).panel, cell); } catch { /* the cell is gone */ }
    });
  }

  // Returns the ids of the cells still holding CRs (their editor's binding not found).
  function normalizeAll(panel, fresh = false) {
    return cellList(model(panel)).filter((cell) => !normalizeCell(panel, cell, fresh)).map((cell) => cell.id);
  }

  const textOf = (v) => (typeof v === "string" ? v : Array.isArray(v) && v.every((x) => typeof x === "string") ? v.join("") : JSON.stringify(v));

  // UTF-8 length of s (a lone surrogate counts 3 bytes, as TextEncoder writes U+FFFD): the browser's encoder is
  // several times faster than a loop over the characters (a 16 MB stream output: a few ms).
  const utf8Length = (s) => encoder.encode(s).length;

  // Decoded size of base64 text, whitespace ignored. Most base64 in a notebook has no whitespace: looking for each
  // character \s matches (String.includes, a fast native scan) spares copying the text without it (13 MB of images
  // copied that way held the page for tens of ms).
  const SPACES = [..."\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"];
  function base64Length(s) {
    const clean = SPACES.some((c) => s.includes(c)) ? s.replace(/\s/g, "") : s;
    const pad = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
    return Math.max(0, Math.floor((clean.length * 3) / 4) - pad);
  }

  // [mime, text] of each representation of an nbformat output (JSON), before ANSI stripping.
  function rawTexts(json) {
    if (json.output_type === "stream") return [["text/plain", textOf(json.text ?? "")]];
    if (json.output_type === "error") return [["text/plain", (json.traceback ?? []).length ? json.traceback.join("\n") : `${json.ename ?? ""}: ${json.evalue ?? ""}`]];
    return Object.entries(json.data ?? {}).map(([m, v]) => [m, textOf(v)]);
  }

  const itemsFrom = (raw) => new Map(raw.map(([mime, text]) => {
    if (config.binary.has(mime)) return [mime, { text, bytes: base64Length(text), binary: true }];
    const clean = text.includes("\x1b") ? text.replace(config.ansi, "") : text;
    return [mime, { text: clean, bytes: utf8Length(clean), binary: false }];
  }));

  function itemsOf(outputModel) {
    const json = outputModel.toJSON();
    const raw = rawTexts(json);
    // by content, not length: a stream's "\r" rewrites its text in place, often to the same length (a progress bar)
    const cached = texts.get(outputModel);
    if (cached?.raw.length === raw.length && raw.every(([m, t], i) => cached.raw[i][0] === m && cached.raw[i][1] === t)) return { json, items: cached.items };
    const items = itemsFrom(raw);
    texts.set(outputModel, { raw, items });
    return { json, items };
  }

  // One output as Python's RawOutput reads it: type, stream name / error name and value, and per MIME type
  // [mime, bytes, the text's first headBytes UTF-16 units (at least headBytes UTF-8 bytes when the text has
  // them: Python cuts the head), binary].
  function describeOutput(json, items, headBytes) {
    return {
      output_type: json.output_type,
      name: json.output_type === "stream" ? json.name : null,
      ename: json.output_type === "error" ? String(json.ename ?? "") : null,
      evalue: json.output_type === "error" ? String(json.evalue ?? "") : null,
      items: [...items].map(([mime, it]) => [mime, it.bytes, it.binary || headBytes <= 0 ? "" : it.text.slice(0, headBytes), it.binary]),
    };
  }

  // The binary item (an image's base64) of one output, or null.
  function binaryItem(panel, cellId, outputIndex, mime) {
    const output = outputOf(panel, cellId, outputIndex);
    const item = output && itemsOf(output).items.get(mime);
    return item && item.binary ? item : null;
  }

  // A binary item's base64 without whitespace (nbformat may wrap it in lines), computed once per item.
  function base64Text(item) {
    item.clean ??= item.text.replace(/\s/g, "");
    return item.clean;
  }

  // base64 -> bytes, strictly (throws on characters outside the alphabet): the browser's own decoder when it has one.
  function fromBase64(text) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  }

  // Bytes as base64: the browser's own encoder, else in chunks (String.fromCharCode takes a bounded argument count).
  function toBase64(bytes) {
    if (typeof bytes.toBase64 === "function") return bytes.toBase64();
    let binaryText = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binaryText += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binaryText);
  }

  // The panel's notebook model, tracked (revisions, change log) from the first time any method reaches it.
  function model(panel) {
    const m = panel.context.model;
    if (!tracked.has(m)) startTracking(panel, m);
    return m;
  }

  // Count changes of the notebook (every Y.Doc transaction: sources, outputs, metadata, cells), and save
  // notebooks of nbformat <= 4.4 as 4.5 so cell ids survive.
  function startTracking(panel, m) {
    const state = { panel, revision: clock, stamp: 0, log: [], known: [], walk: null, index: null };
    tracked.set(m, state);
    // afterTransaction, not "update": Yjs encodes each transaction as a binary update only while the doc has an
    // "update" listener, which made a large output cost a second copy. A transaction counts when it changed
    // something: Yjs' own test before it emits "update" (a deletion, or a client's clock moved).
    m.sharedModel.ydoc.on("afterTransaction", (transaction) => {
      if (!changedSomething(transaction)) return;
      state.revision = ++clock;
      if (!listener) return;
      changedModels.add(m);
      listenTimer ??= setTimeout(notifyListener, listenDelay);
    });
    m.sharedModel.metadataChanged?.connect(() => bump(m));
    for (const cell of cellList(m)) watchCell(m, cell);
    state.known = cellList(m).map(entryOf);
    normalizeAll(panel, true);
    // One change of the list comes as several signals, each sent once the list is final: `known` follows them one at
    // a time (a removed cell's model no longer answers: what it was comes from there), and is read again from the list
    // when the task ends. A cell removed and added again in one task (JupyterLab remakes a cell it moves, retypes or
    // reverts) is one record: "move" where its place changed, else "type" where its type did, else "edit".
    let task = null; // until the task ends: {before: Map(id -> [index, type]), done: Set(ids recorded as remade)}
    const remade = (id, now) => {
      if (task.done.has(id)) return;
      task.done.add(id);
      const [index, type] = task.before.get(id), cell = m.cells.get(now);
      record(m, index !== now ? "move" : type !== cell.type ? "type" : "edit", cell);
    };
    m.cells.changed.connect((_, change) => {
      state.index = null;
      if (!task) {
        task = { before: new Map(state.known.map((e, i) => [e.id, [i, e.type]])), done: new Set() };
        queueMicrotask(() => { task = null; state.known = cellList(m).map(entryOf); });
      }
      const final = new Map(cellList(m).map((cell, i) => [cell.id, i]));
      if (change.type === "add") change.newValues.forEach((cell, k) => {
        state.known.splice(change.newIndex + k, 0, entryOf(cell));
        watchCell(m, cell);
        if (!retyping) task.before.has(cell.id) ? remade(cell.id, final.get(cell.id)) : record(m, "insert", cell);
        normalizeCell(panel, cell, true);
      });
      else if (change.type === "remove") for (const gone of state.known.splice(change.oldIndex, change.oldValues.length)) {
        if (!retyping) final.has(gone.id) ? remade(gone.id, final.get(gone.id)) : record(m, "delete", null, gone);
      }
      bump(m);
    });
    panel.context.saveState.connect((_, saving) => {
      if (saving === "started" && m.sharedModel.nbformat === 4 && m.sharedModel.nbformat_minor < 5) m.sharedModel.nbformat_minor = 5;
    });
  }

  const changedSomething = (transaction) => transaction.deleteSet.clients.size > 0
    || [...transaction.afterState].some(([client, clock]) => transaction.beforeState.get(client) !== clock);

  function notifyListener() {
    listenTimer = null;
    // the handles of every open view of each (New View for Notebook shares a model), whichever of them was closed
    const ids = openPanels().filter((view) => changedModels.has(view.context?.model)).map(handleOf);
    changedModels.clear();
    if (listener && ids.length) listener(JSON.stringify(ids));
  }

  const takeChanges = (m) => tracked.get(m).log.splice(0);

  // cell id -> index of its first cell, built on the first lookup and dropped when the cell list changes; a hit is
  // checked against the live list, a miss walks afresh: O(1) between changes instead of a walk (1,000 cells: ~1 ms).
  function idIndex(m) {
    const state = tracked.get(m);
    state.index ??= new Map(cellList(m).map((cell, i) => [cell.id, i]).reverse()); // the first cell of an id wins
    return state.index;
  }

  function findIndex(panel, cellId) {
    const m = model(panel);
    const i = idIndex(m).get(cellId);
    if (i !== undefined && i < m.cells.length && m.cells.get(i).id === cellId) return i;
    // not there, or stale (never expected: the list's own signal drops the map): walk afresh before answering
    tracked.get(m).index = null;
    return idIndex(m).get(cellId) ?? -1;
  }

  function outputOf(panel, cellId, outputIndex) {
    const i = findIndex(panel, cellId);
    const outputs = i < 0 ? null : model(panel).cells.get(i).outputs;
    return outputs && outputIndex >= 0 && outputIndex < outputs.length ? outputs.get(outputIndex) : null;
  }

  function describeCell(cell, index, headBytes, maxOutputs) {
    const shared = cell.sharedModel;
    const outputs = cell.type === "code" && cell.outputs ? cell.outputs : null;
    const described = Array.from({ length: outputs ? Math.min(outputs.length, maxOutputs) : 0 }, (_, j) => {
      const { json, items } = itemsOf(outputs.get(j));
      return describeOutput(json, items, headBytes);
    });
    return {
      id: cell.id, index, cell_type: cell.type, source: shared.getSource(),
      execution_count: cell.type === "code" ? cell.executionCount ?? null : null,
      outputs: described, output_count: outputs ? outputs.length : 0,
    };
  }

  // A write's refusal when cell `index` holds something other than `expected` (null: nothing checked), line ends made
  // LF on both sides: JSON text {changed: the cell as it is}, else null.
  function changedSince(panel, index, expected) {
    const cell = model(panel).cells.get(index);
    if (expected == null || lineEnds(cell.sharedModel.getSource()) === lineEnds(String(expected))) return null;
    return JSON.stringify({ changed: describeCell(cell, index, 0, 0) });
  }

  const described = (panel, index) => JSON.stringify(describeCell(model(panel).cells.get(index), index, 0, 0));

  // accessState's facts of a panel's notebook, as an object (its change log taken).
  function accessFacts(panel) {
    const m = model(panel);
    const state = tracked.get(m), revision = state.revision;
    let walk = state.walk;
    if (!walk || walk.revision !== revision) {
      const cells = [], locks = [];
      for (let i = 0; i < m.cells.length; i++) {
        const cell = m.cells.get(i), shared = cell.sharedModel;
        const access = accessIn(shared.getMetadata(config.key));
        if (access !== null) cells.push([i, cell.id, access]);
        // the standard nbformat locks ([id, editable, deletable] where either is false)
        const editable = shared.getMetadata("editable") !== false, deletable = shared.getMetadata("deletable") !== false;
        if (!editable || !deletable) locks.push([cell.id, editable, deletable]);
      }
      walk = state.walk = { revision, cells, locks };
    }
    return { path: panel.context.path, revision, notebook: accessIn(m.sharedModel.getMetadata(config.key)), cells: walk.cells,
             changes: takeChanges(m), locks: walk.locks, cellCount: m.cells.length };
  }

  const openPanels = () => (page.tracker ? page.tracker.filter(() => true) : []);
  // The notebook panel open at path in this page, or null.
  const panelAt = (path) => page.tracker?.find((p) => p.context?.path === path) ?? null;

  // {handle, state} of a panel as JSON text, or null for no panel; state null while changes wait in its log (only
  // accessState takes them) or when the facts could not be read (accessState reads them again and throws)
  function viewed(panel) {
    if (!panel) return null;
    let state = null;
    try { if (!tracked.get(model(panel)).log.length) state = accessFacts(panel); } catch { /* read again by accessState */ }
    return JSON.stringify({ handle: handleOf(panel), state });
  }

  // -- handles ---------------------------------------------------------------------------------------------
  // A panel's handle: its id as first seen (a Lumino id, unique in the page), kept while the panel lives even if
  // its id is changed later; issued once, dropped from the table when the panel is disposed.
  function handleOf(panel) {
    if (!panel) return null;
    let h = handles.get(panel);
    if (h === undefined) {
      h = String(panel.id);
      handles.set(panel, h);
      byHandle.set(h, panel);
      panel.disposed?.connect(() => { if (byHandle.get(h) === panel) byHandle.delete(h); });
    }
    return h;
  }

  // An Error of this name (what Python tells apart).
  const named = (name, message) => Object.assign(new Error(message), { name });

  // The live panel of a handle; throws NotebookGone for a handle never issued or whose panel was disposed.
  function panelOf(h) {
    const panel = typeof h === "string" ? byHandle.get(h) : undefined;
    if (!panel || panel.isDisposed) throw named("NotebookGone", `no such notebook: ${String(h).slice(0, 100)}`);
    return panel;
  }

  // Connect fn to a Lumino signal; returns the undo.
  function link(signal, fn) {
    signal.connect(fn);
    return () => signal.disconnect(fn);
  }

  function unwatch(h) {
    for (const fn of watched.get(h) ?? []) { try { fn(); } catch { /* a disposed panel */ } }
    watched.delete(h);
  }

  // The agent's code is about to reach the panel's kernel: from now until it restarts the kernel is the agent's
  // (kernel_trust.js keeps its outputs untrusted). Without the loader's kernelTrust no agent code runs.
  function claimKernel(panel) {
    if (!page.kernelTrust) throw named("KernelTrustMissing", "the page's kernel trust is not in place");
    page.kernelTrust.claim(panel);
  }
  // The agent's executions of a cell, from the request until its reply (or failure): its changes carry agentRun.
  function beginAgentRun(cellId) { agentRuns.set(cellId, (agentRuns.get(cellId) ?? 0) + 1); }
  function endAgentRun(cellId) {
    const left = (agentRuns.get(cellId) ?? 0) - 1;
    if (left > 0) agentRuns.set(cellId, left); else agentRuns.delete(cellId);
  }

  // -- pictures of rendered outputs (captureOutput) ----------------------------------------------------------
  const SVG_NS = "http://www.w3.org/2000/svg";
  const captures = new Map(); // key -> ImageBitmap of a rendered output, until releaseCapture (at most CAPTURES_HELD)
  const CAPTURES_HELD = 4; // pictures held at once: the oldest is dropped past this (each call releases its own)
  let nextCapture = 0;
  // elements that draw nothing of their own (dropped from a picture) and ones whose content cannot be copied
  // (replaced by an empty box of their size)
  const DROPPED = new Set(["script", "style", "link", "meta", "noscript", "template", "title", "base"]);
  const BOXED = new Set(["iframe", "frame", "object", "embed", "video", "audio", "input", "textarea", "select",
    "button"]);
  // attributes that name another resource: kept only for data: URLs and references inside the picture (#id)
  const ADDRESSES = new Set(["src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "background",
    "data", "ping", "lowsrc"]);
  // the attributes of an HTML element that shape its layout beyond its computed style (kept on the copy)
  const LAYOUT_ATTRIBUTES = new Set(["colspan", "rowspan", "span", "dir", "lang", "alt"]);
  // inherited properties written on an element whenever they differ from its parent's (else it would inherit them)
  const INHERITED = ["color", "font-family", "font-size", "font-style", "font-weight", "font-stretch", "line-height",
    "letter-spacing", "word-spacing", "text-align", "text-indent", "text-transform", "text-shadow", "white-space",
    "white-space-collapse", "text-wrap-mode", "visibility", "fill", "fill-opacity", "fill-rule", "stroke",
    "stroke-width", "stroke-opacity", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap", "stroke-linejoin",
    "stroke-miterlimit", "font-variant", "font-kerning", "font-feature-settings", "direction", "writing-mode",
    "text-anchor", "dominant-baseline", "list-style-type", "list-style-position", "border-collapse", "border-spacing",
    "caption-side", "empty-cells", "cursor", "paint-order", "pointer-events", "quotes", "tab-size", "word-break",
    "overflow-wrap", "hyphens", "text-rendering", "color-scheme", "orphans", "widows", "-webkit-font-smoothing",
    "font-optical-sizing", "font-size-adjust", "font-synthesis-weight", "font-synthesis-style",
    "font-synthesis-small-caps", "font-variant-ligatures", "font-variant-caps", "font-variant-numeric",
    "font-variant-east-asian", "font-variant-alternates", "font-variant-position", "image-rendering", "shape-rendering",
    "clip-rule", "marker-start", "marker-mid", "marker-end", "text-decoration-skip-ink", "text-underline-position",
    "text-underline-offset", "-webkit-text-fill-color", "-webkit-text-stroke-color", "-webkit-text-stroke-width",
    "caret-color", "accent-color", "line-break", "text-align-last", "text-justify", "ruby-position", "user-select",
    "-webkit-user-modify", "-webkit-locale", "-webkit-rtl-ordering", "-webkit-line-break", "-webkit-text-security",
    "-webkit-highlight", "-webkit-tap-highlight-color", "speak", "forced-color-adjust", "print-color-adjust",
    "dynamic-range-limit", "interpolate-size", "math-depth", "math-shift", "math-style", "text-box-trim",
    "text-spacing-trim", "text-autospace", "text-size-adjust", "font-palette", "font-variation-settings",
    "font-language-override", "hanging-punctuation", "text-emphasis-color", "text-emphasis-position",
    "text-emphasis-style", "text-orientation", "zoom"];
  const DRAWN = "img, svg, canvas, video, picture, object, embed, iframe, input, textarea, select";

  // Yield to the page (a new task) when this stretch has run sliceMs.
  function slicer(sliceMs) {
    let since = performance.now();
    return async () => {
      if (performance.now() - since < sliceMs) return;
      await new Promise((resolve) => setTimeout(resolve, 0));
      since = performance.now();
    };
  }

  // The rendered node of an output as the notebook shows it, with the MIME type the person's renderer used:
  // {node, mime} or {reason}.
  function renderedOutput(panel, cellId, outputIndex) {
    const index = findIndex(panel, cellId);
    const cell = index < 0 ? null : panel.content.widgets?.[index];
    const area = cell?.outputArea;
    const output = outputOf(panel, cellId, outputIndex);
    if (!area || !output) return { reason: "not-shown" };
    const data = output.data ?? {};
    const mime = area.rendermime?.preferredMimeType?.(data, output.trusted ? "any" : "ensure");
    if (!mime) return { reason: "no-renderer" };
    const child = area.widgets?.[outputIndex];
    const node = child?.node?.querySelector?.(":scope > .jp-OutputArea-output") ?? child?.node;
    if (!panel.isVisible || cell.outputHidden || !node || !node.isConnected) return { reason: "not-shown" };
    return { node, mime };
  }

  // Whether a node shows anything: some text, or an element that draws (also inside shadow roots).
  function drawsSomething(node) {
    const texts = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let text = texts.nextNode(); text; text = texts.nextNode()) if (text.data.trim()) return true;
    if (node.querySelector?.(DRAWN)) return true;
    for (const el of node.querySelectorAll?.("*") ?? []) {
      if (el.shadowRoot && drawsSomething(el.shadowRoot)) return true;
    }
    return false;
  }

  // The children a node renders: a shadow root's (with slots replaced by what is assigned to them), else its own.
  function renderedChildren(node) {
    if (node.shadowRoot) return [...node.shadowRoot.childNodes];
    if (node.localName === "slot" && typeof node.assignedNodes === "function") {
      const assigned = node.assignedNodes({ flatten: true });
      if (assigned.length) return assigned;
    }
    return [...node.childNodes];
  }

  // The computed style of a plain element of each kind in an empty document (the sandbox frame), as Maps.
  function defaultsIn(frame) {
    const doc = frame.contentDocument;
    const svgRoot = doc.createElementNS(SVG_NS, "svg");
    doc.body.appendChild(svgRoot);
    const cache = new Map();
    return (el) => {
      const svg = el.namespaceURI === SVG_NS;
      const key = (svg ? "svg:" : "") + el.localName;
      let values = cache.get(key);
      if (!values) {
        const plain = svg ? doc.createElementNS(SVG_NS, el.localName) : doc.createElement(el.localName);
        (svg && el.localName !== "svg" ? svgRoot : doc.body).appendChild(plain);
        const cs = frame.contentWindow.getComputedStyle(plain);
        values = new Map();
        for (let i = 0; i < cs.length; i++) values.set(cs[i], cs.getPropertyValue(cs[i]));
        plain.remove();
        cache.set(key, values);
      }
      return values;
    };
  }

  // A data: URL of what a canvas or a loaded image shows, at its size on screen (device pixels, never more than its
  // own) and at most maxPixels, or "" when the browser refuses (another origin's pixels).
  function pixelsOf(el, maxPixels) {
    try {
      const canvasElement = el.localName === "canvas";
      if (!canvasElement && (!el.complete || !el.naturalWidth)) return "";
      const box = el.getBoundingClientRect();
      const ratio = window.devicePixelRatio || 1;
      let width = Math.min(canvasElement ? el.width : el.naturalWidth, Math.ceil(box.width * ratio));
      let height = Math.min(canvasElement ? el.height : el.naturalHeight, Math.ceil(box.height * ratio));
      const shrink = Math.min(1, Math.sqrt(maxPixels / Math.max(1, width * height)));
      width = Math.max(1, Math.floor(width * shrink));
      height = Math.max(1, Math.floor(height * shrink));
      const canvas = Object.assign(document.createElement("canvas"), { width, height });
      canvas.getContext("2d").drawImage(el, 0, 0, width, height);
      return canvas.toDataURL("image/png");
    } catch {
      return "";
    }
  }

  // characters XML 1.0 cannot hold (an SVG image holding one does not load): left out of a copy's texts and values
  // eslint-disable-next-line no-control-regex -- these control characters are what the pattern is for
  const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

  // A copy of a rendered node in the inert document `doc` (no browsing context: nothing in it loads or runs), each
  // element with its computed style written as its style attribute where it differs from a plain element's or,
  // for inherited properties, from its parent's. Handlers (on*), scripts and other resources' addresses are left
  // out; canvases and images become data: images; frames, media and form fields empty boxes of their size. More
  // than maxNodes nodes or maxChars characters of text and style copied: a TooLarge error.
  async function copyRendered(root, doc, defaults, pause, maxNodes, maxChars, maxPixels) {
    let nodes = 0;
    let chars = 0;
    const tooLarge = () => named("TooLarge", "too much to picture");
    const count = (n) => { if ((chars += n) > maxChars) throw tooLarge(); };
    // a text, value or style as copied: counted, and without the characters XML cannot hold
    const kept = (text) => { count(text.length); return text.replace(NOT_XML, ""); };
    const copyOf = async (node, parentValues) => {
      await pause();
      if (++nodes > maxNodes) throw tooLarge();
      if (node.nodeType === Node.TEXT_NODE) return doc.createTextNode(kept(node.data));
      if (node.nodeType !== Node.ELEMENT_NODE) return null;
      const tag = node.localName;
      if (DROPPED.has(tag)) return null;
      const svg = node.namespaceURI === SVG_NS;
      const cs = getComputedStyle(node);
      if (cs.display === "none") return null;
      let el;
      if (tag === "canvas" || (tag === "img" && !svg)) {
        el = doc.createElement("img");
        const src = tag === "img" && String(node.getAttribute("src") ?? "").startsWith("data:")
          ? node.getAttribute("src") : pixelsOf(node, maxPixels);
        if (src) {
          count(src.length);
          el.setAttribute("src", src);
        }
      } else if (BOXED.has(tag)) {
        el = doc.createElement("div");
      } else {
        el = svg ? doc.createElementNS(SVG_NS, tag) : doc.createElement(tag);
        for (const attr of node.attributes) {
          const name = attr.name.toLowerCase();
          // an HTML element keeps only what its computed style cannot say (a presentational attribute such as a
          // table's border would draw again what the page's styles turned off); an SVG element keeps its geometry
          if (svg ? name.startsWith("on") || name === "style" || name === "class" : !LAYOUT_ATTRIBUTES.has(name)) continue;
          if (ADDRESSES.has(name) && !/^(data:|#)/i.test(attr.value.trim())) continue;
          const value = kept(attr.value);
          try { el.setAttributeNS(attr.namespaceURI, attr.name, value); } catch { /* a name XML refuses */ }
        }
      }
      // custom properties (--*) are left out: computed values have every var() resolved already
      const plain = defaults(node);
      const values = new Map();
      let style = "";
      for (const name of INHERITED) values.set(name, cs.getPropertyValue(name));
      for (let i = 0; i < cs.length; i++) {
        const name = cs[i];
        if (name.startsWith("--")) continue;
        const value = cs.getPropertyValue(name);
        if ((values.has(name) && parentValues ? parentValues : plain).get(name) !== value) style += `${name}:${value};`;
      }
      if (style) el.setAttribute("style", kept(style));
      if (el.localName === "img" || el.localName === "div" && BOXED.has(tag)) return el;
      for (const child of renderedChildren(node)) {
        const copy = await copyOf(child, values);
        if (copy) el.appendChild(copy);
      }
      return el;
    };
    return copyOf(root, null);
  }

  // The first opaque background behind a node (the notebook's, as the person sees the output on it).
  function backgroundOf(node) {
    for (let el = node; el && el.nodeType === Node.ELEMENT_NODE; el = el.parentElement) {
      const color = getComputedStyle(el).backgroundColor;
      if (color && color !== "transparent" && !/rgba\(.*,\s*0\)$/.test(color)) return color;
    }
    return "white";
  }

  // A bitmap drawn at width x height and encoded as outMime (quality for a lossy format): JSON text {data: base64,
  // bytes, width, height, mime: what the encoder produced}.
  async function encoded(bitmap, width, height, outMime, quality) {
    const canvas = new OffscreenCanvas(width, height);
    canvas.getContext("2d").drawImage(bitmap, 0, 0);
    const blob = await canvas.convertToBlob(quality == null ? { type: outMime } : { type: outMime, quality });
    const out = new Uint8Array(await blob.arrayBuffer());
    return JSON.stringify({ data: toBase64(out), bytes: out.length, width, height, mime: blob.type });
  }

  function hold(bitmap) {
    const key = `capture-${++nextCapture}`;
    captures.set(key, bitmap);
    while (captures.size > CAPTURES_HELD) {
      const [oldest, held] = captures.entries().next().value;
      held.close();
      captures.delete(oldest);
    }
    return key;
  }

  const failure = (error) => String(error?.message ?? error).slice(0, config.errorChars);

  const api = {
    // binaryMimes: JSON text [MIME type, ...]
    configure(ansiPattern, binaryMimes, metadataKey, changeLogSize, errorLength, coalesceSeconds) {
      config = { ansi: new RegExp(ansiPattern, "g"), binary: new Set(JSON.parse(binaryMimes)), key: metadataKey,
                 maxChanges: changeLogSize, mergeSeconds: coalesceSeconds, errorChars: errorLength };
    },
    // The loader's context, once (lab/ffi.py load_half): the only way the page's objects reach this half.
    attach(ctx) {
      page = ctx ?? {};
    },
    // -- the open notebooks (the tracker's panels), as handles ---------------------------------------------
    // The current notebook panel's handle, or null.
    current() { return handleOf(page.tracker?.currentWidget ?? null); },
    // The current panel's (or the one open at path's) handle and, in the same crossing, what accessState answers
    // for it: JSON text {handle, state: {...} | null (changes wait in its log: accessState takes them)} or null.
    currentViewed() { return viewed(page.tracker?.currentWidget ?? null); },
    findViewed(path) { return viewed(panelAt(path)); },
    // The open notebook panels' handles, as JSON text [handle, ...].
    panels() { return JSON.stringify(openPanels().map(handleOf)); },
    // Open the notebook at path (activate: also bring it to the front; else in the background when not open) and
    // resolve, once its context is ready, to its handle, or to null when what opened is not a document widget.
    async open(path, activate) {
      const docs = page.docManager;
      const panel = activate ? docs.openOrReveal(path)
        : docs.findWidget(path) ?? docs.open(path, "default", undefined, { activate: false });
      if (!panel || !panel.content) return null;
      await panel.context.ready;
      return handleOf(panel);
    },
    // The notebook's path, whether it has unsaved changes, its cell count, its kernel's language (null: none set).
    path(panel) { return String(panel.context.path); },
    dirty(panel) { return Boolean(panel.context.model?.dirty); },
    cellCount(panel) { return model(panel).cells.length; },
    language(panel) { return panel.context.model?.defaultKernelLanguage || null; },
    // The kernel as JSON text {name, status, displayName}, or {ready: the session context's isReady} without one.
    kernel(panel) {
      const session = panel.sessionContext;
      const kernel = session?.session?.kernel;
      if (!kernel) return JSON.stringify({ ready: Boolean(session?.isReady) });
      return JSON.stringify({ name: String(kernel.name), status: String(kernel.status), displayName: String(session.kernelDisplayName) });
    },
    // Interrupt ("interrupt") or restart the kernel; a restart goes through the person's own restartCommand (not
    // brought to the front: JupyterLab asks "Restart Kernel?" first), else apputils' SessionContextDialogs. Resolves
    // to JSON text {outcome: "done" | "declined" | "none" (no kernel) | "unavailable" | "failed", message?}.
    kernelAction(panel, action, restartCommand) {
      const session = panel.sessionContext;
      const kernel = session?.session?.kernel;
      if (!kernel) return Promise.resolve(JSON.stringify({ outcome: "none" }));
      const act = async () => {
        if (action === "interrupt") { await kernel.interrupt(); return { outcome: "done" }; }
        let restarted = null;
        if (page.app?.commands?.hasCommand(restartCommand)) {
          restarted = await page.app.commands.execute(restartCommand, { semanticWidget: panel.id, activate: false });
        }
        if (restarted == null) {
          const Dialogs = page.modules?.apputils?.SessionContextDialogs;
          if (!Dialogs) return { outcome: "unavailable" };
          restarted = await new Dialogs().restart(session);
        }
        return { outcome: restarted ? "done" : "declined" };
      };
      return act().then((answer) => JSON.stringify(answer), (error) => JSON.stringify({ outcome: "failed", message: failure(error) }));
    },
    // -- the person's side: following the open notebooks --------------------------------------------------
    // follow(sink): call sink(JSON text [kind, handle]) when the current notebook changes ("current", handle or
    // null) or one is added ("added"), and, for each panel watch() names, when it closes ("closed") or its active
    // cell changes ("active"). follow(null) stops it all.
    follow(sink) {
      for (const h of [...watched.keys()]) unwatch(h);
      for (const fn of following?.undo ?? []) { try { fn(); } catch { /* a tracker already gone */ } }
      following = null;
      if (!sink || !page.tracker) return;
      const emit = (kind, h) => sink(JSON.stringify([kind, h]));
      following = { emit, undo: [
        link(page.tracker.currentChanged, (_, panel) => emit("current", handleOf(panel ?? null))),
        link(page.tracker.widgetAdded, (_, panel) => emit("added", handleOf(panel))),
      ] };
    },
    // Watch one panel for follow() (again: nothing), its notebook tracked from now.
    watch(panel) {
      const h = handleOf(panel);
      if (!following || watched.has(h)) return;
      const { emit } = following;
      model(panel);
      watched.set(h, [
        link(panel.disposed, () => emit("closed", h)),
        link(panel.content.activeCellChanged, () => emit("active", h)),
      ]);
    },
    // The session's worker is gone (the loader's watchdog): stop following and listening (the change logs stay).
    dispose() {
      api.follow(null);
      api.listen(null, 0);
    },
    // Bring the panel to the front of the main area (the Agent panel's "show in the notebook").
    activate(panel) {
      page.app?.shell?.activateById(panel.id);
      return true;
    },
    // Stop watching a panel (also after it was disposed).
    unwatch(h) { unwatch(h); },
    // The open notebooks as JSON text: [[path, dirty]].
    documents() { return JSON.stringify(openPanels().map((p) => [p.context.path, !!p.context.model?.dirty])); },
    // listen(callback, delayMs): call callback(JSON text [panel ids]) once per burst of changes of the tracked
    // notebooks, delayMs after the burst's first change; listen(null) stops. One listener (the person's side).
    listen(callback, delayMs) {
      listener = callback ?? null;
      listenDelay = delayMs ?? 0;
      if (!listener) { clearTimeout(listenTimer); listenTimer = null; changedModels.clear(); }
    },
    revision(panel) { return tracked.get(model(panel)).revision; },
    // Cell changes since the last call, oldest first, as JSON text (then forgotten).
    takeChanges(panel) { return JSON.stringify(takeChanges(model(panel))); },
    // The same as JSON text {path, changes, stamp} (equal stamps: equal levels, threads and cell order).
    takeChangesWithStamp(panel) {
      const m = model(panel);
      return JSON.stringify({ path: panel.context.path, changes: takeChanges(m), stamp: tracked.get(m).stamp });
    },
    // What the person's side lists of each cell: JSON text {revision, cells: [[id, type, first non-blank line of the
    // first maxLines (at most maxChars characters), outputs]]}; null while the revision is still knownRevision.
    cellInfos(panel, maxChars, maxLines, knownRevision) {
      const m = model(panel);
      const revision = tracked.get(m).revision;
      if (revision === knownRevision) return null;
      const cells = cellList(m).map((cell) => {
        const line = cell.sharedModel.getSource().split("\n", maxLines).find((l) => l.trim()) ?? "";
        return [cell.id, cell.type, line.trim().slice(0, maxChars), cell.type === "code" && cell.outputs ? cell.outputs.length : 0];
      });
      return JSON.stringify({ revision, cells });
    },
    // What the access guard reads for one call step, in one crossing: JSON text {path, revision, notebook: raw access
    // value of the notebook's block, cells: [[index, id, raw access value]] of cells with one, changes: as
    // takeChanges, locks: [[id, editable, deletable]], cellCount}; Python decides the levels. The walk over the cells
    // is reused while the revision (any change of the document, metadata included) is the same.
    accessState(panel) { return JSON.stringify(accessFacts(panel)); },
    // The page's text selection when both its ends lie inside one output of this notebook (its text runs from one end
    // to the other, across any cell between, a hidden one too): JSON text {cellId, outputIndex, text}, else null.
    outputSelection(panel) {
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || sel.rangeCount !== 1) return null;
      const child = outputChildOf(sel.anchorNode);
      if (!child || outputChildOf(sel.focusNode) !== child || !panel.node.contains(child)) return null;
      const cell = panel.content.widgets.find((w) => w.outputArea?.node.contains(child));
      const index = cell ? cell.outputArea.widgets.findIndex((w) => w.node === child) : -1;
      return index < 0 ? null : JSON.stringify({ cellId: cell.model.id, outputIndex: index, text: sel.toString() });
    },
    // The bridge's metadata: the notebook's block and the cells' blocks, as JSON text.
    bridgeMetadata(panel) { return JSON.stringify(model(panel).sharedModel.getMetadata(config.key) ?? null); },
    setBridgeMetadata(panel, json) { asAgent(() => model(panel).sharedModel.setMetadata(config.key, JSON.parse(json))); },
    cellBridgeMetadata(panel) {
      const found = cellList(model(panel)).map((cell, i) => [i, cell.id, cell.sharedModel.getMetadata(config.key)]);
      return JSON.stringify(found.filter(([, , value]) => value !== undefined));
    },
    setCellBridgeMetadata(panel, cellId, json) {
      const i = findIndex(panel, cellId);
      if (i < 0) return false;
      const shared = model(panel).cells.get(i).sharedModel;
      if (json == null) shared.deleteMetadata(config.key);
      else shared.setMetadata(config.key, JSON.parse(json));
      return true;
    },
    // Writes return the changed cell as JSON text (as cells() describes it, without outputs), null when no cell has
    // the id, or {lineEnds: id} when its line ends could not be made LF (nothing written). setSource and deleteCell
    // take expectedSource, the source Python checked (null: not checked): when the cell holds something else now (the
    // person typed between the two crossings), nothing is written and the answer is {changed: the cell as it is}.
    // setSource's answer also carries before (the source replaced) and the revision right after the write. revert: the
    // person's revert of an agent's edit, not the agent's write (recorded as kind "revert").
    setSource(panel, cellId, source, expectedSource = null, revert = false) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      // a cell whose CRs could not be made LF (its editor's binding not found) is not written: the binding would
      // throw after changing the model, leaving the editor showing the old text
      if (!normalizeCell(panel, model(panel).cells.get(i))) return JSON.stringify({ lineEnds: cellId });
      const refused = changedSince(panel, i, expectedSource);
      if (refused) return refused;
      const m = model(panel);
      const shared = m.cells.get(i).sharedModel;
      const before = shared.getSource(); // for the Agent panel's review and revert (changes/undo.py)
      const write = () => shared.setSource(lineEnds(source));
      if (!revert) asAgent(write);
      else { revertDepth++; try { write(); } finally { revertDepth--; } }
      return JSON.stringify({ ...describeCell(m.cells.get(i), i, 0, 0), before, revision: tracked.get(m).revision });
    },
    insertCell(panel, index, cellType, source) {
      source = lineEnds(source);
      const id = asAgent(() => model(panel).sharedModel.insertCell(index, { cell_type: cellType, source, metadata: {} }).getId());
      return described(panel, findIndex(panel, id));
    },
    deleteCell(panel, cellId, expectedSource = null) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      const refused = changedSince(panel, i, expectedSource);
      if (refused) return refused;
      const before = described(panel, i);
      asAgent(() => model(panel).sharedModel.deleteCell(i));
      return before;
    },
    moveCell(panel, cellId, toIndex) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      asAgent(() => model(panel).sharedModel.moveCell(i, toIndex));
      return described(panel, findIndex(panel, cellId));
    },
    // Change a cell's type as JupyterLab's NotebookActions.changeCellType does (a delete and an insert in one
    // transaction, source and metadata carried over, attachments only into markdown or raw, "trusted" dropped),
    // except that the new cell keeps the old one's id (address, change log, threads) and the person's selection is
    // left alone. Outputs go with a code cell's type. Recorded as one "type" change.
    setCellType(panel, cellId, cellType) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      const m = model(panel);
      const shared = m.sharedModel;
      const old = m.cells.get(i);
      if (old.type !== cellType) {
        if (old.type === "code" && panel.content.widgets[i]?.outputArea?.pendingInput) return JSON.stringify({ pendingInput: cellId });
        const raw = old.sharedModel.toJSON();
        const metadata = { ...(raw.metadata ?? {}) };
        delete metadata.trusted;
        const cell = { id: cellId, cell_type: cellType, source: raw.source, metadata };
        if (cellType !== "code" && raw.attachments) cell.attachments = raw.attachments;
        asAgent(() => {
          retyping++;
          try { shared.transact(() => { shared.deleteCell(i); shared.insertCell(i, cell); }); } finally { retyping--; }
          record(m, "type", m.cells.get(i));
        });
      }
      return described(panel, i);
    },
    clearOutputs(panel, cellId) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      const cell = model(panel).cells.get(i);
      if (cell.type === "code") {
        const trusted = cell.trusted; // JupyterLab's clearExecution trusts the cell: an untrusted one stays untrusted
        asAgent(() => cell.sharedModel.transact(() => cell.clearExecution()));
        if (!trusted) untrust(cell);
      }
      return described(panel, i);
    },
    // Run a code cell for the agent: JupyterLab's CodeCell.execute, whose synchronous part clears the cell, marks it
    // trusted and sends the request; the cell is made untrusted again before this returns, so before any output of
    // the run arrives (later tasks): they render untrusted until the person's Trust command. Its changes are the
    // agent's (agentRun) until execute settles. Returns null for an unknown id, else a promise of JSON text {status,
    // execution_count} ({status: "ok", execution_count: null}: an empty cell, nothing run; {status: "failed"}:
    // execute rejected), never a promise of null (awaited from the worker, it would read as an unknown id).
    executeAsAgent(panel, cellId) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      const widget = panel.content.widgets[i];
      claimKernel(panel);
      beginAgentRun(cellId);
      let promise;
      try {
        promise = page.modules.cells.CodeCell.execute(widget, panel.sessionContext);
        untrust(widget.model);
      } catch (error) { endAgentRun(cellId); throw error; }
      return Promise.resolve(promise).then(
        (reply) => JSON.stringify(reply ? { status: String(reply.content?.status), execution_count: reply.content?.execution_count ?? null }
                                        : { status: "ok", execution_count: null }),
        () => JSON.stringify({ status: "failed", execution_count: null }),
      ).finally(() => endAgentRun(cellId));
    },
    // The cells at these indices (null: every cell) or with these ids (strings), in order; null for an index out of
    // range or an id no cell has.
    cells(panel, keysJson, headBytes, maxOutputs) {
      const cells = model(panel).cells;
      const keys = keysJson == null ? [...Array(cells.length).keys()] : JSON.parse(keysJson);
      return JSON.stringify(keys.map((key) => {
        const i = typeof key === "string" ? findIndex(panel, key) : key;
        return i >= 0 && i < cells.length ? describeCell(cells.get(i), i, headBytes, maxOutputs) : null;
      }));
    },
    // The code cells at indices 0..lastIndex as JSON [[id, index, executionCount|null, edited|null], ...]: edited
    // is the model's isDirty (source changed since its last run), null where the model has none.
    runStates(panel, lastIndex) {
      const rows = cellList(model(panel)).slice(0, Math.max(0, lastIndex + 1)).map((cell, i) => cell.type !== "code" ? null
        : [cell.id, i, cell.executionCount ?? null, typeof cell.isDirty === "boolean" ? cell.isDirty : null]);
      return JSON.stringify(rows.filter(Boolean));
    },
    // Bytes [first, end) of one representation's UTF-8 text (clipped to it), as JSON text {data: base64,
    // first, total: its size in bytes}, or null when the output or MIME type is not there. Python pages them.
    outputBytes(panel, cellId, outputIndex, mime, first, end) {
      const output = outputOf(panel, cellId, outputIndex);
      const item = output && itemsOf(output).items.get(mime);
      if (!item) return null;
      item.encoded ??= encoder.encode(item.text);
      const data = item.encoded;
      const from = Math.min(first, data.length);
      return JSON.stringify({ data: toBase64(data.subarray(from, Math.min(end, data.length))), first: from, total: data.length });
    },
    // A binary representation's base64 (whitespace removed) and decoded size as JSON text {data, bytes}: data its first
    // headChars characters (Python decodes the head), else all of it, or null when it decodes to more than maxBytes;
    // null when the output or MIME type is not there.
    outputBinary(panel, cellId, outputIndex, mime, maxBytes, headChars = null) {
      const item = binaryItem(panel, cellId, outputIndex, mime);
      if (!item) return null;
      const whole = item.bytes <= maxBytes ? base64Text(item) : null;
      return JSON.stringify({ data: headChars == null ? whole : base64Text(item).slice(0, headChars), bytes: item.bytes });
    },
    // A copy of a stored image at the size and format Python chose (decoded, resampled and encoded off the main
    // thread): resolves to JSON text as encoded() answers, {error} when the data is not an image of that type, or
    // null when the output or MIME type is not there.
    async resizeImage(panel, cellId, outputIndex, mime, width, height, outMime, quality) {
      const item = binaryItem(panel, cellId, outputIndex, mime);
      if (!item) return null;
      let bitmap;
      try {
        const bytes = fromBase64(base64Text(item));
        bitmap = await createImageBitmap(new Blob([bytes], { type: mime }),
          { resizeWidth: width, resizeHeight: height, resizeQuality: "high", imageOrientation: "none" });
      } catch (error) {
        return JSON.stringify({ error: String(error?.name ?? "Error") });
      }
      try {
        return await encoded(bitmap, width, height, outMime, quality);
      } finally {
        bitmap.close();
      }
    },
    // A picture of one output as the person's notebook shows it: the output area's own rendering (never rendered
    // again, never trusted for it) copied by copyRendered in stretches of sliceMs, drawn as an SVG foreignObject
    // image from a data: URL (the canvas stays readable), at most maxSide pixels on its longest side. Resolves to JSON
    // text {status: "ok", key (held until releaseCapture), mime, width, height (CSS pixels), pictureWidth,
    // pictureHeight}, {status: "empty", mime}, {status: "unavailable", reason: "not-shown" | "no-renderer" |
    // "too-large" | "failed"}, or null when the output is not there.
    async captureOutput(panel, cellId, outputIndex, maxSide, sliceMs, maxNodes, maxChars, maxPixels) {
      if (!outputOf(panel, cellId, outputIndex)) return null;
      const found = renderedOutput(panel, cellId, outputIndex);
      if (!found.node) return JSON.stringify({ status: "unavailable", reason: found.reason });
      const { node, mime } = found;
      const rect = node.getBoundingClientRect();
      const width = Math.round(rect.width), height = Math.round(rect.height);
      if (width < 1 || height < 1 || !drawsSomething(node)) return JSON.stringify({ status: "empty", mime });
      const scale = Math.min(1, maxSide / Math.max(width, height));
      const pictureWidth = Math.max(1, Math.round(width * scale)), pictureHeight = Math.max(1, Math.round(height * scale));
      const frame = document.createElement("iframe");
      frame.setAttribute("aria-hidden", "true");
      frame.tabIndex = -1;
      frame.style.cssText = "position:fixed;left:-10000px;top:0;width:10px;height:10px;border:0;visibility:hidden";
      let bitmap;
      try {
        document.body.appendChild(frame);
        const doc = document.implementation.createHTMLDocument("");
        const copy = await copyRendered(node, doc, defaultsIn(frame), slicer(sliceMs), maxNodes, maxChars, maxPixels);
        if (!outputOf(panel, cellId, outputIndex)) return null; // rerun or cleared while it was copied
        if (!copy) return JSON.stringify({ status: "empty", mime });
        const base = copy.getAttribute("style") ?? "";
        copy.setAttribute("style", `${base}margin:0;position:relative;left:0;top:0;width:${width}px;height:${height}px;` +
          `box-sizing:border-box;overflow:hidden;content-visibility:visible;background-color:${backgroundOf(node)};`);
        const markup = new XMLSerializer().serializeToString(copy);
        const svg = `<svg xmlns="${SVG_NS}" width="${pictureWidth}" height="${pictureHeight}" ` +
          `viewBox="0 0 ${width} ${height}"><foreignObject x="0" y="0" width="${width}" height="${height}">` +
          `${markup}</foreignObject></svg>`;
        const image = new Image(pictureWidth, pictureHeight);
        image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
        await image.decode();
        // drawn on a canvas straight from the image element (an ImageBitmap made from an SVG image is not
        // origin-clean in this browser; the canvas the image is drawn on is)
        const canvas = new OffscreenCanvas(pictureWidth, pictureHeight);
        canvas.getContext("2d").drawImage(image, 0, 0, pictureWidth, pictureHeight);
        bitmap = canvas.transferToImageBitmap();
      } catch (error) {
        return JSON.stringify({ status: "unavailable", reason: error?.name === "TooLarge" ? "too-large" : "failed" });
      } finally {
        frame.remove();
      }
      return JSON.stringify({ status: "ok", key: hold(bitmap), mime, width, height, pictureWidth, pictureHeight });
    },
    // A held picture as encoded() answers, {error} when the browser refuses to encode it, or null (key not held).
    async encodeCapture(panel, key, width, height, outMime, quality) {
      const held = captures.get(key);
      if (!held) return null;
      let bitmap = null;
      try {
        bitmap = await createImageBitmap(held, { resizeWidth: width, resizeHeight: height, resizeQuality: "high" });
        return await encoded(bitmap, width, height, outMime, quality);
      } catch (error) {
        return JSON.stringify({ error: String(error?.name ?? "Error") });
      } finally {
        bitmap?.close();
      }
    },
    releaseCapture(panel, key) {
      captures.get(key)?.close();
      captures.delete(key);
    },
    focus(panel) {
      const active = panel.content.activeCell;
      if (!active) return JSON.stringify({ cellId: null, cursor: null, selection: null });
      const editor = active.editor;
      const sel = editor ? editor.getSelection() : null;
      const same = sel && sel.start.line === sel.end.line && sel.start.column === sel.end.column;
      return JSON.stringify({
        cellId: active.model.id,
        cursor: editor ? editor.getCursorPosition() : null,
        selection: sel && !same ? { start: sel.start, end: sel.end } : null,
      });
    },
    setFocus(panel, cellId, cursorJson, selectionJson) {
      const index = findIndex(panel, cellId);
      if (index < 0) return false;
      const notebook = panel.content;
      notebook.activeCellIndex = index;
      notebook.scrollToItem?.(index);
      const editor = notebook.activeCell?.editor;
      if (editor && selectionJson) { notebook.mode = "edit"; editor.setSelection(JSON.parse(selectionJson)); }
      else if (editor && cursorJson) { notebook.mode = "edit"; editor.setCursorPosition(JSON.parse(cursorJson)); }
      return true;
    },
    // Reveal a cell and outline one of its outputs for ms (checked on the model at once, outlined once scrolled):
    // "ok", "cell" (no cell has the id) or "output" (no output at that index).
    highlightOutput(panel, cellId, outputIndex, ms) {
      const index = findIndex(panel, cellId);
      if (index < 0) return "cell";
      if (!outputOf(panel, cellId, outputIndex)) return "output";
      const notebook = panel.content;
      notebook.activeCellIndex = index;
      Promise.resolve(notebook.scrollToItem?.(index)).catch(() => {}).then(() => {
        const node = notebook.widgets[index]?.outputArea?.widgets?.[outputIndex]?.node;
        if (!node) return;
        node.scrollIntoView?.({ block: "nearest" });
        node.classList.add("webmcp-bridge-output-highlight");
        setTimeout(() => node.classList.remove("webmcp-bridge-output-highlight"), ms);
      });
      return "ok";
    },
    // -- batched edits, code without a cell ------------------------------------
    // JSON text {revision, ids: the cells' ids in order}: what host/edit_plan.py resolves a batch against.
    cellIds(panel) {
      const m = model(panel);
      return JSON.stringify({ revision: tracked.get(m).revision, ids: m.sharedModel.cells.map((cell) => cell.getId()) });
    },
    // Carry out steps (JSON: [{op: "insert", index, cell_type, source} | {op: "set_source", index, cell_id, source}
    // | {op: "delete", index, cell_id} | {op: "move", from_index, index, cell_id}], host/edit_plan.py) in ONE
    // transaction, as the agent: one revision, one step of undo. Made for `revision`: another revision now answers
    // {revision: now} (Python plans again). Cells are found by id in a map kept alongside (the model's lists catch
    // up when the transaction ends); a move deletes and inserts the cell's JSON, as JupyterLab's moveCells. Returns
    // JSON text {ids: [per step, its cell; a new id for an insert], befores, afters: {cell id: source before its first
    // set_source / after the batch}}, {lineEnds: id} (a set_source of a cell still holding CRs) or {changed: cell}
    // (a cell of expectedJson, {cell id: source as Python checked it}, holds something else).
    applyEdits(panel, stepsJson, revision, expectedJson = null) {
      const m = model(panel);
      const now = tracked.get(m).revision;
      if (now !== revision) return JSON.stringify({ revision: now });
      // as setSource: a cell a step changes or deletes that no longer holds the source Python checked refuses the
      // whole batch, nothing done (the revision check alone cannot tell a person's keystroke from other changes)
      for (const [cellId, expected] of Object.entries(JSON.parse(expectedJson ?? "{}"))) {
        const i = findIndex(panel, cellId);
        const refused = i >= 0 ? changedSince(panel, i, expected) : null;
        if (refused) return refused;
      }
      const shared = m.sharedModel;
      const steps = JSON.parse(stepsJson);
      const stuck = normalizeAll(panel); // as setSource: a cell still holding CRs is not written
      for (const step of steps) if (step.op === "set_source" && stuck.includes(step.cell_id)) return JSON.stringify({ lineEnds: step.cell_id });
      for (const step of steps) if (typeof step.source === "string") step.source = lineEnds(step.source);
      const byId = new Map(shared.cells.map((cell) => [cell.getId(), cell]));
      const ids = [];
      const befores = {}; // cell id -> its source before the first set_source of it (changes/undo.py)
      asAgent(() => shared.transact(() => {
        for (const step of steps) {
          let id = step.cell_id;
          if (step.op === "insert") {
            const cell = shared.insertCell(step.index, { cell_type: step.cell_type, source: step.source, metadata: {} });
            id = cell.getId();
            byId.set(id, cell);
          } else if (step.op === "set_source") {
            befores[id] ??= byId.get(id).getSource();
            byId.get(id).setSource(step.source);
          } else if (step.op === "delete") {
            shared.deleteCell(step.index);
            byId.delete(id);
          } else if (step.op === "move") {
            const json = byId.get(id).toJSON();
            shared.deleteCell(step.from_index);
            byId.set(id, shared.insertCell(step.index, json));
          } else continue;
          // a cell made in this transaction sends no change of its own: the agent's code in it is marked here
          if (step.op === "insert" || step.op === "set_source") page.kernelTrust?.markAgentCell?.({ id });
          ids.push(id);
        }
      }));
      const afters = {};
      for (const id of Object.keys(befores)) if (byId.has(id)) afters[id] = byId.get(id).getSource();
      return JSON.stringify({ ids, befores, afters });
    },
    // Run code in the panel's kernel without a cell (store_history false; silent: the request's flag) and report its
    // iopub messages as facts, in order: [{type: "stream", name, text} | {type: "error", ename, evalue, traceback} |
    // {type: "execute_result" | "display_data", data} | {type: "clear_output", wait}] (core/run_outputs.py merges
    // them). While the call waits they go to sink(JSON text) in batches, once the unsent stream text reaches
    // flushChars UTF-16 units or flushMs after the first unsent message, so a flood holds bounded memory here;
    // runFinish answers the rest and how many batches were sent (in the worker a sink's message may arrive after
    // it: Python waits for that many). Returns JSON text {run: id} (then runDone, runFinish), {none: true} (no
    // kernel) or {refused: message}; a failed request settles runDone with status "failed".
    runCode(panel, code, silent, flushChars, flushMs, sink, asAgent = true) {
      const kernel = panel.sessionContext?.session?.kernel;
      if (!kernel) return JSON.stringify({ none: true });
      let future;
      try {
        if (asAgent) claimKernel(panel);
        future = kernel.requestExecute({ code, silent: Boolean(silent), store_history: false, allow_stdin: false, stop_on_error: true });
      } catch (error) {
        return JSON.stringify({ refused: failure(error) });
      }
      const run = ++nextRun;
      const entry = { batch: [], chars: 0, timer: null, stopped: false, done: null, sent: 0 };
      const take = () => {
        clearTimeout(entry.timer);
        entry.timer = null;
        entry.chars = 0;
        return entry.batch.splice(0);
      };
      const flush = () => {
        const taken = take();
        if (!taken.length || entry.stopped || !sink) return;
        entry.sent += 1;
        sink(JSON.stringify(taken));
      };
      future.onIOPub = (msg) => {
        if (entry.stopped) return;
        const type = msg.header.msg_type;
        const c = msg.content;
        let fact = null;
        if (type === "stream") fact = { type, name: c.name, text: String(c.text ?? "") };
        else if (type === "error") fact = { type, ename: c.ename ?? null, evalue: c.evalue ?? null, traceback: c.traceback ?? [] };
        else if (type === "execute_result" || type === "display_data") fact = { type, data: c.data ?? {} };
        else if (type === "clear_output") fact = { type, wait: Boolean(c.wait) };
        if (!fact) return;
        entry.batch.push(fact);
        entry.chars += fact.text?.length ?? 0;
        if (entry.chars >= flushChars) flush();
        else entry.timer ??= setTimeout(flush, flushMs);
      };
      entry.done = future.done.then(
        (reply) => JSON.stringify({ status: String(reply?.content?.status ?? "ok"), execution_count: reply?.content?.execution_count ?? null, reason: null }),
        (err) => JSON.stringify({ status: "failed", execution_count: null, reason: failure(err) }),
      );
      entry.take = take;
      runs.set(run, entry);
      return JSON.stringify({ run });
    },
    // -- the kernel model: kernel_trust.js's answers (see there) --------------------------------------------------
    kernelOwner(panel) { return page.kernelTrust?.owner(panel) ?? null; },
    agentKernels() { return page.kernelTrust?.agentKernels() ?? 0; },
    restartAgentKernels() { return page.kernelTrust ? page.kernelTrust.restartAgentKernels() : Promise.resolve(JSON.stringify({ restarted: 0, failed: 0 })); },
    confirm(title, body, accept) { return page.kernelTrust ? page.kernelTrust.confirm(title, body, accept) : Promise.resolve(false); },
    // A promise of the run's JSON text {status, execution_count, reason} (runCode); null for an unknown run.
    runDone(run) { return runs.get(run)?.done ?? null; },
    // JSON text {facts: the run's facts not yet sent to its sink, sent: how many batches the sink was given}; the
    // run is then stopped and forgotten. null for an unknown run.
    runFinish(run) {
      const entry = runs.get(run);
      if (!entry) return null;
      runs.delete(run);
      const facts = entry.take();
      entry.stopped = true;
      return JSON.stringify({ facts, sent: entry.sent });
    },
    // The saved notebook at path as JSON text {metadata, cells: [as describeCell, id "" when absent, at most
    // maxOutputs outputs], cellMetadata: [per cell]} (the bridge's blocks as found: Python decides the levels), or
    // {size} when the file is over maxBytes (nothing loaded). Resolves to null when the file cannot be read, is not a
    // notebook, or is open in this page (read live then: its levels are the person's latest).
    async savedNotebook(path, headBytes, maxOutputs, maxBytes) {
      const open = () => panelAt(path) !== null;
      let saved;
      try {
        if (open()) return null;
        const listed = await page.app.serviceManager.contents.get(path, { content: false });
        if (listed?.type !== "notebook") return null;
        if (Number.isFinite(listed.size) && listed.size > maxBytes) return JSON.stringify({ size: listed.size });
        saved = await page.app.serviceManager.contents.get(path, { content: true });
      } catch { return null; }
      if (open() || saved?.type !== "notebook" || saved.content == null) return null;
      const content = saved.content;
      const cells = Array.isArray(content?.cells) ? content.cells : [];
      const described = cells.map((cell, index) => {
        const type = ["code", "markdown", "raw"].includes(cell?.cell_type) ? cell.cell_type : "raw";
        const outputs = type === "code" && Array.isArray(cell.outputs) ? cell.outputs : [];
        return {
          id: typeof cell?.id === "string" ? cell.id : "", index, cell_type: type,
          source: lineEnds(textOf(cell?.source ?? "")),
          execution_count: type === "code" && Number.isInteger(cell.execution_count) ? cell.execution_count : null,
          outputs: outputs.slice(0, maxOutputs).filter((o) => o && typeof o === "object")
            .map((o) => describeOutput(o, itemsFrom(rawTexts(o)), headBytes)),
          output_count: outputs.length,
        };
      });
      const cellMetadata = cells.map((cell) => cell?.metadata?.[config.key] ?? null);
      return JSON.stringify({ metadata: content?.metadata?.[config.key] ?? null, cells: described, cellMetadata });
    },
  };

  // Every method but these takes a notebook's handle first: the wrapper hands it the panel (panelOf: an unknown or
  // dropped handle throws NotebookGone before the method runs).
  const OFF_PANEL = new Set(["configure", "attach", "current", "currentViewed", "findViewed", "panels", "open",
    "follow", "dispose", "unwatch", "documents", "listen", "agentKernels", "restartAgentKernels", "confirm", "runDone",
    "runFinish", "savedNotebook"]);
  for (const [name, method] of Object.entries(api)) {
    if (!OFF_PANEL.has(name)) api[name] = (h, ...args) => method(panelOf(h), ...args);
  }

  return api;
})()
