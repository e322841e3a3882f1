// proposals.js: the JS half of webmcp_bridge/lab/ui/proposals.py (evaluated by lab/ffi.py load_half): the
// Direct/Propose command, its palette item and the loader's status of the mode. JupyterLab asks the command
// synchronously for its check mark, so it answers from the state Python pushed (setToggled). The boxes are dom.js's.
(() => {
  let app = null, paletteToken = null, setMode = null, toggled = false;
  let executeListener = null; // Python's listener (dropped by dispose)
  const disposables = [];

  return {
    attach(ctx) {
      app = ctx?.app ?? null;
      paletteToken = ctx?.modules?.apputils?.ICommandPalette ?? null;
      setMode = typeof ctx?.setMode === "function" ? ctx.setMode : null;
    },
    // addCommand(id, label, caption, category, onExecute): the toggleable command and its palette item (where there
    // is a palette); a Promise of false when the application has the command already.
    async addCommand(id, label, caption, category, onExecute) {
      if (!app || app.commands.hasCommand(id)) return false;
      executeListener = onExecute;
      disposables.push(app.commands.addCommand(id, {
        label: String(label),
        caption: String(caption),
        isToggleable: true,
        isToggled: () => toggled,
        execute: () => executeListener?.(id),
      }));
      let palette = null;
      try { palette = paletteToken ? await app.resolveOptionalService(paletteToken) : null; } catch (error) {
        console.error("[webmcp-bridge] command palette", error);
      }
      if (palette) disposables.push(palette.addItem({ command: id, category: String(category) }));
      return true;
    },
    setToggled(id, on) {
      toggled = !!on;
      app?.commands.notifyCommandChanged(id);
    },
    // setMode(mode, waiting): the loader's status item.
    setMode(mode, waiting) { setMode?.(String(mode), Number(waiting)); },
    dispose() {
      executeListener = null;
      for (const disposable of disposables.splice(0).reverse()) {
        try { disposable?.dispose(); } catch (error) { console.error("[webmcp-bridge] proposals", error); }
      }
    },
  };
})()
