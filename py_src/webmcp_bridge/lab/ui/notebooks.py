"""The open notebooks the person's side follows: which one is in front, what changed in them, and their cells.

One :class:`OpenNotebooks` per session, shared by the Agent panel (:mod:`.panel`) and the cell markers
(:mod:`.markers`). It follows JupyterLab's notebook tracker (a notebook added, the current one changing) and,
for each open notebook, its active cell and its disposal; it starts the adapter's tracking of each notebook at
once, so a person's edits reach the change log (and CRLF line ends are made LF) with no agent present.

Model changes cost nothing per change: ``notebook.js`` collects a burst of changes of the tracked notebooks and
calls :meth:`_on_burst` once, ``PANEL_FLUSH_SECONDS`` after the burst began, with the panels that changed. For
each, one crossing takes its cell changes into the session's change log (whose subscribers see who changed
which cell) and its stamp, a count of its metadata and cell-list changes. Subscribers hear of what they may
show differently, as ``(kind, panel id)``:

- ``"current"``: another notebook (or none) is in front;
- ``"active"``: the active cell of a notebook changed;
- ``"stamp"``: a notebook's levels, review threads or cell list may have changed (its stamp moved);
- ``"closed"``: a notebook closed.

Every callable handed to JS is a proxy this object owns, destroyed by :meth:`OpenNotebooks.dispose`.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.limits import PANEL_FLUSH_SECONDS, PANEL_PREVIEW_BYTES, PANEL_PREVIEW_LINES, preview
from webmcp_bridge.lab.ffi import Proxies, is_nullish, quietly, undo_all
from webmcp_bridge.lab.host import JupyterLabHost
from webmcp_bridge.lab.notebook import LabNotebook
from webmcp_bridge.lab.ui.view import CellInfo

EventKind = Literal["current", "active", "stamp", "closed"]
Listener = Callable[[EventKind, str], None]


@dataclass
class _Watch:
    """One open notebook followed: its panel and its stamp as last taken (None before the first take)."""

    panel: Any
    stamp: int | None = None


class OpenNotebooks:
    """The open notebooks of the page, for the person's side.

    Args:
        host: the raw :class:`~webmcp_bridge.lab.host.JupyterLabHost`.
        tracker: JupyterLab's notebook tracker (the loader's ``ctx.tracker``).
        changes: the session's change log, fed here with the person's and the agent's cell changes.
    """

    def __init__(self, host: JupyterLabHost, tracker: Any, changes: ChangeLog) -> None:
        self.host = host
        self.tracker = tracker
        self.changes = changes
        self.watches: dict[str, _Watch] = {}  # panel id -> watch
        self.current_id: str | None = None
        self._listeners: list[Listener] = []
        self._clicks: Callable[[Any], None] | None = None
        self._cells: dict[str, tuple[int, dict[str, CellInfo]]] = {}  # path -> (revision, cells)
        self._proxies = Proxies()
        self._undo: list[Callable[[], None]] = []
        self._disposed = False
        # one listener of each kind, shared by every notebook (so each is disconnected with the same proxy)
        self._click = self._proxies.keep(self._on_click)
        self._closed = self._proxies.keep(lambda sender, *_: self._unwatch(str(sender.id), closed=True))
        self._active = self._proxies.keep(self._on_active)

    # -- life cycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Follow every open notebook and the tracker from now on."""
        current = self.host.live.current()
        self.current_id = None if is_nullish(current) else str(current.id)
        on_current = self._proxies.keep(self._on_current)
        on_added = self._proxies.keep(lambda _tracker, nb_panel: self._watch(nb_panel))
        self.tracker.currentChanged.connect(on_current)
        self.tracker.widgetAdded.connect(on_added)
        self._undo.append(lambda: self.tracker.currentChanged.disconnect(on_current))
        self._undo.append(lambda: self.tracker.widgetAdded.disconnect(on_added))
        self._undo.append(self.host.listen(self._on_burst, PANEL_FLUSH_SECONDS))
        for nb_panel in self.host.panels():
            self._watch(nb_panel)

    def dispose(self) -> None:
        """Stop following: disconnect everything and free every proxy."""
        if self._disposed:
            return
        self._disposed = True
        undo_all(self._undo)
        for key in list(self.watches):
            self._unwatch(key)
        self._listeners.clear()
        self._proxies.clear()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(kind, panel id)`` for each event (see the module docstring); returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def on_click(self, handler: Callable[[Any], None] | None) -> None:
        """Call ``handler(event)`` for clicks inside the open notebooks (the markers' buttons); None stops."""
        self._clicks = handler

    # -- following -------------------------------------------------------------------------------------------
    def _emit(self, kind: EventKind, key: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(kind, key)
            except Exception:  # one part of the person's side must not break another
                traceback.print_exc()

    def _watch(self, nb_panel: Any) -> None:
        key = str(nb_panel.id)
        if key in self.watches or self._disposed:
            return
        quietly(
            lambda: self.host.live.track(nb_panel)
        )  # from the start: the change log, CRLF made LF before the person types
        self.watches[key] = _Watch(nb_panel)
        nb_panel.node.addEventListener("click", self._click)
        nb_panel.disposed.connect(self._closed)
        nb_panel.content.activeCellChanged.connect(self._active)
        self._emit("stamp", key)

    def _unwatch(self, key: str, closed: bool = False) -> None:
        watch = self.watches.pop(key, None)
        if watch is None:
            return
        quietly(lambda: watch.panel.node.removeEventListener("click", self._click))
        quietly(lambda: watch.panel.disposed.disconnect(self._closed))
        quietly(lambda: watch.panel.content.activeCellChanged.disconnect(self._active))
        if closed:
            self._emit("closed", key)

    def _on_current(self, _tracker: Any, nb_panel: Any) -> None:
        self.current_id = None if is_nullish(nb_panel) else str(nb_panel.id)
        self._emit("current", self.current_id or "")

    def _on_active(self, notebook: Any, *_: Any) -> None:
        """A notebook's active cell changed (the Notebook widget is the sender: its panel is its parent)."""
        parent = notebook.parent
        if not is_nullish(parent):
            self._emit("active", str(parent.id))

    def _on_click(self, event: Any) -> None:
        if self._clicks is not None:
            self._clicks(event)

    def _on_burst(self, keys: list[str]) -> None:
        """``notebook.js``: these notebooks changed. Takes their changes into the log and their stamps."""
        for key in keys:
            watch = self.watches.get(key)
            if watch is None:
                continue
            try:
                nb = LabNotebook(self.host, watch.panel)
                changes, stamp = nb.take_changes_with_stamp()
                self.changes.ingest(nb.path, changes)
            except Exception:  # a notebook closing under us: the next burst or its disposal says more
                traceback.print_exc()
                continue
            if stamp != watch.stamp:
                watch.stamp = stamp
                self._emit("stamp", key)

    # -- reading ---------------------------------------------------------------------------------------------
    def current(self) -> LabNotebook | None:
        """The notebook in front (raw), or None."""
        watch = self.watches.get(self.current_id or "")
        return None if watch is None else LabNotebook(self.host, watch.panel)

    def find(self, path: str) -> LabNotebook | None:
        """The open notebook at ``path`` (raw), or None."""
        return self.host.find_open(path)

    def notebook_of_panel(self, nb_panel: Any) -> LabNotebook:
        """The raw notebook of an open NotebookPanel."""
        return LabNotebook(self.host, nb_panel)

    def panels(self) -> list[Any]:
        """The NotebookPanels followed."""
        return [watch.panel for watch in self.watches.values()]

    def cells(self, nb: LabNotebook) -> dict[str, CellInfo]:
        """``{cell id: CellInfo}`` of ``nb`` in order (one crossing; read again only after the notebook changed)."""
        cached = self._cells.get(nb.path)
        fresh = nb.cell_infos(PANEL_PREVIEW_BYTES, PANEL_PREVIEW_LINES, None if cached is None else cached[0])
        if fresh is None and cached is not None:
            return cached[1]
        assert fresh is not None
        revision, rows = fresh
        infos = {
            cell_id: CellInfo(index, cell_type, preview(line, PANEL_PREVIEW_BYTES) if line else "(empty)", outputs)
            for index, (cell_id, cell_type, line, outputs) in enumerate(rows)
        }
        self._cells = {nb.path: (revision, infos)}  # the notebook in front is the one asked about
        return infos
