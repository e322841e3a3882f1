"""notebook.js counting a notebook's revisions from its Y.Doc's ``afterTransaction`` event, run by Node on the file
the wheel ships over a stand-in Y.Doc: a transaction counts when it changed the document by Yjs' own test (the one
Yjs applies before it emits ``update``: something deleted, or a client's clock moved, a new client included), and a
transaction that changed nothing (a read, an empty write) leaves the revision as it was. The real Y.Doc is exercised by
the browser suite (every write's ``revision``)."""

from __future__ import annotations

import pytest

from helpers import run_notebook_js

HARNESS = r"""
const listeners = {};
const ydoc = { on(kind, fn) { (listeners[kind] ??= []).push(fn); } };
const panel = {
  id: "id-1", isDisposed: false, disposed: signal(), content: { widgets: [] },
  context: { path: "a.ipynb", saveState: signal(),
             model: { sharedModel: { ydoc }, cells: { length: 0, get: () => null, changed: signal() } } },
};
live.attach({ tracker: { currentWidget: panel, find: (t) => [panel].find(t), filter: () => [panel] } });
const h = live.current();
const start = live.revision(h);  // the first reach of the model starts tracking it
const emit = (before, after, deleted) => {
  const transaction = { beforeState: new Map(before), afterState: new Map(after),
                        deleteSet: { clients: new Map(deleted.map((c) => [c, []])) } };
  for (const fn of listeners.afterTransaction ?? []) fn(transaction, ydoc);
  return live.revision(h) - start;
};
console.log(JSON.stringify({
  kinds: Object.keys(listeners),
  nothing: emit([[1, 5]], [[1, 5]], []),
  inserted: emit([[1, 5]], [[1, 7]], []),
  deleted: emit([[1, 7]], [[1, 7]], [1]),
  newClient: emit([[1, 7]], [[1, 7], [2, 1]], []),
  nothingAgain: emit([[1, 7], [2, 1]], [[1, 7], [2, 1]], []),
}));
"""


@pytest.fixture(scope="module")
def outcome() -> dict:
    return run_notebook_js(HARNESS)


def test_only_transactions_that_changed_the_document_count(outcome):
    assert outcome["kinds"] == ["afterTransaction"]  # no "update" listener: Yjs then encodes no binary update
    assert outcome["nothing"] == 0  # a transaction that changed nothing
    assert outcome["inserted"] == 1  # a client's clock moved
    assert outcome["deleted"] == 2  # something deleted, no clock moved
    assert outcome["newClient"] == 3  # a client not in the state before
    assert outcome["nothingAgain"] == 3
