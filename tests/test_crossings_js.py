"""The bridge's one crossing counter (``lab/crossings.js``), run by Node on the file the wheel and the labextension
ship: the counts the loader, each JS half (``lab/ffi.py`` ``load_half``) and the worker's page side publish as
``window.webmcpBridge.crossings[name]()``. The browser tests that read those counts around real tool calls are
``playwright-tests/test_tools.py`` (the halves and the loader) and ``playwright-tests/test_worker_wire.py`` (the
worker's requests, compared with RemoteHost's own count).
"""

from __future__ import annotations

from pathlib import Path

from helpers import run_node

CROSSINGS_JS = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab" / "crossings.js"

HARNESS = r"""
const { pathToFileURL } = require("url");
import(pathToFileURL(process.argv[1]).href).then(({ crossingCounter }) => {
  const counter = crossingCounter();
  const before = counter.json();
  // a half: methods, a value that is not a function, a method that throws
  const half = { read: (a, b) => [a, b], write: text => text.length, limit: 7,
                 fail: () => { throw new Error("no such cell"); } };
  const same = counter.countAll(half);
  const answers = [half.read(1, "x"), half.read(2, "y"), half.write("abc")];
  let thrown = null;
  try { half.fail(); } catch (error) { thrown = error.message; }
  // the loader's way: one function counted under a name of its own, and a crossing counted by hand
  const setStatus = counter.counted("setStatus", (state, detail) => `${state}:${detail}`);
  answers.push(setStatus("ready", 3));
  counter.count("result");
  counter.count("result");
  // a second counter counts apart
  const other = crossingCounter();
  other.count("batch");
  console.log(JSON.stringify({ before, same: same === half, limit: half.limit, answers, thrown,
                               counts: JSON.parse(counter.json()), other: JSON.parse(other.json()) }));
});
"""


def test_counts_each_crossing_by_name_and_passes_calls_through() -> None:
    """Each call of a counted method is one crossing of its name (a call that throws too: it crossed); arguments,
    answers and errors pass unchanged; non-function properties stay; ``json()`` lists only names that crossed, and
    two counters do not share counts."""
    out = run_node(HARNESS, str(CROSSINGS_JS))
    assert out["before"] == "{}"
    assert out["same"] is True  # counted in place: the half Python holds is the counted one
    assert out["limit"] == 7
    assert out["answers"] == [[1, "x"], [2, "y"], 3, "ready:3"]
    assert out["thrown"] == "no such cell"
    assert out["counts"] == {"read": 2, "write": 1, "fail": 1, "setStatus": 1, "result": 2}
    assert out["other"] == {"batch": 1}
