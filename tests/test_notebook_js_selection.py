"""notebook.js's ``outputSelection``, run by Node on the file the wheel ships: what the person shares with "Share
selected output text" is a selection with both ends inside one output. A drag from an output on into the next cell
selects that cell's text too, a cell hidden from the agent included, so it shares nothing.

The objects below stand in for the few DOM nodes and widgets the method reads; the real ones are exercised by
playwright-tests/test_changes_share.py.
"""

from __future__ import annotations

from helpers import run_notebook_js

HARNESS = r"""
// the output of visible cell "v", and hidden cell "h" below it
const output = { nodeType: 1 };
output.closest = (selector) => (selector === ".jp-OutputArea-child" ? output : null);
const inOutput = { nodeType: 3, parentElement: output };
const inHiddenCell = { nodeType: 3, parentElement: { nodeType: 1, closest: () => null } };
const visible = { model: { id: "v" },
                  outputArea: { node: { contains: (n) => n === output }, widgets: [{ node: output }] } };
const hidden = { model: { id: "h" }, outputArea: { node: { contains: () => false }, widgets: [] } };
let selection = null;
globalThis.window = { getSelection: () => selection };
const select = (anchorNode, focusNode, text) => {
  selection = { isCollapsed: false, rangeCount: 1, anchorNode, focusNode, toString: () => text };
};
const panel = { id: "p", disposed: signal(), node: { contains: (n) => n === output },
                content: { widgets: [visible, hidden] }, context: { path: "a.ipynb" } };
live.attach({ tracker: { currentWidget: panel, find: (test) => [panel].find(test) } });
const handle = live.current();
const out = {};
select(inOutput, inOutput, "beta");
out.inside = JSON.parse(live.outputSelection(handle));
select(inOutput, inHiddenCell, "42\nsecret = 1");            // dragged on into the hidden cell
out.onward = JSON.parse(live.outputSelection(handle));
select(inHiddenCell, inOutput, "secret = 1\n42");            // dragged backwards, from the hidden cell
out.backward = JSON.parse(live.outputSelection(handle));
console.log(JSON.stringify(out));
"""


def test_only_a_selection_with_both_ends_in_one_output_is_shared():
    out = run_notebook_js(HARNESS)
    assert out["inside"] == {"cellId": "v", "outputIndex": 0, "text": "beta"}
    assert out["onward"] is None and out["backward"] is None
