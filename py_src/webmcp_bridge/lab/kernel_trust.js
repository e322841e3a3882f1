// kernel_trust.js: the page's half of the kernel model (docs/SECURITY.md, "The kernel"): which kernels the agent has
// run code in, and keeping every output such a kernel puts in a notebook untrusted (JupyterLab's sanitizer: no script,
// no handler), whoever started the run and whichever cell it lands in. A notebook file's own "trusted" flags are
// dropped as it is read (JupyterLite has no notary; a Jupyter server's notary key is a file the kernel can write).
// The loader imports it before JupyterLab activates its plugin, so it is in place before any notebook opens: a
// trusted output renders as its notebook is read, long before the bridge's Python starts.
//
// createKernelTrust({app, tracker, modules}) -> the loader's ctx.kernelTrust, whose claim(panel) makes the panel's
// kernel the agent's until the page restarts it or it is shut down (the kernel's own status messages, forgeable by its
// code, end nothing): notebook.js calls it right before it sends the agent's code. Every code cell of every notebook
// on that kernel is made untrusted at once (an update_display cannot re-render an older trusted output with the
// agent's HTML). markAgentCell(cell): when the person runs a cell whose source the agent wrote, its kernel is claimed
// before the request is sent, for that code is the agent's whoever runs it.
// How an output stays untrusted: each code cell's output area model gets a content factory that creates the output
// model untrusted while the notebook is on an agent's kernel (the one path every output takes: add, update_display,
// the trusted setter's re-creation); a cell JupyterLab marks trusted (its execute does, before the request) is made
// untrusted again in the same task, its saved "trusted" flag removed (a Jupyter server would sign the file). The
// person's Trust command (notebook:trust) is let through while it runs; the next output of such a kernel in that
// cell makes it untrusted again.
const TRUST_COMMAND = 'notebook:trust';

