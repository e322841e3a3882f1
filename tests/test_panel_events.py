"""The Agent panel's Python over its page half: the panel is made in one call with the rule ``dom.js`` applies during
the person's events (every action's clicks reported and kept from JupyterLab, the reply box and the row a click
reads, Ctrl+Enter pressing Reply), and the person's events arrive as JSON facts that the panel turns into the
actions of ``lab/ui/actions.py``: a reply is stored and its box emptied, an empty reply is refused with a notice
and changes nothing, "apply to all cells" sets the level chosen in its row, a filter change shows other threads,
a fact for an action the panel does not have and a fact before the panel is connected change nothing.

The panel (``lab/ui/panel.py``) runs here over the in-memory notebook with the real registry, change log, proposal
book, review threads and access levels; only the page is a stand-in: ``dom.js`` (records what it is asked to do)
and the open notebooks (one notebook, in front)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from helpers import StandInProxy, corpus_text
from webmcp_bridge.access.levels import cell_levels
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.host.memory import MemoryWorkspace
from webmcp_bridge.lab.ui.actions import ACTIONS
from webmcp_bridge.lab.ui.dom import PanelOptions
from webmcp_bridge.lab.ui.panel import AgentPanel
from webmcp_bridge.lab.ui.view import CellInfo, El, first_line
from webmcp_bridge.review.threads import CellAnchor, Review
from webmcp_bridge.session.bridge import build_bridge

PATH = "demo/running.ipynb"


class Dom:
    """Stand-in for dom.js: records the panel it made and what it was asked to do."""

    def __init__(self) -> None:
        self.options: PanelOptions | None = None
        self.trees: list[El] = []
        self.listener: Any = None
        self.cleared: list[tuple[str, str]] = []
        self.updates: list[dict[str, Any]] = []
        self.activated: list[str] = []

    def webmcp_available(self) -> bool:
        return False

    def create_panel(self, options: PanelOptions, trees: list[El], listener: Any) -> dict[str, bool]:
        self.options, self.trees, self.listener = options, list(trees), listener
        return {"created": True, "visible": False}

    def draw(self, role: str, *els: El) -> bool:
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
    assert dom.options is not None and dom.options.id == "webmcp-bridge-panel"
    rule = dom.options.rule
    assert set(rule.actions) == set(ACTIONS)  # every button's clicks reported (and kept from JupyterLab)
    assert rule.submit_button == '[data-action="reply"], [data-action="comment-active"]'
    roles = {el.attrs.get("data-role") for tree in dom.trees for el in tree.walk()} - {None}
    assert roles >= {"notice", "mode", "activity-review", "activity-list", "activity", "comments", "access"}
    assert {"comments-summary", "access-summary"} <= roles


def test_a_reply_is_stored_and_its_box_emptied_an_empty_one_is_refused() -> None:
    panel, dom, nb = made_panel()
    cell_id = list(panel.cells(nb))[2]
    thread = Review(nb).create(CellAnchor(cell_id), "Is this right?", "person")

    dom.tell(kind="click", action="reply", data={"thread": thread.id}, text="   ", reply=thread.id, choice=None)
    assert panel.notice == "Write a reply first." and dom.cleared == []
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
