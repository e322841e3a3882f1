"""Propose mode, the person's side: the Direct/Propose switch and the proposals shown inline in the notebook.

**The switch.** :class:`ModeSwitch` is the one object the person's controls call (the command palette's
command below; the running view's is ``session.view.switch`` of :class:`webmcp_bridge.lab.session.LabSession`,
or build ``ModeSwitch(bridge.proposals)``)::

    switch = ModeSwitch(bridge.proposals)
    switch.mode                                # "direct" | "propose"
    switch.toggle()                            # -> the new mode
    switch.set("propose")
    switch.on_change(lambda mode: ...)         # every change, whoever made it

It only sets :attr:`ProposalBook.mode <webmcp_bridge.propose.proposals.ProposalBook>`; everything that shows the
mode follows ``ProposalBook.on_mode``, so a change from anywhere updates all of them: the JupyterLab command
``webmcp-bridge:toggle-propose-mode`` ("Agent: Propose changes (ask before each change)", a check mark when
the mode is "propose"; in the command palette under "Agent") and the status item ("WebMCP: ready (N tools)
· Propose · 2 waiting", through the loader's ``setMode(mode, waiting)``). No tool can change the mode.

**Inline proposals.** :class:`ProposalView` subscribes to the book and shows each waiting proposal as a box
in the live notebook: inside the anchor cell's node, after its input and output areas (before the cell
footer), or for a proposal anchored to no cell (``cell_id`` None: an insert at the notebook's start or end)
after the last cell (before the notebook's footer). The box (``.webmcp-bridge-proposal[data-proposal-id]``,
with ``data-kind``, ``data-tool``, ``data-cell-id``) holds the summary, the diff (one
``.webmcp-bridge-diff-line`` element per line, ``.webmcp-bridge-diff-add`` "+ line" / ``-del`` "- line" /
``-ctx`` "  line"), or for a run the code to be run (one ``.webmcp-bridge-diff-ctx`` element per line, the
line as it is), an Accept button (``.webmcp-bridge-proposal-accept``: ``book.accept(id)``), a reason input
(``.webmcp-bridge-proposal-reason``; Enter denies) and Deny (``.webmcp-bridge-proposal-deny``:
``book.deny(id, reason or None)``). The box is an element tree (:func:`webmcp_bridge.lab.ui.proposal_view.proposal_box`,
tested under CPython) made by ``dom.js`` in one crossing: text is set with ``textContent``, nothing is ever
parsed as HTML.
The box goes when the proposal settles, however it settles.

**What is accepted is what was shown.** Invisible and direction-changing characters
(:mod:`webmcp_bridge.core.invisible`) are shown as marks ``⟦U+202E⟧`` and the box says how many the text holds;
lines wrap, so no part of a line sits outside the box; and Accept starts disabled while the listing has any
line the person has not had in view: it is enabled once the listing is shown to its last line (it fits in its
``max-height``, or the person scrolled it to the end, or pressed "Show all", ``.webmcp-bridge-proposal-expand``,
which lifts the height limit). A box placed in a notebook that is not shown is measured again with the
placement check below.

**Workspace proposals** (``scope`` "workspace": a text file written, appended to or edited, a notebook created, a
site author's tool held before it runs) belong to no cell: their boxes (the same box, with ``data-scope``
"workspace" and ``data-path``) are stacked in one corner box fixed at the page's bottom right
(``.webmcp-bridge-proposal-corner``, :func:`webmcp_bridge.lab.ui.proposal_view.workspace_corner`), added to
``document.body`` while any waits and removed with the last.

JupyterLab may rebuild or re-attach a cell's nodes (windowed notebooks, a placeholder cell rendered late, a
cell type change): while proposals wait, every ``BOX_CHECK_SECONDS`` each box is checked against its
anchor's current node and put back if it is not there (one ``dom.js`` call for all boxes, ``placeBoxes``: it finds
the notebook at each proposal's path and measures the listings not yet seen). A box whose notebook is not open
waits out of the page (the book denies it when it notices the notebook closed).

This module holds no JS object. The boxes are ``dom.js``'s, named by proposal id
(:class:`~webmcp_bridge.lab.ui.dom.Dom`): it listens to them and reports the person's actions to one listener of
this view as JSON facts (``{id, action: "accept" | "deny" | "expand" | "seen", reason}``), keeping the notebook's
own keyboard and mouse handling off the box during the event itself; this view decides what each action does
(Accept only once the listing was seen). The command is ``proposals.js``'s (given the loader's ``ctx`` once by
:func:`~webmcp_bridge.lab.ffi.load_half`): JupyterLab asks it synchronously for its check mark, so it answers
from the mode this view pushes (``setToggled``) after every change; running it calls this view's listener. Both
listeners' return values are unused (in a worker they become events); their proxies are freed by
:meth:`ProposalView.dispose`, with the command and its palette item. The styles are in the bridge's one
stylesheet (``lab/ui/style.css``, installed by :meth:`webmcp_bridge.lab.ui.dom.Dom.install_style`).
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webmcp_bridge.core.limits import ACCEPT_ARM_SECONDS, BOX_CHECK_SECONDS
from webmcp_bridge.lab.ffi import Proxies, awaiting, load_half, quietly
from webmcp_bridge.lab.ui.i18n import _
from webmcp_bridge.lab.ui.proposal_view import proposal_box, workspace_corner
from webmcp_bridge.propose.proposals import MODES, Mode, Proposal, ProposalBook

if TYPE_CHECKING:  # the browser's parts: known by their types only, so this module imports under CPython too
    from webmcp_bridge.lab.ui.dom import Dom

COMMAND = "webmcp-bridge:toggle-propose-mode"
COMMAND_LABEL = _("Agent: Propose changes (ask before each change)")
PALETTE_CATEGORY = _("Agent")
CLS = "webmcp-bridge"
COMMAND_CAPTION = _(
    "Direct: the agent's changes apply at once. Propose: each change waits under its cell for your Accept or Deny."
)
#: the class names of a box's parts (lab/ui/proposal_view.py makes them), for dom.js
BOX_NAMES = {
    "diff": f"{CLS}-proposal-diff",
    "accept": f"{CLS}-proposal-accept",
    "expand": f"{CLS}-proposal-expand",
    "hint": f"{CLS}-proposal-hint",
    "deny": f"{CLS}-proposal-deny",
    "reason": f"{CLS}-proposal-reason",
    "expanded": f"{CLS}-proposal-expanded",
}


class ModeSwitch:
    """The person's Direct/Propose switch over a :class:`~webmcp_bridge.propose.proposals.ProposalBook`."""

    def __init__(self, book: ProposalBook) -> None:
        self.book = book

    @property
    def mode(self) -> Mode:
        """The current mode: "direct" or "propose"."""
        return self.book.mode

    def set(self, mode: Mode) -> None:
        """Set the mode. Raises ValueError for anything but "direct" / "propose"."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        if mode != self.book.mode:
            self.book.set_mode(mode)

    def toggle(self) -> Mode:
        """Switch to the other mode; returns the new one."""
        self.set("direct" if self.book.mode == "propose" else "propose")
        return self.book.mode

    def on_change(self, listener: Callable[[Mode], None]) -> Callable[[], None]:
        """Call ``listener(mode)`` after every change of mode; returns an unsubscribe function."""
        return self.book.on_mode(listener)


@dataclass
class _Box:
    """One proposal's box (its node is ``dom.js``'s, under the proposal's id). ``seen``: the whole listing (diff or
    code) has been in view (True from the start for a box without a listing); ``armed``: ``ACCEPT_ARM_SECONDS``
    passed since the box appeared. Accept may be used once both hold (``revealed``)."""

    proposal: Proposal
    seen: bool = False
    armed: bool = False

    @property
    def revealed(self) -> bool:
        return self.seen and self.armed


class ProposalView:
    """Inline proposals, the mode command and the status text over the live application.

    Args:
        loader: the loader's ``ctx`` (``app``, ``modules.apputils``, ``setMode``), handed once to ``proposals.js``.
        book: the session's :class:`~webmcp_bridge.propose.proposals.ProposalBook` (``bridge.proposals``).
        dom: the session's :class:`~webmcp_bridge.lab.ui.dom.Dom` (makes, places and listens to the boxes).
    """

    def __init__(self, loader: Any, book: ProposalBook, dom: Dom) -> None:
        self.half = load_half("webmcp_bridge.lab.ui", "proposals.js", loader)
        self.book = book
        self.dom = dom
        self.switch = ModeSwitch(book)
        self.boxes: dict[str, _Box] = {}
        self._proxies = Proxies()  # the command's and the boxes' listeners
        self._unsubscribe: Callable[[], None] | None = None
        self._unsubscribe_mode: Callable[[], None] | None = None
        self._checker: asyncio.Task | None = None
        self._disposed = False

    # -- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Install the stylesheet, the command (and its palette item), the listeners; show what already
        waits. In small steps with a yield to the browser between."""
        self.dom.install_style("proposals")
        self.dom.configure_boxes(BOX_NAMES)
        self.dom.watch_boxes(self._proxies.keep(self._on_box))
        await asyncio.sleep(0)
        # followed before the command exists: the person may run it as soon as it is added, while this start awaits
        self._unsubscribe_mode = self.book.on_mode(self._on_mode)
        await self._add_command()
        await asyncio.sleep(0)
        self._unsubscribe = self.book.subscribe(self._on_proposal)
        for proposal in self.book.waiting():
            self._show(proposal)
        self._report()

    def dispose(self) -> None:
        """Remove every box, the command and palette item, and free every proxy."""
        self._disposed = True
        for unsubscribe in (self._unsubscribe, self._unsubscribe_mode):
            if unsubscribe is not None:
                unsubscribe()
        self._unsubscribe = self._unsubscribe_mode = None
        if self._checker is not None:
            self._checker.cancel()
            self._checker = None
        for proposal_id in list(self.boxes):
            self._remove(proposal_id)
        quietly(lambda: self.dom.watch_boxes(None))
        quietly(self.half.dispose)
        self._proxies.clear()
        self.dom.remove_style("proposals")

    async def _add_command(self) -> None:
        listener = self._proxies.keep(lambda *_a: self.switch.toggle())
        half = awaiting(self.half)
        label, caption, category = self.dom.translate([COMMAND_LABEL, COMMAND_CAPTION, PALETTE_CATEGORY])
        added = await half.addCommand(COMMAND, label, caption, category, listener)
        if not added:  # another start added it
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
        quietly(lambda: self.half.setMode(self.book.mode, len(self.book.waiting())))

    # -- boxes -------------------------------------------------------------------------------------------
    def _show(self, proposal: Proposal) -> None:
        if proposal.id in self.boxes:
            return
        listing = self.dom.show_box(proposal.id, proposal_box(proposal))  # one crossing for the whole box
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
                box.proposal.id,
                None if box.proposal.scope == "workspace" else box.proposal.path,
                box.proposal.cell_id,
                not box.seen,
            )
            for box in boxes
        ]
        if not items:
            return
        for proposal_id in self.dom.place_boxes(items, workspace_corner()):
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

    # -- Accept waits until the whole listing was shown ---------------------------------------------------
    # The rule: the person can have seen every line before accepting (the listing scrolls past ``max-height``).
    # ``dom.js`` measures (the listing is laid out, not in a hidden notebook, and its last line is inside its
    # visible area; a listing that fits is shown whole from the start) when the box is placed, on every check
    # and on every scroll of the listing ("seen").

    def _expand(self, proposal_id: str) -> None:
        """The person's "Show all": the listing loses its height limit, so all of it is in the box."""
        box = self.boxes.get(proposal_id)
        if box is None:
            return
        self.dom.expand_box(proposal_id)
        self._reveal(box)

    def _reveal(self, box: _Box) -> None:
        box.seen = True
        if box.armed and self.boxes.get(box.proposal.id) is box:
            self.dom.reveal_box(box.proposal.id)

    def _arm(self, box: _Box) -> None:
        box.armed = True
        if box.seen and self.boxes.get(box.proposal.id) is box:
            quietly(lambda: self.dom.reveal_box(box.proposal.id))

    def _remove(self, proposal_id: str) -> None:
        box = self.boxes.pop(proposal_id, None)
        if box is None:
            return
        last_in_corner = not any(b.proposal.scope == "workspace" for b in self.boxes.values())
        quietly(lambda: self.dom.remove_box(proposal_id, last_in_corner))

    def _on_box(self, facts_json: Any) -> None:
        """Listener of ``dom.js``: the person's action on a box, JSON text ``{id, action, reason}``."""
        facts = json.loads(str(facts_json))
        proposal_id, action = str(facts.get("id")), facts.get("action")
        box = self.boxes.get(proposal_id)
        if box is None:
            return
        if action == "accept":
            if not box.revealed:  # a click reaching a button that should still be disabled
                return
            self._disable(proposal_id)
            self.book.accept(proposal_id)
        elif action == "expand":
            self._expand(proposal_id)
        elif action == "deny":
            self._deny(proposal_id, str(facts.get("reason") or ""))
        elif action == "seen" and not box.seen:
            self._reveal(box)

    def _deny(self, proposal_id: str, reason: str) -> None:
        if proposal_id not in self.boxes:
            return
        self._disable(proposal_id)
        self.book.deny(proposal_id, reason.strip() or None)

    def _disable(self, proposal_id: str) -> None:
        if proposal_id in self.boxes:
            self.dom.disable_box(proposal_id)