export function createKernelTrust({ app, tracker, modules = {}, now = () => Date.now() }) {
  const agent = new Map(); // kernel id -> {since: ms epoch}
  const guarded = new WeakSet(); // cell models whose output factory is ours
  const agentCells = new Set(); // ids of cells whose source the agent wrote: a move or retype makes a new model
  const followed = new WeakSet(); // notebook panels followed
  const listeners = new Set();
  let trusting = 0; // > 0 while the person's Trust command runs (its dialog, then its writes)

  const kernelOf = panel => panel?.sessionContext?.session?.kernel ?? null;
  const owned = panel => { const kernel = kernelOf(panel); return !!kernel && agent.has(kernel.id); };
  const changed = () => { for (const fn of [...listeners]) { try { fn(); } catch (error) { console.error(error); } } };

  function untrust(cell) {
    if (cell.type !== 'code') return;
    cell.trusted = false;
    if (cell.sharedModel.getMetadata('trusted') !== undefined) cell.sharedModel.deleteMetadata('trusted');
  }

  function guardCell(panel, cell) {
    if (cell.type !== 'code' || !cell.outputs || guarded.has(cell)) return;
    guarded.add(cell);
    const outputs = cell.outputs;
    const factory = outputs.contentFactory;
    outputs.contentFactory = {
      createOutputModel(options) {
        if (!options?.trusted || trusting > 0 || !owned(panel)) return factory.createOutputModel(options);
        // a trusted cell (the person trusted it) gets an output of the agent's kernel: the cell is untrusted again
        queueMicrotask(() => { if (owned(panel) && cell.trusted) untrust(cell); });
        return factory.createOutputModel({ ...options, trusted: false });
      },
    };
    cell.stateChanged.connect((_, change) => {
      if (change.name === 'trusted' && change.newValue && trusting === 0 && owned(panel)) untrust(cell);
    });
    if (owned(panel)) untrust(cell);
  }

  function follow(panel) {
    if (!panel?.content || followed.has(panel)) return;
    followed.add(panel);
    const cells = () => panel.context?.model?.cells;
    const guardAll = () => { const list = cells(); if (list) for (let i = 0; i < list.length; i++) guardCell(panel, list.get(i)); };
    let connected = null;
    const onCells = (_, change) => { if (change.type === 'add' || change.type === 'set') for (const cell of change.newValues) guardCell(panel, cell); };
    const connect = () => {
      const list = cells();
      if (!list || list === connected) return;
      connected?.changed.disconnect(onCells);
      list.changed.connect(onCells);
      connected = list;
      guardAll();
    };
    connect();
    panel.context?.ready?.then(connect, () => {});
    panel.context?.model?.contentChanged?.connect(connect);
    // a notebook switched onto an agent's kernel: every cell untrusted, as claim does
    panel.sessionContext?.kernelChanged?.connect(() => { if (owned(panel)) untrustAll(panel); changed(); });
  }

  function untrustAll(panel) {
    follow(panel);
    const list = panel.context?.model?.cells;
    if (list) for (let i = 0; i < list.length; i++) { guardCell(panel, list.get(i)); untrust(list.get(i)); }
  }

  // Ownership ends when the page restarts the kernel (JupyterLab's restart, the panel's, a dialog's: each calls the
  // connection's restart), never on a status the kernel reports.
  function watchRestart(kernel) {
    if (typeof kernel.restart !== 'function' || kernel.restart.webmcpBridge) return;
    const restart = kernel.restart.bind(kernel);
    const wrapped = async (...args) => {
      const result = await restart(...args);
      if (agent.delete(kernel.id)) changed();
      return result;
    };
    wrapped.webmcpBridge = true;
    kernel.restart = wrapped;
  }

  function claim(panel) {
    const kernel = kernelOf(panel);
    if (!kernel) return false;
    follow(panel);
    const fresh = !agent.has(kernel.id);
    if (fresh) agent.set(kernel.id, { since: now() });
    watchRestart(kernel);
    for (const other of panelsOn(kernel.id)) untrustAll(other);
    if (fresh) changed();
    return true;
  }

  const panelsOn = id => (tracker ? tracker.filter(panel => kernelOf(panel)?.id === id) : []);

  // the agent's kernels still running (one shut down meanwhile, say from the Running panel, is forgotten)
  function prune() {
    const kernels = app?.serviceManager?.kernels;
    if (!kernels?.running) return;
    const running = new Set([...kernels.running()].map(model => model.id));
    for (const id of [...agent.keys()]) if (!running.has(id)) agent.delete(id);
  }

  if (tracker) {
    tracker.forEach(follow);
    tracker.widgetAdded.connect((_, panel) => follow(panel));
  }
  app?.commands?.commandExecuted?.connect((_, args) => {
    if (args.id !== TRUST_COMMAND) return;
    trusting++;
    Promise.resolve(args.result).catch(() => {}).finally(() => { trusting--; });
  });
  // the person runs a cell the agent wrote: its kernel is the agent's from before the request is sent
  modules.notebook?.NotebookActions?.executionScheduled?.connect((_, args) => {
    const model = args?.cell?.model;
    if (!model || !agentCells.has(model.id)) return;
    const panel = tracker?.find(candidate => candidate.content === args.notebook);
    if (panel) claim(panel);
  });
  // A notebook's cells are read without their "trusted" flags (JupyterLab reads a cell's trust from its metadata as
  // the model is made): JupyterLite has no notary, and a Jupyter server's notary signs with a key file the kernel's
  // code can read and write. Only the person's Trust command in this page trusts outputs.
  const contents = app?.serviceManager?.contents;
  if (contents && typeof contents.get === 'function') {
    const get = contents.get.bind(contents);
    contents.get = async (...args) => {
      const model = await get(...args);
      const cells = model?.type === 'notebook' ? model.content?.cells : null;
      if (Array.isArray(cells)) for (const cell of cells) if (cell?.metadata && typeof cell.metadata === 'object') delete cell.metadata.trusted;
      return model;
    };
  }

  return {
    claim,
    markAgentCell(cell) { if (cell?.id) agentCells.add(cell.id); },
    // JSON text {since: ms epoch} while the panel's kernel is the agent's, else null
    owner(panel) {
      const kernel = kernelOf(panel);
      const entry = kernel ? agent.get(kernel.id) : null;
      return entry ? JSON.stringify({ since: entry.since }) : null;
    },
    agentKernels() { prune(); return agent.size; },
    // each restarted without a dialog (the person confirmed): JSON text {restarted, failed}; a kernel no notebook is
    // on any more (closed, kernel kept) is shut down: nothing of the person's runs in it
    async restartAgentKernels() {
      prune();
      let restarted = 0, failed = 0;
      for (const id of [...agent.keys()]) {
        const panel = panelsOn(id)[0];
        try {
          if (panel) await panel.sessionContext.restartKernel();
          else await app.serviceManager.kernels.shutdown(id);
          agent.delete(id);
          restarted++;
        } catch (error) {
          console.error(error);
          failed++;
        }
      }
      changed();
      return JSON.stringify({ restarted, failed });
    },
    // JupyterLab's dialog (Cancel, warning button `accept`, the texts shown as text): true when accepted
    async confirm(title, body, accept) {
      const apputils = modules.apputils;
      if (!apputils?.showDialog) return false;
      const result = await apputils.showDialog({
        title: String(title), body: String(body),
        buttons: [apputils.Dialog.cancelButton(), apputils.Dialog.warnButton({ label: String(accept) })],
      });
      return Boolean(result?.button?.accept);
    },
    // fn() after any change of the agent's kernels; returns the undo
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
