"""lab/ui/proposals.py's view of Propose mode, deciding from the facts ``dom.js`` reports: a box per waiting
proposal, placed in its notebook (a workspace proposal's in the corner box), Accept ignored until the listing was in
view to its end, Deny with the person's reason, the box gone when the proposal settles, the command's check mark and
the status pushed after each change of mode.

``dom.js``, ``commands.js`` and ``session.js`` are replaced by stand-ins recording what Python calls on them; the
agent's call and the proposal book are the real ones over the in-memory notebook (the real boxes are exercised by
playwright-tests/test_propose_browser.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from helpers import StandInProxy, corpus_json
from host_memory import MemoryWorkspace
from webmcp_bridge.lab.ui import proposals
from webmcp_bridge.lab.ui.proposals import COMMAND, ProposalView
from webmcp_bridge.session.bridge import build_bridge

PATH = "demo/euler.ipynb"


class Dom:
    """Stands in for lab/ui/dom.py's Dom: records the boxes; ``seen`` is what placing reports as in view."""

    def __init__(self) -> None:
        self.boxes: dict[str, str] = {}  # id -> "shown" / "removed"
        self.placed: list[tuple[Any, ...]] = []
        self.revealed: list[str] = []
        self.disabled: list[str] = []
        self.seen: set[str] = set()
        self.listener: Any = None
        self.styles: list[tuple[str, str]] = []
        self.half = self  # the boxes' calls go to dom.js itself

    def translate(self, texts: Any) -> list[str]:
        return [str(t) for t in texts]

    def install_style(self, owner: str) -> None:
        self.styles.append(("install", owner))

    def remove_style(self, owner: str) -> None:
        self.styles.append(("remove", owner))

    # dom.js's box calls (``Dom.half``), by their JS names
    def configureBoxes(self, names: str) -> None:  # noqa: N802
        pass

    def watchBoxes(self, listener: Any) -> None:  # noqa: N802
        self.listener = listener

    def showBox(self, proposal_id: str, tree: str) -> bool:  # noqa: N802
        self.boxes[proposal_id] = "shown"
        return True  # every box of these proposals has a listing

    def placeBoxes(self, items: str, corner: str) -> str:  # noqa: N802
        placed = [tuple(item) for item in json.loads(items)]
        self.placed.extend(placed)
        return json.dumps([item[0] for item in placed if item[3] and item[0] in self.seen])

    def revealBox(self, proposal_id: str) -> None:  # noqa: N802
        self.revealed.append(proposal_id)

    def expandBox(self, proposal_id: str) -> None:  # noqa: N802
        pass

    def disableBox(self, proposal_id: str) -> None:  # noqa: N802
        self.disabled.append(proposal_id)

    def removeBox(self, proposal_id: str, drop_corner: bool) -> None:  # noqa: N802
        self.boxes[proposal_id] = "removed"

    def act(self, proposal_id: str, action: str, reason: str = "") -> None:
        self.listener(json.dumps({"id": proposal_id, "action": action, "reason": reason}))


class Half:
    """Stands in for commands.js and session.js."""

    def __init__(self) -> None:
        self.toggled: list[bool] = []
        self.modes: list[tuple[str, int]] = []
        self.execute: Any = None

    def add(self, command: str, options: str, listener: Any) -> bool:
        self.execute = listener
        return True

    def setToggled(self, command: str, on: bool) -> None:  # noqa: N802 (the JS half's name)
        assert command == COMMAND
        self.toggled.append(on)

    def setMode(self, mode: str, waiting: int) -> None:  # noqa: N802
        self.modes.append((mode, waiting))

    def dispose(self) -> None:
        pass


#: the arming delay of Accept, shortened for these tests (seconds)
ARM = 0.2


@pytest.fixture
def view(monkeypatch: pytest.MonkeyPatch) -> tuple[ProposalView, Dom, Half, Any]:
    half = Half()
    monkeypatch.setattr(proposals, "load_half", lambda package, filename, ctx: half)
    monkeypatch.setattr(proposals, "ACCEPT_ARM_SECONDS", ARM)
    ws = MemoryWorkspace({PATH: json.dumps(corpus_json("pytudes-euler.ipynb"))})
    bridge = build_bridge(ws)
    dom = Dom()
    v = ProposalView(object(), bridge.proposals, dom)  # type: ignore[arg-type]
    v._proxies._create = StandInProxy
    return v, dom, half, bridge.registry


