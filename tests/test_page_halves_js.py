"""The JS halves that answer JupyterLab and the loader for Python, run by Node on the files the wheel ships:
``webmcp.js``'s dispatcher (an answer Python gives before its listener returns is returned as the text itself, a
later one settles a promise, a failure rejects it, an abort reaches Python's listener) and its resource reader,
``session.js``'s settings (the composite as JSON text, changes pushed to Python's listener, a page without a
registry), and the commands JupyterLab asks synchronously, answered from the state Python pushed (``commands.js``'
check mark of the Direct/Propose command, the cell menu's enabled states and labels), and ``session.js`` (the
loader's facts and status item).

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
const count = half.connectResources('[{"name": "cell"}]', (id, uri) => asked.push([id, uri]));
(async () => {
  const pending = read("notebook://a.ipynb");
  half.answerRead(asked[0][0], '{"result": {"contents": []}}');
  console.log(JSON.stringify({ count, prompts: half.connectPrompts("[1, 2]"), asked: asked.map((a) => a[1]),
    text: await pending, bareCount: bare.connectResources("[]", () => {}), barePrompts: bare.connectPrompts("[1]") }));
})();
"""


def test_a_resource_read_is_answered_by_a_later_call() -> None:
    out = run_node(RESOURCES, str(LAB / "webmcp.js"))
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
  const first = JSON.parse(await half.loadSettings("p"));
  half.watchSettings((json) => seen.push(JSON.parse(json)));
  settings.composite = { limits: { resultBytes: 2 } };
  slots.forEach((f) => f());
  half.unwatchSettings();
  slots.forEach((f) => f());
  console.log(JSON.stringify({ first, seen, left: slots.length, none: JSON.parse(await none.loadSettings("p")) }));
})();
"""


def test_settings_cross_as_json_and_changes_reach_the_listener() -> None:
    out = run_node(SETTINGS, str(LAB / "session.js"))
    assert out["first"] == {"state": "loaded", "composite": {"limits": {"resultBytes": 1}}}
    assert out["seen"] == [{"limits": {"resultBytes": 2}}]  # after unwatch, nothing more
    assert out["left"] == 0
    assert out["none"] == {"state": "no-registry"}


COMMANDS_STANDIN = r"""
const fs = require("fs");
const commands = new Map();
const notified = [];
const menu = [];
const app = {
  commands: {
    hasCommand: (id) => commands.has(id),
    addCommand: (id, options) => { commands.set(id, options); return { dispose: () => commands.delete(id) }; },
    notifyCommandChanged: (id) => notified.push(id),
  },
  contextMenu: {
    addItem: (item) => { menu.push(item); return { dispose: () => menu.splice(menu.indexOf(item), 1) }; },
  },
  resolveOptionalService: async (token) => token.palette,
};
"""

PROPOSALS_JS = (
    COMMANDS_STANDIN
    + r"""
const half = eval(fs.readFileSync(process.argv[1], "utf8"));
const path = require("path");
const status = eval(fs.readFileSync(path.join(path.dirname(process.argv[1]), "session.js"), "utf8"));
const palette = { items: [], addItem(item) { this.items.push(item); return { dispose: () => this.items.pop() }; } };
const modes = [];
const ctx = { app, modules: { apputils: { ICommandPalette: { palette } } }, setMode: (m, n) => modes.push([m, n]) };
half.attach(ctx);
status.attach(ctx);
const runs = [];
const options = JSON.stringify({ label: "Propose", caption: "caption", toggled: false, menu: null, palette: "Agent" });
(async () => {
  const added = half.add("toggle", options, (id) => runs.push(id));
  const again = half.add("toggle", options, () => {});
  await new Promise((resolve) => setTimeout(resolve, 0));
  const listed = palette.items.length;
  const command = commands.get("toggle");
  const before = command.isToggled();
  half.setToggled("toggle", true);
  const after = command.isToggled();
  command.execute();
  status.setMode("propose", 2);
  half.dispose();
  console.log(JSON.stringify({ added, again, before, after, runs, modes, notified, listed, items: palette.items.length,
    left: commands.size, toggleable: command.isToggleable }));
})();
"""
)


def test_the_mode_commands_check_mark_is_answered_from_pushed_state() -> None:
    out = run_node(PROPOSALS_JS, str(LAB / "commands.js"))
    assert out["added"] is True and out["again"] is False  # a second start adds nothing
    assert out["before"] is False and out["after"] is True and out["notified"] == ["toggle"]
    assert out["toggleable"] is True
    assert out["runs"] == ["toggle"]  # running it reaches Python's listener
    assert out["modes"] == [["propose", 2]]
    assert out["listed"] == 1  # the palette item, once the palette is resolved
    assert out["items"] == 0 and out["left"] == 0  # dispose removed the palette item and the command


CELL_MENU_JS = (
    COMMANDS_STANDIN
    + r"""
