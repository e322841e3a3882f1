"""notebook.js's ``applyEdits`` marking the agent's code for the kernel trust (lab/kernel_trust.js), run by Node on
the file the wheel ships: a batch runs in one Yjs transaction, and a cell it makes there (an insert, or a move, which
JupyterLab's way deletes the cell and inserts its copy) sends no change of its own for a source written after it in
the same transaction. Each cell whose source the batch writes is marked as the agent's, so the person's later run of
it claims the kernel (docs/SECURITY.md, "The kernel").

The objects below stand in for the few fields of a notebook model ``applyEdits`` reads and writes, with no change
signals at all (what a cell made in the transaction sends); the real ones: playwright-tests/test_attacks_kernel.py.
"""

from __future__ import annotations

from helpers import run_notebook_js

HARNESS = r"""
const ydoc = { on() {} };
const sharedCell = (json) => ({ id: json.id ?? `new-${Math.random().toString(36).slice(2, 8)}`,
  source: json.source, cell_type: json.cell_type, getId() { return this.id; }, getSource() { return this.source; },
  setSource(text) { this.source = text; }, toJSON() { return { id: this.id, cell_type: this.cell_type,
  source: this.source, metadata: {} }; }, changed: signal(), getMetadata: () => undefined });
const shared = { ydoc, getMetadata: () => undefined,
  cells: [sharedCell({ id: "a", cell_type: "code", source: "x = 1" }),
          sharedCell({ id: "b", cell_type: "code", source: "y = 2" })],
  transact(fn) { fn(); }, deleteCell(i) { this.cells.splice(i, 1); },
  insertCell(i, json) { const made = sharedCell(json); this.cells.splice(i, 0, made); return made; } };
const modelOf = (s) => ({ get id() { return s.id; }, type: "code", sharedModel: s });
const cells = { get length() { return shared.cells.length; }, get: (i) => modelOf(shared.cells[i]), changed: signal() };
const panel = { id: "p", disposed: signal(), content: { widgets: [] },
                context: { path: "a.ipynb", saveState: signal(), model: { sharedModel: shared, cells } } };
const marked = [];
live.attach({ tracker: { find: (test) => [panel].find(test) },
              kernelTrust: { markAgentCell: (cell) => marked.push(cell.id) } });
const h = JSON.parse(live.findViewed("a.ipynb")).handle;
const revision = JSON.parse(live.cellIds(h)).revision;
const steps = [
  { op: "move", cell_id: "b", from_index: 1, index: 0 },
  { op: "set_source", cell_id: "b", index: 0, source: "from IPython.display import HTML; HTML('<b>x</b>')" },
  { op: "insert", index: 2, cell_type: "code", source: "print('new')" },
];
const answer = JSON.parse(live.applyEdits(h, JSON.stringify(steps), revision));
console.log(JSON.stringify({ answer, marked, order: shared.cells.map((c) => c.id) }));
"""


def test_every_cell_whose_source_a_batch_writes_is_marked_as_the_agents():
    out = run_notebook_js(HARNESS)
    inserted = out["answer"]["ids"][2]
    assert out["order"] == ["b", "a", inserted]
    assert sorted(out["marked"]) == sorted(["b", inserted])  # the moved-then-written cell and the new one; not "a"
