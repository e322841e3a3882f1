// dom.js: the JS half of webmcp_bridge/lab/ui/dom.py. It makes DOM nodes from the element trees Python decided
// (webmcp_bridge/lab/ui/view.py), owns the Agent panel's widget and nodes, applies cell markers and puts a
// proposal's box in its place, each in one crossing: building a 200-row list node by node through the FFI holds the
// page for 100+ ms.
//
// Evaluated once per session by ui/dom.py (lab/ffi.py load_half); the expression's value is the object below. It
// decides nothing: trees and rules come from Python. Nodes are made with createElement, setAttribute and textContent
// only; a tag or attribute outside the allow-lists Python configures (never an on* handler) throws instead of being
// made. A tree is [tag, className, text | null, {attribute: value}, [children]]. Python holds no node: it names
// them by role (the Agent panel's), by notebook path and cell id (markers) or by proposal id (boxes).
//
// The Agent panel (lab/ui/panel.py): createPanel makes its Lumino widget (the loader's ctx, attach(ctx), gives the
// Widget class and the shell), draws its first trees and listens to it; its nodes are known by role (the panel
// itself "panel", then each element with a data-role attribute drawn in it), and Python draws by role (draw, rows
// for a keyed list, set for text / hidden / value / attributes). The person's events reach one listener Python gives
// as JSON facts {kind: "click" | "change" | "focusout" | "visibility", ...}; what must happen during the event
// (stopPropagation of a click on one of the actions Python named, Ctrl+Enter in a reply box reported as its button's
// click) happens here, from the rule Python pushed (data). Clicks and keys the page's scripts made (isTrusted false)
// are not reported. The cell markers' buttons report their clicks the same way.
//
// Proposal boxes (lab/ui/proposals.py) are kept here by proposal id: showBox builds one, placeBoxes puts each in its
// cell (the notebook found by path through the tracker attach(ctx) kept) or in the corner box of workspace
// proposals, and one listener Python gives (watchBoxes) hears the person's actions on every box as JSON facts {id,
// action: "accept" | "deny" | "expand" | "seen", reason?}. Listeners' return values are not used (in a worker they
// become events). Python decides what an action does; the class names come from Python (configureBoxes).
(() => {
  let tags = new Set();
  let attributes = new Set();
  let tracker = null; // the notebook tracker (attach), for the panel at a proposal's or markers' path
  let shell = null; // the application's shell (attach): where the Agent panel goes, what is activated
  let Widget = null; // @lumino/widgets' Widget (attach), the Agent panel's class
  let takePlaceholder = () => null; // the loader's placeholder of the panel, taken over by createPanel (attach)
  let webmcp = false; // whether the page has WebMCP (attach: the loader's modelContext)
  let panel = null; // the Agent panel: {widget, roles: Map(role -> node), undo: [fn]}
  let panelListener = null; // Python's listener of the panel's facts (createPanel)
  // the panel's select the person is choosing in, from their press of a key or the pointer on it until its change or
  // the focus leaving it (null otherwise): while it is set, fields() reports it, and Python puts off redrawing the
  // part that holds it (a redraw would replace the select and close its list under the person's hands)
  let choosing = null;
  let rule = { actions: [], textBox: "", choiceRow: "", submit: null }; // the panel's event rule (createPanel)
  const rows = new Map(); // a keyed list's role -> Map(key -> row node) (rows)
  const boxes = new Map(); // proposal id -> box node
  let corner = null; // the corner box of workspace proposals, while one waits
  let boxListener = null; // Python's listener of the boxes' actions (watchBoxes)
  let names = {}; // class names: {diff, accept, expand, hint, deny, reason, expanded} (configureBoxes)
  let app = null; // the application (attach): its optional services (the translator, the layout restorer, state)
  let modules = {}; // the loader's shared modules (attach): translation, application, statedb, uicomponents
  let bundle = null; // the translator's bundle of the bridge's domain (prepare), null: English
  let restorer = null; // JupyterLab's layout restorer (prepare), null when the page has none
  let state = null; // JupyterLab's state database (prepare), where the panel's open state is kept
  let icons = new Map(); // icon name -> LabIcon (configure)
  const allowed = (name) => attributes.has(name) || /^(data|aria)-[a-z0-9-]+$/.test(name);

  // Gettext's rule as JupyterLab's translator applies it when it has no translation: %N is the Nth argument.
  const format = (text, args) =>
    text.replace(/%%/g, "%% ").replace(/%(\d+)/g, (_, n) => String(args[n - 1])).replace(/%% /g, "%");

  // A text Python sent: a string is shown as it is (text of the notebook or the agent); a message {msg, args,
  // plural?, n?} goes through the translator's bundle (trans.__ / trans._n), its arguments first.
  function tr(value) {
    if (value === null || value === undefined || typeof value !== "object") return String(value ?? "");
    const args = (value.args ?? []).map(tr);
    if (value.plural !== undefined && value.plural !== null) {
      if (bundle) return String(bundle._n(String(value.msg), String(value.plural), Number(value.n), ...args));
      return format(Number(value.n) === 1 ? String(value.msg) : String(value.plural), [String(value.n), ...args]);
    }
    return bundle ? String(bundle.__(String(value.msg), ...args)) : format(String(value.msg), args);
  }

  function build(spec) {
    const [tag, cls, text, attrs, children] = spec;
    if (!tags.has(tag)) throw new Error(`webmcp-bridge panel: tag ${tag} is not allowed`);
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    for (const [name, value] of Object.entries(attrs)) {
      if (!allowed(name)) throw new Error(`webmcp-bridge panel: attribute ${name} is not allowed`);
      node.setAttribute(name, tr(value));
    }
    if (text !== null) node.textContent = tr(text);
    const icon = attrs["data-icon"] === undefined ? null : icons.get(String(attrs["data-icon"]));
    if (icon) node.appendChild(icon.element({ tag: "span", className: "webmcp-bridge-svg" }));
    for (const child of children) node.appendChild(build(child));
    return node;
  }

  // The panel's open state, kept in JupyterLab's state database under the widget's id: the widget is made after
  // JupyterLab restored its layout (Python starts then), so the layout restorer alone cannot bring it back.
  const stateKey = (id) => `webmcp-bridge:panel:${id}`;

  // Put node (a proposal's box) in its place in a notebook panel, when it is not there already: inside the cell
  // with id cellId, before the cell's footer; for cellId null, after the last cell (before the notebook's footer).
  // Returns true when (re)inserted, false when already in place, null when there is no place for it now.
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
  // Accept and Deny are the person's input only: a click or key the page's scripts made (isTrusted false) is not
  // reported.
  function listen(id, node) {
    node.addEventListener("click", (event) => {
      if (!event.isTrusted) return;
      const button = event.target?.closest?.("button");
      if (!button || !node.contains(button)) return;
      if (button.classList.contains(names.accept)) tell(id, "accept");
      else if (button.classList.contains(names.expand)) tell(id, "expand");
      else if (button.classList.contains(names.deny)) tell(id, "deny", { reason: reasonOf(node) });
    });
    node.addEventListener("keydown", (event) => {
      if (!event.target?.classList?.contains(names.reason)) return;
      event.stopPropagation(); // typed text, not notebook shortcuts ("a", "b", "d d" act on cells)
      if (event.key === "Enter" && event.isTrusted) {
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

  const tellPanel = (fact) => {
    if (panelListener) panelListener(JSON.stringify(fact));
  };

  // A click inside `scope` (the panel, or a cell's marker strip) on an element with one of the rule's data-action
  // values: reported as a fact (see createPanel) and kept from JupyterLab's own handling. Only the person's input
  // counts: a click the page's scripts made (element.click(), dispatchEvent: isTrusted false) is not reported, so
  // code running in the page cannot press Revert, Reply or a cell's lock in the person's name.
  function reportClick(event, scope) {
    if (!event.isTrusted) return;
    if (report(event.target?.closest?.("[data-action]") ?? null, scope)) event.stopPropagation();
  }

  // Report a press of `target` (an element with a data-action inside `scope`) as a click fact; false when it is
  // none of the rule's actions (or a select, whose change is reported instead).
  function report(target, scope) {
    if (!target || !scope.contains(target) || target.tagName === "SELECT") return false;
    const action = target.getAttribute("data-action");
    if (!rule.actions.includes(action)) return false;
    const data = {};
    for (const { name, value } of target.attributes) if (name.startsWith("data-")) data[name.slice(5)] = value;
    const area = rule.textBox ? target.closest(rule.textBox)?.querySelector("textarea") ?? null : null;
    const choice = rule.choiceRow ? target.closest(rule.choiceRow)?.querySelector("select") ?? null : null;
    tellPanel({
      kind: "click", action, data,
      text: area ? String(area.value) : null,
      reply: area ? area.getAttribute("data-reply") : null,
      choice: choice ? String(choice.value) : null,
    });
    return true;
  }

  // Run `replace` (which swaps what `scope` holds for new elements, found in `after`, `scope` itself by default); when
  // the focus was on a control with a data-action inside `scope`, put it on the one new control whose data-* attributes
  // all equal the old one's (the same action on the same cell, thread or edit), so a redraw never drops the person's
  // keyboard focus to the page (a select they tabbed to keeps it for their keys). When no single control matches (the
  // row is gone, or several are alike) the focus is left where the redraw put it: never on another row's control,
  // where a second press would act on something the person did not choose.
  const dataOf = el => [...el.attributes].filter(({ name }) => name.startsWith("data-"));
  function keepingFocus(scope, replace, after = scope) {
    const active = document.activeElement;
    const old = active && scope.contains(active) && active.hasAttribute("data-action")
      ? new Map(dataOf(active).map(({ name, value }) => [name, value])) : null;
    replace();
    if (!old || after.contains(document.activeElement)) return;
    const same = [...after.querySelectorAll(`[data-action="${CSS.escape(old.get("data-action"))}"]`)]
      .filter(el => dataOf(el).every(({ name, value }) => old.get(name) === value));
    if (same.length === 1) same[0].focus();
  }

  // Replace the children of the panel's node `role` with new elements for trees; note the roles drawn.
  function drawInto(role, trees) {
    const node = panel?.roles.get(role);
    if (!node) return false;
    const made = trees.map(build);
    keepingFocus(node, () => node.replaceChildren(...made));
    rows.delete(role);
    for (const el of made) {
      for (const named of [el, ...el.querySelectorAll("[data-role]")]) {
        const name = named.getAttribute("data-role");
        if (name) panel.roles.set(name, named);
      }
    }
    return true;
  }

  function disposePanel() {
    if (!panel) return;
    for (const fn of panel.undo) fn();
    try { panel.widget.dispose(); } catch { /* already gone */ }
    panel = null;
    panelListener = null;
    choosing = null;
    rows.clear();
  }

  const api = {
    // attach(ctx): keeps ctx.tracker (the notebook at a proposal's or markers' path), ctx.app.shell, the Widget
    // class of ctx.modules.widgets, whether ctx.modelContext is there and ctx.takePanelPlaceholder (the loader's).
    attach(ctx) {
      tracker = ctx?.tracker ?? null;
      app = ctx?.app ?? null;
      shell = app?.shell ?? null;
      modules = ctx?.modules ?? {};
      Widget = modules.widgets?.Widget ?? null;
      if (typeof ctx?.takePanelPlaceholder === "function") takePlaceholder = () => ctx.takePanelPlaceholder();
      webmcp = !!ctx?.modelContext;
    },
    // configure(tagList, attributeList, iconsJson): the allow-lists, and the icons a tree may name (data-icon):
    // {name: {labicon: an export of @jupyterlab/ui-components} | {svg: the SVG text of one of the bridge's}}.
    configure(tagList, attributeList, iconsJson) {
      tags = new Set(JSON.parse(tagList));
      attributes = new Set(JSON.parse(attributeList));
      icons = new Map();
      const ui = modules.uicomponents ?? null;
      for (const [name, spec] of Object.entries(JSON.parse(iconsJson ?? "{}"))) {
        let icon = null;
        if (spec.labicon) icon = ui?.[spec.labicon] ?? null;
        else if (spec.svg && ui?.LabIcon) icon = ui.LabIcon.resolve({ icon: { name: `webmcp-bridge:${name}`, svgstr: spec.svg } });
        if (icon) icons.set(name, icon);
      }
    },
    // prepare(domain): a Promise, resolved once the page's optional services are known: the translator's bundle of
    // `domain`, the layout restorer and the state database (each null when the page has none).
    async prepare(domain) {
      const optional = async (token) => {
        if (!token || !app?.resolveOptionalService) return null;
        try { return (await app.resolveOptionalService(token)) ?? null; } catch { return null; }
      };
      const [translator, layout, db] = await Promise.all([
        optional(modules.translation?.ITranslator), optional(modules.application?.ILayoutRestorer),
        optional(modules.statedb?.IStateDB)]);
      bundle = translator ? translator.load(String(domain)) : null;
      restorer = layout;
      state = db;
    },
    // translate(messagesJson): JSON text of the list of texts (strings or messages) translated, for the parts that
    // hand JupyterLab plain strings (command labels, dialog titles).
    translate(messagesJson) { return JSON.stringify(JSON.parse(messagesJson).map(tr)); },
    // webmcpAvailable(): whether the page has WebMCP (the loader's modelContext), for the panel's head line.
    webmcpAvailable() { return webmcp; },
    // -- the Agent panel ----------------------------------------------------------------------------------------
    // createPanel(optionsJson, treesJson, listener): make the panel's widget (options {id, className, label,
    // caption, rank, attrs: {name: value} on its node, rule}), draw the trees in it, listen to it and add it to the
    // shell's right area. rule: {actions: [data-action values a click reports], textBox: selector of the box whose
    // textarea a click reads, choiceRow: selector of the row whose select a click reads, submit: {box, button}: the
    // button Ctrl/Cmd+Enter in a textarea of such a box reports as clicked}. Facts to listener (JSON text), for the
    // person's clicks and keys only (isTrusted): {kind: "click",
    // action, data: {the target's data-* attributes, without "data-"}, text, reply (that textarea's value and
    // data-reply, or null), choice}, {kind: "change", action, value} (a select with a data-action), {kind:
    // "focusout"}, {kind: "visibility", visible} (Lumino showed, hid, attached or detached it). Returns JSON text
    // {created, visible}; created false when the page has no Widget class or shell.
    createPanel(optionsJson, treesJson, listener) {
      disposePanel();
      if (!Widget || !shell) return JSON.stringify({ created: false, visible: false });
      const options = JSON.parse(optionsJson);
      // the loader's placeholder, shown since JupyterLab started, when it is still there: the same tab, emptied
      const widget = takePlaceholder() ?? new Widget();
      widget.id = String(options.id);
      widget.addClass(String(options.className));
      widget.title.label = tr(options.label);
      widget.title.caption = tr(options.caption);
      const tabIcon = options.icon ? icons.get(String(options.icon)) : null;
      if (tabIcon) widget.title.icon = tabIcon;
      const node = widget.node;
      for (const [name, value] of Object.entries(options.attrs ?? {})) {
        if (!allowed(name)) throw new Error(`webmcp-bridge panel: attribute ${name} is not allowed`);
        node.setAttribute(name, tr(value));
      }
      rule = options.rule ?? rule;
      panelListener = listener ?? null;
      panel = { widget, roles: new Map([["panel", node]]), undo: [] };
      drawInto("panel", JSON.parse(treesJson));
      const onClick = (event) => reportClick(event, node);
      const onChange = (event) => { // the person's choice only: a script's change (isTrusted false) is not reported
        if (!event.isTrusted) return;
        const target = event.target;
        if (target === choosing) choosing = null; // chosen: the drawing that follows is not put off
        const action = target?.getAttribute?.("data-action");
        if (!action || target.tagName !== "SELECT") return;
        tellPanel({ kind: "change", action, value: String(target.value) });
      };
      const onKey = (event) => { // the person's Ctrl/Cmd+Enter in a reply box: its button (the text stays theirs)
        const target = event.target;
        if (!event.isTrusted || event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
        if (target?.tagName !== "TEXTAREA") return;
        const button = rule.submit ? target.closest(rule.submit.box)?.querySelector(rule.submit.button) : null;
        if (!button) return;
        event.preventDefault();
        target.blur(); // so the drawing after the action is not put off for typing
        report(button, node); // as the button's click, without making one (a script's click is not reported)
      };
      const onFocusOut = (event) => {
        if (event.target === choosing) choosing = null;
        tellPanel({ kind: "focusout" });
      };
      // the person starts choosing in a select (a press of a key or the pointer on it): see `choosing`
      const onPress = (event) => {
        if (event.isTrusted && event.target?.tagName === "SELECT" && node.contains(event.target)) choosing = event.target;
      };
      for (const [kind, fn] of [["click", onClick], ["change", onChange], ["keydown", onKey], ["focusout", onFocusOut],
                                ["pointerdown", onPress], ["keydown", onPress]]) {
        node.addEventListener(kind, fn);
        panel.undo.push(() => node.removeEventListener(kind, fn));
      }
      // Lumino tells a widget it was shown or hidden by calling these methods on it: the instance's own win
      // ... and the person's last choice (shown or not) is kept for the next page load (see stateKey)
      let restoring = true;
      const visibility = () => {
        tellPanel({ kind: "visibility", visible: !!widget.isVisible });
        if (!restoring && state && !widget.isDisposed) {
          state.save(stateKey(widget.id), { open: !!widget.isVisible }).catch(() => {});
        }
      };
      for (const method of ["onAfterShow", "onAfterHide", "onAfterAttach", "onAfterDetach"]) widget[method] = visibility;
      // the shell puts it where the person last moved it (left or right: JupyterLab keeps that by widget id); the
      // placeholder is there already
      if (!widget.isAttached) shell.add(widget, "right", { rank: options.rank });
      try { restorer?.add(widget, widget.id); } catch { /* restored by its state below */ }
      const restored = state ? state.fetch(stateKey(widget.id)).catch(() => null) : Promise.resolve(null);
      restored.then((saved) => {
        if (saved?.open && panel?.widget === widget && !widget.isVisible) shell.activateById(widget.id);
      }).finally(() => { restoring = false; });
      return JSON.stringify({ created: true, visible: !!widget.isVisible });
    },
    // disposePanel(): stop listening to the panel and dispose of its widget.
    disposePanel() { disposePanel(); },
    // draw(role, treesJson): replace the children of the panel's node `role` with new elements for a list of trees.
    // Returns false when no node has that role.
    draw(role, treesJson) { return drawInto(role, JSON.parse(treesJson)); },
    // rows(role, opsJson): edit the keyed list `role` (each row a node kept by key), newest on top, in one crossing:
    // ["clear"] empties the list, ["keep", key] moves a row's node to the top, ["put", key, tree] replaces a row (or
    // adds it) on top, ["set", key, tree] replaces it where it is (on top when it is not there), ["drop", key]
    // removes it.
    rows(role, opsJson) {
      const list = panel?.roles.get(role);
      if (!list) return;
      let keyed = rows.get(role);
      if (!keyed) rows.set(role, (keyed = new Map()));
      for (const [op, key, tree] of JSON.parse(opsJson)) {
        if (op === "clear") { list.replaceChildren(); keyed.clear(); }
        else if (op === "keep") { const node = keyed.get(key); if (node) list.prepend(node); }
        else if (op === "put" || op === "set") {
          const old = keyed.get(key);
          const node = build(tree);
          keyed.set(key, node);
          if (op === "set" && old?.parentNode === list) {
            keepingFocus(old, () => old.replaceWith(node), node); // a tick keeps the person's focus
          } else {
            old?.remove();
            list.prepend(node);
          }
        } else if (op === "drop") { keyed.get(key)?.remove(); keyed.delete(key); }
      }
    },
    // set(changesJson): {role: {text?, hidden?, value?, attrs?: {name: value}}} for the panel's nodes, in one crossing.
    set(changesJson) {
      for (const [role, change] of Object.entries(JSON.parse(changesJson))) {
        const node = panel?.roles.get(role);
        if (!node) continue;
        if ("text" in change) node.textContent = tr(change.text);
        if ("hidden" in change) node.hidden = !!change.hidden;
        if ("value" in change) node.value = String(change.value);
        for (const [name, value] of Object.entries(change.attrs ?? {})) {
          if (!allowed(name)) throw new Error(`webmcp-bridge panel: attribute ${name} is not allowed`);
          node.setAttribute(name, tr(value));
        }
      }
    },
    // fields(role): what the person is typing or choosing in the panel's node `role`, as JSON text {focused: the tag
    // name of the focused element when it is inside that node, else null (a select counts only while the person is
    // choosing in it: `choosing`; once chosen it keeps the focus without holding drawings back); drafts: {data-reply:
    // value} of its non-empty textareas with a data-reply attribute}.
    fields(role) {
      const node = panel?.roles.get(role) ?? null;
      const active = document.activeElement;
      const inside = node && active && node.contains(active) && (active.tagName !== "SELECT" || active === choosing);
      const focused = inside ? String(active.tagName) : null;
      const drafts = Object.create(null); // keys come from the notebook (thread ids): "__proto__" is a key too
      for (const box of node?.querySelectorAll("textarea[data-reply]") ?? []) {
        if (box.value) drafts[box.getAttribute("data-reply")] = String(box.value);
      }
      return JSON.stringify({ focused, drafts });
    },
    // clearDraft(role, key): empty the textarea with data-reply `key` inside the panel's node `role`.
    clearDraft(role, key) {
      for (const box of panel?.roles.get(role)?.querySelectorAll("textarea[data-reply]") ?? []) {
        if (box.getAttribute("data-reply") === key) box.value = "";
      }
    },
    // activate(id): bring the widget with that id (the Agent panel) to the front of its area.
    activate(id) { shell?.activateById(String(id)); },
    // Cell markers on the cell nodes of every notebook open at `path` (found through the tracker). wantJson:
    // {cellId: [signature, [classes on], tree]} for the cells that carry any; every other cell loses them. Cells
    // whose stored signature (attribute attr) matches are not touched. A strip's buttons report their clicks as the
    // panel's do. Returns how many cells changed.
    applyMarkers(path, wantJson, classListJson, attr, stripClass, markedClass) {
      const want = JSON.parse(wantJson);
      const classes = JSON.parse(classListJson);
      let changed = 0;
      for (const nbPanel of tracker ? tracker.filter((p) => p.context?.path === path) : []) {
        for (const widget of nbPanel.content?.widgets ?? []) {
          const node = widget.node;
          const m = Object.prototype.hasOwnProperty.call(want, widget.model.id) ? want[widget.model.id] : null;
          const sig = node.getAttribute(attr);
          if ((m === null && sig === null) || (m !== null && sig === m[0])) continue;
          changed++;
          for (const cls of classes) node.classList.toggle(cls, m !== null && m[1].includes(cls));
          node.classList.toggle(markedClass, m !== null);
          node.querySelector(`:scope > .${stripClass}`)?.remove();
          if (m === null) node.removeAttribute(attr);
          else {
            const strip = build(m[2]);
            strip.addEventListener("click", (event) => reportClick(event, strip));
            node.appendChild(strip);
            node.setAttribute(attr, m[0]);
          }
        }
      }
      return changed;
    },
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
    // dispose(): the session's worker is gone (the loader's watchdog): the panel and the proposal boxes go (the next
    // session draws its own).
    dispose() {
      disposePanel();
      for (const id of [...boxes.keys()]) api.removeBox(id, true);
      boxListener = null;
    },
  };

  return api;
})()