const listeners = [];
globalThis.window = { addEventListener: (...a) => listeners.push(a), removeEventListener: () => listeners.pop() };
const half = eval(fs.readFileSync(process.argv[1], "utf8"));
const cmds = half;
const asked = [];
const ctx = { app, tracker: null, modules: { apputils: { InputDialog: {
  getText: async (options) => { asked.push(options); return { button: { accept: true }, value: " text " }; } } } } };
half.attach(ctx);
const runs = [];
half.watchMenu(".jp-Cell", () => {});
cmds.separator(".jp-Cell", 30);
const options = { label: "Comment on cell", caption: "caption", enabled: "state",
                  menu: { selector: ".jp-Cell", rank: 30.1 } };
const added = cmds.add("c", JSON.stringify(options), (id) => runs.push(id));
const command = commands.get("c");
const before = [command.isEnabled(), command.label()];
cmds.setStates(JSON.stringify({ c: [true, "Cycle (write → read)"], unknown: [true, "x"] }));
const after = [command.isEnabled(), command.label()];
command.execute();
(async () => {
  const text = JSON.parse(await half.askText(JSON.stringify({ title: "T" })));
  const bare = eval(fs.readFileSync(process.argv[1], "utf8"));
  bare.attach({ app, tracker: null, modules: {} });
  const none = JSON.parse(await bare.askText("{}"));
  half.dispose();
  console.log(JSON.stringify({ added, before, after, runs, text, asked, none, menu: menu.length, left: commands.size,
    capture: listeners.length === 0 }));
})();
"""
)


def test_the_cell_menus_commands_answer_from_the_states_python_pushed() -> None:
    out = run_node(CELL_MENU_JS, str(LAB / "commands.js"))
    assert out["added"] is True
    assert out["before"] == [False, "Comment on cell"]  # disabled until a right-click's states arrive
    assert out["after"] == [True, "Cycle (write → read)"]
    assert out["runs"] == ["c"]
    assert out["text"] == {"available": True, "accept": True, "value": " text "} and out["asked"] == [{"title": "T"}]
    assert out["none"] == {"available": False, "accept": False, "value": None}  # no InputDialog to borrow
    assert out["menu"] == 0 and out["left"] == 0 and out["capture"] is True  # dispose removed everything


SESSION = r"""
const fs = require("fs");
const source = fs.readFileSync(process.argv[1], "utf8");
const statuses = [], diagnostics = [];
const full = eval(source);
full.attach({ modelContext: {}, pageSearch: "?toolsets=review", modules: { widgets: {} },
              setStatus: (state, detail) => statuses.push([state, detail]),
              setDiagnostics: (json) => diagnostics.push(json) });
const bare = eval(source);
bare.attach({ modelContext: null, modules: {} });
full.setStatus("ready", 12);
full.setDiagnostics('[{"name": "x"}]');
bare.setStatus("ready", 3); // a loader without a status item: nothing happens
bare.setDiagnostics("[]");
console.log(JSON.stringify({ full: JSON.parse(full.facts()), bare: JSON.parse(bare.facts()), statuses, diagnostics }));
"""


def test_the_sessions_facts_and_status_item_cross_as_data() -> None:
    """session.js answers the loader's facts session.py decides by as JSON (WebMCP there or not, the page's query,
    @lumino/widgets there or not) and hands the status and diagnostics to the loader's functions, doing nothing where
    the loader has none."""
    out = run_node(SESSION, str(LAB / "session.js"))
    assert out["full"] == {"modelContext": True, "pageSearch": "?toolsets=review", "widgets": True}
    assert out["bare"] == {"modelContext": False, "pageSearch": None, "widgets": False}
    assert out["statuses"] == [["ready", 12]] and out["diagnostics"] == ['[{"name": "x"}]']
