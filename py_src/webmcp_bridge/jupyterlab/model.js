// model.js: the JS side of the JupyterLab adapter: bounded reads and plain writes on a live notebook, so each
// step of a tool call crosses from Python to JS once.
//
// Evaluated once by adapter.py (pyodide.code.run_js); the expression's value is the object below. Reads
// extract plain data from the live model (ids, types, sources, output sizes, bounded heads and pages) as JSON
// text; writes take a cell id and return false when no cell has it. Every rule about what to read or write
// lives in Python; nothing here decides. The output rules
// mirror webmcp_bridge/nbjson.py: stream -> one text/plain item, error -> the traceback lines joined by
// "\n", execute_result/display_data -> one item per MIME type; text is ANSI-stripped before it is measured;
// sizes are UTF-8 bytes (binary MIME types: decoded base64 bytes).
(() => {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let ansi = /\x1b\[[0-?]*[ -/]*[@-~]/g;
  let binary = new Set();
  const texts = new WeakMap(); // output model -> {key, items: Map(mime -> {text, bytes, encoded})}
  const revisions = new WeakMap(); // notebook model -> change counter

  const textOf = (v) => (typeof v === "string" ? v : Array.isArray(v) && v.every((x) => typeof x === "string") ? v.join("") : JSON.stringify(v));

  function utf8Length(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 4; i++; }
      else n += 3;
    }
    return n;
  }

  function base64Length(s) {
    const clean = s.replace(/\s/g, "");
    const pad = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
    return Math.max(0, Math.floor((clean.length * 3) / 4) - pad);
  }

  function itemsOf(outputModel) {
    const json = outputModel.toJSON();
    let raw;
    if (json.output_type === "stream") raw = [["text/plain", textOf(json.text ?? "")]];
    else if (json.output_type === "error") raw = [["text/plain", (json.traceback ?? []).length ? json.traceback.join("\n") : `${json.ename ?? ""}: ${json.evalue ?? ""}`]];
    else raw = Object.entries(json.data ?? {}).map(([m, v]) => [m, textOf(v)]);
    const key = raw.map(([m, t]) => `${m}:${t.length}`).join("|");
    const cached = texts.get(outputModel);
    if (cached && cached.key === key) return { json, items: cached.items };
    const items = new Map();
    for (const [mime, text] of raw) {
      if (binary.has(mime)) items.set(mime, { text, bytes: base64Length(text), binary: true });
      else {
        const clean = text.includes("\x1b") ? text.replace(ansi, "") : text;
        items.set(mime, { text: clean, bytes: utf8Length(clean), binary: false });
      }
    }
    texts.set(outputModel, { key, items });
    return { json, items };
  }

  // The first maxBytes bytes of s, never splitting a code point.
  function head(s, maxBytes) {
    if (maxBytes <= 0) return "";
    const bytes = encoder.encode(s.slice(0, maxBytes));
    if (bytes.length <= maxBytes) return decoder.decode(bytes);
    let cut = maxBytes;
    while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--;
    return decoder.decode(bytes.subarray(0, cut));
  }

  function model(panel) { return panel.context.model; }

  function findIndex(panel, cellId) {
    const cells = model(panel).cells;
    for (let i = 0; i < cells.length; i++) if (cells.get(i).id === cellId) return i;
    return -1;
  }

  function outputOf(panel, cellId, outputIndex) {
    const i = findIndex(panel, cellId);
    const outputs = i < 0 ? null : model(panel).cells.get(i).outputs;
    if (!outputs || outputIndex < 0 || outputIndex >= outputs.length) return null;
    return outputs.get(outputIndex);
  }

  function describeCell(cell, index, headBytes, maxOutputs) {
    const shared = cell.sharedModel;
    const outputs = cell.type === "code" && cell.outputs ? cell.outputs : null;
    const described = [];
    for (let j = 0; outputs && j < Math.min(outputs.length, maxOutputs); j++) {
      const { json, items } = itemsOf(outputs.get(j));
      described.push({
        output_type: json.output_type,
        name: json.output_type === "stream" ? json.name : null,
        ename: json.output_type === "error" ? String(json.ename ?? "") : null,
        evalue: json.output_type === "error" ? String(json.evalue ?? "") : null,
        items: [...items].map(([mime, it]) => [mime, it.bytes, it.binary ? "" : head(it.text, headBytes), it.binary]),
      });
    }
    return {
      id: cell.id, index, cell_type: cell.type, source: shared.getSource(),
      execution_count: cell.type === "code" ? cell.executionCount ?? null : null,
      outputs: described, output_count: outputs ? outputs.length : 0,
    };
  }

  function described(panel, index) {
    return JSON.stringify(describeCell(model(panel).cells.get(index), index, 0, 0));
  }

  return {
    configure(ansiPattern, binaryMimes) {
      ansi = new RegExp(ansiPattern, "g");
      binary = new Set(binaryMimes);
    },
    // Count changes of the notebook (every Y.Doc transaction: sources, outputs, metadata, cells), and save
    // notebooks of nbformat <= 4.4 as 4.5 so cell ids survive.
    track(panel) {
      const m = model(panel);
      if (revisions.has(m)) return;
      revisions.set(m, 0);
      m.sharedModel.ydoc.on("update", () => revisions.set(m, revisions.get(m) + 1));
      panel.context.saveState.connect((_, state) => {
        if (state === "started" && m.sharedModel.nbformat === 4 && m.sharedModel.nbformat_minor < 5) m.sharedModel.nbformat_minor = 5;
      });
    },
    revision(panel) { return revisions.get(model(panel)) ?? 0; },
    // Writes return the changed cell as JSON text (as cells() describes it, without outputs), or null when
    // no cell has the id.
    setSource(panel, cellId, source) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      model(panel).cells.get(i).sharedModel.setSource(source);
      return described(panel, i);
    },
    insertCell(panel, index, cellType, source) {
      const id = model(panel).sharedModel.insertCell(index, { cell_type: cellType, source, metadata: {} }).getId();
      return described(panel, findIndex(panel, id));
    },
    deleteCell(panel, cellId) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      const before = described(panel, i);
      model(panel).sharedModel.deleteCell(i);
      return before;
    },
    moveCell(panel, cellId, toIndex) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      model(panel).sharedModel.moveCell(i, toIndex);
      return described(panel, findIndex(panel, cellId));
    },
    clearOutputs(panel, cellId) {
      const i = findIndex(panel, cellId);
      if (i < 0) return null;
      const cell = model(panel).cells.get(i);
      if (cell.type === "code") cell.sharedModel.transact(() => cell.clearExecution());
      return described(panel, i);
    },
    cellWidget(panel, cellId) {
      const i = findIndex(panel, cellId);
      return i >= 0 ? panel.content.widgets[i] : null;
    },
    cells(panel, indicesJson, headBytes, maxOutputs) {
      const cells = model(panel).cells;
      const indices = indicesJson == null ? [...Array(cells.length).keys()] : JSON.parse(indicesJson);
      return JSON.stringify(indices.filter((i) => i >= 0 && i < cells.length).map((i) => describeCell(cells.get(i), i, headBytes, maxOutputs)));
    },
    // The cells with these ids, in order; null for an id no cell has.
    cellsById(panel, idsJson, headBytes, maxOutputs) {
      const cells = model(panel).cells;
      const where = new Map();
      for (let i = 0; i < cells.length; i++) where.set(cells.get(i).id, i);
      return JSON.stringify(JSON.parse(idsJson).map((id) => (where.has(id) ? describeCell(cells.get(where.get(id)), where.get(id), headBytes, maxOutputs) : null)));
    },
    outputText(panel, cellId, outputIndex, mime, offset, maxBytes) {
      const output = outputOf(panel, cellId, outputIndex);
      const item = output && itemsOf(output).items.get(mime);
      if (!item) return null;
      item.encoded ??= encoder.encode(item.text);
      const data = item.encoded;
      const total = data.length;
      let start = Math.min(offset, total);
      while (start > 0 && start < total && (data[start] & 0xc0) === 0x80) start--;
      let end = Math.min(total, start + Math.max(1, maxBytes));
      while (end > start && end < total && (data[end] & 0xc0) === 0x80) end--;
      if (end === start && start < total) { end = start + 1; while (end < total && (data[end] & 0xc0) === 0x80) end++; }
      return JSON.stringify({ text: decoder.decode(data.subarray(start, end)), offset: start, next_offset: end < total ? end : null, total_bytes: total });
    },
    outputBinary(panel, cellId, outputIndex, mime, maxBytes) {
      const output = outputOf(panel, cellId, outputIndex);
      const item = output && itemsOf(output).items.get(mime);
      if (!item) return null;
      return JSON.stringify({ data: item.bytes <= maxBytes ? item.text.replace(/\s/g, "") : null, bytes: item.bytes });
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
  };
})()
