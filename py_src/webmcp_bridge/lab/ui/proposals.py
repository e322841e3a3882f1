"""Propose mode, the person's side: the Direct/Propose command and the proposals shown inline in the notebook.

The command (a check mark in Propose mode) and the loader's status item follow ``ProposalBook.on_mode``; no tool can
change the mode. Each waiting proposal is a box in its cell (after the last cell when anchored to none; a workspace
proposal in one corner box) until it settles. What is accepted is what was shown: invisible characters are marked,
lines wrap, and Accept is enabled only once the whole listing has been in view (it fits, was scrolled to its end or
"Show all" lifted its height limit) and ``ACCEPT_ARM_SECONDS`` passed. JupyterLab may rebuild a cell's nodes, so
every ``BOX_CHECK_SECONDS`` each box is put back and measured again; a box whose notebook is not open waits out of
the page. ``dom.js`` keeps the boxes by proposal id and reports the person's actions as JSON facts.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webmcp_bridge.core.limits import ACCEPT_ARM_SECONDS, BOX_CHECK_SECONDS
from webmcp_bridge.lab.ffi import Proxies, load_half, quietly, undo_all
from webmcp_bridge.lab.ui.i18n import _
from webmcp_bridge.lab.ui.proposal_view import proposal_box, workspace_corner
from webmcp_bridge.lab.ui.view import c
from webmcp_bridge.propose.proposals import Mode, Proposal, ProposalBook

if TYPE_CHECKING:  # the browser's parts: known by their types only, so this module imports under CPython too
    from webmcp_bridge.lab.ui.dom import Dom

COMMAND = "webmcp-bridge:toggle-propose-mode"
COMMAND_LABEL = _("Agent: Propose changes (ask before each change)")
PALETTE_CATEGORY = _("Agent")
COMMAND_CAPTION = _(
    "Direct: the agent's changes apply at once. Propose: each change waits under its cell for your Accept or Deny."
)
#: the class names of a box's parts (lab/ui/proposal_view.py makes them), for dom.js
BOX_NAMES = {part: c(f"proposal-{part}") for part in ("diff", "accept", "expand", "hint", "deny", "reason", "expanded")}


@dataclass
class _Box:
    """One proposal's box: Accept may be used once ``seen`` (the whole listing has been in view; True without one) and
    ``armed`` (``ACCEPT_ARM_SECONDS`` passed since the box appeared)."""

    proposal: Proposal
    seen: bool = False
    armed: bool = False


class ProposalView:
    """Inline proposals, the mode command and the status text over the session's ``book`` and ``dom``; ``loader``
    (the loader's ``ctx``: ``app``, ``modules.apputils``, ``setMode``) is handed once to ``commands.js`` (the command)
    and ``session.js`` (the status)."""

    def __init__(self, loader: Any, book: ProposalBook, dom: Dom) -> None:
        self.half = load_half("webmcp_bridge.lab", "commands.js", loader)
        self.status = load_half("webmcp_bridge.lab", "session.js", loader)
        self.book = book
        self.dom = dom
        self.js = dom.half  # dom.js: the boxes are its nodes, by proposal id
        self.boxes: dict[str, _Box] = {}
        self._proxies = Proxies()  # the command's and the boxes' listeners
        self._undo: list[Callable[[], None]] = []
        self._checker: asyncio.Task | None = None
        self._disposed = False

    # -- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Install the stylesheet, the command (and its palette item), the listeners; show what already
        waits. In small steps with a yield to the browser between."""
        self.dom.install_style("proposals")
        self.js.configureBoxes(json.dumps(BOX_NAMES))
        self.js.watchBoxes(self._proxies.keep(self._on_box))
        await asyncio.sleep(0)
        # followed before the command exists: the person may run it as soon as it is added, while this start awaits
        self._undo.append(self.book.on_mode(self._on_mode))
        self._add_command()
        await asyncio.sleep(0)
        self._undo.append(self.book.subscribe(self._on_proposal))
        for proposal in self.book.waiting():
            self._show(proposal)
        self._report()

    def dispose(self) -> None:
        """Remove every box, the command and palette item, and free every proxy."""
        self._disposed = True
        undo_all(self._undo)
        self._undo.clear()
        if self._checker is not None:
            self._checker.cancel()
            self._checker = None
        for proposal_id in list(self.boxes):
            self._remove(proposal_id)
        quietly(lambda: self.js.watchBoxes(None))
        quietly(self.half.dispose)
        self._proxies.clear()
        self.dom.remove_style("proposals")

    def _add_command(self) -> None:
        def toggle(*_args: Any) -> None:
            self.book.set_mode("direct" if self.book.mode == "propose" else "propose")

        listener = self._proxies.keep(toggle)
        label, caption, category = self.dom.translate([COMMAND_LABEL, COMMAND_CAPTION, PALETTE_CATEGORY])
        options = {"label": label, "caption": caption, "toggled": False, "menu": None, "palette": category}
        if not self.half.add(COMMAND, json.dumps(options), listener):  # another start added it
            self._proxies.remove(listener)
            return
        self.half.setToggled(COMMAND, self.book.mode == "propose")

    # -- the book's events -------------------------------------------------------------------------------
    def _on_mode(self, mode: Mode) -> None:
        if self._disposed:
            return
        quietly(lambda: self.half.setToggled(COMMAND, mode == "propose"))
        self._report()

    def _on_proposal(self, event: str, proposal: Proposal) -> None:
        if event == "created":
            self._show(proposal)
        elif event == "settled":
            self._remove(proposal.id)
        self._report()

    def _report(self) -> None:
        """The mode and the number of waiting proposals, for the status item."""
        quietly(lambda: self.status.setMode(self.book.mode, len(self.book.waiting())))

    # -- boxes -------------------------------------------------------------------------------------------
    def _show(self, proposal: Proposal) -> None:
        if proposal.id in self.boxes:
            return
        listing = bool(self.js.showBox(proposal.id, json.dumps(proposal_box(proposal).to_json())))  # one crossing
        box = _Box(proposal, seen=not listing)
        self.boxes[proposal.id] = box
        asyncio.get_event_loop().call_later(ACCEPT_ARM_SECONDS, self._arm, box)
        self._place([box])
        if self._checker is None or self._checker.done():
            self._checker = asyncio.ensure_future(self._keep_placed())

    def _place(self, boxes: Iterable[_Box]) -> None:
        """Put ``boxes`` in their places (a workspace proposal's in the corner box) in one crossing, and reveal
        those whose listing is now in view to its end."""
        items = [
            (
                b.proposal.id,
                None if b.proposal.scope == "workspace" else b.proposal.path,
                b.proposal.cell_id,
                not b.seen,
            )
            for b in boxes
        ]
        if not items:
            return
        placed = self.js.placeBoxes(json.dumps(items), json.dumps(workspace_corner().to_json()))
        for proposal_id in json.loads(str(placed)):  # those whose listing is in view to its end now
            box = self.boxes.get(proposal_id)
            if box is not None and not box.seen:
                self._reveal(box)

    async def _keep_placed(self) -> None:
        """While boxes exist, put back any box JupyterLab's rendering took out of its cell."""
        while self.boxes and not self._disposed:
            await asyncio.sleep(BOX_CHECK_SECONDS)
            try:
                self._place(list(self.boxes.values()))
            except Exception:
                traceback.print_exc()

    # -- Accept waits until the whole listing was shown (``dom.js`` measures it when the box is placed, on every
    # check and on every scroll of the listing, "seen") and the box is armed --------------------------------------
    def _reveal(self, box: _Box) -> None:
        box.seen = True
        if box.armed and self.boxes.get(box.proposal.id) is box:
            self.js.revealBox(box.proposal.id)

    def _arm(self, box: _Box) -> None:
        box.armed = True
        if box.seen and self.boxes.get(box.proposal.id) is box:
            quietly(lambda: self.js.revealBox(box.proposal.id))

    def _remove(self, proposal_id: str) -> None:
        box = self.boxes.pop(proposal_id, None)
        if box is None:
            return
        last_in_corner = not any(b.proposal.scope == "workspace" for b in self.boxes.values())
        quietly(lambda: self.js.removeBox(proposal_id, last_in_corner))

    def _on_box(self, facts_json: Any) -> None:
        """Listener of ``dom.js``: the person's action on a box, JSON text ``{id, action, reason}``."""
        facts = json.loads(str(facts_json))
        proposal_id, action = str(facts.get("id")), facts.get("action")
        box = self.boxes.get(proposal_id)
        if box is None:
            return
        if action == "accept" and box.seen and box.armed:  # else a click on a button that should still be disabled
            self.js.disableBox(proposal_id)
            self.book.accept(proposal_id)
        elif action == "expand":  # "Show all": the listing loses its height limit, so all of it is in the box
            self.js.expandBox(proposal_id)
            self._reveal(box)
        elif action == "deny":
            self.js.disableBox(proposal_id)
            self.book.deny(proposal_id, str(facts.get("reason") or "").strip() or None)
        elif action == "seen" and not box.seen:
            self._reveal(box)
