"""The open notebooks the person's side follows: which one is in front, what changed in them, and their cells.

One :class:`OpenNotebooks` per session, shared by the Agent panel (:mod:`.panel`) and the cell markers
(:mod:`.markers`). It follows JupyterLab's notebook tracker (a notebook added, the current one changing) and,
for each open notebook, its active cell and its disposal; it starts the adapter's tracking of each notebook at
once, so a person's edits reach the change log (and CRLF line ends are made LF) with no agent present.

Model changes cost nothing per change: ``notebook.js`` collects a burst of changes of the tracked notebooks and
calls :meth:`_on_burst` once, ``PANEL_FLUSH_SECONDS`` after the burst began, with the handles of the notebooks
that changed. For each, one crossing takes its cell changes into the session's change log (whose subscribers see
who changed which cell) and its stamp, a count of its metadata and cell-list changes. Subscribers hear of what
they may show differently, as ``(kind, handle)``:

- ``"current"``: another notebook (or none) is in front;
- ``"active"``: the active cell of a notebook changed;
- ``"stamp"``: a notebook's levels, review threads or cell list may have changed (its stamp moved);
- ``"closed"``: a notebook closed.

A notebook is named by its handle (``notebook.js``'s, see :mod:`webmcp_bridge.lab.notebook`), which is also the
key of the events above. ``notebook.js`` follows the tracker and the panels (``follow``, ``watch``) and reports
to one Python event sink as JSON text, so this module holds no JupyterLab object and reads no attribute of one
(``tests/test_lab_no_page_objects.py``). Clicks on the cell markers' buttons are not followed here: ``ui/dom.js``,
which made the buttons, reports them to the Agent panel as data. Every callable handed to JS is a proxy this object
owns, destroyed by :meth:`OpenNotebooks.dispose`; each is an event sink (JS does not use what it returns).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any, Literal

from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.limits import PANEL_FLUSH_SECONDS, PANEL_PREVIEW_BYTES, PANEL_PREVIEW_LINES, preview
from webmcp_bridge.lab.ffi import Proxies, is_nullish, quietly, undo_all
from webmcp_bridge.lab.host import JupyterLabHost
from webmcp_bridge.lab.notebook import LabNotebook
from webmcp_bridge.lab.ui.view import CellInfo

EventKind = Literal["current", "active", "stamp", "closed"]
Listener = Callable[[EventKind, str], None]


class _Watch:
    """One open notebook followed: its handle and its stamp as last taken (None before the first take)."""

    def __init__(self, host: JupyterLabHost, handle: str) -> None:
        self.host = host
        self.handle = handle
        self.stamp: int | None = None


class OpenNotebooks:
    """The open notebooks of the page, for the person's side.

    Args:
        host: the raw :class:`~webmcp_bridge.lab.host.JupyterLabHost` (its ``notebook.js`` follows JupyterLab's
            notebook tracker, which it got from the loader's context).
        changes: the session's change log, fed here with the person's and the agent's cell changes.
    """

    def __init__(self, host: JupyterLabHost, changes: ChangeLog) -> None:
        self.host = host
        self.changes = changes
        self.watches: dict[str, _Watch] = {}  # handle -> watch
        self.current_id: str | None = None  # the handle of the notebook in front
        self._listeners: list[Listener] = []
        self._cells: dict[str, tuple[int, dict[str, CellInfo]]] = {}  # path -> (revision, cells)
        self._proxies = Proxies()
        self._undo: list[Callable[[], None]] = []
        self._disposed = False

    # -- life cycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Follow every open notebook and the tracker from now on."""
        live = self.host.live
        current = live.current()
        self.current_id = None if is_nullish(current) else str(current)
        live.follow(self._proxies.keep(self._on_event))
        self._undo.append(lambda: live.follow(None))
        self._undo.append(self.host.listen(self._on_burst, PANEL_FLUSH_SECONDS))
        for handle in self.host.handles():
            self._watch(handle)

    def dispose(self) -> None:
        """Stop following: disconnect everything and free every proxy."""
        if self._disposed:
            return
        self._disposed = True
        for key in list(self.watches):
            self._unwatch(key)
        undo_all(self._undo)
        self._listeners.clear()
        self._proxies.clear()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(kind, handle)`` for each event (see the module docstring); returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- following -------------------------------------------------------------------------------------------
    def _emit(self, kind: EventKind, key: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(kind, key)
            except Exception:  # one part of the person's side must not break another
                traceback.print_exc()

    def _on_event(self, text: Any) -> None:
        """``notebook.js`` follow's event: JSON text ``[kind, handle]`` ("current" with a handle or null, "added",
        "active", "closed")."""
        kind, handle = json.loads(str(text))
        if kind == "current":
            self.current_id = None if handle is None else str(handle)
            self._emit("current", self.current_id or "")
        elif kind == "added":
            self._watch(str(handle))
        elif kind == "active":
            self._emit("active", str(handle))
        elif kind == "closed":
            self._unwatch(str(handle), closed=True)

    def _watch(self, handle: str) -> None:
        if handle in self.watches or self._disposed:
            return
        # from the start: the change log, CRLF made LF before the person types; its closing, active cell and clicks
        quietly(lambda: self.host.live.watch(handle))
        self.watches[handle] = _Watch(self.host, handle)
        self._emit("stamp", handle)

    def _unwatch(self, key: str, closed: bool = False) -> None:
        watch = self.watches.pop(key, None)
        if watch is None:
            return
        quietly(lambda: self.host.live.unwatch(key))
        if closed:
            self._emit("closed", key)

    def _on_burst(self, keys: list[str]) -> None:
        """``notebook.js``: these notebooks changed. Takes their changes into the log and their stamps."""
        for key in keys:
            watch = self.watches.get(key)
            if watch is None:
                continue
            try:
                nb = self.host.notebook(key)
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
        return None if watch is None else self.host.notebook(watch.handle)

    def find(self, path: str) -> LabNotebook | None:
        """The open notebook at ``path`` (raw), or None."""
        return self.host.find_open(path)

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
