"""The Agent panel's Python over its page half: the panel is made in one call with the rule ``dom.js`` applies during
the person's events (every action's clicks reported and kept from JupyterLab, the reply box and the row a click
reads, Ctrl+Enter pressing Reply), and the person's events arrive as JSON facts that the panel turns into the
actions of ``lab/ui/actions.py``: a reply is stored and its box emptied, an empty reply is refused with a notice
and changes nothing, "apply to all cells" sets the level chosen in its row, a filter change shows other threads,
a fact for an action the panel does not have and a fact before the panel is connected change nothing.

The panel (``lab/ui/panel.py``) runs here over the in-memory notebook with the real registry, change log, proposal
book, review threads and access levels; only the page is a stand-in: ``dom.js`` (records what it is asked to do)
and the open notebooks (one notebook, in front).

The page's side, ``ui/dom.js``, runs under Node on the file the wheel ships, over a small stand-in DOM, with the
panel's real options and trees: the widget goes to the right sidebar, the person's click on Reply is reported with
its box's text and kept from JupyterLab (which still sees clicks the rule does not name), a script's click or
Ctrl+Enter is not reported, a select's change is reported, the person's Ctrl+Enter in a reply box presses Reply and
inserts no newline, the keyed Activity list keeps, moves and drops rows by key, what is typed is read back, and
disposing stops every report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from helpers import StandInProxy, corpus_text, first_line, run_node
from host_memory import MemoryWorkspace
from webmcp_bridge.access.levels import cell_levels
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.lab.ui.actions import ACTIONS
from webmcp_bridge.lab.ui.activity_view import ActivityRow, activity_item
from webmcp_bridge.lab.ui.i18n import to_json
from webmcp_bridge.lab.ui.panel import RULE, AgentPanel
from webmcp_bridge.lab.ui.view import ATTRIBUTES, TAGS, CellInfo, El
from webmcp_bridge.review.threads import CellAnchor, Review
from webmcp_bridge.session.bridge import build_bridge

PATH = "demo/running.ipynb"
DOM_JS = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab" / "ui" / "dom.js"


class Dom:
    """Stand-in for dom.js: records the panel it made and what it was asked to do."""

    def __init__(self) -> None:
        self.options: dict[str, Any] | None = None
        self.trees: list[El] = []
        self.listener: Any = None
        self.cleared: list[tuple[str, str]] = []
        self.drawn: dict[str, list[El]] = {}
        self.updates: list[dict[str, Any]] = []
        self.activated: list[str] = []

    def webmcp_available(self) -> bool:
        return False

    def create_panel(self, options: dict[str, Any], trees: list[El], listener: Any) -> dict[str, bool]:
        self.options, self.trees, self.listener = options, list(trees), listener
        return {"created": True, "visible": False}

    def draw(self, role: str, *els: El, held_by: Any = ()) -> bool:
        self.drawn[role] = list(els)
        return True

    def rows(self, role: str, ops: list[Any]) -> None:
        pass

    def update(self, changes: dict[str, dict[str, Any]]) -> None:
        self.updates.append(changes)

    def fields(self, role: str) -> tuple[str | None, dict[str, str]]:
        return None, {}

    def clear_draft(self, role: str, key: str) -> None:
        self.cleared.append((role, key))

    def activate(self, widget_id: str) -> None:
        self.activated.append(widget_id)

    def tell(self, **fact: Any) -> None:
        """The page reports an event: the listener the panel gave gets the fact as JSON text."""
        self.listener(json.dumps(fact))


class OpenNotebooks:
    """Stand-in for lab/ui/notebooks.py: one notebook, in front."""

    def __init__(self, nb: Any) -> None:
        self.nb = nb
        self.current_id = "h1"
        self.host = type("Host", (), {"journal": EditJournal()})()

    def subscribe(self, listener: Any) -> Any:
        return lambda: None

    def current(self) -> Any:
        return self.nb

    def find(self, path: str) -> Any:
        return self.nb if path == PATH else None

    def cells(self, nb: Any) -> dict[str, CellInfo]:
        return {
            c.id: CellInfo(c.index, c.cell_type, first_line(c.source), c.output_count)
            for c in nb.read_cells(None, head_bytes=0, max_outputs=0)
        }


class Markers:
    def __init__(self) -> None:
        self.refreshed = 0

    def refresh(self) -> None:
        self.refreshed += 1


async def opened() -> MemoryWorkspace:
    ws = MemoryWorkspace({PATH: corpus_text("notebook-running-code.ipynb")})
    await ws.open_notebook(PATH, activate=True)
    return ws


def made_panel(connect: bool = True, ws: MemoryWorkspace | None = None) -> tuple[AgentPanel, Dom, Any]:
    """A panel made (and connected) over the notebook at PATH of ``ws`` (one opened here when None)."""
    ws = ws or asyncio.run(opened())
    nb = ws.find_open(PATH)
    bridge = build_bridge(ws)
    dom = Dom()
    panel = AgentPanel(
        None,
        OpenNotebooks(nb),
        Markers(),
        bridge.registry,
        bridge.changes,
        bridge.proposals,
        dom,  # type: ignore[arg-type]
    )
    panel._proxies._create = StandInProxy
    panel._build_widget()
    if connect:
        panel._connect()
    return panel, dom, nb


def test_the_panel_is_made_in_one_call_with_the_rule_for_its_events() -> None:
    panel, dom, _ = made_panel()
    assert dom.options is not None and dom.options["id"] == "webmcp-bridge-panel"
    rule = dom.options["rule"]
    assert set(rule["actions"]) == set(ACTIONS)  # every button's clicks reported (and kept from JupyterLab)
    assert rule["submit"]["button"] == '[data-action="reply"], [data-action="comment-active"]'
    roles = {el.attrs.get("data-role") for tree in dom.trees for el in tree.walk()} - {None}
    assert roles >= {"notice", "mode", "activity-review", "activity-list", "activity", "comments", "access"}
    assert {"comments-summary", "access-summary"} <= roles


def test_a_reply_is_stored_and_its_box_emptied_an_empty_one_is_refused() -> None:
    panel, dom, nb = made_panel()
    cell_id = list(panel.cells(nb))[2]
    thread = Review(nb).create(CellAnchor(cell_id), "Is this right?", "person")

    dom.tell(kind="click", action="reply", data={"thread": thread.id}, text="   ", reply=thread.id, choice=None)
    assert str(panel.notice) == "Write a reply first." and dom.cleared == []
    assert [m.body for m in Review(nb).get(thread.id).messages] == ["Is this right?"]

    dom.tell(kind="click", action="reply", data={"thread": thread.id}, text=" Yes, it is. ", reply=thread.id)
    assert [m.body for m in Review(nb).get(thread.id).messages] == ["Is this right?", "Yes, it is."]
    assert dom.cleared == [("comments", thread.id)] and panel.notice is None
    assert panel.markers.refreshed == 2  # type: ignore[attr-defined]  # looked at again after each action


def test_apply_to_all_sets_the_level_chosen_in_its_row() -> None:
    async def scenario() -> dict[str, str]:
        panel, dom, nb = made_panel(ws=await opened())
        dom.tell(kind="click", action="apply-all", data={}, text=None, reply=None, choice="read")
        for _ in range(20):  # a few cells per stretch, a yield between
            await asyncio.sleep(0)
        return cell_levels(nb)

    levels = asyncio.run(scenario())
    assert levels and set(levels.values()) == {"read"}


def test_a_filter_change_shows_other_threads_and_strange_facts_change_nothing() -> None:
    panel, dom, nb = made_panel()
    dom.tell(kind="change", action="filter", value="resolved")
    assert panel.thread_filter == "resolved"
    dom.tell(kind="click", action="no-such-action", data={})
    assert panel.notice is None and panel.markers.refreshed == 1  # type: ignore[attr-defined]  # the filter's
    dom.listener("not json")  # a broken fact is printed, never raised into the page
    assert panel.notice is None


def test_events_before_the_panel_is_connected_change_nothing() -> None:
    panel, dom, nb = made_panel(connect=False)
    thread = Review(nb).create(CellAnchor(list(panel.cells(nb))[1]), "Why?", "person")
    dom.tell(kind="click", action="reply", data={"thread": thread.id}, text="Because.", reply=thread.id)
    assert len(Review(nb).get(thread.id).messages) == 1 and dom.cleared == []


# A DOM as far as dom.js's panel part uses one: elements with attributes, children, text, bubbling events, and
# selectors made of tags, classes and attributes (comma-separated lists).
PAGE = r"""
const fs = require("fs");
function parse(selector) {
  return selector.split(",").map((one) => {
    const m = one.trim().match(/^([a-z0-9]*)((?:\.[\w-]+|\[[^\]]+\])*)$/i);
    if (!m) throw new Error(`selector ${one} is not supported here`);
    const parts = [...m[2].matchAll(/\.([\w-]+)|\[([\w-]+)(?:="([^"]*)")?\]/g)];
    return { tag: m[1].toUpperCase(), parts };
  });
}
class Element {
  constructor(tag) {
    this.tagName = tag.toUpperCase(); this.attrs = new Map(); this.children = []; this.parentNode = null;
    this.listeners = {}; this.ownText = ""; this.value = ""; this.className = "";
  }
  setAttribute(name, value) { this.attrs.set(name, String(value)); if (name === "hidden") this.hidden = true; }
  getAttribute(name) { return this.attrs.has(name) ? this.attrs.get(name) : null; }
  hasAttribute(name) { return this.attrs.has(name); }
  removeAttribute(name) { this.attrs.delete(name); }
  get attributes() { return [...this.attrs].map(([name, value]) => ({ name, value })); }
  set textContent(text) { this.ownText = String(text); this.children = []; }
  get textContent() { return this.ownText + this.children.map((c) => c.textContent).join(""); }
  appendChild(node) { node.remove(); this.children.push(node); node.parentNode = this; return node; }
  prepend(node) { node.remove(); this.children.unshift(node); node.parentNode = this; }
  remove() {
    if (this.parentNode) this.parentNode.children.splice(this.parentNode.children.indexOf(this), 1);
    this.parentNode = null;
  }
  replaceChildren(...nodes) {
    for (const c of [...this.children]) c.remove();
    this.ownText = "";
    nodes.forEach((n) => this.appendChild(n));
  }
  contains(node) { for (let n = node; n; n = n.parentNode) if (n === this) return true; return false; }
  matches(selector) {
    const has = (p) => p[1] ? this.className.split(" ").includes(p[1])
      : (p[3] === undefined ? this.attrs.has(p[2]) : this.getAttribute(p[2]) === p[3]);
    return parse(selector).some(({ tag, parts }) => (!tag || tag === this.tagName) && parts.every(has));
  }
  closest(selector) { for (let n = this; n; n = n.parentNode) if (n.matches(selector)) return n; return null; }
  querySelectorAll(selector) {
    const found = [];
    const walk = (n) => { for (const c of n.children) { if (c.matches(selector)) found.push(c); walk(c); } };
    walk(this);
    return found;
  }
  querySelector(selector) { return this.querySelectorAll(selector)[0] ?? null; }
  addEventListener(kind, fn) { (this.listeners[kind] ??= []).push(fn); }
  removeEventListener(kind, fn) {
    const l = this.listeners[kind] ?? [];
    if (l.includes(fn)) l.splice(l.indexOf(fn), 1);
  }
  dispatch(kind, extra = {}) {
    const event = { type: kind, target: this, stopped: false, defaultPrevented: false, ...extra,
      stopPropagation() { this.stopped = true; }, preventDefault() { this.defaultPrevented = true; } };
    for (let n = this; n && !event.stopped; n = n.parentNode) {
      for (const fn of [...(n.listeners[kind] ?? [])]) fn(event);
    }
    return event;
  }
  click() { return this.dispatch("click"); }  // a script's click (isTrusted false)
  press() { return this.dispatch("click", { isTrusted: true }); }  // the person's click
  blur() { global.document.activeElement = null; this.dispatch("focusout"); }
  focus() { global.document.activeElement = this; }
}
const body = new Element("body");
global.document = { createElement: (tag) => new Element(tag), activeElement: null, body };
class Widget {
  constructor() { this.node = new Element("div"); this.title = {}; this.isVisible = false; this.disposed = false; }
  addClass(name) { this.node.className = (this.node.className + " " + name).trim(); }
  dispose() { this.disposed = true; this.node.remove(); }
}
const added = [], activated = [];
const shell = { add(widget, area, options) {
                  added.push([widget.id, area, options.rank]);
                  body.appendChild(widget.node);
                },
                activateById(id) { activated.push(id); } };
const half = eval(fs.readFileSync(process.argv[1], "utf8"));
half.attach({ tracker: null, app: { shell }, modules: { widgets: { Widget } }, modelContext: {} });
const [tags, attributes, options, trees, comments, rowA, rowB, threadId] = process.argv.slice(2);
half.configure(tags, attributes);
const facts = [], jupyterlab = [];
body.addEventListener("click", (event) => jupyterlab.push(event.target.getAttribute("data-action")));
const created = JSON.parse(half.createPanel(options, trees, (text) => facts.push(JSON.parse(text))));
const panel = body.children[0];
const out = { created, added, webmcp: half.webmcpAvailable() };
out.drawn = half.draw("comments", comments);
const role = (name) => panel.querySelector(`[data-role="${name}"]`);
const box = panel.querySelector(`textarea[data-reply="${threadId}"]`);
const reply = panel.querySelector(`[data-action="reply"][data-thread="${threadId}"]`);

box.value = "Yes, it is.";
reply.click();  // a script presses Reply: not the person's
out.scriptClick = { facts: facts.splice(0).length, jupyterlab: jupyterlab.splice(0) };
reply.press();
out.replyClick = facts.splice(0);
panel.querySelector('select[data-action="filter"]').press();  // a select's click is not one; its change is
panel.querySelector('select[data-action="filter"]').value = "resolved";
panel.querySelector('select[data-action="filter"]').dispatch("change");  // a script's change: not the person's
out.scriptChange = facts.splice(0).length;
panel.querySelector('select[data-action="filter"]').dispatch("change", { isTrusted: true });
out.selectFacts = facts.splice(0);
out.jupyterlab = jupyterlab.splice(0);

const scripted = box.dispatch("keydown", { key: "Enter", ctrlKey: true });
out.scriptEnter = { prevented: scripted.defaultPrevented, facts: facts.splice(0).length };
const enter = box.dispatch("keydown", { key: "Enter", ctrlKey: true, isTrusted: true });
out.ctrlEnter = { prevented: enter.defaultPrevented, facts: facts.splice(0).map((f) => [f.kind, f.action ?? null]),
                  jupyterlab: jupyterlab.splice(0) };
const plain = box.dispatch("keydown", { key: "Enter", isTrusted: true });
out.plainEnter = { prevented: plain.defaultPrevented, facts: facts.splice(0).length };

half.rows("activity-list", JSON.stringify([["clear"], ["put", "a", JSON.parse(rowA)], ["put", "b", JSON.parse(rowB)]]));
const keys = () => role("activity-list").children.map((c) => c.textContent.includes("first") ? "a" : "b");
out.rowsPut = keys();
half.rows("activity-list", JSON.stringify([["keep", "a"]]));
out.rowsKept = keys();
half.rows("activity-list", JSON.stringify([["drop", "b"]]));
out.rowsDropped = keys();

half.set(JSON.stringify({
  notice: { text: "Write a reply first.", hidden: false }, panel: { attrs: { "data-state": "ready" } },
}));
out.notice = [role("notice").textContent, role("notice").hidden];
out.state = panel.getAttribute("data-state");
try { half.set(JSON.stringify({ panel: { attrs: { onclick: "alert(1)" } } })); out.handler = "set"; }
catch (error) { out.handler = error.message; }
document.activeElement = box;
out.fields = JSON.parse(half.fields("comments"));
half.clearDraft("comments", threadId);
out.cleared = box.value;
// a drawing of Comments is held, in the page, while the person types in it or chooses in its select (they may press
// between Python's look at fields and its drawing); a select they only focused is drawn over, its focus kept
global.CSS = { escape: (text) => text };
const heldBy = JSON.stringify(["SELECT", "TEXTAREA"]);
document.activeElement = box;
out.heldTyping = [half.draw("comments", comments, heldBy), panel.contains(box)];
const filter = panel.querySelector('select[data-action="filter"]');
document.activeElement = filter;
out.drawnFocused = half.draw("comments", comments, heldBy);
const again = panel.querySelector('select[data-action="filter"]');
out.replaced = again !== filter;
out.focusKept = document.activeElement === again;
again.dispatch("keydown", { key: "ArrowDown", altKey: true, isTrusted: true });  // the person opens its list
out.heldChoosing = half.draw("comments", comments, heldBy);
out.kept = panel.querySelector('select[data-action="filter"]') === again;
half.activate("webmcp-bridge-panel");
out.activated = activated;
half.disposePanel();
reply.press();
out.afterDispose = facts.length;
console.log(JSON.stringify(out));
"""


def test_dom_js_makes_the_panel_and_reports_the_persons_events_as_facts() -> None:
    panel, dom, nb = made_panel()
    cells = panel.cells(nb)
    thread = Review(nb).create(CellAnchor(list(cells)[2]), "Is this right?", "person")
    panel.sections.draw("comments", nb, cells)
    assert dom.options is not None
    now = 1_700_000_000.0
    rows = [
        activity_item(ActivityRow(k, now, "person", what, PATH), None, None)
        for k, what in (("a", "first"), ("b", "second"))
    ]
    out = run_node(
        PAGE,
        str(DOM_JS),
        json.dumps(sorted(TAGS)),
        json.dumps(sorted(ATTRIBUTES)),
        json.dumps(dom.options, default=to_json),
        json.dumps([t.to_json() for t in dom.trees]),
        json.dumps([t.to_json() for t in dom.drawn["comments"]]),
        *[json.dumps(r.to_json()) for r in rows],
        thread.id,
    )
    assert out["created"] == {"created": True, "visible": False} and out["added"] == [
        ["webmcp-bridge-panel", "right", 650]
    ]
    assert out["webmcp"] is True and out["drawn"] is True
    # a script's click on Reply (element.click()) is not the person's: no fact, and it goes on to JupyterLab
    assert out["scriptClick"] == {"facts": 0, "jupyterlab": ["reply"]}
    # the person's Reply click: one fact with the box's text and key, and JupyterLab never sees it
    assert out["replyClick"] == [
        {
            "kind": "click",
            "action": "reply",
            "data": {"action": "reply", "thread": thread.id},
            "text": "Yes, it is.",
            "reply": thread.id,
            "choice": None,
        }
    ]
    # a script's change of a select (Propose to Direct, a notebook's level, "stop asking") is not the person's
    assert out["scriptChange"] == 0
    assert out["selectFacts"] == [{"kind": "change", "action": "filter", "value": "resolved"}]
    assert out["jupyterlab"] == ["filter"]  # the select's click is not the panel's: it goes on
    # Ctrl+Enter in the reply box: no newline, the focus leaves (Comments may be drawn), Reply is pressed
    # (a script's Ctrl+Enter does neither)
    assert out["scriptEnter"] == {"prevented": False, "facts": 0}
    assert out["ctrlEnter"] == {"prevented": True, "facts": [["focusout", None], ["click", "reply"]], "jupyterlab": []}
    assert out["plainEnter"] == {"prevented": False, "facts": 0}
    assert out["rowsPut"] == ["b", "a"] and out["rowsKept"] == ["a", "b"] and out["rowsDropped"] == ["a"]
    assert out["notice"] == ["Write a reply first.", False] and out["state"] == "ready"
    assert "onclick is not allowed" in out["handler"]
    assert out["fields"] == {"focused": "TEXTAREA", "drafts": {thread.id: "Yes, it is."}}
    assert out["cleared"] == "" and out["activated"] == ["webmcp-bridge-panel"]
    assert out["heldTyping"] == ["held", True] and out["heldChoosing"] == "held" and out["kept"] is True
    assert out["drawnFocused"] is True and out["replaced"] is True and out["focusKept"] is True
    assert out["afterDispose"] == 0


# dom.js with JupyterLab's optional services: a translator whose bundle marks what it translated, LabIcons, the layout
# restorer and the state database (the panel was open when the page was last left)
SERVICES = (
    PAGE.split("const half = eval", 1)[0]
    + r"""
const half = eval(fs.readFileSync(process.argv[1], "utf8"));
const tokens = { translator: { name: "ITranslator" }, restorer: { name: "ILayoutRestorer" },
                 state: { name: "IStateDB" } };
const calls = { loaded: [], restored: [], saved: [], fetched: [] };
const format = (text, args) => text.replace(/%(\d+)/g, (_, n) => args[n - 1]);
const translator = { load(domain) {
  calls.loaded.push(domain);
  return { __: (msg, ...args) => `«${format(msg, args)}»`,
           _n: (one, many, n, ...args) => `«${format(n === 1 ? one : many, [n, ...args])}»` };
} };
const restorer = { add(widget, name) { calls.restored.push(name); } };
const state = { fetch: async (key) => { calls.fetched.push(key); return { open: true }; },
                save: async (key, value) => { calls.saved.push([key, value]); } };
const services = new Map([[tokens.translator, translator], [tokens.restorer, restorer], [tokens.state, state]]);
const app = { shell, resolveOptionalService: async (token) => services.get(token) ?? null };
const icon = (name) => ({ element: () => {
  const n = new Element("svg");
  n.setAttribute("data-icon", name);
  return n;
} });
const uicomponents = { lockIcon: icon("lock"), LabIcon: { resolve: ({ icon: { name } }) => icon(name) } };
half.attach({ tracker: null, app, modelContext: null, modules: {
  widgets: { Widget }, translation: { ITranslator: tokens.translator },
  application: { ILayoutRestorer: tokens.restorer }, statedb: { IStateDB: tokens.state }, uicomponents } });
const [tags, attributes, icons, options, trees] = process.argv.slice(2);
half.configure(tags, attributes, icons);
(async () => {
  await half.prepare("jupyterlab_webmcp_bridge");
  JSON.parse(half.createPanel(options, trees, () => {}));
  await new Promise((resolve) => setTimeout(resolve, 0));
  const widget = body.children[0];
  const out = { calls, activated };
  out.texts = widget.querySelectorAll("[data-probe]").map((n) => [n.textContent, n.getAttribute("title")]);
  out.icons = widget.querySelectorAll("svg").map((n) => n.getAttribute("data-icon"));
  out.translated = JSON.parse(half.translate(JSON.stringify(["plain", { msg: "Comment on %1", args: ["cell 2"] }])));
  console.log(JSON.stringify(out));
})();
"""
)


def test_dom_js_translates_every_message_draws_icons_and_restores_the_panel() -> None:
    from webmcp_bridge.lab.ui.dom import icon_specs
    from webmcp_bridge.lab.ui.i18n import _, _n
    from webmcp_bridge.lab.ui.view import h, icon

    payload = "<img src=x onerror=alert(1)> %1"
    trees = [
        h("p", "", text=_("Comment on %1", payload), title=_("cell %1", "3"), data_probe="a"),
        h("p", "", text=_n("%1 open thread", "%1 open threads", 2), data_probe="b"),
        h("p", "", text=payload, data_probe="c"),  # the notebook's text: shown as it is, never looked up
        h("button", "", icon("lock"), icon("comment"), data_probe="d"),
    ]
    options = {
        "id": "webmcp-bridge-panel",
        "className": "p",
        "label": _("Agent"),
        "caption": _("caption"),
        "rank": 650,
        "attrs": {},
        "rule": RULE,
        "icon": "agent",
    }
    out = run_node(
        SERVICES,
        str(DOM_JS),
        json.dumps(sorted(TAGS)),
        json.dumps(sorted(ATTRIBUTES)),
        json.dumps(icon_specs()),
        json.dumps(options, default=to_json),
        json.dumps([t.to_json() for t in trees]),
    )
    assert out["calls"]["loaded"] == ["jupyterlab_webmcp_bridge"]
    assert out["texts"] == [
        [f"«Comment on {payload}»", "«cell 3»"],  # the argument substituted as text, once
        ["«2 open threads»", None],
        [payload, None],
        ["", None],
    ]
    assert out["icons"] == ["lock", "webmcp-bridge:comment"]
    assert out["translated"] == ["plain", "«Comment on cell 2»"]
    # the layout restorer knows the panel, and the panel open when the page was left is opened again
    assert out["calls"]["restored"] == ["webmcp-bridge-panel"]
    assert out["calls"]["fetched"] == ["webmcp-bridge:panel:webmcp-bridge-panel"]
    assert out["activated"] == ["webmcp-bridge-panel"]
