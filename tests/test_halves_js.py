"""The page's side of the worker's remote halves (``lab/halves.js``), run by Node on the file the labextension ships,
over a stand-in page (its origin, a fetch of the site's files): loading a half (the real ``dialogs.js`` and a
stand-in with ``attach``), the answers and errors of each kind, callbacks as events, the crossing counts. The worker's
side is ``tests/test_remote_half.py``; both sides in a browser, ``playwright-tests/test_worker_halves.py``.
"""

from __future__ import annotations

from pathlib import Path

from helpers import run_node

LAB = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab"

#: a stand-in half: attach, a value, a throw, a promise, a value that is not JSON, a listener
STAND_IN = """(() => {
  let ctx = null, attached = 0, listener = null; // closures, as the halves keep their state (no `this`)
  return {
    attach(given) { attached += 1; ctx = given; },
    describe(n, text) { return JSON.stringify({ n, text, attached, app: ctx && ctx.app }); },
    fail() { throw new RangeError('no such cell'); },
    later(x) { return new Promise(resolve => setTimeout(() => resolve(x * 2), 5)); },
    panel() { return new Map(); },
    listen(fn) { listener = fn; return true; },
    fire(a) { listener(a, { b: [1, 2] }); return null; },
  };
})()"""

HARNESS = r"""
const { pathToFileURL } = require("url");
const fs = require("fs");
const [halvesPath, dialogsPath, standIn] = process.argv.slice(1);
globalThis.location = new URL("http://site.test/lab/index.html");
const served = { "/static/halves/webmcp_bridge/lab/dialogs.js": fs.readFileSync(dialogsPath, "utf8"),
                 "/static/halves/webmcp_bridge/lab/stand_in.js": standIn };
const fetched = [];
globalThis.fetch = async url => {
  const path = new URL(url).pathname;
  fetched.push(path);
  const text = served[path];
  return { ok: text !== undefined, status: text === undefined ? 404 : 200, text: async () => text };
};
import(pathToFileURL(halvesPath).href).then(async ({ createHalves }) => {
  const posted = [];
  const halves = createHalves({ ctx: { app: "the app" }, sourcesUrl: "/static/halves/", post: t => posted.push(t) });
  const bare = createHalves({ sourcesUrl: "/static/halves/", post: () => {} });
  const load = (h, file, attach) => h.respond({ id: 1, target: "halves", method: "load",
                                                args: ["webmcp_bridge.lab", file, attach] });
  const call = (n, method, args) => halves.respond({ id: 2, target: `half:${n}`, method, args });
  const out = {};
  out.loadIsPromise = typeof load(halves, "dialogs.js", false).then === "function";
  out.loads = [await load(halves, "dialogs.js", false), await load(halves, "stand_in.js", true),
               await load(halves, "nothing.js", false), await load(bare, "stand_in.js", true),
               await load(halves, "../x.js", false),
               await halves.respond({ id: 1, target: "halves", method: "load", args: ["..", "x.js", false] })];
  out.fetched = fetched;
  out.answers = [
    call(1, "snapshot", [100]), call(1, "click", ["d-1", 0]), call(3, "describe", [7, "é✓"]), call(3, "fail", []),
    call(3, "later", [4]), call(3, "panel", []), call(3, "nothing", []), call(3, "attach", [{}]),
    call(3, "toString", []), call(9, "describe", []), call(3, "listen", [{ callback: 5 }]),
  ];
  call(3, "fire", ["x"]);
  out.posted = posted.map(t => JSON.parse(t));
  out.awaited = [await halves.respondAsync({ id: 3, target: "half:3", method: "later", args: [21] }),
                 await halves.respondAsync({ id: 3, target: "half:3", method: "fail", args: [] })];
  out.owns = [halves.owns({ target: "halves" }), halves.owns({ target: "half:2" }), halves.owns({ target: "nb-1" })];
  out.dropped = halves.respond({ id: 4, target: "halves", method: "drop", args: [2] });
  out.counts = { dialogs: JSON.parse(halves.crossings("dialogs")), stand_in: JSON.parse(halves.crossings("stand_in")) };
  console.log(JSON.stringify(out));
});
"""


def _run() -> dict:
    return run_node(HARNESS, str(LAB / "halves.js"), str(LAB / "dialogs.js"), STAND_IN)


def test_loading_a_half_fetches_it_once_from_the_site_and_attaches_when_asked() -> None:
    out = _run()
    assert out["loadIsPromise"] is True  # answered once the source is fetched
    first, attached, missing, no_ctx, bad_file, bad_package = out["loads"]
    assert first == {"value": 2} and attached == {"value": 3}  # numbers never reused (the first load was #1)
    assert missing["error"]["kind"] == "wire" and "HTTP 404" in missing["error"]["message"]
    assert no_ctx["error"]["kind"] == "wire" and "has no ctx" in no_ctx["error"]["message"]
    for refused in (bad_file, bad_package):
        assert refused["error"]["kind"] == "wire" and "not a half's name" in refused["error"]["message"]
    assert out["fetched"].count("/static/halves/webmcp_bridge/lab/dialogs.js") == 1  # one fetch per file
    assert "/static/halves/webmcp_bridge/lab/nothing.js" in out["fetched"]


def test_calls_answer_json_values_and_each_kind_of_error() -> None:
    out = _run()
    snapshot, click, describe, fail, later, panel, nothing, attach, to_string, no_half, listen = out["answers"]
    assert snapshot == {"value": "[]"} and click == {"value": "gone"}  # the real dialogs.js, no Dialog class
    assert describe == {"value": '{"n":7,"text":"é✓","attached":1,"app":"the app"}'}  # attached once, to the ctx
    assert fail == {"error": {"kind": "host", "code": "RangeError", "message": "no such cell", "details": {}}}
    assert later["error"]["kind"] == "wire" and "returned a promise" in later["error"]["message"]
    assert panel["error"]["kind"] == "wire" and "not JSON" in panel["error"]["message"]
    for refused in (nothing, attach, to_string):
        assert refused["error"]["kind"] == "wire" and "has no method" in refused["error"]["message"]
    assert no_half["error"]["kind"] == "wire" and "no half half:9" in no_half["error"]["message"]
    assert listen == {"value": True}
    assert out["awaited"][0] == {"value": 42}
    assert out["awaited"][1]["error"]["code"] == "RangeError"
    assert out["owns"] == [True, True, False]


def test_a_callback_posts_its_event_and_calls_are_counted_by_half() -> None:
    out = _run()
    assert out["posted"] == [{"event": "callback", "id": 5, "args": ["x", {"b": [1, 2]}]}]
    assert out["counts"]["dialogs"] == {"snapshot": 1, "click": 1}
    # every call that reached a method, the refused promise's and the non-JSON value's included; attach not counted
    assert out["counts"]["stand_in"] == {"describe": 1, "fail": 2, "later": 2, "panel": 1, "listen": 1, "fire": 1}


def test_halves_has_no_method_but_load() -> None:
    out = _run()
    assert out["dropped"]["error"]["kind"] == "wire" and "halves has no method" in out["dropped"]["error"]["message"]
