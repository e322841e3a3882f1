// dom.js: the JS half of webmcp_bridge/lab/ui/dom.py. It makes DOM nodes from the element trees Python decided
// (webmcp_bridge/lab/ui/view.py), applies cell markers and puts a proposal's box in its place, each in one
// crossing: building a 200-row list node by node through the FFI holds the page for 100+ ms.
//
// Evaluated once per session by ui/dom.py (lab/ffi.py load_half); the expression's value is the object below. It
// decides nothing: trees come from Python. Nodes are made with createElement, setAttribute and textContent only; a
// tag or attribute outside the allow-lists Python configures (never an on* handler) throws instead of being made.
// A tree is [tag, className, text | null, {attribute: value}, [children]].
//
// Proposal boxes (lab/ui/proposals.py) are kept here by proposal id, so Python names them by id and holds no node:
// showBox builds one, placeBoxes puts each in its cell (the notebook found by path through the tracker attach(ctx)
// kept) or in the corner box of workspace proposals, and one listener Python gives (watchBoxes) hears the person's
// actions on every box as JSON facts {id, action: "accept" | "deny" | "expand" | "seen", reason?}. Its return value
// is not used (in a worker it becomes an event); the parts that must happen during the event (keeping the notebook's
// own keyboard and mouse handling off the box, Enter not inserting a newline) happen here. Python decides what an
// action does; the class names come from Python (configureBoxes).
(() => {
  let tags = new Set();
  let attributes = new Set();
  let tracker = null; // the notebook tracker (attach), for the panel at a proposal's path
  const boxes = new Map(); // proposal id -> box node
  let corner = null; // the corner box of workspace proposals, while one waits
  let boxListener = null; // Python's listener of the boxes' actions (watchBoxes)
  let names = {}; // class names: {diff, accept, expand, hint, deny, reason, expanded} (configureBoxes)
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

  // Put node in its place in a notebook panel (see the method place below).
  function placeNode(panel, cellId, node) {
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
  }

  const seenToEnd = (node) => {
    if (!node || !node.isConnected || node.clientHeight === 0) return false;
    return node.scrollTop + node.clientHeight >= node.scrollHeight - 2;
  };
  const tell = (id, action, extra = {}) => {
    if (boxListener) boxListener(JSON.stringify({ id, action, ...extra }));
  };
  const reasonOf = (node) => String(node.querySelector(`.${names.reason}`)?.value ?? "");

  // The box's listeners: a click on one of its buttons, Enter in its reason field, a scroll of its listing; the
  // notebook's own mousedown and focusin handling (cell selection, command mode) must not act on the box (outside a
  // cell it moves the focus from the reason input back to a cell, where typed letters are command-mode shortcuts).
  function listen(id, node) {
    node.addEventListener("click", (event) => {
      const button = event.target?.closest?.("button");
      if (!button || !node.contains(button)) return;
      if (button.classList.contains(names.accept)) tell(id, "accept");
      else if (button.classList.contains(names.expand)) tell(id, "expand");
      else if (button.classList.contains(names.deny)) tell(id, "deny", { reason: reasonOf(node) });
    });
    node.addEventListener("keydown", (event) => {
      if (!event.target?.classList?.contains(names.reason)) return;
      event.stopPropagation(); // typed text, not notebook shortcuts ("a", "b", "d d" act on cells)
      if (event.key === "Enter") {
        event.preventDefault();
        tell(id, "deny", { reason: reasonOf(node) });
      }
    });
    const keep = (event) => event.stopPropagation();
    node.addEventListener("mousedown", keep);
    node.addEventListener("focusin", keep);
    const listing = node.querySelector(`.${names.diff}`);
    if (listing) { // scroll does not bubble: caught on the way down to the listing
      node.addEventListener("scroll", () => { if (seenToEnd(listing)) tell(id, "seen"); }, true);
    }
  }

  const api = {
    // attach(ctx): keeps ctx.tracker (the panel at a proposal's path).
    attach(ctx) {
      tracker = ctx?.tracker ?? null;
    },
    configure(tagList, attributeList) {
      tags = new Set(JSON.parse(tagList));
      attributes = new Set(JSON.parse(attributeList));
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
    place: placeNode,
    // Whether a scrolling element (a proposal's listing) shows the end of its content now: attached, laid out
    // (a hidden notebook's nodes have no height) and scrolled to within 2 px of its bottom (or not overflowing).
    seenToEnd,
    // installStyle(styleId, owner, css): add the bridge's stylesheet to the document once (<style id=styleId>, text
    // `css`) and note `owner` on it (attribute data-owners); removeStyle(styleId, owner): the sheet goes with its last
    // owner.
    installStyle(styleId, owner, css) {
      let style = document.getElementById(styleId);
      if (!style) {
        style = document.createElement("style");
        style.id = String(styleId);
        style.textContent = String(css);
        document.head.appendChild(style);
      }
      const owners = new Set((style.getAttribute("data-owners") ?? "").split(" ").filter(Boolean));
      owners.add(String(owner));
      style.setAttribute("data-owners", [...owners].sort().join(" "));
    },
    removeStyle(styleId, owner) {
      const style = document.getElementById(styleId);
      if (!style) return;
      const owners = new Set((style.getAttribute("data-owners") ?? "").split(" ").filter(Boolean));
      owners.delete(String(owner));
      if (owners.size) style.setAttribute("data-owners", [...owners].sort().join(" "));
      else style.remove();
    },
    // configureBoxes(namesJson): the class names of a box's parts, {diff, accept, expand, hint, deny, reason,
    // expanded}.
    configureBoxes(namesJson) { names = JSON.parse(namesJson); },
    // watchBoxes(listener): the one listener of every box's actions (null: none).
    watchBoxes(listener) { boxListener = listener ?? null; },
    // showBox(id, treeJson): build proposal `id`'s box (not placed yet) and listen to it. Returns whether it has a
    // listing (diff or code).
    showBox(id, treeJson) {
      boxes.get(id)?.remove();
      const node = build(JSON.parse(treeJson));
      boxes.set(id, node);
      listen(id, node);
      return !!node.querySelector(`.${names.diff}`);
    },
    // placeBoxes(itemsJson, cornerJson): put each box [id, path, cellId, measure] in its place: path null, in the
    // corner box (made from the tree cornerJson when there is none; added to document.body when detached); else in
    // the notebook open at `path` (see place), or out of the page when no notebook is open there. Returns JSON text:
    // the ids of the boxes with `measure` true whose listing is in view to its end now.
    placeBoxes(itemsJson, cornerJson) {
      const seen = [];
      for (const [id, path, cellId, measure] of JSON.parse(itemsJson)) {
        const node = boxes.get(id);
        if (!node) continue;
        if (path === null) {
          corner ??= build(JSON.parse(cornerJson));
          if (!corner.parentNode) document.body.appendChild(corner);
          if (!corner.contains(node)) corner.appendChild(node);
        } else {
          const panel = tracker?.find((p) => p.context?.path === path) ?? null;
          if (panel) placeNode(panel, cellId, node);
          else if (node.parentNode) node.remove(); // its notebook is gone: the box waits out of the page
        }
        if (measure && seenToEnd(node.querySelector(`.${names.diff}`))) seen.push(id);
      }
      return JSON.stringify(seen);
    },
    // revealBox(id): the listing was seen: enable Accept, drop "Show all" and its hint. expandBox(id): the listing
    // loses its height limit. disableBox(id): every button of the box disabled.
    revealBox(id) {
      const node = boxes.get(id);
      if (!node) return;
      const accept = node.querySelector(`.${names.accept}`);
      if (accept) accept.disabled = false;
      for (const name of [names.expand, names.hint]) node.querySelector(`.${name}`)?.remove();
    },
    expandBox(id) { boxes.get(id)?.querySelector(`.${names.diff}`)?.classList.add(names.expanded); },
    disableBox(id) {
      for (const button of boxes.get(id)?.querySelectorAll("button") ?? []) button.disabled = true;
    },
    // removeBox(id, dropCorner): take the box out of the page; with dropCorner, the corner box too.
    removeBox(id, dropCorner) {
      boxes.get(id)?.remove();
      boxes.delete(id);
      if (dropCorner && corner) { corner.remove(); corner = null; }
    },
  };

  return api;
})()
