"""The Agent panel's three sections (Activity, Comments, Access): what each shows of the notebook in front, when it
must be drawn again, and drawing it. The ``on_*`` methods return the sections a change can alter: Activity, a new or
updated row; Comments, the notebook in front, its active cell, its stamp (threads, cell list), the filter, or a
change of a cell a listed thread is on; Access, the notebook in front, its stamp, or an edit of a restricted cell
(whose first line it lists). A section whose new tree equals the last one drawn costs no DOM work; an Activity row
that reads the same keeps its node. Comments and Access are not drawn while the person types or chooses there.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from webmcp_bridge.access.levels import cell_levels, notebook_level
from webmcp_bridge.calls.registry import CallEvent
from webmcp_bridge.changes.log import ChangeEntry
from webmcp_bridge.core.limits import ACTIVITY_ROWS, THREAD_ROWS
from webmcp_bridge.lab.ui.actions import ThreadFilter
from webmcp_bridge.lab.ui.activity_view import ActivityRow, activity_item, call_row, change_row
from webmcp_bridge.lab.ui.comments_view import comments_view, thread_row
from webmcp_bridge.lab.ui.i18n import Text, _, _n, to_json
from webmcp_bridge.lab.ui.view import LEVEL_WORD, CellInfo, El, KernelFacts, access_view, c, h
from webmcp_bridge.review.threads import Review

if TYPE_CHECKING:  # the browser's parts: known by their type only
    from webmcp_bridge.lab.notebook import LabNotebook
    from webmcp_bridge.lab.ui.dom import Dom, RowOp
    from webmcp_bridge.lab.ui.notebooks import EventKind

SECTIONS = ("activity", "comments", "access")
#: the focused elements (``Dom.fields``' tag names) that put off a section's drawing until the focus leaves: a reply
#: being typed, and a select the person is choosing in (``dom.js`` reports a select only until its change), whose
#: list a redraw would close under their hands
HELD_BY = frozenset({"TEXTAREA", "SELECT"})


class Sections:
    """The three sections of one panel, drawn through ``dom`` by role. ``kernel`` gives what Access says of a
    notebook's kernels; ``secret`` the key Comments judges authors with (None: the person's messages read "file").
    ``draws`` (times each section was drawn) and ``longest`` (longest stretch per part, ms) are for tests and bench/."""

    def __init__(
        self,
        dom: Dom,
        kernel: Callable[[LabNotebook], KernelFacts] | None = None,
        secret: Callable[[], bytes | None] | None = None,
    ) -> None:
        self.dom = dom
        self.secret = secret
        self.kernel = kernel  # what Access says of the kernels (the panel's: the run rule's switch, the kernel model)
        self.thread_filter: ThreadFilter = "open"
        self.dirty: set[str] = set(SECTIONS)
        self.draws: dict[str, int] = {}
        self.longest: dict[str, float] = {}
        self.rows: OrderedDict[str, tuple[ActivityRow, El]] = OrderedDict()  # key -> (row, tree) drawn, oldest first
        self.drawn: dict[str, str] = {}  # section or summary -> what was drawn last (tree JSON, or text)
        self._pending: OrderedDict[str, ActivityRow] = OrderedDict()  # rows not drawn yet, by key
        self._shown_path: str | None = None  # the notebook Comments and Access were last drawn for
        self._thread_cells: set[str] = set()  # cells the listed threads are on
        self._restricted: set[str] = set()  # cells listed in Access
        self._calls: dict[str, ActivityRow] = {}  # call row key -> its row, while the call runs (or waits)
        self._waiting: dict[str, str] = {}  # proposal id -> the key of the row of the call it holds
        self._seq = 0  # rows added so far (a row's place: is it still the newest?)
        self._seqs: dict[str, int] = {}  # row key -> its place when added
        self._last_done: ActivityRow | None = None  # the newest finished call row (the next like it merges in)
        self._dropped: set[str] = set()  # keys of drawn rows to take out (merged into another)
        self._in_place: set[str] = set()  # keys of pending rows redrawn where they are

    # -- what changed: each returns the sections it made dirty ---------------------------------------------
    def _dirty(self, *sections: str) -> tuple[str, ...]:
        self.dirty.update(sections)
        return sections

    def on_notebook(self, kind: EventKind, current: bool) -> tuple[str, ...]:
        """An event of the open notebooks (``current``: about the notebook in front)."""
        if kind == "current" or (kind == "stamp" and current):
            return self._dirty("comments", "access")
        if kind == "active" and current:
            return self._dirty("comments")  # the "current cell" filter and the new-comment box follow it
        return ()

    def on_call(self, event: CallEvent) -> tuple[str, ...]:
        """A tool call started or ended. Calls that did the same thing one after the other (a finished call, then
        another like it with no other row between) make one row: "read cells ×3"."""
        row = call_row(event)
        started = self._calls.pop(row.key, None)
        if event.outcome is None:
            self._calls[row.key] = row
            return self.add_row(row)
        if started is not None:
            row.time = row.started = started.time  # a call's row keeps its start time
        last = self._last_done
        merged = (
            event.outcome == "ok"
            and last is not None
            and last.what == row.what
            and self._seqs.get(last.key, -1) == self._seqs.get(row.key, -2) - 1
            and self._seqs.get(row.key) == self._seq
        )
        if last is not None and merged:
            self._drop(row.key)
            joined = replace(last, count=last.count + 1, time=row.time, detail=row.detail)
            self._last_done = joined
            self._seqs[last.key] = self._seq = self._seq + 1
            self._pending.pop(last.key, None)
            self._pending[last.key] = joined
            return self._dirty("activity")
        self._last_done = row if event.outcome == "ok" else None
        return self.add_row(row)

    def on_proposal(self, event: str, proposal_id: str, call_id: int | None) -> tuple[str, ...]:
        """A proposal was made by call ``call_id`` ("created": its row shows it waiting for the person) or settled
        (back to running until the call ends)."""
        if event == "created" and call_id is not None:
            key = f"call:{call_id}"
            row = self._calls.get(key)
            if row is None:
                return ()
            self._waiting[proposal_id] = key
            self._calls[key] = waiting = replace(row, outcome="waiting")
            return self._update(waiting)
        key = self._waiting.pop(proposal_id, "")
        row = self._calls.get(key)
        if row is None or key in self._waiting.values():
            return ()
        self._calls[key] = running = replace(row, outcome="running")
        return self._update(running)

    def running(self) -> bool:
        """Whether a call runs now (its row shows the time elapsed: :meth:`tick` redraws it)."""
        return any(row.outcome == "running" for row in self._calls.values())

    def tick(self) -> tuple[str, ...]:
        """A second passed: the rows of running calls are drawn again (their elapsed time)."""
        dirty: tuple[str, ...] = ()
        for row in list(self._calls.values()):
            if row.outcome == "running":
                dirty = self._update(row)
        return dirty

    def _update(self, row: ActivityRow) -> tuple[str, ...]:
        """Draw ``row`` again in its place (not moved to the top)."""
        if row.key not in self._pending:
            self._in_place.add(row.key)
        self._pending[row.key] = row
        return self._dirty("activity")

    def _drop(self, key: str) -> None:
        self._pending.pop(key, None)
        self._seqs.pop(key, None)
        if key in self.rows:
            self._dropped.add(key)

    def on_change(self, entry: ChangeEntry) -> tuple[str, ...]:
        """A cell changed (an entry of the change log, new or updated)."""
        dirty = list(self.add_row(change_row(entry)))
        if entry.path == self._shown_path:
            if entry.cell_id in self._thread_cells or entry.kind in ("insert", "delete", "move"):
                dirty += self._dirty("comments")
            if entry.kind == "edit" and entry.cell_id in self._restricted:
                dirty += self._dirty("access")
        return tuple(dirty)

    def add_row(self, row: ActivityRow) -> tuple[str, ...]:
        """Add or update an Activity row (drawn with the next drawing, on top)."""
        self._pending.pop(row.key, None)
        self._in_place.discard(row.key)
        self._pending[row.key] = row
        self._seq += 1
        self._seqs[row.key] = self._seq
        if len(self._seqs) > 4 * ACTIVITY_ROWS:  # only the newest rows' places are ever compared
            for key in list(self._seqs)[: len(self._seqs) - 2 * ACTIVITY_ROWS]:
                del self._seqs[key]
        while len(self._pending) > ACTIVITY_ROWS:  # while hidden: only the newest rows can be shown anyway
            self._pending.popitem(last=False)
        return self._dirty("activity")

    def set_filter(self, thread_filter: ThreadFilter) -> tuple[str, ...]:
        """Show ``thread_filter``'s threads in Comments."""
        self.thread_filter = thread_filter
        return self._dirty("comments")

    # -- drawing ------------------------------------------------------------------------------------------------
    def timed(self, name: str, work: Callable[[], Any]) -> Any:
        """Run ``work()``, noting its time in ``longest[name]``."""
        began = time.perf_counter()
        try:
            return work()
        finally:
            self.longest[name] = max(self.longest.get(name, 0.0), (time.perf_counter() - began) * 1000)

    def draw(self, name: str, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        """Draw section ``name`` for the notebook in front (``nb``, None when none is) and its ``cells``."""
        self.dirty.discard(name)
        part = {"activity": self._activity, "comments": self._comments, "access": self._access}[name]
        self.timed(name, lambda: part(nb, cells))

    def _body(self, section: str, tree: El) -> None:
        """Draw ``tree`` as the body of ``section``, unless it is the tree drawn there last."""
        text = json.dumps(tree.to_json())
        if self.drawn.get(section) == text:
            return
        if self.dom.draw(section, tree, held_by=HELD_BY) == "held":  # pressed since the look at ``fields``
            self.dirty.add(section)  # drawn on focusout
            return
        self.drawn[section] = text
        self.draws[section] = self.draws.get(section, 0) + 1

    def _summary(self, key: str, text: Text) -> None:
        said = json.dumps(to_json(text))
        if self.drawn.get(key) != said:
            self.drawn[key] = said
            self.dom.update({key: {"text": text}})

    def _activity(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        pending, self._pending = self._pending, OrderedDict()
        in_place, self._in_place = self._in_place, set()
        current_path = nb.path if nb is not None else None
        ops: list[RowOp] = [("drop", key) for key in self._dropped if self.rows.pop(key, None) is not None]
        self._dropped = set()
        if pending and not self.rows:
            ops.append(("clear",))
        drawn = 0
        now = time.time()
        for row in pending.values():
            stays = row.key in in_place and row.key in self.rows  # redrawn where it is (elapsed time, waiting)
            on_top = bool(self.rows) and next(reversed(self.rows)) == row.key
            old = self.rows.get(row.key) if stays else self.rows.pop(row.key, None)
            tree = activity_item(row, cells, current_path, now)
            self.rows[row.key] = (row, tree)
            if old is not None and old[1] == tree:  # the row reads the same: keep its node (moved up unless on top)
                if not on_top and not stays:
                    ops.append(("keep", row.key))
                continue
            ops.append(("set" if stays else "put", row.key, tree))
            drawn += 1
        while len(self.rows) > ACTIVITY_ROWS:
            key, _row = self.rows.popitem(last=False)
            ops.append(("drop", key))
        if ops:
            self.dom.rows("activity-list", ops)
        if drawn:
            self.draws["activity"] = self.draws.get("activity", 0) + 1

    def _comments(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        focused, drafts = self.dom.fields("comments")
        if focused in HELD_BY:  # the person is typing or choosing in Comments: a drawing would take it away
            self.dirty.add("comments")  # drawn on focusout
            return
        if nb is None:
            self._shown_path, self._thread_cells = None, set()
            self._body("comments", h("p", c("empty"), text=_("Open a notebook to see its comments.")))
            self._summary("comments-summary", _("Comments"))
            return
        self._shown_path = nb.path
        review = Review(nb, key=None if self.secret is None else self.secret())
        counts = review.counts()
        active = nb.focus().cell_id
        if self.thread_filter == "cell":
            views = review.threads("all", active, limit=THREAD_ROWS) if active else []
            total = review.count("all", active) if active else 0
        else:
            views = review.threads(self.thread_filter, limit=THREAD_ROWS)
            total = review.count(self.thread_filter)
        counts_all = {**counts, "all": counts["open"] + counts["resolved"]}
        if active:
            counts_all["cell"] = review.count("all", active)
        rows = [thread_row(v) for v in views]
        self._thread_cells = {row.cell_id for row in rows if row.cell_id}
        omitted = max(0, total - len(rows))
        self._body("comments", comments_view(rows, self.thread_filter, counts_all, cells, drafts, active, omitted))
        self._summary("comments-summary", _("Comments (%1 open)", str(counts["open"])))

    def _access(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        if nb is None:
            self._restricted = set()
            self._body("access", h("p", c("empty"), text=_("Open a notebook to set what the agent may do with it.")))
            return
        self._shown_path = nb.path
        level = notebook_level(nb)
        restricted = list(cell_levels(nb).items())
        self._restricted = {cell_id for cell_id, _ in restricted}
        facts = self.kernel(nb) if self.kernel is not None else None
        self._body("access", access_view(nb.path, level, restricted, cells, facts))
        word = LEVEL_WORD.get(level, level)
        self._summary(
            "access-summary",
            _n("Access (%2, %1 restricted cell)", "Access (%2, %1 restricted cells)", len(restricted), word)
            if restricted
            else _("Access (%1)", word),
        )
