// cell_menu.js: the JS half of webmcp_bridge/lab/ui/cell_menu.py (evaluated by lab/ffi.py load_half): what the person
// right-clicked in a cell, and JupyterLab's input dialog (the commands themselves are commands.js's). A capture
// listener on window reports a contextmenu event to Python (onMenu) before JupyterLab opens its menu, so Python can
// push the commands' states first. Python decides everything.
(() => {
  let tracker = null, InputDialog = null;
  let menuListener = null; // Python's listener (dropped by dispose)
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
      tracker = ctx?.tracker ?? null;
      InputDialog = ctx?.modules?.apputils?.InputDialog ?? null;
    },
    // watch(cellSelector, onMenu): contextmenu events inside cellSelector to onMenu(facts JSON).
    watch(cellSelector, onMenu) {
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
    dispose() {
      window.removeEventListener("contextmenu", onContextMenu, true);
      menuListener = null;
    },
  };
})()
