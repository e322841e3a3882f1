"""The Agent panel's three sections: what each shows of the notebook in front, when it must be drawn again, and
drawing it.

- Activity: who did what, newest first, at most ``ACTIVITY_ROWS`` rows: tool calls and cell changes.
- Comments: the review threads (by the filter: open / resolved / all / the active cell), with reply boxes.
- Access: the notebook's level, "apply to all cells", the restricted cells with their first line.

What each depends on, so a change that cannot alter it does not mark it dirty (the ``on_*`` methods return the
sections to draw again): Activity, a new or updated row; Comments, the notebook in front, its active cell, its
stamp (threads, cell list), the filter, or a change of a cell one of the listed threads is on (an edit can
orphan a quote, a run change an output); Access, the notebook in front, its stamp, or an edit of a restricted
cell (whose first line it lists). Drawing a section whose new tree equals the one drawn last does no DOM work;
an Activity row that reads the same keeps its node. The panel (:mod:`.panel`) decides when to draw: only while
it is visible.

The sections hold no node: they draw by role through :class:`~webmcp_bridge.lab.ui.dom.Dom` (each section's body
``"activity-list"``, ``"comments"``, ``"access"``, the summaries ``"comments-summary"``, ``"access-summary"``), one
crossing per drawing of a section (Comments and Access: one more, to read what is being typed or chosen there: a
drawing is put off while the person types a reply or chooses in a select, :data:`HELD_BY`, and made when the focus
leaves or the choice is made).
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from webmcp_bridge.access.levels import cell_levels, notebook_level
from webmcp_bridge.calls.registry import CallEvent
from webmcp_bridge.changes.log import ChangeEntry
from webmcp_bridge.core.limits import ACTIVITY_ROWS, THREAD_ROWS
from webmcp_bridge.lab.run_switches import asking_off
from webmcp_bridge.lab.ui.comments_view import comments_view, thread_row
from webmcp_bridge.lab.ui.port import ThreadFilter
from webmcp_bridge.lab.ui.view import ActivityRow, CellInfo, El, access_view, activity_item, c, call_row, change_row, h
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
    """The three sections of one panel.

    Args:
        dom: the session's :class:`~webmcp_bridge.lab.ui.dom.Dom`, whose panel has the nodes named by role (see the
            module docstring).
        secret: gives the key the Comments section judges who wrote each message with (the session's page secret,
            :class:`~webmcp_bridge.review.threads.Review`); None: every message that says it is the person's reads
            "file".

    Attributes: ``thread_filter`` (the Comments filter), ``dirty`` (the sections to draw), ``draws`` (times each was
    drawn) and ``longest`` (each part's longest synchronous stretch so far, ms), the last two for tests and bench/.
    """

    def __init__(self, dom: Dom, secret: Callable[[], bytes | None] | None = None) -> None:
        self.dom = dom
        self.secret = secret
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

    # -- what changed: each returns the sections it made dirty ---------------------------------------------
    def _dirty(self, *sections: str) -> tuple[str, ...]:
        self.dirty.update(sections)
        return sections

    def on_notebook(self, kind: EventKind, current: bool) -> tuple[str, ...]:
        """An event of the open notebooks (``current``: about the notebook in front)."""
        if kind == "current":
            return self._dirty("comments", "access")
        if kind == "active" and current:
            return self._dirty("comments")  # the "current cell" filter and the new-comment box follow it
        if kind == "stamp" and current:
            return self._dirty("comments", "access")
        return ()

    def on_call(self, event: CallEvent) -> tuple[str, ...]:
        """A tool call started or ended."""
        return self.add_row(call_row(event))

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
        """Add or update an Activity row (drawn with the next drawing)."""
        self._pending.pop(row.key, None)
        self._pending[row.key] = row
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
        self.dom.draw(section, tree)
        self.drawn[section] = text
        self.draws[section] = self.draws.get(section, 0) + 1

    def _summary(self, key: str, text: str) -> None:
        if self.drawn.get(key) != text:
            self.drawn[key] = text
            self.dom.update({key: {"text": text}})

    def _activity(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        pending, self._pending = self._pending, OrderedDict()
        current_path = nb.path if nb is not None else None
        ops: list[RowOp] = []
        if pending and not self.rows:
            ops.append(("clear",))
        drawn = 0
        for row in pending.values():
            on_top = bool(self.rows) and next(reversed(self.rows)) == row.key
            old = self.rows.pop(row.key, None)
            if old is not None and row.outcome is not None and old[0].outcome is not None:
                row.time = old[0].time  # a call's row keeps its start time
            tree = activity_item(row, cells, current_path)
            self.rows[row.key] = (row, tree)
            if old is not None and old[1] == tree:  # the row reads the same: keep its node (moved up unless on top)
                if not on_top:
                    ops.append(("keep", row.key))
                continue
            ops.append(("put", row.key, tree))
            drawn += 1
        while len(self.rows) > ACTIVITY_ROWS:
            key, _ = self.rows.popitem(last=False)
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
            self._body("comments", h("p", c("empty"), text="Open a notebook to see its comments."))
            self._summary("comments-summary", "Comments")
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
        self._body(
            "comments",
            comments_view(
                rows, self.thread_filter, counts_all, cells, drafts, active, omitted=max(0, total - len(rows))
            ),
        )
        self._summary("comments-summary", f"Comments ({counts['open']} open)")

    def _access(self, nb: LabNotebook | None, cells: dict[str, CellInfo] | None) -> None:
        if self.dom.fields("access")[0] in HELD_BY:  # the person is choosing a level: drawn on focusout
            self.dirty.add("access")
            return
        if nb is None:
            self._restricted = set()
            self._body("access", h("p", c("empty"), text="Open a notebook to set what the agent may do with it."))
            return
        self._shown_path = nb.path
        level = notebook_level(nb)
        restricted = list(cell_levels(nb).items())
        self._restricted = {cell_id for cell_id, _ in restricted}
        self._body("access", access_view(nb.path, level, restricted, cells, asking_off(nb.path)))
        self._summary(
            "access-summary", f"Access ({level}" + (f", {len(restricted)} restricted cells)" if restricted else ")")
        )
