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
anchor's current node and put back if it is not there (two small JS calls per box: the notebook at the
proposal's path, through the host's ``notebook.js``, and ``dom.js``'s ``place``). A box whose notebook is not
open waits hidden (the book denies it when it notices the notebook closed).

Each box holds three proxies (click; keydown; mousedown and focusin, kept from the notebook's own
handling), destroyed when the box is removed; the command and its palette item are disposed by
:meth:`ProposalView.dispose`. The styles are in the bridge's one stylesheet (``lab/ui/style.css``, installed by
:func:`webmcp_bridge.lab.ui.dom.install_style`).
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import js

from webmcp_bridge.core.limits import BOX_CHECK_SECONDS
from webmcp_bridge.lab.ffi import Proxies, is_nullish, js_object, quietly
from webmcp_bridge.lab.host import JupyterLabHost
from webmcp_bridge.lab.ui import dom
from webmcp_bridge.lab.ui.dom import Dom
from webmcp_bridge.lab.ui.proposal_view import proposal_box, workspace_corner
from webmcp_bridge.propose.proposals import MODES, Mode, Proposal, ProposalBook

COMMAND = "webmcp-bridge:toggle-propose-mode"
COMMAND_LABEL = "Agent: Propose changes (ask before each change)"
PALETTE_CATEGORY = "Agent"
CLS = "webmcp-bridge"


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
    """One proposal's box and its proxies (destroyed when the box is removed). ``revealed``: the whole listing
    (diff or code) has been in view, so Accept may be used (True from the start for a box without a listing)."""

    proposal: Proposal
    node: Any
    proxies: Proxies = field(default_factory=Proxies)
    revealed: bool = False


