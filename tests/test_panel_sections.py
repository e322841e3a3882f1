"""The Agent panel's sections draw only what changed: a person's print loop redraws one Activity row (once, while
it reads the same), never Comments or Access; a change of a cell a listed thread is on looks at Comments again
and finds it unchanged (no DOM work); an edit of a restricted cell redraws Access, whose list shows its first
line.

The sections (``lab/ui/sections.py``) run here over the in-memory notebook with the real change log, review
threads and access levels; only the page is a stand-in: the panel's nodes and ``dom.js`` record what they are
asked to draw."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from typing import Any

from helpers import corpus_text, first_line
from host_memory import MemoryWorkspace
from webmcp_bridge.access.levels import set_cell_level
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.limits import ACTIVITY_ROWS
from webmcp_bridge.host.protocol import CellChange
from webmcp_bridge.lab.ui.activity_view import ActivityRow
from webmcp_bridge.lab.ui.sections import Sections
from webmcp_bridge.lab.ui.view import CellInfo, El
from webmcp_bridge.review.threads import CellAnchor, Review

PATH = "demo/running.ipynb"


class Dom:
    """Stand-in for dom.js: keeps the Activity list's row keys (top first) as the panel's half would, and records
    what it is asked to draw; ``focused`` and ``drafts`` are what :meth:`fields` reports for the node ``focus_role``
    (the person typing or choosing there; the other nodes report no focus and no draft)."""

    def __init__(self) -> None:
        self.built: list[El] = []  # the rows' trees put in the list
        self.drawn: list[tuple[str, list[El]]] = []  # (role, trees) of each draw
        self.listing: list[str] = []
        self.texts: dict[str, str] = {}
        self.focused: str | None = None
        self.focus_role = "comments"
        self.drafts: dict[str, str] = {}
        self.pressed_before_draw: str | None = None  # a press dom.js sees at the drawing, after fields answered

    def rows(self, role: str, ops: list[Any]) -> None:
        assert role == "activity-list"
        for op in ops:
            if op[0] == "clear":
                self.listing = []
                continue
            if op[0] == "set" and op[1] in self.listing:  # redrawn where it is
                self.built.append(op[2])
                continue
            if op[1] in self.listing:
                self.listing.remove(op[1])
            if op[0] in ("put", "set"):
                self.built.append(op[2])
            if op[0] in ("keep", "put", "set"):
                self.listing.insert(0, op[1])

    def draw(self, role: str, *els: El, held_by: Collection[str] = ()) -> bool | str:
        if role == self.focus_role and {self.focused, self.pressed_before_draw} & set(held_by):
            return "held"  # as dom.js: the focus fields reports, or a press after the look at fields
        self.drawn.append((role, list(els)))
        return True

    def update(self, changes: dict[str, dict[str, Any]]) -> None:
        self.texts.update({role: change["text"] for role, change in changes.items() if "text" in change})

    def fields(self, role: str) -> tuple[str | None, dict[str, str]]:
        assert role in ("comments", "access")
        if role != self.focus_role:
            return None, {}
        return self.focused, dict(self.drafts)


def cells_of(nb: Any) -> dict[str, CellInfo]:
    return {
        c.id: CellInfo(c.index, c.cell_type, first_line(c.source), c.output_count)
        for c in nb.read_cells(None, head_bytes=0, max_outputs=0)
    }


def test_a_print_loop_redraws_one_activity_row_and_nothing_else() -> None:
    ws = MemoryWorkspace({PATH: corpus_text("notebook-running-code.ipynb")})
    nb = asyncio.run(ws.open_notebook(PATH, activate=True))
    ids = list(cells_of(nb))
    looped, commented, restricted = ids[5], ids[2], ids[3]
    Review(nb).create(CellAnchor(commented), "Is this right?", "person")
    set_cell_level(nb, restricted, "read")

    dom = Dom()
    sections = Sections(dom)  # type: ignore[arg-type]
    log = ChangeLog()
    dirty: list[tuple[str, ...]] = []
    log.subscribe(lambda entry: dirty.append(sections.on_change(entry)))

    def draw() -> None:
        cells = cells_of(nb)
        for name in ("activity", "comments", "access"):
            if name in sections.dirty:
                sections.draw(name, nb, cells)

    draw()
    assert sections.draws == {"comments": 1, "access": 1}, sections.draws  # nothing in Activity yet

    # a person's print loop: 1,000 output changes of one cell, within one second, in bursts of 50
    second = float(int(time.time()))
    for _ in range(20):
        log.ingest(PATH, [CellChange("person", "output", looped, second + 0.5) for _ in range(50)])
        draw()
    assert {name for marks in dirty for name in marks} == {"activity"}, dirty  # never Comments or Access
    assert len(dom.built) == 1 and len(dom.listing) == 1  # one row, drawn once: it reads the same
    assert sections.draws == {"comments": 1, "access": 1, "activity": 1}, sections.draws

    # the clock moves on: the row says so (one redraw), still one row
    log.ingest(PATH, [CellChange("person", "output", looped, second + 1.5)])
    draw()
    assert len(dom.built) == 2 and len(dom.listing) == 1

    # outputs of the cell a listed thread is on: Comments is looked at again, reads the same, is not redrawn
    dirty.clear()
    log.ingest(PATH, [CellChange("person", "output", commented, second + 1.6)])
    assert "comments" in dirty[-1] and "access" not in dirty[-1], dirty
    replaced = len(dom.drawn)
    draw()
    assert sections.draws["comments"] == 1 and len(dom.drawn) == replaced

    # the person edits the restricted cell's first line: Access lists the new line (one redraw)
    nb.set_source(restricted, "print('a new first line')")
    log.ingest(PATH, [CellChange("person", "edit", restricted, second + 1.7)])
    assert "access" in sections.dirty
    draw()
    assert sections.draws["access"] == 2, sections.draws


def test_comments_wait_while_the_person_types_and_a_drawing_keeps_the_draft() -> None:
    ws = MemoryWorkspace({PATH: corpus_text("notebook-running-code.ipynb")})
    nb = asyncio.run(ws.open_notebook(PATH, activate=True))
    cells = cells_of(nb)
    thread = Review(nb).create(CellAnchor(list(cells)[2]), "Is this right?", "person")
    dom = Dom()
    sections = Sections(dom)  # type: ignore[arg-type]

    dom.focused = "TEXTAREA"  # the person is typing in Comments: no drawing (it would take the focus away)
    sections.draw("comments", nb, cells)
    assert dom.drawn == [] and "comments" in sections.dirty

    dom.focused, dom.drafts = None, {thread.id: "half a reply"}  # the focus left: drawn, the typed text kept
    sections.draw("comments", nb, cells)
    assert [role for role, _ in dom.drawn] == ["comments"] and "comments" not in sections.dirty
    boxes = [el for tree in dom.drawn[0][1] for el in tree.walk() if el.attrs.get("data-reply") == thread.id]
    assert [box.text for box in boxes] == ["half a reply"]
    assert str(dom.texts["comments-summary"]) == "Comments (1 open)"


def test_a_select_the_person_is_choosing_in_holds_its_section_back_until_the_choice() -> None:
    """While the person is choosing in a select of Comments (the filter) or Access (the notebook's level), a change
    that would redraw the section is put off (a redraw would close the select's list); once dom.js reports no select
    being chosen in (the change made, or the focus gone), the section is drawn. The press may come before Python's
    look at ``fields`` or after it, before the drawing reaches the page: then dom.js draws nothing and says "held"."""
    ws = MemoryWorkspace({PATH: corpus_text("notebook-running-code.ipynb")})
    nb = asyncio.run(ws.open_notebook(PATH, activate=True))
    cells = cells_of(nb)
    for seen_by in ("focused", "pressed_before_draw"):
        for role in ("comments", "access"):
            dom = Dom()
            sections = Sections(dom)  # type: ignore[arg-type]
            dom.focus_role = role
            setattr(dom, seen_by, "SELECT")
            sections.draw(role, nb, cells)
            assert dom.drawn == [] and role in sections.dirty
            setattr(dom, seen_by, None)  # chosen: dom.js no longer reports the select
            sections.draw(role, nb, cells)
            assert [drawn for drawn, _ in dom.drawn] == [role] and role not in sections.dirty


def test_activity_keeps_the_newest_rows_on_top_and_drops_the_oldest_past_the_bound() -> None:
    dom = Dom()
    sections = Sections(dom)  # type: ignore[arg-type]
    now = time.time()
    for i in range(ACTIVITY_ROWS + 5):
        sections.add_row(ActivityRow(f"person:{i}", now + i, "person", f"did thing {i}", PATH))
    sections.draw("activity", None, None)
    assert len(dom.listing) == ACTIVITY_ROWS and dom.listing[0] == f"person:{ACTIVITY_ROWS + 4}"

    # an older row told again, reading the same: its node moves to the top, nothing is built
    built = len(dom.built)
    sections.add_row(ActivityRow("person:10", now + 10, "person", "did thing 10", PATH))
    sections.draw("activity", None, None)
    assert dom.listing[0] == "person:10" and len(dom.built) == built and len(dom.listing) == ACTIVITY_ROWS

    # a new row pushes the oldest one out
    sections.add_row(ActivityRow("person:new", now + 1000, "person", "did a new thing", PATH))
    sections.draw("activity", None, None)
    assert dom.listing[0] == "person:new" and len(dom.listing) == ACTIVITY_ROWS and "person:5" not in dom.listing


def test_the_agents_calls_read_in_the_persons_words_merge_wait_and_show_their_time() -> None:
    from webmcp_bridge.calls.registry import CallEvent

    dom = Dom()
    sections = Sections(dom)  # type: ignore[arg-type]

    def call(call_id: int, tool: str, outcome: str | None = None) -> None:
        sections.on_call(CallEvent(call_id, tool, "{}", 0.0, None if outcome is None else 0.01, outcome))

    def shown() -> list[str]:
        sections.draw("activity", None, None)
        newest = {}
        for tree in dom.built:  # the last tree drawn of each row
            newest[tree.attrs["data-key"]] = tree.text_content()
        return [newest[key][len("00:00:00") :] for key in dom.listing]

    # two reads one after the other: one row, "×2"; the tool's name is not what the person reads
    call(1, "jupyter_get_cells")
    call(1, "jupyter_get_cells", "ok")
    call(2, "jupyter_get_cells")
    call(2, "jupyter_get_cells", "ok")
    assert shown() == ["agentread cells×2done"]
    # a change that waits for the person in Propose mode reads as waiting, then running again, then its outcome
    call(3, "jupyter_update_cell")
    assert sections.running()
    sections.on_proposal("created", "p1", 3)
    assert not sections.running() and sections.tick() == ()
    assert shown() == ["agentchanged a cellwaiting for you", "agentread cells×2done"]
    sections.on_proposal("settled", "p1", None)
    assert sections.running() and sections.tick() == ("activity",)
    before = list(dom.listing)
    assert shown()[0].startswith("agentchanged a cellrunning · ") and dom.listing == before  # redrawn in its place
    call(3, "jupyter_update_cell", "STALE_CELL")
    call(4, "jupyter_get_cells")
    call(4, "jupyter_get_cells", "ok")  # not merged across another row
    assert shown() == ["agentread cellsdone", "agentchanged a cellSTALE_CELL", "agentread cells×2done"]
    assert not sections.running()
