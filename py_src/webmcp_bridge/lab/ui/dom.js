// dom.js: the JS half of webmcp_bridge/lab/ui/dom.py. It makes DOM nodes from the element trees Python decided
// (webmcp_bridge/lab/ui/view.py), applies cell markers and puts a proposal's box in its place, each in one
// crossing: building a 200-row list node by node through the FFI holds the page for 100+ ms.
//
// Evaluated once per session by ui/dom.py (lab/ffi.py load_half); the expression's value is the object below. It
// decides nothing: trees come from Python. Nodes are made with createElement, setAttribute and textContent only; a
// tag or attribute outside the allow-lists Python configures (never an on* handler) throws instead of being made.
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

  const api = {
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
    // Put node (a proposal's box) in its place in a notebook panel, when it is not there already: inside the cell
    // with id cellId, before the cell's footer; for cellId null, after the last cell (before the notebook's
    // footer). Returns true when (re)inserted, false when already in place, null when there is no place for it
    // now (no cell has the id, or the notebook has no node). One crossing however long the notebook is.
    place(panel, cellId, node) {
      const notebook = panel.content;
      if (!notebook || !notebook.node) return null;
      let parent = null, before = null;
      if (cellId === null || cellId === undefined) {
        const outer = notebook.node.querySelector('.jp-WindowedPanel-outer');
        parent = outer || notebook.node;
        before = outer ? outer.querySelector(':scope > .jp-Notebook-footer') : null;
      } else {
        const cells = notebook.widgets;
        for (let i = 0; i < cells.length; i++) {
          if (cells[i].model && cells[i].model.id === cellId) { parent = cells[i].node; break; }
        }
        if (!parent) return null;
        before = parent.querySelector(':scope > .jp-Cell-footer');
      }
      if (node.parentNode === parent && node.nextElementSibling === before) return false;
      parent.insertBefore(node, before);
      return true;
    },
    // Whether a scrolling element (a proposal's listing) shows the end of its content now: attached, laid out
    // (a hidden notebook's nodes have no height) and scrolled to within 2 px of its bottom (or not overflowing).
    seenToEnd(node) {
      if (!node || !node.isConnected || node.clientHeight === 0) return false;
      return node.scrollTop + node.clientHeight >= node.scrollHeight - 2;
    },
  };

  return api;
})()
