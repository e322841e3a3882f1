"""notebook.js's ``findViewed`` / ``currentViewed``, run by Node on the file the wheel ships: a notebook's handle and,
in the same task, what ``accessState`` would answer while no change waits in its log, so that the guard's first read
of a call is no second crossing; while changes wait the state is null (a lookup never takes them: ``accessState``
does, for the reader that uses them; tests/test_lab_notebook.py).

The objects below stand in for the few fields of a notebook panel and its cells that these methods read; the real
ones are exercised by the browser suite (playwright-tests/test_tools.py counts a read's crossings).
"""

from __future__ import annotations

import pytest

from helpers import run_notebook_js

HARNESS = r"""
function cellModel(id, text, access) {
  const meta = access == null ? {} : { webmcp_bridge: { access } };
  const shared = { text, changed: signal(), getSource() { return this.text; }, getMetadata: (key) => meta[key] };
  const outputs = { length: 0, get: () => null, changed: signal() };
  return { id, type: "code", sharedModel: shared, executionCount: null, outputs };
}
const list = [cellModel("a", "x = 1", null), cellModel("b", "y = 2", "none")];
const cells = { get length() { return list.length; }, get: (i) => list[i], changed: signal() };
const panel = {
  id: "p", disposed: signal(), content: { widgets: [] },
  context: { path: "a.ipynb", saveState: signal(),
             model: { sharedModel: { ydoc: { on() {} }, getMetadata: () => undefined }, cells } },
};
live.attach({ tracker: { currentWidget: panel, find: (test) => [panel].find(test) } });
const out = {};
out.missing = live.findViewed("b.ipynb");
out.first = JSON.parse(live.findViewed("a.ipynb"));               // starts tracking the notebook
list[0].sharedModel.changed.emit(list[0].sharedModel, { sourceChange: [] });  // the person types in cell a
out.waiting = JSON.parse(live.currentViewed());                   // a change waits: no state, nothing taken
out.taken = JSON.parse(live.accessState(out.waiting.handle));     // the reader takes it
out.current = JSON.parse(live.currentViewed());                   // nothing waits: the state
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def outcome() -> dict:
    return run_notebook_js(HARNESS)


def test_no_open_notebook_at_the_path_is_null(outcome):
    assert outcome["missing"] is None


def test_the_handle_comes_with_the_access_state_while_no_change_waits(outcome):
    first, current = outcome["first"], outcome["current"]
    assert first["handle"] == current["handle"] == "p"
    for state in (first["state"], current["state"]):
        assert state["path"] == "a.ipynb" and state["cellCount"] == 2 and state["changes"] == []
        assert state["cells"] == [[1, "b", "none"]]  # the raw levels; Python decides what they mean


def test_a_lookup_takes_no_change(outcome):
    assert outcome["waiting"] == {"handle": "p", "state": None}
    assert [(c["kind"], c["cellId"]) for c in outcome["taken"]["changes"]] == [("edit", "a")]
