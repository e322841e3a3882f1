// cell_menu.js: the JS half of webmcp_bridge/lab/ui/cell_menu.py: the Agent panel's commands in the context menu of
// notebook cells, what the person right-clicked, and JupyterLab's input dialog for a comment's text. Evaluated once
// per panel by cell_menu.py (lab/ffi.py load_half); the expression's value is the object below. attach(ctx) keeps
// the application, the notebook tracker and @jupyterlab/apputils' InputDialog.
//
// JupyterLab asks a command synchronously for its label and whether it is enabled, when the menu opens, so this half
// answers from the state Python pushed (setStates). Python pushes it when the person right-clicks a cell: a capture
// listener on window sees the contextmenu event before JupyterLab opens its menu and calls Python's listener
// onMenu(factsJson) with what was clicked (on the page's main thread Python answers before the menu is drawn; in a
// worker after, and setStates draws the open menu again).
// Running a command calls Python's listener onExecute(id). Neither listener's return value is used (in a worker both
// become events). Python decides every label, every enabled state and what a command does.
(() => {
  let app = null;
  let tracker = null;
  let InputDialog = null;
  const added = new Map(); // command id -> {enabled, label}
  const disposables = [];
  let menuListener = null; // Python's listeners (proxies Python holds; dropped by dispose)
  let executeListener = null;
  let selector = null;

  // What the contextmenu event hit: {path, cellId, outputIndex (among the cell's outputs, or null)}, or null when the
  // cell is not in a notebook panel the tracker knows.
  function facts(target) {
    const element = target?.nodeType === 1 ? target : target?.parentElement;
    const cellNode = element?.closest(".jp-Cell");
    if (!cellNode) return null;
    const panel = tracker?.find((p) => p.node.contains(cellNode));
    const widget = panel?.content.widgets.find((w) => w.node === cellNode);
    if (!widget) return null;
    let outputIndex = null;
    const output = element.closest(".jp-OutputArea-child");
    if (output && cellNode.contains(output)) {
      outputIndex = 0;
      for (let sibling = output.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
        if (sibling.classList.contains("jp-OutputArea-child")) outputIndex += 1;
      }
    }
    return { path: String(panel.context.path), cellId: String(widget.model.id), outputIndex };
  }

  function onContextMenu(event) {
    if (!menuListener || !(event.target?.nodeType === 1 ? event.target : event.target?.parentElement)?.closest(selector)) {
      return;
    }
    try { menuListener(JSON.stringify(facts(event.target))); } catch (error) { console.error("[webmcp-bridge] menu", error); }
  }

  return {
    // attach(ctx): keeps ctx.app, ctx.tracker and ctx.modules.apputils.InputDialog (null without apputils).
    attach(ctx) {
      app = ctx?.app ?? null;
      tracker = ctx?.tracker ?? null;
      InputDialog = ctx?.modules?.apputils?.InputDialog ?? null;
    },
    // watch(cellSelector, onMenu, onExecute): report every contextmenu event inside cellSelector to onMenu(factsJson)
    // (JSON text of facts() above: an object or null) and every run of a command added here to onExecute(id).
    watch(cellSelector, onMenu, onExecute) {
      selector = String(cellSelector);
      menuListener = onMenu;
      executeListener = onExecute;
      window.addEventListener("contextmenu", onContextMenu, true);
    },
    // separator(menuSelector, rank): a separator in the context menu.
    separator(menuSelector, rank) {
      disposables.push(app.contextMenu.addItem({ type: "separator", selector: String(menuSelector), rank: Number(rank) }));
    },
    // add(id, label, caption, menuSelector, rank): command `id` (disabled, labelled `label` until setState) and its
    // context-menu item; false when the application has the command already.
    add(id, label, caption, menuSelector, rank) {
      if (!app || app.commands.hasCommand(id)) return false;
      const entry = { enabled: false, label: String(label) };
      added.set(id, entry);
      disposables.push(app.commands.addCommand(id, {
        label: () => entry.label,
        caption: String(caption),
        isEnabled: () => entry.enabled,
        execute: () => { if (executeListener) executeListener(id); },
      }));
      disposables.push(app.contextMenu.addItem({ command: id, selector: String(menuSelector), rank: Number(rank) }));
      return true;
    },
    // setStates(statesJson): what the commands answer JupyterLab from now on, {id: [enabled, label]} (commands not
    // added here are left out). A context menu already open is drawn again with them: in a worker the push comes
    // after JupyterLab drew the menu, and a Lumino menu asks its commands again only when it is updated. On the
    // page's main thread the push comes before the menu opens, which then finds it closed.
    setStates(statesJson) {
      for (const [id, [enabled, label]] of Object.entries(JSON.parse(statesJson))) {
        const entry = added.get(id);
        if (!entry) continue;
        entry.enabled = !!enabled;
        entry.label = String(label);
      }
      const menu = app?.contextMenu?.menu;
      if (menu?.isAttached) menu.update();
    },
    // askText(optionsJson): JupyterLab's InputDialog.getText with {title, placeholder, okLabel}; a Promise of JSON
    // text {available, accept, value (string or null)}; available false without InputDialog.
    async askText(optionsJson) {
      if (!InputDialog) return JSON.stringify({ available: false, accept: false, value: null });
      const result = await InputDialog.getText(JSON.parse(optionsJson));
      const value = result.value;
      return JSON.stringify({ available: true, accept: !!result.button.accept, value: value == null ? null : String(value) });
    },
    // dispose(): stop watching; remove every command and menu item added here (newest first).
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
