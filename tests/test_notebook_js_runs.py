"""notebook.js's kernel runs for the agent and its handles, run by Node on the file the wheel ships: ``runCode``
reports a flood of iopub messages as facts, in order, in batches of bounded size while the call waits (so the page
holds a bounded amount), and Python's merge of them (core/run_outputs.py) keeps a bounded head of the flood while
measuring all of it; ``executeAsAgent`` leaves the cell untrusted once JupyterLab's execute has marked it
trusted; a notebook is named by the handle notebook.js issued, and once its panel is disposed (or for a handle it
never issued) every method answers "no such notebook" (an Error named NotebookGone) instead of reading the panel.

The objects below stand in for the few fields of a notebook panel, its kernel and a cell model that notebook.js
reads; the real ones are exercised by playwright-tests/test_attacks_run.py.
"""

from __future__ import annotations

import json

import pytest

from helpers import run_notebook_js
from webmcp_bridge.core.run_outputs import RunOutputs

HARNESS = r"""
let future = null;
const events = []; // the order of the kernel trust's claims and the kernel's requests
const kernel = { requestExecute() {
  events.push("request");
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
  id: "p", isDisposed: false, disposed: signal(), sessionContext: { session: { kernel } },
  context: { path: "a.ipynb", model: { sharedModel: { ydoc: { on() {} } }, cells: { length: 1, get: (i) => list[i],
    changed: signal() } }, saveState: signal() },
  content: { widgets: [{ model: cell }] },
};
// executeAsAgent: the cell class's execute marks the cell trusted (as JupyterLab's does) before it returns
const cellClass = { execute(widget) { widget.model.trusted = true; widget.model.sharedModel.setMetadata("trusted",
  true); return Promise.resolve(null); } };
const kernelTrust = { claim(p) { events.push(p === panel ? "claim" : "claim of another panel"); return true; } };
live.attach({ tracker: { find: (test) => [panel].find(test), currentWidget: panel, filter: () => [panel] },
              modules: { cells: { CodeCell: cellClass } }, kernelTrust });
const gone = (fn) => { try { fn(); return null; } catch (e) { return e.name; } };
(async () => {
  const keep = 1000;
  const h = JSON.parse(live.findViewed("a.ipynb")).handle;
  const batches = [];
  const flushChars = 64 * 1024;
  const started = JSON.parse(live.runCode(h, "flood()", false, flushChars, 1e6, (b) => batches.push(JSON.parse(b))));
  const line = "x".repeat(4000) + "\n";
  let sent = 0;
  for (let i = 0; i < 300; i++) {  // 1.2 MB of one stream, then another stream and a display
    future.onIOPub({ header: { msg_type: "stream" }, content: { name: "stdout", text: line } });
    sent += line.length;
  }
  future.onIOPub({ header: { msg_type: "stream" }, content: { name: "stderr", text: "warn😀" + "y".repeat(2000) } });
  future.onIOPub({ header: { msg_type: "display_data" }, content: { data: { "text/plain": "shown" } } });
  future.onIOPub({ header: { msg_type: "status" }, content: { execution_state: "idle" } });  // not an output
  future.resolve({ content: { status: "ok", execution_count: 3 } });
  const done = JSON.parse(await live.runDone(started.run));
  const rest = JSON.parse(live.runFinish(started.run));  // what was not sent yet
  const sentBatches = batches.length;
  future.onIOPub({ header: { msg_type: "stream" }, content: { name: "stdout", text: "late" } });  // after finishing
  const finishedAgain = live.runFinish(started.run);  // the run is forgotten once finished
  const beforeCell = events.length;
  const reply = await live.executeAsAgent(h, "c1");
  const cellEvents = events.slice(beforeCell);
  const own = JSON.parse(live.runCode(h, "scrub()", true, flushChars, 1e6, null, false)); // the bridge's own program
  live.runFinish(own.run);
  const ownEvents = events.slice(beforeCell + cellEvents.length);
  live.attach({ tracker: { find: (test) => [panel].find(test), currentWidget: panel, filter: () => [panel] },
                modules: { cells: { CodeCell: cellClass } } });  // a page without the loader's kernel trust
  const untrusted = { code: JSON.parse(live.runCode(h, "x", false, 1, 1, null)).refused,
                     cell: gone(() => live.executeAsAgent(h, "c1")) };
  const unknown = live.executeAsAgent(h, "nope");
  const handles = { current: live.current(), panels: JSON.parse(live.panels()), path: live.path(h),
                    never: gone(() => live.revision("never-issued")), open: gone(() => live.revision(h)) };
  panel.isDisposed = true;
  panel.disposed.emit(panel);
  Object.assign(handles, { closed: gone(() => live.revision(h)), closedCells: gone(() => live.cells(h, null, 0, 0)),
                           closedRun: gone(() => live.runCode(h, "1", 1, 1)) });
  console.log(JSON.stringify({ done, batches, rest, sentBatches, lateBatches: batches.length - sentBatches, flushChars,
                               keep, sent, finishedAgain, reply, unknown, handle: h, handles, events, cellEvents,
                               ownEvents, untrusted,
                               trusted: cell.trusted, trustedMetadata: metadata.has("trusted") }));
})();
"""


