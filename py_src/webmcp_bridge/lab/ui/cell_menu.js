// cell_menu.js: the JS half of webmcp_bridge/lab/ui/cell_menu.py (evaluated by lab/ffi.py load_half): the Agent
// panel's commands in the cells' context menu, what the person right-clicked, and JupyterLab's input dialog. A capture
// listener on window reports a contextmenu event to Python (onMenu) before JupyterLab opens its menu; JupyterLab asks
// the commands synchronously, so they answer from the states Python pushed (setStates). Python decides everything.
(() => {
  let app = null, tracker = null, InputDialog = null;
  const added = new Map(); // command id -> {enabled, label}
  const disposables = [];
  let menuListener = null, executeListener = null; // Python's listeners (dropped by dispose)
  let selector = null;

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

  return {
    attach(ctx) {
      app = ctx?.app ?? null;
      tracker = ctx?.tracker ?? null;
      InputDialog = ctx?.modules?.apputils?.InputDialog ?? null;
    },
    // watch(cellSelector, onMenu, onExecute): contextmenu events inside cellSelector to onMenu(facts JSON), runs of
    // the commands added here to onExecute(id).
    watch(cellSelector, onMenu, onExecute) {
      selector = String(cellSelector);
      menuListener = onMenu;
      executeListener = onExecute;
      window.addEventListener("contextmenu", onContextMenu, true);
    },
    separator(menuSelector, rank) {
      disposables.push(app.contextMenu.addItem({ type: "separator", selector: String(menuSelector), rank: Number(rank) }));
    },
    // add(id, label, caption, menuSelector, rank): command `id` (disabled until setStates) and its menu item; false
    // when the application has the command already.
    add(id, label, caption, menuSelector, rank) {
      if (!app || app.commands.hasCommand(id)) return false;
      const entry = { enabled: false, label: String(label) };
      added.set(id, entry);
      disposables.push(app.commands.addCommand(id, {
        label: () => entry.label,
        caption: String(caption),
        isEnabled: () => entry.enabled,
        execute: () => executeListener?.(id),
      }));
      disposables.push(app.contextMenu.addItem({ command: id, selector: String(menuSelector), rank: Number(rank) }));
      return true;
    },
    // setStates(statesJson): what the commands answer from now on, {id: [enabled, label]}. An open menu is drawn
    // again (in a worker the push comes after JupyterLab drew it; a Lumino menu asks its commands only on update).
    setStates(statesJson) {
      for (const [id, [enabled, label]] of Object.entries(JSON.parse(statesJson))) {
        if (added.has(id)) Object.assign(added.get(id), { enabled: !!enabled, label: String(label) });
      }
      if (app?.contextMenu?.menu?.isAttached) app.contextMenu.menu.update();
    },
    // askText(optionsJson): InputDialog.getText({title, placeholder, okLabel}); a Promise of {available, accept, value}.
    async askText(optionsJson) {
      if (!InputDialog) return JSON.stringify({ available: false, accept: false, value: null });
      const { value, button } = await InputDialog.getText(JSON.parse(optionsJson));
      return JSON.stringify({ available: true, accept: !!button.accept, value: value == null ? null : String(value) });
    },
    dispose() {
      window.removeEventListener("contextmenu", onContextMenu, true);
      menuListener = executeListener = null;
      for (const disposable of disposables.splice(0).reverse()) {
        try { disposable?.dispose(); } catch (error) { console.error("[webmcp-bridge] cell menu", error); }
      }
      added.clear();
    },
  };
})()
