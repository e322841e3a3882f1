"""notebook.js following a notebook's cell list, run by Node on the file the wheel ships, over a stand-in of
JupyterLab 4's ``YNotebook`` and ``CellList``: one change of the list (a Yjs delta) comes as several add and remove
signals, each sent once the list is final, and JupyterLab remakes a moved or retyped cell as a new model with the same
id. The change log says what the person did: a move is one "move" of that cell (never a "delete" of another one), a
type change one "type", a deletion a "delete" of the cell deleted; a revert, which makes every cell again, an "edit"
of each cell still in its place. With "New View for Notebook" two panels share one
model: a change is heard under every open view, and still after the first view is closed.

The real objects are exercised by the browser suite (playwright-tests/test_changes_share.py).
"""

from __future__ import annotations

import pytest

from helpers import run_notebook_js

HARNESS = r"""
// YNotebook's cells (the final list as soon as the transaction ends) and CellList's signals made from the delta
const listeners = {};
const ydoc = { on(kind, fn) { (listeners[kind] ??= []).push(fn); } };
const models = new WeakMap();
function makeCell(id, access, type = "markdown") {
  const meta = access ? { webmcp_bridge: { access } } : {};
  const shared = { id, changed: signal(), getSource: () => "x",
                   getMetadata: (k) => (k === undefined ? meta : meta[k]) };
  models.set(shared, { id, type, sharedModel: shared });
  return shared;
}
const shared = { ydoc, cells: ["A", "B", "C", "D"].map((id) => makeCell(id, id === "C" ? "none" : null)),
                 getMetadata: () => undefined };
const cells = { get length() { return shared.cells.length; }, get: (i) => models.get(shared.cells[i]),
                changed: signal() };
function applyDelta(delta) {
  let at = 0;
  for (const step of delta) {
    if (step.insert) { shared.cells.splice(at, 0, ...step.insert); at += step.insert.length; }
    else if (step.delete) shared.cells.splice(at, step.delete);
    else at += step.retain;
  }
  let index = 0;
  const signals = [];
  for (const step of delta) {
    if (step.insert) {
      signals.push({ type: "add", newIndex: index, newValues: step.insert.map((s) => models.get(s)), oldIndex: -2,
                     oldValues: [] });
      index += step.insert.length;
    } else if (step.delete) {
      signals.push({ type: "remove", newIndex: -1, newValues: [], oldIndex: index,
                     oldValues: Array(step.delete).fill(undefined) });
    } else index += step.retain;
  }
  for (const s of signals) cells.changed.emit(cells, s);
  for (const fn of listeners.afterTransaction ?? []) {
    fn({ deleteSet: { clients: new Map() }, beforeState: new Map([[1, 1]]), afterState: new Map([[1, 2]]) });
  }
}
const context = { path: "a.ipynb", saveState: signal(), model: { sharedModel: shared, cells } };
const view = (id) => ({ id, isDisposed: false, disposed: signal(), context,
                        content: { widgets: [], activeCellChanged: signal() } });
const first = view("view-1"), second = view("view-2");
let panels = [first, second];
const tracker = { currentWidget: first, find: (t) => panels.find(t), filter: (t) => panels.filter(t),
                  currentChanged: signal(), widgetAdded: signal() };
live.attach({ tracker });
const heard = [];
live.listen((ids) => heard.push(JSON.parse(ids)), 0);
const handle = live.current();
live.takeChanges(handle);
const changes = () => JSON.parse(live.takeChanges(handle)).map((c) => [c.kind, c.cellId, c.access]);
const order = () => Array.from({ length: cells.length }, (_, i) => cells.get(i).id);
const out = {};
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));  // each of the person's actions is a task
(async () => {
  // moveCells(2, 1): C up one place -> [{retain: 1}, {insert: [C']}, {retain: 1}, {delete: 1}]
  applyDelta([{ retain: 1 }, { insert: [makeCell("C", "none")] }, { retain: 1 }, { delete: 1 }]);
  out.up = { changes: changes(), order: order() };
  await nextTask();
  // moveCells(0, 3): A to the end -> [{delete: 1}, {retain: 3}, {insert: [A']}]
  applyDelta([{ delete: 1 }, { retain: 3 }, { insert: [makeCell("A")] }]);
  out.down = { changes: changes(), order: order() };
  await nextTask();
  // changeCellType of B (index 1) to code: deleteCell and insertCell at its place, same id
  applyDelta([{ retain: 1 }, { insert: [makeCell("B", null, "code")] }, { delete: 1 }]);
  out.retyped = { changes: changes(), order: order() };
  await nextTask();
  // Revert (YNotebook.fromJSON): every cell made again from the file in one transaction, the same ids; D is gone
  const file = [["C", "none", "markdown"], ["B", null, "code"], ["A", null, "markdown"]];
  applyDelta([{ insert: file.map(([id, access, type]) => makeCell(id, access, type)) }, { delete: 4 }]);
  out.reverted = { changes: changes(), order: order() };
  await nextTask();
  // two cells deleted at two places in one change (C at 0, A at 2)
  applyDelta([{ delete: 1 }, { retain: 1 }, { delete: 1 }]);
  out.deleted = { changes: changes(), order: order() };
  await nextTask();
  out.heardBothViews = heard.slice();
  // the person closes the first view and keeps working in the second
  first.isDisposed = true;
  panels = [second];
  first.disposed.emit(first);
  heard.length = 0;
  applyDelta([{ insert: [makeCell("E")] }]);
  await new Promise((resolve) => setTimeout(resolve, 10));
  out.heardAfterClose = heard.slice();
  console.log(JSON.stringify(out));
})();
"""


@pytest.fixture(scope="module")
def out() -> dict:
    return run_notebook_js(HARNESS)


def test_a_moved_cell_is_one_move_of_that_cell(out):
    assert out["up"] == {"changes": [["move", "C", "none"]], "order": ["A", "C", "B", "D"]}
    assert out["down"] == {"changes": [["move", "A", None]], "order": ["C", "B", "D", "A"]}


def test_a_retyped_cell_is_one_type_change_and_deletions_name_the_cells_deleted(out):
    assert out["retyped"]["changes"] == [["type", "B", None]]
    assert out["deleted"] == {"changes": [["delete", "C", "none"], ["delete", "A", None]], "order": ["B"]}


def test_a_reverted_notebook_is_an_edit_of_each_cell_in_its_place_and_a_delete_of_each_cell_gone(out):
    changes, order = out["reverted"]["changes"], out["reverted"]["order"]
    assert order == ["C", "B", "A"]
    assert sorted(changes) == [["delete", "D", None], ["edit", "B", None], ["edit", "C", "none"], ["move", "A", None]]


def test_a_change_is_heard_under_every_open_view_of_the_notebook(out):
    assert all(sorted(ids) == ["view-1", "view-2"] for ids in out["heardBothViews"]) and out["heardBothViews"]
    assert out["heardAfterClose"] == [["view-2"]]
