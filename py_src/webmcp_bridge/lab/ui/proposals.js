// proposals.js: the JS half of webmcp_bridge/lab/ui/proposals.py: the Direct/Propose command (with its command
// palette item) and the loader's status of the mode. Evaluated once per view by proposals.py (lab/ffi.py load_half);
// the expression's value is the object below. attach(ctx) keeps the application, @jupyterlab/apputils'
// ICommandPalette token and the loader's setMode. (The proposal boxes are dom.js's, named by proposal id.)
//
// JupyterLab asks the command synchronously whether it is toggled (its check mark), so this half answers from the
// state Python pushed (setToggled). Running the command calls Python's listener onExecute(id), whose return value is
// not used (in a worker it becomes an event). Python decides what the command does.
(() => {
  let app = null;
  let paletteToken = null;
  let setMode = null;
  let toggled = false;
  let executeListener = null; // Python's listener (a proxy Python holds; dropped by dispose)
  const disposables = [];

  return {
    // attach(ctx): keeps ctx.app, ctx.modules.apputils.ICommandPalette and ctx.setMode (each may be absent).
    attach(ctx) {
      app = ctx?.app ?? null;
      paletteToken = ctx?.modules?.apputils?.ICommandPalette ?? null;
      setMode = typeof ctx?.setMode === "function" ? ctx.setMode : null;
    },
    // addCommand(id, label, caption, category, onExecute): the toggleable command and, where the application has a
    // command palette, its palette item under `category`. A Promise of false when the application has the command
    // already (nothing added), else true.
    async addCommand(id, label, caption, category, onExecute) {
      if (!app || app.commands.hasCommand(id)) return false;
      executeListener = onExecute;
      disposables.push(app.commands.addCommand(id, {
        label: String(label),
        caption: String(caption),
        isToggleable: true,
        isToggled: () => toggled,
        execute: () => { if (executeListener) executeListener(id); },
      }));
      let palette = null;
      if (paletteToken) {
        try { palette = await app.resolveOptionalService(paletteToken); } catch (error) {
          console.error("[webmcp-bridge] command palette", error);
        }
      }
      if (palette) disposables.push(palette.addItem({ command: id, category: String(category) }));
      return true;
    },
    // setToggled(id, on): what the command answers for its check mark from now on.
    setToggled(id, on) {
      toggled = !!on;
      app?.commands.notifyCommandChanged(id);
    },
    // setMode(mode, waiting): the loader's status item (the mode and how many proposals wait).
    setMode(mode, waiting) {
      if (setMode) setMode(String(mode), Number(waiting));
    },
    // dispose(): remove the command and its palette item (newest first) and drop the listener.
    dispose() {
      executeListener = null;
      for (const disposable of disposables.splice(0).reverse()) {
        try { disposable?.dispose(); } catch (error) { console.error("[webmcp-bridge] proposals", error); }
      }
    },
  };
})()
