"""The JS halves that answer JupyterLab and the loader for Python, run by Node on the files the wheel ships:
``webmcp.js``'s dispatcher (an answer Python gives before its listener returns is returned as the text itself, a
later one settles a promise, a failure rejects it, an abort reaches Python's listener), ``resources.js``'s reader,
and ``settings.js`` (the composite as JSON text, changes pushed to Python's listener, a page without a registry).

The loader's context is a stand-in with the loader's function names; the real loader is exercised by the browser
tests (playwright-tests/test_tools.py, test_dialogs_abort.py, test_mcp_b.py).
"""

from __future__ import annotations

from pathlib import Path

from helpers import run_node

LAB = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab"

WEBMCP = r"""
const fs = require("fs");
const half = eval(fs.readFileSync(process.argv[1], "utf8"));
let dispatch = null, cancel = null, cap = null;
const ctx = {
  connect(text, d, c, inputCap) { dispatch = d; cancel = c; cap = inputCap; return JSON.parse(text).length; },
  disconnect() {}, reportCall() {}, emit() {},
};
half.attach(ctx);
const calls = [], cancels = [];
const count = half.connect('[{"name": "a"}, {"name": "b"}]', (id, name, input, invocation) => {
  calls.push([id, name, input, invocation]);
  if (name === "now") half.answer(id, '{"result": "now"}');
}, (invocation) => cancels.push(invocation), 1000);
(async () => {
  const direct = dispatch("now", "{}", "7");
  const later = dispatch("later", '{"x": 1}', "8");
  const failing = dispatch("later", "{}", "9");
  cancel("8");
  const stranger = half.answer(99, "x");
  half.answer(calls[1][0], '{"result": "later"}');
  half.fail(calls[2][0], "the call was cancelled");
  let failed = null;
  try { await failing; } catch (error) { failed = error.message; }
  console.log(JSON.stringify({ count, cap, direct, laterIsPromise: later instanceof Promise, later: await later,
    failed, calls, cancels, stranger, counted: Object.keys(half).includes("answer") }));
})();
"""


def test_the_dispatcher_answers_from_pythons_later_calls() -> None:
    out = run_node(WEBMCP, str(LAB / "webmcp.js"))
    assert out["count"] == 2 and out["cap"] == 1000
    # answered before the listener returned: the text itself, as the loader had it from Python before
    assert out["direct"] == '{"result": "now"}'
    assert out["laterIsPromise"] is True and out["later"] == '{"result": "later"}'
    assert out["failed"] == "the call was cancelled"
    assert [c[1:] for c in out["calls"]] == [["now", "{}", "7"], ["later", '{"x": 1}', "8"], ["later", "{}", "9"]]
    assert len({c[0] for c in out["calls"]}) == 3  # each call its own id
    assert out["cancels"] == ["8"]
    assert out["stranger"] is False  # an id no call waits under changes nothing
    assert out["counted"] is False  # the loader counts the answer as `result`; lab/ffi.py's counter leaves it out


RESOURCES = r"""
const fs = require("fs");
const half = eval(fs.readFileSync(process.argv[1], "utf8"));
let read = null;
half.attach({ connectResources(text, r) { read = r; return JSON.parse(text).length; }, disconnectResources() {},
              connectPrompts(text) { return JSON.parse(text).length; }, disconnectPrompts() {} });
const bare = eval(fs.readFileSync(process.argv[1], "utf8"));
bare.attach({});
const asked = [];
const count = half.connect('[{"name": "cell"}]', (id, uri) => asked.push([id, uri]));
(async () => {
  const pending = read("notebook://a.ipynb");
  half.answer(asked[0][0], '{"result": {"contents": []}}');
  console.log(JSON.stringify({ count, prompts: half.connectPrompts("[1, 2]"), asked: asked.map((a) => a[1]),
    text: await pending, bareCount: bare.connect("[]", () => {}), barePrompts: bare.connectPrompts("[1]") }));
})();
"""


def test_a_resource_read_is_answered_by_a_later_call() -> None:
    out = run_node(RESOURCES, str(LAB / "resources.js"))
    assert out["count"] == 1 and out["prompts"] == 2
    assert out["asked"] == ["notebook://a.ipynb"]
    assert out["text"] == '{"result": {"contents": []}}'
    assert out["bareCount"] == 0 and out["barePrompts"] == 0  # a loader without resources or prompts: none


SETTINGS = r"""
const fs = require("fs");
const load = () => eval(fs.readFileSync(process.argv[1], "utf8"));
const slots = [];
const settings = { composite: { limits: { resultBytes: 1 } },
                   changed: { connect(f) { slots.push(f); }, disconnect(f) { slots.splice(slots.indexOf(f), 1); } } };
const token = {};
const app = { resolveOptionalService: async (t) => t === token ? { load: async (id) => settings } : null };
const half = load();
half.attach({ app, modules: { settingregistry: { ISettingRegistry: token } } });
const none = load();
none.attach({ app, modules: {} });
(async () => {
  const seen = [];
  const first = JSON.parse(await half.load("p"));
  half.watch((json) => seen.push(JSON.parse(json)));
  settings.composite = { limits: { resultBytes: 2 } };
  slots.forEach((f) => f());
  half.unwatch();
  slots.forEach((f) => f());
  console.log(JSON.stringify({ first, seen, left: slots.length, none: JSON.parse(await none.load("p")) }));
})();
"""


def test_settings_cross_as_json_and_changes_reach_the_listener() -> None:
    out = run_node(SETTINGS, str(LAB / "settings.js"))
    assert out["first"] == {"state": "loaded", "composite": {"limits": {"resultBytes": 1}}}
    assert out["seen"] == [{"limits": {"resultBytes": 2}}]  # after unwatch, nothing more
    assert out["left"] == 0
    assert out["none"] == {"state": "no-registry"}