def update_waiting_for_the_person(view, person) -> dict[str, Any]:
    """Start the view, switch to Propose, ask for an update of cell 1 and let ``person(proposal_id)`` act once its
    box shows; returns the call's result."""
    v, dom, half, registry = view

    async def scenario() -> dict[str, Any]:
        await v.start()
        half.execute()  # the person's Direct/Propose command
        await registry.call("jupyter_open_notebook", {"path": PATH})
        cells = (await registry.call("jupyter_get_cells", {"startIndex": 1, "endIndex": 2}))["structuredContent"]
        cell = cells["cells"][0]
        args = {"cellId": cell["id"], "source": "x = 1\n", "expectedSourceHash": cell["sourceHash"]}
        call = asyncio.ensure_future(registry.call("jupyter_update_cell", args))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if dom.boxes:
                break
        [proposal_id] = dom.boxes
        outcome = person(proposal_id)
        if asyncio.iscoroutine(outcome):
            await outcome
        result = await call
        v.dispose()
        return result

    return asyncio.run(scenario())


def test_accept_counts_only_once_the_listing_was_seen(view) -> None:
    v, dom, half, _ = view

    async def person(proposal_id: str) -> None:
        assert dom.placed[0][:2] == (proposal_id, PATH) and dom.placed[0][3] is True  # placed, to be measured
        dom.act(proposal_id, "accept")  # a click reaching a still disabled button
        await asyncio.sleep(0.05)
        assert dom.disabled == [] and v.book.waiting()
        dom.act(proposal_id, "seen")  # the person scrolled the listing to its end
        await asyncio.sleep(ARM)  # and Accept is armed
        assert dom.revealed == [proposal_id]
        dom.act(proposal_id, "accept")

    result = update_waiting_for_the_person(view, person)
    assert result["isError"] is False, result
    [proposal_id] = dom.boxes
    assert dom.disabled == [proposal_id] and dom.boxes[proposal_id] == "removed"
    assert half.toggled == [False, True]  # the check mark: pushed when the command was added, then on the switch
    assert ("propose", 1) in half.modes and half.modes[-1] == ("propose", 0)
    assert dom.styles == [("install", "proposals"), ("remove", "proposals")]


def test_deny_carries_the_persons_reason(view) -> None:
    v, dom, _, _ = view

    def person(proposal_id: str) -> None:
        dom.act(proposal_id, "deny", "  not this one  ")

    result = update_waiting_for_the_person(view, person)
    payload = result["structuredContent"]
    assert payload["status"] == "denied" and payload["reason"] == "not this one", payload
    assert v.book.waiting() == [] and list(dom.boxes.values()) == ["removed"]


def test_a_listing_in_view_when_placed_is_revealed_at_once(view) -> None:
    v, dom, _, _ = view

    def person(proposal_id: str) -> None:
        assert dom.revealed == []
        dom.seen.add(proposal_id)  # the next placement check finds the listing in view

    async def accept_after_check(proposal_id: str) -> None:
        person(proposal_id)
        for _ in range(100):
            await asyncio.sleep(0.02)
            if dom.revealed:
                break
        assert dom.revealed == [proposal_id]
        dom.act(proposal_id, "accept")

    result = update_waiting_for_the_person(view, accept_after_check)
    assert result["isError"] is False, result


def test_accept_is_armed_only_some_time_after_the_box_appeared(view) -> None:
    """An agent that cancels and proposes again at once cannot put its new box under the person's click."""
    v, dom, _, _ = view

    async def person(proposal_id: str) -> None:
        dom.act(proposal_id, "seen")  # the whole listing in view at once
        dom.act(proposal_id, "accept")  # a click the moment the box appeared
        await asyncio.sleep(ARM / 4)
        assert dom.revealed == [] and dom.disabled == [] and v.book.waiting()
        await asyncio.sleep(ARM)
        assert dom.revealed == [proposal_id]
        dom.act(proposal_id, "accept")

    result = update_waiting_for_the_person(view, person)
    assert result["isError"] is False, result
