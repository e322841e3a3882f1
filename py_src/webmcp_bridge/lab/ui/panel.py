"""The Agent panel: the person's side of the bridge, in JupyterLab's right sidebar.

One widget (tab "Agent") with three sections about the notebook in front (:mod:`.sections`); its buttons are
:mod:`.actions`. It acts only through the person's APIs on the *raw* notebooks, never the guarded host the tools
get. Dirty sections are drawn ``PANEL_FLUSH_SECONDS`` later, only while the panel is visible, one per stretch.
``dom.js`` makes the widget and reports the person's events as JSON facts (:meth:`AgentPanel._on_fact`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from webmcp_bridge.access.levels import Level, parse_level, set_cell_levels, set_notebook_level
from webmcp_bridge.access.run_consent import RunConsent
from webmcp_bridge.calls.registry import CallEvent, Registry, current_call
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import APPLY_CHUNK, PANEL_FLUSH_SECONDS
from webmcp_bridge.lab.ffi import Proxies, quietly, undo_all
from webmcp_bridge.lab.ui.actions import ACTIONS, THREAD_FILTERS, Click, ThreadFilter, hides
from webmcp_bridge.lab.ui.activity_view import REVIEW_EDITS, ActivityRow, activity_empty, edits_review
from webmcp_bridge.lab.ui.cell_menu import CellMenu
from webmcp_bridge.lab.ui.dom import Dom
from webmcp_bridge.lab.ui.i18n import Text, _, _n
from webmcp_bridge.lab.ui.sections import SECTIONS, Sections
from webmcp_bridge.lab.ui.view import (
    LEVEL_WORD,
    CellInfo,
    KernelFacts,
    c,
    cell_label,
    field_row,
    h,
    mode_note,
    mode_select,
)
from webmcp_bridge.propose.proposals import Proposal, ProposalBook, source_diff
from webmcp_bridge.review.threads import Review

if TYPE_CHECKING:  # the browser's parts: known by their type only, so the panel's decisions run under CPython too
    from webmcp_bridge.lab.notebook import LabNotebook
    from webmcp_bridge.lab.ui.markers import CellMarkers
    from webmcp_bridge.lab.ui.notebooks import OpenNotebooks

WIDGET_ID = "webmcp-bridge-panel"
#: the widget's place among the right sidebar's panels
RANK = 650
#: how often a running call's row shows its elapsed time anew, in seconds
TICK_SECONDS = 1.0
#: the panel's tab label and tooltip; the loader's placeholder, shown from JupyterLab's start until this panel takes
#: its widget over, has the same id, place and title (the build writes them into ``bridge.json``'s ``panel``)
LABEL = "Agent"
CAPTION = "Agent: activity, comments and access"
#: what ``dom.js`` does with the person's events in the panel and on the markers' buttons: clicks on ``actions`` are
#: reported and kept from JupyterLab (``stopPropagation``; never a click on a select, whose change is, nor one a
#: script made); a click's fact carries the text and ``data-reply`` of the first textarea of the closest ``textBox``
#: and the value of the first select of the closest ``choiceRow``; Ctrl/Cmd+Enter in a textarea inside a
#: ``submit.box`` is reported as a click of its first ``submit.button`` (no newline is typed)
RULE = {
    "actions": list(ACTIONS),
    "textBox": f".{c('thread')}, .{c('new-comment')}",
    "choiceRow": f".{c('row')}",
    "submit": {
        "box": f".{c('thread')}, .{c('new-comment')}",
        "button": '[data-action="reply"], [data-action="comment-active"]',
    },
}


class AgentPanel:
    """The Agent panel over the live application: ``loader`` (the loader's ``ctx``) goes to the cell menu's half;
    the registry's hooks, the change log and ``notebooks`` feed the sections; ``book``'s mode is the Direct/Propose
    switch; ``consent``'s "Stop asking" is set from Access; ``markers`` are refreshed after the person's actions."""

    def __init__(
        self,
        loader: Any,
        notebooks: OpenNotebooks,
        markers: CellMarkers,
        registry: Registry,
        changes: ChangeLog,
        book: ProposalBook,
        dom: Dom,
        consent: RunConsent | None = None,
    ) -> None:
        self.loader = loader
        self.consent = consent or RunConsent()
        self.notebooks = notebooks
        self.markers = markers
        self.registry = registry
        self.changes = changes
        self.book = book
        self.dom = dom
        self.notice: Text | None = None
        self.created = False  # dom.js made the widget
        self.sections = Sections(dom, self._kernel_facts, registry.context.page_secret)
        self.visible = False
        self._shown = False  # the widget's visibility as dom.js last reported it
        self._connected = False
        self._notice_dirty = True
        self._timer: Any = None
        self._ticker: Any = None  # the elapsed time's next second, while a call runs
        self._busy = False
        self._noted = 0
        self._proxies = Proxies()  # every callable this panel hands to JS
        self._undo: list[Callable[[], None]] = []
        self._disposed = False
        self.cell_menu: CellMenu | None = None
        self._review: tuple[str, str, tuple[float, float] | None] | None = None  # the review box's cell, if open

    # -- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Build the widget and connect everything, in small steps with a yield to the browser between."""
        self.dom.install_style("panel")
        await asyncio.sleep(0)
        self._build_widget()
        await asyncio.sleep(0)
        self.cell_menu = CellMenu(self, self.loader)
        self.cell_menu.install()
        await asyncio.sleep(0)
        self._connect()
        self._on_visibility()
        # for tests: commands and listeners are in place
        self.dom.update({"panel": {"attrs": {"data-state": "ready"}}})

    def _build_widget(self) -> None:
        switch = mode_select(self.book.mode)
        switch.attrs["data-role"] = "mode"  # the switch, set again when the mode changes elsewhere
        if self.dom.webmcp_available():
            said = _("An agent in this browser can use the notebook through WebMCP.")
        else:
            said = _(
                "WebMCP is not available in this browser: no agent is connected. You can still review and restrict."
            )
        head = h(
            "div",
            c("panel-head"),
            h("h2", "", text=_("Agent")),
            field_row(_("Mode"), switch),
            mode_note(),
            h("p", c("mode"), text=said),
        )
        labels = {"activity": _("Activity"), "comments": _("Comments"), "access": _("Access")}
        bodies = {
            "activity": [
                h("div", c("activity-review"), data_role="activity-review", hidden=""),
                h("ul", c("activity"), activity_empty(), data_role="activity-list"),
            ]
        }
        trees = [
            head,
            h("p", c("notice"), role="status", data_role="notice", hidden=""),
            *[
                h(
                    "details",
                    c(f"section section-{key}"),
                    h("summary", "", text=labels[key], data_role=f"{key}-summary"),
                    h("div", c("section-body"), *bodies.get(key, []), data_role=key),
                    open="",
                )
                for key in SECTIONS
            ],
        ]
        options = {
            "id": WIDGET_ID,
            "className": c("panel"),
            "label": _(LABEL),
            "caption": _(CAPTION),
            "rank": RANK,
            "attrs": {"role": "region", "aria-label": _("Agent panel")},
            "rule": RULE,
            "icon": "agent",
        }
        made = self.dom.create_panel(options, trees, self._proxies.keep(self._on_fact))
        self.created, self._shown = made["created"], made["visible"]

    def _connect(self) -> None:
        sections = self.sections
        self._undo += [
            self.notebooks.subscribe(self._on_notebook),
            self.changes.subscribe(lambda entry: self._mark(*sections.on_change(entry))),
            self.registry.on_before(self._on_call),
            self.registry.on_after(self._on_call),
            self.book.subscribe(self._on_proposal),
            self.book.on_mode(self._show_mode),
        ]
        self._connected = True

    def _on_notebook(self, kind: str, key: str) -> None:
        if kind == "closed":  # "Stop asking" lasts while its notebook stays open
            self.consent.keep_open(doc.path for doc in self.notebooks.host.open_documents())
        self._mark(*self.sections.on_notebook(kind, key == self.notebooks.current_id))  # type: ignore[arg-type]

    def _on_call(self, event: CallEvent) -> None:
        self._mark(*self.sections.on_call(event))
        if self.sections.running() and self._ticker is None and not self._disposed:
            self._ticker = asyncio.get_event_loop().call_later(TICK_SECONDS, self._tick)

    def _tick(self) -> None:
        """Once a second while a call runs: its row's elapsed time (drawn only while the panel is visible)."""
        self._ticker = None
        if self._disposed or not self.sections.running():
            return
        if self.visible:
            self._mark(*self.sections.tick())
        self._ticker = asyncio.get_event_loop().call_later(TICK_SECONDS, self._tick)

    def _on_proposal(self, event: str, proposal: Proposal) -> None:  # its call's row shows it waiting, or not
        call = current_call.get() if event == "created" else None
        self._mark(*self.sections.on_proposal(event, proposal.id, call.call_id if call is not None else None))

    def dispose(self) -> None:
        """Remove the widget, the cell menu and the listeners; destroy every proxy."""
        if self._disposed:
            return
        self._disposed = True
        undo_all(self._undo, self._timer)
        if self._ticker is not None:
            self._ticker.cancel()
        if self.cell_menu is not None:
            self.cell_menu.dispose()
        if self.created:
            quietly(self.dom.dispose_panel)
        self.dom.remove_style("panel")
        self._proxies.clear()

    # -- when to draw -------------------------------------------------------------------------------------
    def _mark(self, *sections: str) -> None:
        """Draw ``sections`` (and whatever else is dirty) ``PANEL_FLUSH_SECONDS`` from the first mark, if visible."""
        self.sections.dirty.update(name for name in sections if name in SECTIONS)
        if self._timer is None and self.visible and not self._disposed:
            self._timer = asyncio.get_event_loop().call_later(PANEL_FLUSH_SECONDS, self._flush)

    def _on_visibility(self) -> None:
        visible = self._shown and self.created and not self._disposed
        if visible != self.visible:
            self.visible = visible
            self._mark()  # shown: draw what changed while hidden

    def _show_mode(self, mode: str) -> None:
        if self.created:
            self.dom.update({"mode": {"value": mode}})

    def _flush(self) -> None:
        self._timer = None
        if self._busy:  # a drawing is still under way: come back after it
            self._mark()
            return
        if not self.visible or self._disposed or not (self.sections.dirty or self._notice_dirty):
            return
        self._busy = True
        asyncio.ensure_future(self._flush_now())

    async def _flush_now(self) -> None:
        try:
            await self.render(set(self.sections.dirty))
        except Exception:  # the panel must never break the page
            traceback.print_exc()
        finally:
            self._busy = False

    async def render(self, sections: set[str] | None = None) -> None:
        """Draw ``sections`` ("activity", "comments", "access"; all when None) and the notice, one section per
        stretch with a yield to the browser between. Each part's longest stretch so far, in ms, is put on the
        panel node (``data-longest-ms``, JSON) with the times each section was drawn (``data-draws``), for tests
        and bench/."""
        sections = set(SECTIONS) if sections is None else sections
        parts = self.sections
        nb = self.notebooks.current()
        cells = parts.timed("cells", lambda: self.notebooks.cells(nb)) if nb is not None and sections else None
        for name in SECTIONS:
            if name in sections:
                await asyncio.sleep(0)
                parts.draw(name, nb, cells)
        changes: dict[str, dict[str, Any]] = {}
        if self._notice_dirty:
            self._notice_dirty = False
            changes["notice"] = {"text": self.notice or "", "hidden": not self.notice}
        longest = json.dumps({k: round(v, 1) for k, v in parts.longest.items()})
        changes["panel"] = {"attrs": {"data-longest-ms": longest, "data-draws": json.dumps(parts.draws)}}
        self.dom.update(changes)

    # -- the person's events ------------------------------------------------------------------------------
    def _on_fact(self, text: Any) -> None:
        """``dom.js``'s listener: one JSON fact per event (see :meth:`~webmcp_bridge.lab.ui.dom.Dom.create_panel`).
        Before the panel is connected only visibility counts; nothing here may escape into the page."""
        try:
            fact = json.loads(str(text))
            kind = fact.get("kind")
            if kind == "visibility":
                self._shown = bool(fact.get("visible"))
                if self._connected:
                    self._on_visibility()
            elif not self._connected or self._disposed:
                return
            elif kind == "click":
                self._on_click(Click.from_fact(fact))
            elif kind == "change":
                self._act(lambda: self._on_change(str(fact.get("action", "")), str(fact.get("value", ""))))
            elif kind == "focusout":
                self._mark("comments", "access")  # a drawing put off while typing or choosing
        except Exception:  # the panel must never break the page
            traceback.print_exc()

    def _on_click(self, click: Click) -> None:
        action = ACTIONS.get(click.action)
        if action is not None:
            self.say(None)
            self._act(lambda: action(self, click))

    def _act(self, work: Callable[[], None]) -> None:
        """Run the person's action: a ToolError is said in the notice, any other error printed and said (never let
        it escape into JupyterLab); then look at the notebook again."""
        try:
            work()
        except ToolError as err:
            self.say(err.message)
        except Exception as exc:
            traceback.print_exc()
            self.say(_("That did not work: %1.", type(exc).__name__))
        self.refresh()

    def _on_change(self, action: str, value: str) -> None:
        if action == "mode":  # the person's switch (the command palette and the setting change the same book)
            self.book.set_mode("propose" if value == "propose" else "direct")
            said = (
                _("switched the agent to Propose mode")
                if value == "propose"
                else _("switched the agent to Direct mode")
            )
            self.note(said, "")
        elif action == "filter":
            self.set_filter(next((f for f in THREAD_FILTERS if f == value), "open"))
        elif action == "notebook-level" and (nb := self.current()) is not None:
            level = parse_level(value)

            def apply() -> None:
                set_notebook_level(nb, level)
                self.note(_("set the notebook's agent access to %1", LEVEL_WORD.get(level, level)), nb.path)

            self.set_level(level, apply)
        elif action == "run-asking" and (open_nb := self.current()) is not None:  # the run rule for this open notebook
            off = value == "stop"
            self.consent.set_asking(open_nb.path, not off)
            self.note(
                _("stopped asking before the agent's runs because of hidden cells in")
                if off
                else _("asked to see the agent's runs first in"),
                open_nb.path,
            )

    # -- what the actions and the cell menu ask of the panel ------------------------------------------------
    def current(self) -> LabNotebook | None:
        """The notebook the person is looking at (raw), or None."""
        return self.notebooks.current()

    def notebook_at(self, path: str | None) -> LabNotebook | None:
        """The open notebook at ``path`` (the current one when None)."""
        return self.current() if not path else self.notebooks.find(path)

    def cells(self, nb: LabNotebook) -> dict[str, CellInfo]:
        """``{cell id: CellInfo}`` of ``nb`` (one read, kept until the notebook changes)."""
        return self.notebooks.cells(nb)

    def review(self, nb: LabNotebook) -> Review:
        """The review threads of ``nb`` as the person acts on them: their messages signed, and judged, with the
        session's page secret."""
        return Review(nb, key=self.registry.context.page_secret())

    @property
    def thread_filter(self) -> ThreadFilter:
        """The Comments section's filter now."""
        return self.sections.thread_filter

    def say(self, message: Text | None) -> None:
        """Show ``message`` in the notice line (None clears it)."""
        if message != self.notice:
            self.notice = message
            self._notice_dirty = True
            self._mark()

    def translate(self, texts: Sequence[Text]) -> list[str]:
        """``texts`` as the page's translator gives them (one crossing)."""
        return self.dom.translate(texts)

    def note(self, what: Text, path: str, cell_id: str | None = None) -> None:
        """Add the person's own panel action (a comment, an access change) to Activity."""
        self._noted += 1
        self._mark(
            *self.sections.add_row(ActivityRow(f"person:{self._noted}", time.time(), "person", what, path, cell_id))
        )

    def refresh(self) -> None:
        """The person just acted: look at the notebook again (Comments, Access, the markers)."""
        self._mark("comments", "access")
        self.markers.refresh()

    def set_filter(self, thread_filter: ThreadFilter) -> None:
        """Show ``thread_filter``'s threads in Comments."""
        self._mark(*self.sections.set_filter(thread_filter))

    @property
    def journal(self) -> EditJournal:
        """The agent's source edits (the host's :class:`~webmcp_bridge.changes.undo.EditJournal`)."""
        return self.notebooks.host.journal

    def show_edits(self, path: str, cell_id: str, span: tuple[float, float] | None = None) -> None:
        """Show the review box of the agent's edits of one cell (of one Activity row when ``span`` is its ``(first,
        last)`` times), newest :data:`REVIEW_EDITS` first, and count the cell as looked at. Each diff is bounded
        (:func:`~webmcp_bridge.propose.proposals.source_diff`: at most ``DIFF_LINES`` lines), so the drawing is too."""
        journal = self.journal
        edits = journal.between(path, cell_id, *span) if span else journal.edits(path, cell_id)
        shown = edits[::-1][:REVIEW_EDITS]
        nb = self.notebook_at(path)
        cells = self.cells(nb) if nb is not None and nb.path == (self.current() or nb).path else None
        diffs = [source_diff(e.before, e.after) for e in shown]
        self.dom.draw(
            "activity-review", edits_review(shown, diffs, cell_label(cell_id, cells), len(edits) - len(shown))
        )
        self.dom.update({"activity-review": {"hidden": False}})
        self._review = (path, cell_id, span)
        journal.mark_seen(path, cell_id)

    def close_edits(self) -> None:
        """Hide the review box."""
        self._review = None
        self.dom.update({"activity-review": {"hidden": True}})
        self.dom.draw("activity-review")

    def redraw_edits(self) -> None:
        """Draw the review box again (after a revert), if it is open."""
        if self._review is not None:
            self.show_edits(*self._review)

    def show(self) -> None:
        """Open the panel in the sidebar."""
        self.dom.activate(WIDGET_ID)

    def clear_draft(self, key: str) -> None:
        """Empty the Comments section's reply box ``key`` (a thread id, "" for the new-comment box)."""
        self.dom.clear_draft("comments", key)

    def reveal(self, path: str | None, cell_id: str, selection: dict | None = None) -> None:
        """Bring the notebook to the front, make the cell active and scroll to it (selecting ``selection``)."""
        nb = self.notebook_at(path)
        if nb is None:
            raise ToolError(ErrorCode.NOTEBOOK_NOT_FOUND, str(_("That notebook is no longer open.")))
        nb.activate()
        nb.set_focus(cell_id, None, selection)

    # -- the kernel model (docs/SECURITY.md, "The kernel") ------------------------------------------------------
    def _kernel_facts(self, nb: LabNotebook) -> KernelFacts:
        """What the Access section says of the kernels, for the notebook in front."""
        host = self.notebooks.host
        count = host.agent_kernels()
        return KernelFacts(
            self.consent.asking_off(nb.path), nb.agent_kernel() is not None, count, count > 0 and self._hides()
        )

    def _hides(self) -> bool:
        """True when an open notebook hides anything from the agent (its level or a cell's is ``none``)."""
        host = self.notebooks.host
        return any(nb is not None and hides(nb) for nb in (host.find_open(d.path) for d in host.open_documents()))

    def set_level(self, level: Level, apply: Callable[[], None]) -> None:
        """Run ``apply`` (the person's change of a level to ``level``). Hiding (``none``) while kernels the agent
        ran code in are alive first asks the person to restart them, and hides nothing unless they all restarted:
        code the agent left in a kernel (a hook, a task) could otherwise read the hidden text when it runs or is
        saved."""
        if level != "none" or self.notebooks.host.agent_kernels() == 0:
            apply()
            return
        asyncio.ensure_future(self._restart_then(apply))

    async def restart_agent_kernels(self, hiding: bool) -> bool:
        """Ask the person, then restart every kernel the agent ran code in; True when all restarted (what was
        refused or failed is said in the notice)."""
        host = self.notebooks.host
        count = host.agent_kernels()
        if count == 0:
            return True
        body = _n(
            "The agent ran code in %1 kernel. Restarting it clears its variables.",
            "The agent ran code in %1 kernels. Restarting them clears their variables.",
            count,
        )
        if hiding:
            body = _n(
                "The agent ran code in %1 kernel. Code it left there (an IPython hook, a background task) could read "
                "what you hide, when you run it or when it is saved. Restarting it clears its variables.",
                "The agent ran code in %1 kernels. Code it left there (an IPython hook, a background task) could read "
                "what you hide, when you run it or when it is saved. Restarting them clears their variables.",
                count,
            )
        words = self.translate(
            [_("Restart the agent's kernels?"), body, _("Restart and hide") if hiding else _("Restart")]
        )
        if not await host.confirm(*words):
            self.say(_("Nothing was hidden: the agent's kernels were not restarted.") if hiding else None)
            return False
        restarted, failed = await host.restart_agent_kernels()
        if failed:
            self.say(
                _n(
                    "%1 kernel could not be restarted; restart it from the Kernel menu first.",
                    "%1 kernels could not be restarted; restart them from the Kernel menu first.",
                    failed,
                )
            )
            return False
        self.note(
            _n("restarted %1 kernel the agent ran code in", "restarted %1 kernels the agent ran code in", restarted), ""
        )
        return True

    async def _restart_then(self, apply: Callable[[], None]) -> None:
        try:
            if await self.restart_agent_kernels(True):
                apply()
        except Exception as exc:  # the panel must never break the page
            traceback.print_exc()
            self.say(_("Nothing was hidden: %1.", type(exc).__name__))
        self.refresh()

    async def apply_to_all(self, nb: LabNotebook, level: Level) -> None:
        """Set every cell of ``nb`` to ``level``, ``APPLY_CHUNK`` cells per stretch (hiding: as :meth:`set_level`)."""
        if level == "none" and self.notebooks.host.agent_kernels() and not await self.restart_agent_kernels(True):
            self.refresh()
            return
        ids = list(self.cells(nb))
        for start in range(0, len(ids), APPLY_CHUNK):
            self.sections.timed(
                "apply", functools.partial(set_cell_levels, nb, ids[start : start + APPLY_CHUNK], level)
            )
            await asyncio.sleep(0)
        self.note(
            _n(
                "set the agent access of %1 cell to %2",
                "set the agent access of all %1 cells to %2",
                len(ids),
                LEVEL_WORD.get(level, level),
            ),
            nb.path,
        )
        self.refresh()
