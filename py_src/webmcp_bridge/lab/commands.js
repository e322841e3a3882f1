// commands.js: the JS half of the application commands the bridge's Python adds (lab/sharing.py's share command,
// lab/ui/proposals.py's Direct/Propose toggle, lab/ui/cell_menu.py's cell commands): JupyterLab's command registry,
// context menu and command palette (lab/ffi.py load_half). JupyterLab asks synchronously whether a command is enabled
// or toggled and for its label (when a menu opens), so this half answers from a fact of the page it reads itself or the
// state Python pushed (setStates, setToggled); running a command calls Python's listener onExecute(id) (its return
// value unused: in a worker, an event). For cell_menu.py also what the person right-clicked in a cell (a capture
// listener on window reports the contextmenu event before JupyterLab opens its menu, so Python can push the commands'
// states first) and JupyterLab's input dialog.
(() => {
  let app = null;
  let tracker = null;
  let paletteToken = null; // apputils' ICommandPalette (attach)
  let InputDialog = null; // apputils' InputDialog (attach)
  let menuListener = null; // watchMenu's: Python's listener of right-clicks in cells (dropped by dispose)
  let selector = null;
  const added = new Map(); // command id -> {enabled, on, label, toggled, disposables: [IDisposable]}

  // Whether the person's text selection lies inside one output of the notebook in front (both its ends inside one
  // .jp-OutputArea-child of a cell of tracker.currentWidget) and holds some text.
  function outputSelected() {
    const panel = tracker?.currentWidget;
    const sel = window.getSelection();
    if (!panel || !sel || sel.isCollapsed || sel.rangeCount !== 1 || !sel.toString()) return false;
    const [child, end] = [sel.anchorNode, sel.focusNode].map((n) => (n?.nodeType === 1 ? n : n?.parentElement)?.closest(".jp-OutputArea-child"));
    return !!(child && child === end && child.closest(".jp-Cell") && panel.node.contains(child));
  }

  // What the contextmenu event hit: {path, cellId, outputIndex (or null)}, or null outside the tracker's notebooks.
  function facts(element) {
    const cellNode = element?.closest(".jp-Cell");
    if (!cellNode) return null;
    const panel = tracker?.find((p) => p.node.contains(cellNode));
    const widget = panel?.content.widgets.find((w) => w.node === cellNode);
    if (!widget) return null;
    const output = element.closest(".jp-OutputArea-child");
    const outputIndex = output && cellNode.contains(output)
      ? [...output.parentElement.children].filter((el) => el.classList.contains("jp-OutputArea-child")).indexOf(output)
      : null;
    return { path: String(panel.context.path), cellId: String(widget.model.id), outputIndex };
  }

  function onContextMenu(event) {
    const element = event.target?.nodeType === 1 ? event.target : event.target?.parentElement;
    if (!menuListener || !element?.closest(selector)) return;
    try { menuListener(JSON.stringify(facts(element))); } catch (error) { console.error("[webmcp-bridge] menu", error); }
  }

  const api = {
    attach(ctx) {
      app = ctx?.app ?? null;
      tracker = ctx?.tracker ?? null;
      paletteToken = ctx?.modules?.apputils?.ICommandPalette ?? null;
      InputDialog = ctx?.modules?.apputils?.InputDialog ?? null;
    },
    // watchMenu(cellSelector, onMenu): contextmenu events inside cellSelector to onMenu(facts JSON).
    watchMenu(cellSelector, onMenu) {
      selector = String(cellSelector);
      menuListener = onMenu;
      window.addEventListener("contextmenu", onContextMenu, true);
    },
    // askText(optionsJson): InputDialog.getText({title, placeholder, okLabel}); a Promise of {available, accept, value}.
    async askText(optionsJson) {
      if (!InputDialog) return JSON.stringify({ available: false, accept: false, value: null });
      const { value, button } = await InputDialog.getText(JSON.parse(optionsJson));
      return JSON.stringify({ available: true, accept: !!button.accept, value: value == null ? null : String(value) });
    },
    // add(id, optionsJson, onExecute): add command `id` unless the application has it already (false then).
    // optionsJson: {label, caption?, enabled: "always" | "output-selection" (outputSelected above) | "state" (disabled
    // until setStates), toggled?: a toggleable command's check mark (then setToggled), menu: {selector, rank} | null (a
    // context-menu item), palette?: its category in the command palette (added once the page's palette is resolved)}.
    add(id, optionsJson, onExecute) {
      if (!app || app.commands.hasCommand(id)) return false;
      const options = JSON.parse(optionsJson);
      const enabled = String(options.enabled ?? "always");
      const entry = { enabled, on: enabled !== "state", label: String(options.label), toggled: !!options.toggled,
                      disposables: [] };
      added.set(id, entry);
      entry.disposables.push(app.commands.addCommand(id, {
        label: () => entry.label,
        ...(options.caption ? { caption: String(options.caption) } : {}),
        ...("toggled" in options ? { isToggleable: true, isToggled: () => entry.toggled } : {}),
        isEnabled: () => (enabled === "output-selection" ? outputSelected() : entry.on),
        execute: () => { onExecute(id); },
      }));
      if (options.palette && paletteToken) {
        Promise.resolve(app.resolveOptionalService(paletteToken)).then((palette) => {
          if (palette && added.get(id) === entry) entry.disposables.push(palette.addItem({ command: id, category: String(options.palette) }));
        }).catch((error) => console.error("[webmcp-bridge] command palette", error));
      }
      if (options.menu) entry.disposables.push(app.contextMenu.addItem({
        command: id, selector: String(options.menu.selector), rank: Number(options.menu.rank) }));
      return true;
    },
    separator(menuSelector, rank) {
      const item = app?.contextMenu.addItem({ type: "separator", selector: String(menuSelector), rank: Number(rank) });
      if (item) added.set(Symbol("separator"), { disposables: [item] });
    },
    // setStates(statesJson): what commands added with enabled "state" answer from now on, {id: [enabled, label]}. An
    // open menu is drawn again (in a worker the push comes after JupyterLab drew it; a Lumino menu asks its commands
    // only on update).
    setStates(statesJson) {
      for (const [id, [enabled, label]] of Object.entries(JSON.parse(statesJson))) {
        if (added.has(id)) Object.assign(added.get(id), { on: !!enabled, label: String(label) });
      }
      if (app?.contextMenu?.menu?.isAttached) app.contextMenu.menu.update();
    },
    setToggled(id, on) {
      const entry = added.get(id);
      if (entry) entry.toggled = !!on;
      app?.commands.notifyCommandChanged(id);
    },
    // Remove every command and menu item this half added (newest first), and the right-clicks' listener.
    dispose() {
      if (menuListener) window.removeEventListener("contextmenu", onContextMenu, true);
      menuListener = null;
      for (const disposable of [...added.values()].reverse().flatMap((entry) => entry.disposables.reverse())) {
        try { disposable?.dispose(); } catch (error) { console.error("[webmcp-bridge] command", error); }
      }
      added.clear();
    },
  };
  return api;
})()
