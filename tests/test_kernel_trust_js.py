"""kernel_trust.js, the page's half of the kernel model (docs/SECURITY.md, "The kernel"), run by Node on the file the
wheel ships, against stand-ins for the few fields of JupyterLab's panels, kernels and cell models it reads (the real
ones: playwright-tests/test_attacks_kernel.py):

- a kernel stays the agent's whatever status its own messages report (a Jupyter kernel's code can send
  ``execution_state: "restarting"``); the page's own restart of it ends that;
- a cell whose source the agent wrote makes its kernel the agent's when the person runs it, before the request,
  also after the person moved it (JupyterLab makes a new cell model, with the cell's id);
- a notebook switched onto an agent's kernel has every cell untrusted at once;
- a notebook's cells are read without their ``trusted`` flags, on a Jupyter server as in JupyterLite.
"""

from __future__ import annotations

from pathlib import Path

from helpers import run_node

KERNEL_TRUST_JS = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab" / "kernel_trust.js"

HARNESS = r"""
const fs = require("fs");
// the ES module's one export, evaluated as a script
const createKernelTrust = eval("(() => {" + fs.readFileSync(process.argv[1], "utf8").replace(/^export /m, "")
  + "; return createKernelTrust; })()");
const signal = () => {
  const slots = [];
  return { connect(fn) { slots.push(fn); },
           disconnect(fn) { const i = slots.indexOf(fn); if (i >= 0) slots.splice(i, 1); },
           emit(...args) { for (const fn of [...slots]) fn(...args); } };
};
const makeCell = (trusted, id) => {
  const metadata = new Map(trusted ? [["trusted", true]] : []);
  return { id, type: "code", trusted, stateChanged: signal(),
           outputs: { contentFactory: { createOutputModel: (options) => ({ trusted: !!options.trusted }) } },
           sharedModel: { getMetadata: (k) => metadata.get(k), deleteMetadata: (k) => metadata.delete(k) } };
};
const restarts = [];
const makeKernel = (id) => ({ id, restart: async () => { restarts.push(id); } });
const makePanel = (kernel, cells) => {
  const panel = { content: {},
                  sessionContext: { session: { kernel }, kernelChanged: signal(), statusChanged: signal() },
                  context: { ready: Promise.resolve(), model: { contentChanged: signal(),
                    cells: { length: cells.length, get: (i) => cells[i], changed: signal() } } } };
  return panel;
};
const k1 = makeKernel("k1"), k2 = makeKernel("k2");
const mine = makeCell(true, "m-1"), agents = makeCell(true, "a-1"), other = makeCell(true, "o-1");
const p1 = makePanel(k1, [mine, agents]);
const p2 = makePanel(k2, [other]);
const panels = [p1, p2];
const tracker = { forEach: (fn) => panels.forEach(fn), widgetAdded: signal(), filter: (fn) => panels.filter(fn),
                  find: (fn) => panels.find(fn) };
const executionScheduled = signal();
const saved = { type: "notebook", content: { cells: [{ cell_type: "code", metadata: { trusted: true } }] } };
const app = { commands: { commandExecuted: signal() },
              serviceManager: { kernels: { running: () => [{ id: "k1" }, { id: "k2" }] },
                                contents: { get: async () => JSON.parse(JSON.stringify(saved)) } } };
const trust = createKernelTrust({ app, tracker, modules: { notebook: { NotebookActions: { executionScheduled } } } });
const out = {};
(async () => {
  // the person runs their own cell: nothing is claimed
  executionScheduled.emit(null, { notebook: p1.content, cell: { model: mine } });
  out.afterOwnRun = trust.agentKernels();
  // the agent wrote a cell; the person runs it: its kernel is the agent's, every cell on it untrusted
  trust.markAgentCell(agents);
  executionScheduled.emit(null, { notebook: p1.content, cell: { model: agents } });
  out.afterAgentsCellRun = trust.agentKernels();
  out.untrusted = [mine.trusted, agents.trusted, mine.sharedModel.getMetadata("trusted") ?? null];
  out.newOutput = mine.outputs.contentFactory.createOutputModel({ trusted: true }).trusted;
  // the kernel's own status messages end nothing
  for (const status of ["restarting", "autorestarting", "dead"]) p1.sessionContext.statusChanged.emit(null, status);
  out.afterForgedStatus = trust.agentKernels();
  // another notebook switched onto the agent's kernel: its cells untrusted at once
  p2.sessionContext.session.kernel = k1;
  p2.sessionContext.kernelChanged.emit(null, {});
  out.switched = [other.trusted, other.sharedModel.getMetadata("trusted") ?? null];
  // the page restarts it: no longer the agent's
  await k1.restart();
  out.afterRestart = trust.agentKernels();
  out.restarts = restarts;
  // the person moves the agent's cell (JupyterLab's moveCells makes a new cell model, with the same id) and runs it
  executionScheduled.emit(null, { notebook: p1.content, cell: { model: makeCell(true, "a-1") } });
  out.afterMovedCellRun = trust.agentKernels();
  // a file's own trust flags are dropped as it is read (no lite switch: a server's notary is not believed either)
  out.read = (await app.serviceManager.contents.get("x.ipynb")).content.cells[0].metadata;
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def test_the_kernel_trust_half_claims_agent_code_and_believes_no_kernel_status():
    out = run_node(HARNESS, str(KERNEL_TRUST_JS))
    assert out["afterOwnRun"] == 0
    assert out["afterAgentsCellRun"] == 1
    assert out["untrusted"] == [False, False, None]
    assert out["newOutput"] is False  # an output the agent's kernel makes later is created untrusted
    assert out["afterForgedStatus"] == 1
    assert out["switched"] == [False, None]
    assert out["afterRestart"] == 0 and out["restarts"] == ["k1"]
    assert out["afterMovedCellRun"] == 1  # the agent's code, in the new model a move made
    assert out["read"] == {}