class ProposalView:
    """Inline proposals, the mode command and the status text over the live application.

    Args:
        loader: the loader's ``ctx`` (``app``, ``modules.apputils``, ``setMode``).
        book: the session's :class:`~webmcp_bridge.propose.proposals.ProposalBook` (``bridge.proposals``).
        host: the raw :class:`~webmcp_bridge.lab.host.JupyterLabHost` (the notebook at a proposal's path).
        dom: the session's :class:`~webmcp_bridge.lab.ui.dom.Dom` (makes and places the boxes).
    """

    def __init__(self, loader: Any, book: ProposalBook, host: JupyterLabHost, dom: Dom) -> None:
        self.loader = loader
        self.app = loader.app
        self.book = book
        self.host = host
        self.dom = dom
        self.switch = ModeSwitch(book)
        self.boxes: dict[str, _Box] = {}
        self._proxies = Proxies()  # the command's callables
        self._disposables: list[Any] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._unsubscribe_mode: Callable[[], None] | None = None
        self._checker: asyncio.Task | None = None
        self._disposed = False
        self._corner: Any = None  # the corner box of workspace proposals, while any waits

    # -- life cycle ------------------------------------------------------------------------------------
    def _proxy(self, fn: Callable[..., Any]) -> Any:
        return self._proxies.keep(fn)

    async def start(self) -> None:
        """Install the stylesheet, the command (and its palette item), the listeners; show what already
        waits. In small steps with a yield to the browser between."""
        dom.install_style("proposals")
        await asyncio.sleep(0)
        await self._add_command()
        await asyncio.sleep(0)
        self._unsubscribe = self.book.subscribe(self._on_proposal)
        self._unsubscribe_mode = self.book.on_mode(self._on_mode)
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
            self._remove(proposal_id, later=False)
        for disposable in reversed(self._disposables):
            quietly(disposable.dispose)
        self._disposables.clear()
        self._proxies.clear()
        dom.remove_style("proposals")

    async def _add_command(self) -> None:
        commands = self.app.commands
        if commands.hasCommand(COMMAND):
            return
        options = {
            "label": COMMAND_LABEL,
            "caption": "Direct: the agent's changes apply at once. Propose: each change waits under its cell for your "
            "Accept or Deny.",
            "isToggleable": True,
            "isToggled": self._proxy(lambda *_a: self.book.mode == "propose"),
            "execute": self._proxy(lambda *_a: self.switch.toggle()),
        }
        self._disposables.append(commands.addCommand(COMMAND, js_object(options)))
        palette = await self._palette()
        if palette is not None:
            self._disposables.append(palette.addItem(js_object({"command": COMMAND, "category": PALETTE_CATEGORY})))

    async def _palette(self) -> Any:
        """The command palette service (``ICommandPalette`` of ``@jupyterlab/apputils``), or None."""
        apputils = getattr(self.loader.modules, "apputils", None)
        token = None if is_nullish(apputils) else getattr(apputils, "ICommandPalette", None)
        if is_nullish(token):
            return None
        try:
            palette = await self.app.resolveOptionalService(token)
        except Exception:
            traceback.print_exc()
            return None
        return None if is_nullish(palette) else palette

    # -- the book's events -------------------------------------------------------------------------------
    def _on_mode(self, _mode: Mode) -> None:
        if self._disposed:
            return
        quietly(lambda: self.app.commands.notifyCommandChanged(COMMAND))
        self._report()

    def _on_proposal(self, event: str, proposal: Proposal) -> None:
        if event == "created":
            self._show(proposal)
        elif event == "settled":
            self._remove(proposal.id)
        self._report()

    def _report(self) -> None:
        """The mode and the number of waiting proposals, for the status item."""
        set_mode = getattr(self.loader, "setMode", None)
        if not is_nullish(set_mode):
            quietly(lambda: set_mode(self.book.mode, len(self.book.waiting())))

    # -- boxes -------------------------------------------------------------------------------------------
    def _show(self, proposal: Proposal) -> None:
        if proposal.id in self.boxes:
            return
        box = _Box(proposal, self.dom.build(proposal_box(proposal)))  # one crossing for the whole box
        click = box.proxies.keep(lambda event, pid=proposal.id: self._on_click(pid, event))
        key = box.proxies.keep(lambda event, pid=proposal.id: self._on_key(pid, event))
        # The notebook's own mousedown and focusin handling (cell selection, command mode) must not act on the
        # box: outside a cell it moves the focus from the reason input back to a cell, where the typed letters
        # would be command-mode shortcuts ("a", "b" insert cells).
        keep = box.proxies.keep(lambda event: event.stopPropagation())
        box.node.addEventListener("click", click)
        box.node.addEventListener("keydown", key)
        box.node.addEventListener("mousedown", keep)
        box.node.addEventListener("focusin", keep)
        box.revealed = is_nullish(box.node.querySelector(f".{CLS}-proposal-diff"))
        if not box.revealed:  # scroll does not bubble: caught on the way down to the listing
            box.node.addEventListener(
                "scroll", box.proxies.keep(lambda _event, pid=proposal.id: self._check_revealed(pid)), True
            )
        self.boxes[proposal.id] = box
        self._place(box)
        self._check_revealed(proposal.id)
        if self._checker is None or self._checker.done():
            self._checker = asyncio.ensure_future(self._keep_placed())

    def _place(self, box: _Box) -> None:
        if box.proposal.scope == "workspace":
            if self._corner is None:
                self._corner = self.dom.build(workspace_corner())
            if is_nullish(self._corner.parentNode):
                js.document.body.appendChild(self._corner)
            if not self._corner.contains(box.node):
                self._corner.appendChild(box.node)
            return
        nb = self.host.find_open(box.proposal.path)
        if nb is None:
            if not is_nullish(box.node.parentNode):
                box.node.remove()  # its notebook is gone: the book will deny the proposal
            return
        self.dom.place(nb.panel, box.proposal.cell_id, box.node)

    async def _keep_placed(self) -> None:
        """While boxes exist, put back any box JupyterLab's rendering took out of its cell."""
        while self.boxes and not self._disposed:
            await asyncio.sleep(BOX_CHECK_SECONDS)
            for box in list(self.boxes.values()):
                try:
                    self._place(box)
                    self._check_revealed(box.proposal.id)
                except Exception:
                    traceback.print_exc()

    # -- Accept waits until the whole listing was shown ---------------------------------------------------
    def _check_revealed(self, proposal_id: str) -> None:
        """Enable Accept once the box's listing has been in view to its end: the rule is that the person can
        have seen every line before accepting (the listing scrolls past ``max-height``). ``dom.js`` measures:
        the listing is laid out (not in a hidden notebook) and its last line is inside its visible area; a
        listing that fits is shown whole from the start."""
        box = self.boxes.get(proposal_id)
        if box is None or box.revealed:
            return
        listing = box.node.querySelector(f".{CLS}-proposal-diff")
        if is_nullish(listing) or self.dom.seen_to_end(listing):
            self._reveal(box)

    def _expand(self, proposal_id: str) -> None:
        """The person's "Show all": the listing loses its height limit, so all of it is in the box."""
        box = self.boxes.get(proposal_id)
        if box is None:
            return
        listing = box.node.querySelector(f".{CLS}-proposal-diff")
        if not is_nullish(listing):
            listing.classList.add(f"{CLS}-proposal-expanded")
        self._reveal(box)

    def _reveal(self, box: _Box) -> None:
        box.revealed = True
        accept = box.node.querySelector(f".{CLS}-proposal-accept")
        if not is_nullish(accept):
            accept.disabled = False
        for cls in ("proposal-expand", "proposal-hint"):
            node = box.node.querySelector(f".{CLS}-{cls}")
            if not is_nullish(node):
                node.remove()

    def _remove(self, proposal_id: str, later: bool = True) -> None:
        box = self.boxes.pop(proposal_id, None)
        if box is None:
            return
        quietly(box.node.remove)
        if self._corner is not None and not any(b.proposal.scope == "workspace" for b in self.boxes.values()):
            quietly(self._corner.remove)
            self._corner = None

        if later:  # the settling click may be running inside one of these proxies right now
            asyncio.get_event_loop().call_soon(box.proxies.clear)
        else:
            box.proxies.clear()

    def _on_click(self, proposal_id: str, event: Any) -> None:
        target = event.target
        button = (
            None if is_nullish(target) or is_nullish(getattr(target, "closest", None)) else target.closest("button")
        )
        if is_nullish(button):
            return
        if button.classList.contains(f"{CLS}-proposal-accept"):
            box = self.boxes.get(proposal_id)
            if box is None or not box.revealed:  # a click reaching a button that should still be disabled
                return
            self._disable(proposal_id)
            self.book.accept(proposal_id)
        elif button.classList.contains(f"{CLS}-proposal-expand"):
            self._expand(proposal_id)
        elif button.classList.contains(f"{CLS}-proposal-deny"):
            self._deny(proposal_id)

    def _on_key(self, proposal_id: str, event: Any) -> None:
        target = event.target
        if is_nullish(target) or not target.classList.contains(f"{CLS}-proposal-reason"):
            return
        event.stopPropagation()  # typed text, not notebook shortcuts ("a", "b", "d d" act on cells)
        if str(event.key) == "Enter":
            event.preventDefault()
            self._deny(proposal_id)

    def _deny(self, proposal_id: str) -> None:
        box = self.boxes.get(proposal_id)
        if box is None:
            return
        reason_node = box.node.querySelector(f".{CLS}-proposal-reason")
        reason = "" if is_nullish(reason_node) else str(reason_node.value).strip()
        self._disable(proposal_id)
        self.book.deny(proposal_id, reason or None)

    def _disable(self, proposal_id: str) -> None:
        box = self.boxes.get(proposal_id)
        if box is not None:
            for button in box.node.querySelectorAll("button"):
                button.disabled = True
