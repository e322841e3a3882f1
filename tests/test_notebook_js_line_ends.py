"""notebook.js's line-end rule, run by Node on the file the wheel ships: a cell still holding CRs after the bridge
tried to make them LF (its editor's binding was not found) is not written, so the model and the person's editor
keep agreeing; with the binding found, the CRs become LF through the binding's own origin and the write goes on.

Before, the write went ahead: JupyterLab's editor binding then threw after the model had changed (the agent got
INTERNAL_ERROR, the notebook was changed, the editor kept the old text). The objects below stand in for the few
fields of a notebook panel, a cell model, its Yjs text and its CodeMirror view that notebook.js reads; the real
ones are exercised by playwright-tests/test_safety.py.
"""

from __future__ import annotations

import json

import pytest

from helpers import run_notebook_js

HARNESS = r"""
function cellModel(id, text, bindingFound) {
  const ysource = {
    text, doc: null,
    get length() { return this.text.length; },
    delete(at, n) { this.text = this.text.slice(0, at) + this.text.slice(at + n); },
    insert(at, s) { this.text = this.text.slice(0, at) + s + this.text.slice(at); },
    toString() { return this.text; },
  };
  const origins = [];
  ysource.doc = { transact(fn, origin) { origins.push(origin); fn(); } };
  const shared = {
    ysource, changed: signal(), getSource: () => ysource.text,
    // as JupyterLab's: the Yjs text changes, then the editor binding's observer throws on the CR positions
    setSource(s) { const crs = ysource.text.includes("\r"); ysource.text = s;
      if (crs) throw new Error("the binding threw"); },
    getMetadata: () => undefined,
  };
  const conf = { ytext: ysource };
  // the editor shows the text with each CR line end as one line break
  const view = { state: { config: { staticValues: bindingFound ? [conf] : [] }, values: [] }, plugins: [] };
  return { model: { id, type: "markdown", sharedModel: shared, executionCount: null }, view, conf, origins, ysource };
}
function panelOf(cells) {
  const list = cells.map((c) => c.model);
  return {
    id: "p", disposed: signal(),
    context: { path: "a.ipynb", model: { sharedModel: { ydoc: { on() {} } },
      cells: { length: list.length, get: (i) => list[i], changed: signal() } }, saveState: signal() },
    content: { widgets: cells.map((c) => ({ model: c.model, editor: { editor: c.view } })) },
  };
}
const found = cellModel("found", "a\r\nb\r\n", true), lost = cellModel("lost", "c\r\nd\r\n", false);
const panel = panelOf([found, lost]);
live.attach({ tracker: { find: (test) => [panel].find(test) } });
const h = JSON.parse(live.findViewed("a.ipynb")).handle; // the panel's handle
const attempt = (fn) => { try { return fn(); } catch (e) { return JSON.stringify({ threw: String(e.message) }); } };
const out = {
  found: attempt(() => live.setSource(h, "found", "x\r\ny")), foundText: found.ysource.text,
  foundOrigins: found.origins.map((o) => o === found.conf),
  lost: attempt(() => live.setSource(h, "lost", "changed")), lostText: lost.ysource.text,
  batch: attempt(() => live.applyEdits(h, JSON.stringify([
    { op: "set_source", index: 0, cell_id: "found", source: "z" },
    { op: "set_source", index: 1, cell_id: "lost", source: "w" }]), 0)), // revision 0: no change seen yet
  afterBatch: [found.ysource.text, lost.ysource.text],
};
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def outcome() -> dict:
    return run_notebook_js(HARNESS)


def test_a_cell_whose_binding_is_found_gets_lf_line_ends_then_the_write(outcome):
    written = json.loads(outcome["found"])
    assert written["id"] == "found" and written["source"] == "x\ny"  # the agent's CRLF text stored as LF too
    assert outcome["foundText"] == "x\ny"
    assert outcome["foundOrigins"] and all(outcome["foundOrigins"])  # normalized in the binding's own transaction


def test_a_cell_whose_binding_is_not_found_is_not_written(outcome):
    assert json.loads(outcome["lost"]) == {"lineEnds": "lost"}, outcome
    assert outcome["lostText"] == "c\r\nd\r\n"  # nothing changed: no half-applied write
    # a batch touching it changes nothing at all, not even its other cells
    assert json.loads(outcome["batch"]) == {"lineEnds": "lost"}
    assert outcome["afterBatch"] == ["x\ny", "c\r\nd\r\n"]
