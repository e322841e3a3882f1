// dom.js: the Agent panel's JS half. It makes DOM nodes from the element trees Python decided
// (webmcp_bridge/lab/ui/view.py), applies cell markers, and reads the few cell fields the panel lists,
// each in one crossing: building a 200-row list node by node through the FFI holds the page for 100+ ms.
//
// Evaluated once by ui/dom.py (pyodide.code.run_js); the expression's value is the object below. It decides
// nothing: trees come from Python. Nodes are made with createElement, setAttribute and textContent only; a tag
// or attribute outside the allow-lists Python configures (never an on* handler) throws instead of being made.
// A tree is [tag, className, text | null, {attribute: value}, [children]].
(() => {
  let tags = new Set();
  let attributes = new Set();
  const allowed = (name) => attributes.has(name) || /^(data|aria)-[a-z0-9-]+$/.test(name);

  function build(spec) {
    const [tag, cls, text, attrs, children] = spec;
    if (!tags.has(tag)) throw new Error(`webmcp-bridge panel: tag ${tag} is not allowed`);
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    for (const [name, value] of Object.entries(attrs)) {
      if (!allowed(name)) throw new Error(`webmcp-bridge panel: attribute ${name} is not allowed`);
      node.setAttribute(name, String(value));
    }
    if (text !== null) node.textContent = String(text);
    for (const child of children) node.appendChild(build(child));
    return node;
  }

  return {
    configure(tagList, attributeList) {
      tags = new Set(tagList);
      attributes = new Set(attributeList);
    },
    // One new element from a tree (JSON text).
    build(json) { return build(JSON.parse(json)); },
    // Replace parent's children with new elements for a list of trees (JSON text).
    replaceChildren(parent, json) { parent.replaceChildren(...JSON.parse(json).map(build)); },
    // Cell markers on the notebook's cell nodes. wantJson: {cellId: [signature, [classes on], tree]} for the cells
    // that carry any; every other cell loses them. Cells whose stored signature (attribute attr) matches are not
    // touched. Returns how many cells changed.
    applyMarkers(notebook, wantJson, classListJson, attr, stripClass, markedClass) {
      const want = JSON.parse(wantJson);
      const classes = JSON.parse(classListJson);
      let changed = 0;
      for (const widget of notebook.widgets) {
        const node = widget.node;
        const m = Object.prototype.hasOwnProperty.call(want, widget.model.id) ? want[widget.model.id] : null;
        const sig = node.getAttribute(attr);
        if ((m === null && sig === null) || (m !== null && sig === m[0])) continue;
        changed++;
        for (const cls of classes) node.classList.toggle(cls, m !== null && m[1].includes(cls));
        node.classList.toggle(markedClass, m !== null);
        node.querySelector(`:scope > .${stripClass}`)?.remove();
        if (m === null) node.removeAttribute(attr);
        else { node.appendChild(build(m[2])); node.setAttribute(attr, m[0]); }
      }
      return changed;
    },
    // What the panel lists of each cell, as JSON text: [[id, type, first non-blank line (<= maxChars), outputs]].
    cellInfos(panel, maxChars) {
      const cells = panel.context.model.cells;
      const out = [];
      for (let i = 0; i < cells.length; i++) {
        const cell = cells.get(i);
        const source = cell.sharedModel.getSource();
        let line = "";
        for (const l of source.split("\n", 50)) if (l.trim()) { line = l.trim().slice(0, maxChars); break; }
        out.push([cell.id, cell.type, line, cell.type === "code" && cell.outputs ? cell.outputs.length : 0]);
      }
      return JSON.stringify(out);
    },
  };
})()
