"""notebook.js's checked writes, run by Node on the file the wheel ships: ``setSource`` and ``deleteCell`` take the
source Python checked (``expectedSource``) and write nothing when the cell holds something else by then, answering
``{changed: the cell as it is}``. In the bridge's worker a tool's check (a read) and its write are two crossings, two
tasks of the page, and the person may type between them; this is what keeps their text. ``setSource``'s answer also
carries the notebook's revision after the write, so Python need not cross again to read it.

The objects below stand in for the few fields of a notebook panel and its cells that these methods read; the real
ones are exercised by playwright-tests/test_safety.py (a person's edit landing between the check and the write, in
the worker).
"""

from __future__ import annotations

import json

import pytest

from helpers import run_notebook_js

HARNESS = r"""
const listeners = [];
let clock = 0;
const ydoc = { on(kind, fn) { if (kind === "afterTransaction") listeners.push(fn); } };
// a transaction that changed the document (a client's clock moved), as Yjs reports it after a write
const transacted = () => {
  const before = clock++;
  for (const fn of listeners) fn({ deleteSet: { clients: new Map() }, beforeState: new Map([[1, before]]),
                                   afterState: new Map([[1, clock]]) });
};
function cellModel(id, text) {
  const shared = { text, changed: signal(), getSource() { return this.text; },
                   setSource(s) { this.text = s; transacted(); }, getMetadata: () => undefined };
  const outputs = { length: 0, get: () => null, changed: signal() };
  return { id, type: "code", sharedModel: shared, executionCount: null, outputs };
}
const list = [cellModel("a", "x = 1"), cellModel("b", "y = 2\r\nz = 3"), cellModel("c", "w = 4")];
const cells = { get length() { return list.length; }, get: (i) => list[i], changed: signal() };
const panel = {
  id: "p", disposed: signal(), content: { widgets: [] },
  context: { path: "a.ipynb", saveState: signal(),
             model: { sharedModel: { ydoc, deleteCell(i) { list.splice(i, 1); transacted(); },
                                     get cells() { return list.map((c) => ({ getId: () => c.id })); } }, cells } },
};
live.attach({ tracker: { find: (test) => [panel].find(test) } });
const h = JSON.parse(live.findViewed("a.ipynb")).handle;
const parse = (text) => (text == null ? null : JSON.parse(text));
const out = {};
out.unchecked = parse(live.setSource(h, "a", "x = 10"));            // null: nothing checked, written
out.checked = parse(live.setSource(h, "a", "x = 11", "x = 10"));    // what Python read: written
out.revisionAfter = live.revision(h);
out.typed = parse(live.setSource(h, "a", "x = 12", "x = 1"));       // the person typed since: refused
out.afterTyped = list[0].sharedModel.getSource();
const ids = parse(live.cellIds(h));
const step = { op: "set_source", index: 0, cell_id: "a", source: "x = 13" };
// Python checked x = 10; the cell holds x = 11
out.batchTyped = parse(live.applyEdits(h, JSON.stringify([step]), ids.revision, JSON.stringify({ a: "x = 10" })));
out.afterBatchTyped = list[0].sharedModel.getSource();
out.deleteTyped = parse(live.deleteCell(h, "c", "w = 0"));          // the person typed since: refused
out.afterDeleteTyped = list.map((c) => c.id);
out.deleted = parse(live.deleteCell(h, "c", "w = 4"));
out.afterDelete = list.map((c) => c.id);
out.crlf = parse(live.deleteCell(h, "b", "y = 2\nz = 3"));          // the check read LF, the cell holds CRLF: equal
out.afterCrlf = list.map((c) => c.id);
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def outcome() -> dict:
    return run_notebook_js(HARNESS)


def test_a_write_with_the_source_python_read_goes_ahead_and_answers_the_revision(outcome):
    assert outcome["unchecked"]["source"] == "x = 10" and outcome["unchecked"]["before"] == "x = 1"
    assert outcome["checked"]["source"] == "x = 11"
    assert outcome["checked"]["revision"] == outcome["revisionAfter"] > outcome["unchecked"]["revision"]


def test_a_write_after_the_person_typed_changes_nothing_and_says_what_the_cell_holds(outcome):
    assert outcome["typed"] == {"changed": outcome["typed"]["changed"]}
    assert outcome["typed"]["changed"]["id"] == "a" and outcome["typed"]["changed"]["source"] == "x = 11"
    assert outcome["afterTyped"] == "x = 11"


def test_a_batch_whose_written_cell_changed_since_the_check_does_nothing(outcome):
    assert outcome["batchTyped"]["changed"]["id"] == "a" and outcome["afterBatchTyped"] == "x = 11"


def test_line_ends_do_not_make_a_cell_look_changed(outcome):
    assert outcome["crlf"]["id"] == "b" and outcome["afterCrlf"] == ["a"]


def test_a_delete_after_the_person_typed_deletes_nothing(outcome):
    assert outcome["deleteTyped"]["changed"]["id"] == "c"
    assert outcome["afterDeleteTyped"] == ["a", "b", "c"]
    assert json.dumps(outcome["deleted"]["id"]) == '"c"' and outcome["afterDelete"] == ["a", "b"]
