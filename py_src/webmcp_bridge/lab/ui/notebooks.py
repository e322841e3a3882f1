"""The open notebooks the person's side follows: which one is in front, what changed in them, and their cells.

Shared by the Agent panel and the cell markers. It follows JupyterLab's notebook tracker through ``notebook.js`` and
tracks each open notebook at once, so a person's edits reach the change log (CRLF made LF) with no agent present; a
burst of changes is taken once, ``PANEL_FLUSH_SECONDS`` after it began, with each notebook's stamp (a count of its
metadata and cell-list changes). Subscribers hear ``(kind, handle)``: ``"current"`` (another notebook, or none, is in
front), ``"active"`` (its active cell changed), ``"stamp"`` (its levels, threads or cell list may have changed),
``"closed"``. This module holds no JupyterLab object; every callable handed to JS is a proxy it owns.
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


class OpenNotebooks:
    """The open notebooks of the page, over the raw ``host`` (its ``notebook.js`` follows the tracker), feeding
    the session's change log ``changes``."""

    def __init__(self, host: JupyterLabHost, changes: ChangeLog) -> None:
        self.host = host
        self.changes = changes
        self.watches: dict[str, int | None] = {}  # handle -> its stamp as last taken (None before the first)
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
        quietly(lambda: self.host.live.watch(handle))
        self.watches[handle] = None
        self._emit("stamp", handle)

    def _unwatch(self, key: str, closed: bool = False) -> None:
        if key not in self.watches:
            return
        del self.watches[key]
        quietly(lambda: self.host.live.unwatch(key))
        if closed:
            self._emit("closed", key)

    def _on_burst(self, keys: list[str]) -> None:
        """``notebook.js``: these notebooks changed. Takes their changes into the log and their stamps."""
        for key in keys:
            if key not in self.watches:
                continue
            try:
                nb = self.host.notebook(key)
                changes, stamp = nb.take_changes_with_stamp()
                self.changes.ingest(nb.path, changes)
            except Exception:  # a notebook closing under us: the next burst or its disposal says more
                traceback.print_exc()
                continue
            if stamp != self.watches.get(key):
                self.watches[key] = stamp
                self._emit("stamp", key)

    # -- reading ---------------------------------------------------------------------------------------------
    def current(self) -> LabNotebook | None:
        """The notebook in front (raw), or None."""
        key = self.current_id or ""
        return self.host.notebook(key) if key in self.watches else None

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
