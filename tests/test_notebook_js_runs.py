"""notebook.js's kernel runs for the agent, run by Node on the file the wheel ships: ``runCode`` keeps a bounded
amount of a flood of stream output while the call waits (the rest is measured, so the size stays the whole
text's), and ``executeAsAgent`` leaves the cell untrusted once JupyterLab's execute has marked it trusted.

The objects below stand in for the few fields of a notebook panel, its kernel and a cell model that notebook.js
reads; the real ones are exercised by playwright-tests/test_attacks_run.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_node

NOTEBOOK_JS = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab" / "notebook.js"

HARNESS = r"""
const fs = require("fs");
const live = eval(fs.readFileSync(process.argv[1], "utf8"));
live.configure("\\x1b\\[[0-9;]*m", [], "webmcp_bridge", 100, 200);
const signal = () => ({ connect() {} });
let future = null;
const kernel = { requestExecute() {
  let resolve;
  const done = new Promise((r) => { resolve = r; });
  future = { onIOPub: null, done, resolve };
  return future;
} };
const metadata = new Map([["trusted", true]]);
const shared = {
  getSource: () => "display(HTML(...))", changed: signal(), getId: () => "c1",
  getMetadata: (k) => metadata.get(k), deleteMetadata: (k) => metadata.delete(k), setMetadata: (k, v) => metadata.set(k,
    v),
};
const cell = { id: "c1", type: "code", sharedModel: shared, trusted: false, executionCount: null, outputs: null };
const list = [cell];
const panel = {
  id: "p", sessionContext: { session: { kernel } },
  context: { path: "a.ipynb", model: { sharedModel: { ydoc: { on() {} } }, cells: { length: 1, get: (i) => list[i],
    changed: signal() } }, saveState: signal() },
  content: { widgets: [{ model: cell }] },
};
(async () => {
  const keep = 1000;
  const handle = live.runCode(panel, "flood()", 5, keep);
  const line = "x".repeat(4000) + "\n";
  let sent = 0;
  for (let i = 0; i < 300; i++) {  // 1.2 MB of one stream, then another stream and a display
    future.onIOPub({ header: { msg_type: "stream" }, content: { name: "stdout", text: line } });
    sent += line.length;
  }
  future.onIOPub({ header: { msg_type: "stream" }, content: { name: "stderr", text: "warn😀" + "y".repeat(2000) } });
  future.onIOPub({ header: { msg_type: "display_data" }, content: { data: { "text/plain": "shown" } } });
  future.resolve({ content: { status: "ok", execution_count: 3 } });
  const done = JSON.parse(await handle.done);
  const described = JSON.parse(handle.describe(keep));
  const kept = JSON.parse(handle.describe(1e9)).outputs.map((o) => o.items[0][2].length);  // all the text held
  // executeAsAgent: the cell class's execute marks the cell trusted (as JupyterLab's does) before it returns
  const cellClass = { execute(widget) { widget.model.trusted = true; widget.model.sharedModel.setMetadata("trusted",
    true); return Promise.resolve(null); } };
  await live.executeAsAgent(panel, "c1", cellClass);
  console.log(JSON.stringify({ done, described, kept, sent, trusted: cell.trusted,
    trustedMetadata: metadata.has("trusted"),
                               unknown: live.executeAsAgent(panel, "nope", cellClass) }));
})();
"""


@pytest.fixture(scope="module")
def outcome() -> dict:
    return run_node(HARNESS, str(NOTEBOOK_JS))


def test_a_flood_of_stream_output_is_kept_bounded_and_measured_whole(outcome):
    outputs = outcome["described"]["outputs"]
    assert outcome["described"]["count"] == 3 and [o["output_type"] for o in outputs] == [
        "stream",
        "stream",
        "display_data",
    ]
    ((mime, size, head, binary),) = outputs[0]["items"]
    assert (mime, binary) == ("text/plain", False)
    assert size == outcome["sent"]  # the whole stream's bytes, though only its start was kept
    assert len(head) == 1000 and head == ("x" * 4000)[:1000]
    assert max(outcome["kept"]) <= 1000  # what the page holds of each output while the call waits
    ((_, err_size, err_head, _),) = outputs[1]["items"]
    assert err_size == len(b"warn") + 4 + 2000 and err_head.startswith("warn😀") and len(err_head) <= 1000
    assert outputs[2]["items"][0][2] == "shown"
    assert outcome["done"]["status"] == "ok"


def test_an_agent_run_leaves_the_cell_untrusted(outcome):
    assert outcome["trusted"] is False and outcome["trustedMetadata"] is False
    assert outcome["unknown"] is None
