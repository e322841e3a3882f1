"""The cell markers on the notebook in front: a comment badge, an access lock, the agent-at-work ring, "run by
agent", "changed by agent" (decided by :func:`webmcp_bridge.lab.ui.view.cell_markers`).

They look again only when what they show may have changed: another notebook came to the front, the notebook's stamp
moved (metadata or cell list), the agent changed a cell, the journal's unseen set changed, a run's owner changed, a
ring expired, or the person acted in the panel; a person's own print loop costs a few dictionary lookups per burst.
Markers equal to the last ones applied make no DOM work; others go to ``dom.js`` in one crossing, by the notebook's
path and the cells' ids.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from webmcp_bridge.access.levels import cell_levels
from webmcp_bridge.calls.registry import CallEvent, Registry
from webmcp_bridge.changes.log import ChangeEntry, ChangeLog
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.core.limits import PANEL_FLUSH_SECONDS, WORKING_SECONDS
from webmcp_bridge.lab.ffi import undo_all
from webmcp_bridge.lab.ui.view import El, Markers, cell_markers, marker_badges, marker_classes
from webmcp_bridge.review.threads import Review

if TYPE_CHECKING:  # the browser's parts: known by their type only, so the rules here run under CPython too
    from webmcp_bridge.lab.ui.dom import Dom
    from webmcp_bridge.lab.ui.notebooks import EventKind, OpenNotebooks

Want = dict[str, tuple[str, list[str], El]]


class CellMarkers:
    """The markers on the cells of the notebook in front, from ``notebooks``, the ``registry``'s calls, the change
    log and the ``journal`` (the agent's edits not looked at: "changed by agent")."""

    def __init__(
        self,
        notebooks: OpenNotebooks,
        registry: Registry,
        changes: ChangeLog,
        dom: Dom,
        journal: EditJournal | None = None,
    ) -> None:
        self.notebooks = notebooks
        self.journal = journal
        self.registry = registry
        self.changes = changes
        self.dom = dom
        self.working: dict[tuple[str, str], float] = {}  # (path, cell id) -> monotonic expiry of its ring
        self.last_run: dict[tuple[str, str], str] = {}  # (path, cell id) -> who made its last run or outputs
        self.inflight: set[int] = set()  # ids of agent calls running now
        self.applied: dict[str, Want] = {}  # notebook handle -> the markers last applied to its cells
        self._paths: dict[str, str] = {}  # notebook handle -> its path when they were applied
        self.renders = 0  # looks at a notebook (for tests and bench/)
        self.longest_ms = 0.0  # longest synchronous stretch of one look
        self._dirty = False
        self._timer: Any = None
        self._due = 0.0  # event-loop time of the look scheduled
        self._undo: list[Callable[[], None]] = []
        self._disposed = False

    def start(self) -> None:
        """Subscribe to what the markers show, and mark the notebook in front."""
        self._undo += [
            self.notebooks.subscribe(self._on_notebook),
            self.changes.subscribe(self._on_change),
            self.registry.on_before(self._on_call),
            self.registry.on_after(self._on_call),
        ]
        if self.journal is not None:
            self._undo.append(self.journal.subscribe(self._on_journal))
        self.refresh()

    def dispose(self) -> None:
        """Unsubscribe and take every marker off the cells."""
        if self._disposed:
            return
        self._disposed = True
        undo_all(self._undo, self._timer)
        for key in list(self.applied):
            if key in self.notebooks.watches:
                try:
                    self._apply(key, self._paths[key], {})
                except Exception:
                    traceback.print_exc()
        self.applied.clear()
        self._paths.clear()

    # -- what may have changed ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Look at the notebook in front again soon (after a person's action, or when it changed)."""
        self._dirty = True
        self._schedule(PANEL_FLUSH_SECONDS)

    def _on_journal(self, unseen_changed: bool) -> None:
        """The journal changed: look again only when its unseen set did (an agent editing a cell already unseen
        again changes no marker; its ring comes from the change log)."""
        if unseen_changed:
            self.refresh()

    def _on_notebook(self, kind: EventKind, key: str) -> None:
        if kind == "closed":
            self.applied.pop(key, None)
            self._paths.pop(key, None)
        elif kind == "current" or (kind == "stamp" and key == self.notebooks.current_id):
            self.refresh()
        if kind in ("active", "current") and key == self.notebooks.current_id:
            self._looked_at()

    def _looked_at(self) -> None:
        """The person made a cell active (no agent call running): a cell the agent changed counts as looked at."""
        nb = self.notebooks.current()
        if self.journal is None or nb is None or self.inflight or not self.journal.unseen(nb.path):
            return
        cell_id = nb.focus().cell_id
        if cell_id is not None:
            self.journal.mark_seen(nb.path, cell_id)

    def _on_change(self, entry: ChangeEntry) -> None:
        key = (entry.path, entry.cell_id)
        changed = False
        if entry.actor == "agent":
            changed = key not in self.working
            self.working[key] = time.monotonic() + WORKING_SECONDS
        if entry.kind in ("run", "output", "clear"):  # outputs of a run the agent started are the agent's
            before, self.last_run[key] = self.last_run.get(key), entry.actor
            # the agent's outputs may come or go: "run by agent" depends on their count
            changed = changed or before != entry.actor or entry.actor == "agent"
        elif entry.kind == "delete":
            changed = self.last_run.pop(key, None) is not None or changed
            if self.journal is not None:
                self.journal.forget_cell(entry.path, entry.cell_id)
        if changed:
            self.refresh()

    def _on_call(self, event: CallEvent) -> None:
        if event.outcome is None:
            self.inflight.add(event.call_id)
        else:
            self.inflight.discard(event.call_id)
            if not self.inflight and self.working:  # the rings may expire now
                self._schedule(max(0.0, min(self.working.values()) - time.monotonic()))

    # -- looking -------------------------------------------------------------------------------------------------
    def _schedule(self, delay: float) -> None:
        """Look in ``delay`` seconds, unless a look is due sooner."""
        if self._disposed:
            return
        loop = asyncio.get_event_loop()
        due = loop.time() + delay
        if self._timer is not None:
            if self._due <= due:
                return
            self._timer.cancel()
        self._timer, self._due = loop.call_later(delay, self._look), due

    def _look(self) -> None:
        self._timer = None
        now = time.monotonic()
        if self.working and not self.inflight:
            expired = [key for key, expiry in self.working.items() if expiry <= now]
            for key in expired:
                del self.working[key]
            self._dirty = self._dirty or bool(expired)
            if self.working:
                self._schedule(max(0.0, min(self.working.values()) - now))
        if not self._dirty:
            return
        self._dirty = False
        began = time.perf_counter()
        try:
            self.render()
        except Exception:  # the markers must never break the page
            traceback.print_exc()
        finally:
            self.longest_ms = max(self.longest_ms, (time.perf_counter() - began) * 1000)

    def markers(self, nb: Any) -> dict[str, Markers]:
        """The markers each cell of ``nb`` (a raw LabNotebook) should carry now (cells with none left out)."""
        working = {cid for (p, cid) in self.working if p == nb.path}
        candidates = {cid for (p, cid), actor in self.last_run.items() if p == nb.path and actor == "agent"}
        agent_run: set[str] = set()
        if candidates:  # only then are the cells' output counts needed
            cells = self.notebooks.cells(nb)
            agent_run = {cid for cid in candidates if cid in cells and cells[cid].outputs > 0}
        unseen = self.journal.unseen(nb.path) if self.journal is not None else set()
        return cell_markers(Review(nb).counts_by_cell("open"), cell_levels(nb), working, agent_run, unseen)

    def render(self) -> None:
        """Put the markers the notebook in front should carry on its cells, unless they are the ones already there."""
        key = self.notebooks.current_id
        nb = self.notebooks.current()
        if key is None or nb is None:
            return
        self.renders += 1
        want: Want = {
            cell_id: (
                m.signature(),
                [cls for cls, on in marker_classes(m).items() if on],
                marker_badges(m, cell_id, nb.path),
            )
            for cell_id, m in self.markers(nb).items()
        }
        if self.applied.get(key) == want:
            return  # nothing they show changed: no DOM work
        self._apply(key, nb.path, want)

    def _apply(self, key: str, path: str, want: Want) -> None:
        """Put ``want`` on every view of the notebook at ``path`` and note it as applied for each view known here, not
        only ``key``: a view noted before another view's drawing would otherwise be skipped while showing it."""
        self.dom.apply_markers(path, want)
        self._paths[key] = path
        for other, other_path in self._paths.items():
            if other_path == path:
                self.applied[other] = want
