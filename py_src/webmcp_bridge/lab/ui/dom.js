// dom.js: the JS half of webmcp_bridge/lab/ui/dom.py (evaluated once per session by lab/ffi.py load_half; the
// expression's value is the object below). It decides nothing: trees and rules come from Python. It makes nodes
// with createElement, setAttribute and textContent only; a tag or attribute outside the allow-lists Python configures
// (never an on* handler) throws. A tree is [tag, className, text | null, {attribute: value}, [children]]. Python
// names nodes by role (the Agent panel's: the panel itself "panel", then each element with a data-role), by notebook
// path and cell id (markers) or by proposal id (boxes), and hears the person's events as JSON facts through one
// listener each (their return values are unused: in a worker they become events). Building a 200-row list node by
// node through the FFI holds the page for 100+ ms, so each call here does a whole list in one crossing.
(() => {
  let tags = new Set(), attributes = new Set();
  // from attach: the notebook tracker, the shell, @lumino/widgets' Widget, the loader's placeholder of the panel
  let tracker = null, shell = null, Widget = null, takePlaceholder = () => null, webmcp = false;
  let panel = null, panelListener = null; // the Agent panel: {widget, roles: Map(role -> node), undo: [fn]}
  // the panel's select the person is choosing in, from their press on it until its change or the focus leaving it:
  // fields() reports it, so Python puts off redrawing it (a redraw would close its list under the person's hands)
  let choosing = null;
  let rule = { actions: [], textBox: "", choiceRow: "", submit: null }; // the panel's event rule (createPanel)
  const rows = new Map(); // a keyed list's role -> Map(key -> row node) (rows)
  const boxes = new Map(); // proposal id -> box node
  let corner = null; // the corner box of workspace proposals, while one waits
  let boxListener = null;
  let names = {}; // a box's class names (configureBoxes)
  let app = null, modules = {}; // the application and the loader's shared modules (attach)
  // from prepare: the translator's bundle (null: English), the layout restorer, the state database (null: none)
  let bundle = null, restorer = null, state = null;
  let icons = new Map(); // icon name -> LabIcon (configure)
  function setAttribute(node, name, value) {
    if (!attributes.has(name) && !/^(data|aria)-[a-z0-9-]+$/.test(name)) {
      throw new Error(`webmcp-bridge panel: attribute ${name} is not allowed`);
    }
    node.setAttribute(name, tr(value));
  }

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
    for (const [name, value] of Object.entries(attrs)) setAttribute(node, name, value);
    if (text !== null) node.textContent = tr(text);
    const icon = attrs["data-icon"] === undefined ? null : icons.get(String(attrs["data-icon"]));
    if (icon) node.appendChild(icon.element({ tag: "span", className: "webmcp-bridge-svg" }));
    for (const child of children) node.appendChild(build(child));
    return node;
  }

  // The panel's open state, kept in the state database: the widget is made after JupyterLab restored its layout, so
  // the layout restorer alone cannot bring it back.
  const stateKey = (id) => `webmcp-bridge:panel:${id}`;

  // Put a proposal's box in its place in a notebook panel when it is not there already: in the cell cellId before its
  // footer, or for null after the last cell (before the notebook's footer).
  function placeNode(panel, cellId, node) {
    const notebook = panel.content;
    if (!notebook?.node) return;
    let parent, before;
    if (cellId === null || cellId === undefined) {
      const outer = notebook.node.querySelector(".jp-WindowedPanel-outer");
      parent = outer || notebook.node;
      before = outer?.querySelector(":scope > .jp-Notebook-footer") ?? null;
    } else {
      parent = notebook.widgets.find((cell) => cell.model?.id === cellId)?.node;
      if (!parent) return;
      before = parent.querySelector(":scope > .jp-Cell-footer");
    }
    if (node.parentNode !== parent || node.nextElementSibling !== before) parent.insertBefore(node, before);
  }

  const seenToEnd = (node) =>
    !!node?.isConnected && node.clientHeight > 0 && node.scrollTop + node.clientHeight >= node.scrollHeight - 2;
  const tell = (id, action, extra = {}) => boxListener?.(JSON.stringify({ id, action, ...extra }));
  const reasonOf = (node) => String(node.querySelector(`.${names.reason}`)?.value ?? "");

  // The box's listeners: its buttons, Enter in its reason field, a scroll of its listing. The notebook's own mousedown
  // and focusin handling must not act on the box (it would move the focus from the reason input to a cell, where
  // typed letters are command-mode shortcuts). A click or key the page's scripts made (isTrusted false) is ignored.
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
    for (const kind of ["mousedown", "focusin"]) node.addEventListener(kind, (event) => event.stopPropagation());
    const listing = node.querySelector(`.${names.diff}`);
    if (listing) { // scroll does not bubble: caught on the way down to the listing
      node.addEventListener("scroll", () => { if (seenToEnd(listing)) tell(id, "seen"); }, true);
    }
  }

  const tellPanel = (fact) => panelListener?.(JSON.stringify(fact));
  const dataOf = (el) => [...el.attributes].filter(({ name }) => name.startsWith("data-"));

  // A click inside `scope` (the panel, or a marker strip) on one of the rule's actions: reported and kept from
  // JupyterLab. A click the page's scripts made (isTrusted false) is not, so code running in the page cannot press
  // Revert, Reply or a cell's lock in the person's name.
  function reportClick(event, scope) {
    if (!event.isTrusted) return;
    if (report(event.target?.closest?.("[data-action]") ?? null, scope)) event.stopPropagation();
  }

  // Report `target` as clicked; false when it is none of the rule's actions (or a select: its change is reported).
  function report(target, scope) {
    if (!target || !scope.contains(target) || target.tagName === "SELECT") return false;
    const action = target.getAttribute("data-action");
    if (!rule.actions.includes(action)) return false;
    const data = Object.fromEntries(dataOf(target).map(({ name, value }) => [name.slice(5), value]));
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

  // Run `replace` (new elements for what `scope` holds, found in `after`); when the focus was on a control with a
  // data-action inside `scope`, put it on the one new control whose data-* attributes all equal the old one's, so a
  // redraw never drops the person's keyboard focus. When no single control matches, the focus stays where the redraw
  // put it: never on another row's control, where a second press would act on something the person did not choose.
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

  // The tag name of the focused element inside `node`, or null (a select only while the person is choosing in it).
  const focusedIn = (node, active = document.activeElement) =>
    active && node?.contains(active) && (active.tagName !== "SELECT" || active === choosing) ? active.tagName : null;

  // Replace the children of the panel's node `role` with new elements for trees; note the roles drawn. "held", nothing
  // drawn, when its focus is on a tag `heldBy` lists: checked here, as the person may press after Python's look.
  function drawInto(role, trees, heldBy = []) {
    const node = panel?.roles.get(role);
    if (!node) return false;
    if (heldBy.includes(focusedIn(node))) return "held";
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
    panel = panelListener = choosing = null;
    rows.clear();
  }

  // style(styleId, owner, css): the stylesheet (<style id=styleId>) is in the document while it has an owner (noted in
  // its data-owners); css null: `owner` lets it go
  function style(styleId, owner, css) {
    let node = document.getElementById(styleId);
    if (!node && css == null) return;
    if (!node) {
      node = document.createElement("style");
      node.id = String(styleId);
      node.textContent = String(css);
      document.head.appendChild(node);
    }
    const owners = new Set((node.getAttribute("data-owners") ?? "").split(" ").filter(Boolean));
    if (css == null) owners.delete(String(owner));
    else owners.add(String(owner));
    if (owners.size) node.setAttribute("data-owners", [...owners].sort().join(" "));
    else node.remove();
  }

  const api = {
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
    // translate(messagesJson): the texts translated (JSON text), for JupyterLab's plain strings.
    translate(messagesJson) { return JSON.stringify(JSON.parse(messagesJson).map(tr)); },
    webmcpAvailable() { return webmcp; },
    // -- the Agent panel ----------------------------------------------------------------------------------------
    // createPanel(optionsJson, treesJson, listener): make the panel's widget (options {id, className, label, caption,
    // rank, attrs, icon, rule}: panel.py RULE), draw the trees in it, listen to it and add it to the right area.
    // Facts to listener, for the person's clicks and keys only: {kind: "click", action, data, text, reply, choice},
    // {kind: "change", action, value}, {kind: "focusout"}, {kind: "visibility", visible}. Returns {created, visible}.
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
      for (const [name, value] of Object.entries(options.attrs ?? {})) setAttribute(node, name, value);
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
      // Lumino calls these methods when it shows, hides, attaches or detaches the widget; the person's last choice
      // (shown or not) is kept for the next page load (see stateKey)
      let restoring = true;
      const visibility = () => {
        tellPanel({ kind: "visibility", visible: !!widget.isVisible });
        if (!restoring && state && !widget.isDisposed) {
          state.save(stateKey(widget.id), { open: !!widget.isVisible }).catch(() => {});
        }
      };
      for (const method of ["onAfterShow", "onAfterHide", "onAfterAttach", "onAfterDetach"]) widget[method] = visibility;
      // the shell puts it where the person last moved it (JupyterLab keeps that by id); a placeholder is there already
      if (!widget.isAttached) shell.add(widget, "right", { rank: options.rank });
      try { restorer?.add(widget, widget.id); } catch { /* restored by its state below */ }
      const restored = state ? state.fetch(stateKey(widget.id)).catch(() => null) : Promise.resolve(null);
      restored.then((saved) => {
        if (saved?.open && panel?.widget === widget && !widget.isVisible) shell.activateById(widget.id);
      }).finally(() => { restoring = false; });
      return JSON.stringify({ created: true, visible: !!widget.isVisible });
    },
    disposePanel,
    // draw(role, treesJson, heldByJson?): drawInto's answer (false: no node has that role; "held": nothing drawn).
    draw(role, treesJson, heldByJson = "[]") { return drawInto(role, JSON.parse(treesJson), JSON.parse(heldByJson)); },
    // rows(role, opsJson): edit the keyed list `role`, newest on top: ["clear"], ["keep", key] (to the top), ["put",
    // key, tree] (replaced or added on top), ["set", key, tree] (replaced where it is, else on top), ["drop", key].
    rows(role, opsJson) {
      const list = panel?.roles.get(role);
      if (!list) return;
      const keyed = rows.get(role) ?? rows.set(role, new Map()).get(role);
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
    // set(changesJson): {role: {text?, hidden?, value?, attrs?: {name: value}}} for the panel's nodes.
    set(changesJson) {
      for (const [role, change] of Object.entries(JSON.parse(changesJson))) {
        const node = panel?.roles.get(role);
        if (!node) continue;
        if ("text" in change) node.textContent = tr(change.text);
        if ("hidden" in change) node.hidden = !!change.hidden;
        if ("value" in change) node.value = String(change.value);
        for (const [name, value] of Object.entries(change.attrs ?? {})) setAttribute(node, name, value);
      }
    },
    // fields(role): {focused: the tag name of the focused element inside the node `role`, or null (a select only
    // while the person is choosing in it), drafts: {data-reply: value} of its non-empty reply boxes}.
    fields(role) {
      const node = panel?.roles.get(role) ?? null;
      const drafts = Object.create(null); // keys come from the notebook (thread ids): "__proto__" is a key too
      for (const box of node?.querySelectorAll("textarea[data-reply]") ?? []) {
        if (box.value) drafts[box.getAttribute("data-reply")] = String(box.value);
      }
      return JSON.stringify({ focused: focusedIn(node), drafts });
    },
    clearDraft(role, key) {
      for (const box of panel?.roles.get(role)?.querySelectorAll("textarea[data-reply]") ?? []) {
        if (box.getAttribute("data-reply") === key) box.value = "";
      }
    },
    activate(id) { shell?.activateById(String(id)); },
    // applyMarkers: the markers {cellId: [signature, [classes on], tree]} on the cells of every notebook open at
    // `path`; other cells lose them; a cell whose attribute `attr` holds its signature is not touched. A strip's
    // buttons report their clicks as the panel's do. Returns how many cells changed.
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
    style,
    configureBoxes(namesJson) { names = JSON.parse(namesJson); },
    watchBoxes(listener) { boxListener = listener ?? null; },
    // showBox(id, treeJson): build proposal `id`'s box (not placed yet); whether it has a listing.
    showBox(id, treeJson) {
      boxes.get(id)?.remove();
      const node = build(JSON.parse(treeJson));
      boxes.set(id, node);
      listen(id, node);
      return !!node.querySelector(`.${names.diff}`);
    },
    // placeBoxes(itemsJson, cornerJson): put each box [id, path, cellId, measure] in the corner box (path null), its
    // notebook, or out of the page when that is not open; the ids to measure whose listing is in view to its end.
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
    // revealBox(id): enable Accept, drop "Show all" and its hint.
    revealBox(id) {
      const node = boxes.get(id);
      const accept = node?.querySelector(`.${names.accept}`);
      if (accept) accept.disabled = false;
      for (const name of [names.expand, names.hint]) node?.querySelector(`.${name}`)?.remove();
    },
    expandBox(id) { boxes.get(id)?.querySelector(`.${names.diff}`)?.classList.add(names.expanded); },
    disableBox(id) {
      for (const button of boxes.get(id)?.querySelectorAll("button") ?? []) button.disabled = true;
    },
    removeBox(id, dropCorner) {
      boxes.get(id)?.remove();
      boxes.delete(id);
      if (dropCorner && corner) { corner.remove(); corner = null; }
    },
    // dispose(): the session's worker is gone (the loader's watchdog): the panel and the boxes go.
    dispose() {
      disposePanel();
      for (const id of [...boxes.keys()]) api.removeBox(id, true);
      boxListener = null;
    },
  };

  return api;
})()
