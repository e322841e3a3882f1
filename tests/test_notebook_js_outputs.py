"""notebook.js reading a cell's outputs, run by Node on the file the wheel ships: JupyterLab 4 rewrites a stream
output's text in place (``OutputAreaModel.removeStreamOutput`` / ``appendStreamOutput`` on the same output model) when
the kernel prints a carriage return, as a progress bar does, often to text of the same length. The agent reads the
text as it is now, never the text an earlier read kept.

The objects below stand in for the few fields of a notebook panel, a cell and its output model that notebook.js
reads; the real ones are exercised by the browser suite (playwright-tests/test_tools.py reads run outputs).
"""

from __future__ import annotations

from helpers import run_notebook_js

HARNESS = r"""
// one stream output model whose text JupyterLab rewrites in place, as streamText does
const stream = { text: "" };
const output = { streamText: stream, toJSON: () => ({ output_type: "stream", name: "stdout", text: stream.text }) };
const rewrite = (printed) => {  // what a "\r" does to one line: the line's text removed, the new text appended
  stream.text = stream.text.slice(0, stream.text.lastIndexOf("\n") + 1) + printed.replace(/^\r/, "");
};
const shared = { text: "for i in range(10): print(f'\\r{i * 10:3d}%', end='')", changed: signal(),
                 getSource() { return this.text; }, getMetadata: () => undefined };
const cell = { id: "a", type: "code", sharedModel: shared, executionCount: 1,
               outputs: { length: 1, get: () => output, changed: signal() } };
const cells = { length: 1, get: () => cell, changed: signal() };
const panel = {
  id: "p", disposed: signal(), content: { widgets: [] },
  context: { path: "a.ipynb", saveState: signal(),
             model: { sharedModel: { ydoc: { on() {} }, getMetadata: () => undefined }, cells } },
};
live.attach({ tracker: { currentWidget: panel, find: (test) => [panel].find(test) } });
const handle = JSON.parse(live.findViewed("a.ipynb")).handle;
const read = () => JSON.parse(live.cells(handle, null, 100, 10))[0].outputs[0].items[0];
const whole = () => Buffer.from(JSON.parse(live.outputBytes(handle, "a", 0, "text/plain", 0, 100)).data, "base64")
  .toString();
const seen = [];
for (const printed of ["\r 10%", "\r 20%", "\r 30%"]) {
  rewrite(printed);
  seen.push({ head: read(), whole: whole() });
}
console.log(JSON.stringify(seen));
"""


def test_a_stream_rewritten_in_place_to_the_same_length_is_read_as_it_is_now():
    seen = run_notebook_js(HARNESS)
    assert [s["head"] for s in seen] == [["text/plain", 4, text, False] for text in (" 10%", " 20%", " 30%")]
    assert [s["whole"] for s in seen] == [" 10%", " 20%", " 30%"]