@pytest.fixture(scope="module")
def outcome() -> dict:
    return run_notebook_js(HARNESS)


def test_a_flood_of_stream_output_is_reported_in_order_in_bounded_batches(outcome):
    batches, rest = outcome["batches"], outcome["rest"]["facts"]
    assert outcome["rest"]["sent"] == len(batches)  # how many batches the sink was given, for a worker to wait for
    facts = [fact for batch in batches for fact in batch] + rest
    assert [f["type"] for f in facts] == ["stream"] * 301 + ["display_data"]  # the status message is no fact
    assert facts[300]["name"] == "stderr" and facts[-1]["data"] == {"text/plain": "shown"}
    assert "".join(f["text"] for f in facts[:300]) == ("x" * 4000 + "\n") * 300  # every message, as it came
    line = 4001
    for batch in batches:  # sent once the unsent text reached the bound, never much past it
        chars = sum(len(f.get("text", "")) for f in batch)
        assert outcome["flushChars"] <= chars < outcome["flushChars"] + line
    assert len(batches) == 300 // -(-outcome["flushChars"] // line)  # full batches of the stdout lines
    assert outcome["lateBatches"] == 0 and outcome["finishedAgain"] is None  # nothing is collected once finished


def test_the_flood_merged_in_python_is_kept_bounded_and_measured_whole(outcome):
    merged = RunOutputs(5, outcome["keep"])
    for batch in outcome["batches"]:
        merged.add_all(batch)
    merged.add_all(outcome["rest"]["facts"])
    outputs = merged.raw(10**9)
    assert merged.count == 3 and [o.output_type for o in outputs] == ["stream", "stream", "display_data"]
    (item,) = outputs[0].items
    assert (item.mime, item.binary) == ("text/plain", False)
    assert item.bytes == outcome["sent"]  # the whole stream's bytes, though only its start was kept
    assert item.head == ("x" * 4000)[:1000]  # all that is held of it
    assert max(len(o.items[0].head) for o in outputs) <= 1000
    (err,) = outputs[1].items
    assert err.bytes == len(b"warn") + 4 + 2000 and err.head.startswith("warn😀") and len(err.head) <= 1000
    assert outputs[2].items[0].head == "shown"
    assert outcome["done"] == {"status": "ok", "execution_count": 3, "reason": None}


def test_the_agents_runs_make_the_kernel_the_agents_before_they_reach_it(outcome):
    assert outcome["events"][:2] == ["claim", "request"]  # runCode: claimed before the request is sent
    assert outcome["cellEvents"] == ["claim"]  # a cell run (JupyterLab's execute, stood in for) claims it too
    assert outcome["ownEvents"] == ["request"]  # the bridge's own program (asAgent false) does not
    # without the loader's kernel trust no code of the agent is sent at all
    assert outcome["untrusted"] == {"code": "the page's kernel trust is not in place", "cell": "KernelTrustMissing"}


def test_an_agent_run_leaves_the_cell_untrusted(outcome):
    assert outcome["trusted"] is False and outcome["trustedMetadata"] is False
    # JupyterLab's execute resolved with no reply (nothing run): an ok run with no count, never a promise of null
    assert json.loads(outcome["reply"]) == {"status": "ok", "execution_count": None}
    assert outcome["unknown"] is None


def test_a_notebook_is_a_handle_that_answers_no_such_notebook_once_closed(outcome):
    handles = outcome["handles"]
    assert outcome["handle"] == "p" and handles["panels"] == ["p"] and handles["path"] == "a.ipynb"
    assert handles["open"] is None  # a live handle reads the notebook
    assert handles["never"] == "NotebookGone"
    assert handles["closed"] == handles["closedCells"] == handles["closedRun"] == "NotebookGone"
    assert handles["current"] == "p"  # the tracker's current widget is named by the same handle
