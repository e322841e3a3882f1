"""The Agent panel: the person's side of the bridge, in JupyterLab's right sidebar.

One Lumino widget (id ``webmcp-bridge-panel``, tab "Agent") with three sections, all about the notebook the
person is looking at (the tracker's current one):

- Activity: who did what, live and newest first, bounded to ``ACTIVITY_ROWS`` rows: the agent's tool calls
  (the registry's before/after hooks) and cell changes of every open notebook (``ChangeLog.subscribe``; the
  panel feeds the log itself from each notebook's ``take_changes``, so a person's edits show with no agent).
- Comments: review threads (filters open / resolved / all / current cell; reply, resolve, reopen, re-anchor
  an orphaned thread to the editor's selection; click an anchor to show it in the notebook).
- Access: the notebook's level, "apply to all cells", the restricted cells (click to reveal, to cycle).

Plus the cell context menu (:mod:`.panel_cells`: comment on cell / selection / output, cycle agent access)
and the cell markers (comment badge, access lock, agent-at-work ring, "run by agent"). What each button does is
in :mod:`.panel_actions`.

It works with or without WebMCP, and only through the person's APIs on the *raw* host (never the guarded
one the tools get): :mod:`webmcp_bridge.access.guard`, :class:`webmcp_bridge.review.threads.Review`,
:class:`webmcp_bridge.changes.log.ChangeLog`. Everything it shows is built by :mod:`.panel_view` as element
trees and made into nodes by :mod:`.panel_dom` (textContent only, never HTML).

Events: one delegated listener per event type (click, change, keydown) on the panel and on each notebook
(for the badges), a ``ydoc`` "update" listener per open notebook and the tracker's signals, each a proxy
held here and destroyed by :meth:`AgentPanel.dispose`. Model changes are debounced (``FLUSH_SECONDS``) and
handled in one synchronous stretch (a few ms; markers touch only the cells whose markers changed).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Literal, cast

import js

from webmcp_bridge.access import guard as access
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import preview
from webmcp_bridge.lab.ffi import Proxies, is_nullish, js_object
from webmcp_bridge.lab.notebook import JupyterLabHost, LabNotebook
from webmcp_bridge.lab.ui import dom as panel_dom
from webmcp_bridge.lab.ui.view import (
    ACTIVITY_ROWS,
    PREVIEW_BYTES,
    ActivityRow,
    CellInfo,
    Markers,
    access_view,
    activity_empty,
    activity_item,
    c,
    call_row,
    cell_markers,
    change_row,
    comments_view,
    h,
    marker_badges,
    marker_classes,
    mode_note,
    mode_select,
    thread_row,
)
from webmcp_bridge.review.threads import Review

WIDGET_ID = "webmcp-bridge-panel"
#: debounce of model changes before the panel reads the notebook again
FLUSH_SECONDS = 0.2
#: how long the agent-at-work ring stays on a cell after the agent's last change to it (and its call ended)
WORKING_SECONDS = 2.0
#: threads listed in the Comments section
THREAD_ROWS = 100
#: cells whose access "apply to all cells" changes between two yields to the browser
APPLY_CHUNK = 25
MARKERS_ATTR = "data-webmcp-bridge-markers"
#: what the Comments section lists: threads by status, or every thread of the active cell
ThreadFilter = Literal["open", "resolved", "all", "cell"]
THREAD_FILTERS = ("open", "resolved", "all", "cell")


@dataclass
class _Watch:
    """One open notebook the panel listens to."""

    panel: Any
    ydoc: Any


class AgentPanel:
    """The Agent panel over the live application.

    Args:
        loader: the loader's ``ctx`` (``app``, ``tracker``, ``modules`` with ``widgets`` and ``apputils``,
            ``modelContext``).
        host: the raw :class:`JupyterLabHost` (not the access guard).
        registry: the tool registry (for its before/after hooks).
        changes: the bridge's :class:`~webmcp_bridge.changes.log.ChangeLog`.
    """

    def __init__(self, loader: Any, host: JupyterLabHost, registry: Any, changes: Any) -> None:
        self.loader = loader
        self.app = loader.app
        self.tracker = loader.tracker
        self.host = host
        self.registry = registry
        self.changes = changes
        self.widget: Any = None
        self.nodes: dict[str, Any] = {}
        self.filter: ThreadFilter = "open"
        self.notice: str | None = None
        self.rows: OrderedDict[str, tuple[ActivityRow, Any]] = OrderedDict()  # key -> (row, node), oldest first
        self.working: dict[tuple[str, str], float] = {}  # (path, cell id) -> monotonic expiry
        self.last_run: dict[tuple[str, str], str] = {}  # (path, cell id) -> actor of the last run
        self.inflight: set[int] = set()  # ids of agent calls running now
        self.watches: dict[str, _Watch] = {}  # notebook widget id -> watch
        self._dirty: set[str] = set()
        self._pending_rows: list[ActivityRow] = []
        self._sections: set[str] = set()
        self._timer: Any = None
        self._cells_cache: tuple[str, int, dict[str, CellInfo]] | None = None
        self.proxies = Proxies()  # every callable this panel (and its cell menu) hands to JS
        self._undo: list[Callable[[], None]] = []
        self._disposed = False
        self._noted = 0
        self.longest: dict[str, float] = {}  # part -> longest synchronous stretch so far, ms
        self._busy = False
        self.cells_menu: Any = None

    # -- life cycle ------------------------------------------------------------------------------------
    def _proxy(self, fn: Callable[..., Any]) -> Any:
        return self.proxies.keep(fn)

    async def start(self) -> None:
        """Build the widget and connect everything, in small steps with a yield to the browser between."""
        panel_dom.install_style("panel")
        await asyncio.sleep(0)
        self._build_widget()
        await asyncio.sleep(0)
        from webmcp_bridge.lab.ui.cell_menu import CellMenu  # the context menu commands

        self.cells_menu = CellMenu(self)
        self.cells_menu.install()
        await asyncio.sleep(0)
        self._connect()
        await asyncio.sleep(0)
        for nb_panel in list(self.tracker.filter(lambda _p: True)):
            self._watch(nb_panel)
        self._schedule("activity", "comments", "access", "markers")
        self.widget.node.setAttribute("data-state", "ready")  # for tests: commands and listeners are in place

    def _build_widget(self) -> None:
        widget = self.loader.modules.widgets.Widget.new()
        widget.id = WIDGET_ID
        widget.addClass(c("panel"))
        widget.title.label = "Agent"
        widget.title.caption = "Agent: activity, comments and access"
        node = widget.node
        node.setAttribute("role", "region")
        node.setAttribute("aria-label", "Agent panel")
        webmcp = not is_nullish(getattr(self.loader, "modelContext", None))
        book = self.registry.context.proposals
        head = h("div", c("panel-head"), h("h2", "", text="Agent"),
                 h("label", c("row"), h("span", "", text="Mode "), mode_select(book.mode)),
                 mode_note(),
                 h("p", c("mode"), text="An agent in this browser can use the notebook through WebMCP." if webmcp else
                   "WebMCP is not available in this browser: no agent is connected. You can still review and restrict."))
        sections = [("activity", "Activity"), ("comments", "Comments"), ("access", "Access")]
        panel_dom.replace_children(node, head, h("p", c("notice"), role="status", data_role="notice"),
                                   *[h("details", c(f"section section-{key}"), h("summary", "", text=label),
                                       h("div", c("section-body"), data_role=key), open="") for key, label in sections])
        for key in ("notice", "activity", "comments", "access"):
            self.nodes[key] = node.querySelector(f'[data-role="{key}"]')
        self.nodes["mode"] = node.querySelector('[data-action="mode"]')
        self.nodes["notice"].hidden = True
        for key, _ in sections:
            self.nodes[f"{key}-summary"] = node.querySelector(f".{c('section-' + key)} > summary")
        panel_dom.replace_children(self.nodes["activity"], h("ul", c("activity"), activity_empty(), data_role="activity-list"))
        self.nodes["activity-list"] = self.nodes["activity"].firstChild
        self.widget = widget
        self.app.shell.add(widget, "right", js_object({"rank": 650}))

    def _connect(self) -> None:
        on_click, on_change, on_key = self._proxy(self._on_click), self._proxy(self._on_change), self._proxy(self._on_key)
        on_blur = self._proxy(lambda *_: self._schedule("comments"))  # a render deferred while typing
        node = self.widget.node
        for kind, proxy in (("click", on_click), ("change", on_change), ("keydown", on_key), ("focusout", on_blur)):
            node.addEventListener(kind, proxy)
            self._undo.append(functools.partial(node.removeEventListener, kind, proxy))
        current, added = self._proxy(lambda *_: self._schedule("comments", "access", "markers")), self._proxy(lambda _t, p: self._watch(p))
        self.tracker.currentChanged.connect(current)
        self.tracker.widgetAdded.connect(added)
        self._undo.append(lambda: self.tracker.currentChanged.disconnect(current))
        self._undo.append(lambda: self.tracker.widgetAdded.disconnect(added))
        self._undo.append(self.registry.on_before(self._on_call))
        self._undo.append(self.registry.on_after(self._on_call))
        self._undo.append(self.changes.subscribe(self._on_change_entry))
        book = self.registry.context.proposals
        show_mode = lambda mode: setattr(self.nodes["mode"], "value", mode) if self.nodes.get("mode") is not None else None  # noqa: E731
        self._undo.append(book.on_mode(show_mode))

    def dispose(self) -> None:
        """Remove the widget, commands, listeners and markers; destroy every proxy."""
        if self._disposed:
            return
        self._disposed = True
        if self._timer is not None:
            self._timer.cancel()
        for undo in reversed(self._undo):
            _quietly(undo)
        def clear_markers(watch: _Watch) -> None:
            panel_dom.apply_markers(watch.panel.content, {}, list(marker_classes(Markers())), MARKERS_ATTR, c("markers"), c("cell-marked"))

        for key, watch in list(self.watches.items()):
            _quietly(functools.partial(clear_markers, watch))
            self._unwatch(key)
        if self.cells_menu is not None:
            self.cells_menu.dispose()
        if self.widget is not None:
            _quietly(self.widget.dispose)
        panel_dom.remove_style("panel")
        self.proxies.clear()

    # -- notebooks -------------------------------------------------------------------------------------
    def _watch(self, nb_panel: Any) -> None:
        key = str(nb_panel.id)
        if key in self.watches or self._disposed:
            return
        ydoc = nb_panel.context.model.sharedModel.ydoc
        _quietly(lambda: self.host.live.track(nb_panel))  # from the start: change log, and CRLF made LF before the person types
        self.watches[key] = _Watch(nb_panel, ydoc)
        ydoc.on("update", self._ydoc_proxy)
        nb_panel.node.addEventListener("click", self._click_proxy)
        nb_panel.disposed.connect(self._disposed_proxy)
        nb_panel.content.activeCellChanged.connect(self._active_proxy)
        self._dirty.add(key)
        self._schedule()

    def _unwatch(self, key: str) -> None:
        watch = self.watches.pop(key, None)
        if watch is None:
            return
        _quietly(lambda: watch.ydoc.off("update", self._ydoc_proxy))
        _quietly(lambda: watch.panel.node.removeEventListener("click", self._click_proxy))
        _quietly(lambda: watch.panel.disposed.disconnect(self._disposed_proxy))
        _quietly(lambda: watch.panel.content.activeCellChanged.disconnect(self._active_proxy))

    @property
    def _ydoc_proxy(self) -> Any:
        if "_ydoc" not in self.__dict__:
            self.__dict__["_ydoc"] = self._proxy(self._on_ydoc_update)
        return self.__dict__["_ydoc"]

    @property
    def _click_proxy(self) -> Any:
        if "_click" not in self.__dict__:
            self.__dict__["_click"] = self._proxy(self._on_click)
        return self.__dict__["_click"]

    @property
    def _active_proxy(self) -> Any:
        if "_active" not in self.__dict__:  # the "current cell" filter and the new-comment button follow it
            self.__dict__["_active"] = self._proxy(lambda *_: self._schedule("comments"))
        return self.__dict__["_active"]

    @property
    def _disposed_proxy(self) -> Any:
        if "_disp" not in self.__dict__:
            self.__dict__["_disp"] = self._proxy(lambda sender, *_: self._unwatch(str(sender.id)))
        return self.__dict__["_disp"]

    def _on_ydoc_update(self, *_args: Any) -> None:
        # Called inside a Yjs transaction: only note it; the notebook is read in the debounced flush.
        self._dirty.update(self.watches)  # cheap: the flush only takes changes; notebooks without any give none
        self._schedule("comments", "access", "markers")

    def current(self) -> LabNotebook | None:
        """The notebook the person is looking at (raw), or None."""
        return self.host.current_notebook()

    def notebook_at(self, path: str | None) -> LabNotebook | None:
        """The open notebook at ``path`` (the current one when None)."""
        return self.current() if not path else self.host.find_open(path)

    def cells(self, nb: LabNotebook) -> dict[str, CellInfo]:
        """``{cell id: CellInfo}`` of ``nb`` (one read, cached until the notebook's revision changes)."""
        revision = nb.revision()
        cached = self._cells_cache
        if cached is not None and cached[0] == nb.path and cached[1] == revision:
            return cached[2]
        infos = {cell_id: CellInfo(index, cell_type, preview(line, PREVIEW_BYTES) if line else "(empty)", outputs)
                 for index, (cell_id, cell_type, line, outputs) in enumerate(panel_dom.cell_infos(nb.panel, PREVIEW_BYTES))}
        self._cells_cache = (nb.path, revision, infos)
        return infos

    # -- hooks (called inside tool calls: only note, never render) ------------------------------------
    def _on_call(self, event: Any) -> None:
        if event.outcome is None:
            self.inflight.add(event.call_id)
        else:
            self.inflight.discard(event.call_id)
        self._pending_rows.append(call_row(event))
        self._schedule("activity", "markers")

    def _on_change_entry(self, entry: Any) -> None:
        key = (entry.path, entry.cell_id)
        if entry.actor == "agent":
            self.working[key] = time.monotonic() + WORKING_SECONDS
        if entry.kind in ("run", "output", "clear"):  # outputs of a run the agent started are the agent's
            self.last_run[key] = entry.actor
        elif entry.kind == "delete":
            self.last_run.pop(key, None)
        self._pending_rows.append(change_row(entry))
        self._schedule("activity", "markers")

    # -- scheduling -------------------------------------------------------------------------------------
    def _schedule(self, *sections: str) -> None:
        """Render ``sections`` (and take changes of dirty notebooks) after ``FLUSH_SECONDS``."""
        self._sections.update(sections)
        if self._timer is None and not self._disposed:
            self._timer = asyncio.get_event_loop().call_later(FLUSH_SECONDS, self._flush)

    def _flush(self) -> None:
        self._timer = None
        if self._busy:  # a render is still under way: come back after it
            self._schedule()
            return
        self._busy = True
        asyncio.ensure_future(self._flush_now())

    async def _flush_now(self) -> None:
        try:
            self._timed("changes", self._take_changes)
            sections, self._sections = self._sections, set()
            await self.render(sections)
        except Exception:  # the panel must never break the page
            traceback.print_exc()
        finally:
            self._busy = False
        if self.working and not self._disposed:
            self._schedule("markers")  # clears rings as they expire

    def _take_changes(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for key in dirty:
            watch = self.watches.get(key)
            if watch is None or watch.panel.isDisposed:
                continue
            nb = LabNotebook(self.host, watch.panel)
            take = getattr(nb, "take_changes", None)
            if take is not None:
                self.changes.ingest(nb.path, take())

    # -- rendering ---------------------------------------------------------------------------------------
    async def render(self, sections: set[str] | None = None) -> None:
        """Re-render ``sections`` ("activity", "comments", "access", "markers"; all when None), one section per
        stretch with a yield to the browser between. The longest stretch of each part so far, in ms, is kept
        in ``longest`` and on the panel node (``data-longest-ms``, JSON), for tests and bench/."""
        sections = {"activity", "comments", "access", "markers"} if sections is None else sections
        nb = self.current()
        cells = self._timed("cells", lambda: self.cells(nb) if nb is not None else None)
        for name, part in (("activity", self._render_activity), ("comments", self._render_comments),
                           ("access", self._render_access)):
            if name in sections:
                await asyncio.sleep(0)
                self._timed(name, functools.partial(part, nb, cells))
        if "markers" in sections:
            await asyncio.sleep(0)
            self._timed("markers", lambda: self._render_markers(nb))
        notice = self.nodes["notice"]
        notice.textContent = self.notice or ""
        notice.hidden = not self.notice
        self.widget.node.setAttribute("data-longest-ms", json.dumps({k: round(v, 1) for k, v in self.longest.items()}))

    def _timed(self, name: str, work: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        try:
            return work()
        finally:
            self.longest[name] = max(self.longest.get(name, 0.0), (time.perf_counter() - began) * 1000)

    def _render_activity(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        pending, self._pending_rows = self._pending_rows, []
        listing = self.nodes["activity-list"]
        if pending and not self.rows:
            listing.replaceChildren()
        for row in pending:
            old = self.rows.pop(row.key, None)
            if old is not None:
                old[1].remove()
                if row.outcome is not None and old[0].outcome is not None:
                    row.time = old[0].time  # a call's row keeps its start time
            node = panel_dom.build(activity_item(row, cells, nb.path if nb else None))
            listing.prepend(node)
            self.rows[row.key] = (row, node)
        while len(self.rows) > ACTIVITY_ROWS:
            _, (_, node) = self.rows.popitem(last=False)
            node.remove()

    def _typing(self) -> bool:
        """True while the person's focus is in a text box of the Comments section (a render would lose it)."""
        active = js.document.activeElement
        return not is_nullish(active) and str(active.tagName) == "TEXTAREA" and bool(self.nodes["comments"].contains(active))

    def _render_comments(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        body = self.nodes["comments"]
        if self._typing():
            return  # rendered again on focusout
        if nb is None:
            panel_dom.replace_children(body, h("p", c("empty"), text="Open a notebook to see its comments."))
            self.nodes["comments-summary"].textContent = "Comments"
            return
        drafts = self._drafts()
        review = Review(nb)
        counts = review.counts()
        active = nb.focus().cell_id
        if self.filter == "cell":
            views = review.threads("all", active, limit=THREAD_ROWS) if active else []
            total = review.count("all", active) if active else 0
        else:
            views = review.threads(self.filter, limit=THREAD_ROWS)
            total = review.count(self.filter)
        counts_all = {**counts, "all": counts["open"] + counts["resolved"]}
        if active:
            counts_all["cell"] = review.count("all", active)
        rows = [thread_row(v) for v in views]
        panel_dom.replace_children(body, comments_view(rows, self.filter, counts_all, cells, drafts, active,
                                                       omitted=max(0, total - len(rows))))
        self.nodes["comments-summary"].textContent = f"Comments ({counts['open']} open)"

    def _drafts(self) -> dict[str, str]:
        """Text typed in the reply boxes, by thread id ("" for the new-comment box), to survive a re-render."""
        drafts = {}
        for box in self.nodes["comments"].querySelectorAll("textarea[data-reply]"):
            value = str(box.value)
            if value:
                drafts[str(box.getAttribute("data-reply"))] = value
        return drafts

    def _render_access(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        body = self.nodes["access"]
        if nb is None:
            panel_dom.replace_children(body, h("p", c("empty"), text="Open a notebook to set what the agent may do with it."))
            return
        level = access.notebook_level(nb)
        restricted = list(access.cell_levels(nb).items())
        panel_dom.replace_children(body, access_view(nb.path, level, restricted, cells))
        self.nodes["access-summary"].textContent = f"Access ({level}" + (f", {len(restricted)} restricted cells)" if restricted else ")")

    def markers(self, nb: LabNotebook) -> dict[str, Markers]:
        """The markers each cell of ``nb`` should carry now (cells with none are left out)."""
        now = time.monotonic()
        for key, expiry in list(self.working.items()):
            if expiry < now and not self.inflight:
                del self.working[key]
        cells = self.cells(nb)
        working = {cid for (p, cid) in self.working if p == nb.path}
        agent_run = {cid for (p, cid), actor in self.last_run.items()
                     if p == nb.path and actor == "agent" and cid in cells and cells[cid].outputs > 0}
        return cell_markers(Review(nb).counts_by_cell("open"), access.cell_levels(nb), working, agent_run)

    def _render_markers(self, nb: LabNotebook | None) -> None:
        if nb is None:
            return
        want = {cell_id: (m.signature(), [cls for cls, on in marker_classes(m).items() if on], marker_badges(m, cell_id, nb.path))
                for cell_id, m in self.markers(nb).items()}
        panel_dom.apply_markers(nb.panel.content, want, list(marker_classes(Markers())), MARKERS_ATTR, c("markers"),
                                c("cell-marked"))

    # -- events ------------------------------------------------------------------------------------------
    def _say(self, message: str | None) -> None:
        self.notice = message
        self._schedule()

    def note(self, what: str, path: str, cell_id: str | None = None) -> None:
        """Add the person's own panel action (a comment, an access change) to Activity."""
        self._noted += 1
        self._pending_rows.append(ActivityRow(f"person:{self._noted}", time.time(), "person", what, path, cell_id))
        self._schedule("activity")

    def _on_click(self, event: Any) -> None:
        target = panel_dom.closest(event.target, "[data-action]")
        if target is None or str(target.tagName) == "SELECT":
            return
        action = str(target.getAttribute("data-action"))
        from webmcp_bridge.lab.ui.actions import ACTIONS

        if action not in ACTIONS:
            return
        event.stopPropagation()
        self.notice = None
        try:
            ACTIONS[action](self, target)
        except ToolError as err:
            self._say(err.message)
        except Exception as exc:  # never let an action escape into JupyterLab
            traceback.print_exc()
            self._say(f"That did not work: {type(exc).__name__}.")
        self._schedule("comments", "access", "markers")

    def _on_change(self, event: Any) -> None:
        target = event.target
        action = target.getAttribute("data-action") if hasattr(target, "getAttribute") else None
        if is_nullish(action) or str(target.tagName) != "SELECT":
            return
        value = str(target.value)
        try:
            if action == "mode":  # the person's switch (the command palette and the setting change the same book)
                self.registry.context.proposals.set_mode("propose" if value == "propose" else "direct")
                self.note(f"switched the agent to {value} mode", "")
            elif action == "filter":
                self.filter = cast(ThreadFilter, value) if value in THREAD_FILTERS else "open"
            elif action == "notebook-level":
                nb = self.current()
                if nb is not None:
                    level = access.parse_level(value)
                    access.set_notebook_level(nb, level)
                    self.note(f"set the notebook's agent access to {level}", nb.path)
        except Exception as exc:
            traceback.print_exc()
            self._say(f"That did not work: {type(exc).__name__}.")
        self._schedule("comments", "access", "markers")

    def _on_key(self, event: Any) -> None:
        target = event.target
        if str(event.key) == "Enter" and (event.ctrlKey or event.metaKey) and str(target.tagName) == "TEXTAREA":
            box = panel_dom.closest(target, f".{c('thread')}, .{c('new-comment')}")
            button = panel_dom.query(box, '[data-action="reply"], [data-action="comment-active"]')
            if button is not None:
                event.preventDefault()
                target.blur()  # so the re-render after the action is not deferred for typing
                button.click()

    def reveal(self, path: str | None, cell_id: str, selection: dict | None = None) -> None:
        """Bring the notebook to the front, make the cell active and scroll to it (selecting ``selection``)."""
        nb = self.notebook_at(path)
        if nb is None:
            raise ToolError(ErrorCode.NOTEBOOK_NOT_FOUND, "That notebook is no longer open.")
        self.app.shell.activateById(nb.panel.id)
        nb.set_focus(cell_id, None, selection)

    def show(self) -> None:
        """Open the panel in the sidebar."""
        self.app.shell.activateById(WIDGET_ID)

    async def apply_to_all(self, nb: LabNotebook, level: access.Level) -> None:
        """Set every cell of ``nb`` to ``level``, ``APPLY_CHUNK`` cells per stretch."""
        ids = list(self.cells(nb))
        for start in range(0, len(ids), APPLY_CHUNK):
            self._timed("apply", functools.partial(access.set_cell_levels, nb, ids[start:start + APPLY_CHUNK], level))
            await asyncio.sleep(0)
        self.note(f"set the agent access of all {len(ids)} cells to {level}", nb.path)
        self._schedule("access", "markers")


# -- helpers ----------------------------------------------------------------------------------------------
def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:
        traceback.print_exc()


def new_panel(loader: Any, bridge: Any) -> AgentPanel | None:
    """An Agent panel (not started yet: ``await panel.start()``) over the session's raw host, registry and change
    log (``bridge``: a :class:`~webmcp_bridge.session.bridge.Bridge`); None (and a console message) when
    JupyterLab's share scope lacks ``@lumino/widgets``. The caller owns it and disposes of it."""
    if is_nullish(getattr(loader.modules, "widgets", None)):
        print("webmcp-bridge: no @lumino/widgets in the share scope; the Agent panel is not shown")
        return None
    return AgentPanel(loader, bridge.guard.raw, bridge.registry, bridge.changes)
