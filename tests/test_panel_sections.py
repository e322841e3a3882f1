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
from typing import Any

from helpers import corpus_text
from webmcp_bridge.access.levels import set_cell_level
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.host.memory import MemoryWorkspace
from webmcp_bridge.host.protocol import CellChange
from webmcp_bridge.lab.ui.sections import Sections
from webmcp_bridge.lab.ui.view import CellInfo, El, first_line
from webmcp_bridge.review.threads import CellAnchor, Review

PATH = "demo/running.ipynb"


class Node:
    """A DOM node as far as the sections use one."""

    def __init__(self) -> None:
        self.children: list[Any] = []
        self.parent: Node | None = None
        self.textContent = ""

    def remove(self) -> None:
        if self.parent is not None and self in self.parent.children:
            self.parent.children.remove(self)

    def replaceChildren(self, *nodes: Any) -> None:  # noqa: N802 (the DOM's name)
        self.children = list(nodes)

    def prepend(self, node: Any) -> None:
        node.remove()
        self.children.insert(0, node)
        node.parent = self

    def querySelectorAll(self, _selector: str) -> list[Any]:  # noqa: N802
        return []

    def contains(self, _node: Any) -> bool:
        return False


class Dom:
    """Stand-in for dom.js: records what it draws."""

    def __init__(self) -> None:
        self.built: list[El] = []
        self.replaced: list[Any] = []

    def build(self, el: El) -> Any:
        self.built.append(el)
        return Node()

    def replace_children(self, parent: Any, *els: El) -> None:
        self.replaced.append(parent)


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

    nodes = {key: Node() for key in ("activity-list", "comments", "access", "comments-summary", "access-summary")}
    document = type("Document", (), {"activeElement": None})()
    dom = Dom()
    sections = Sections(nodes, dom, document)  # type: ignore[arg-type]
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
    assert len(dom.built) == 1 and len(nodes["activity-list"].children) == 1  # one row, drawn once: it reads the same
    assert sections.draws == {"comments": 1, "access": 1, "activity": 1}, sections.draws

    # the clock moves on: the row says so (one redraw), still one row
    log.ingest(PATH, [CellChange("person", "output", looped, second + 1.5)])
    draw()
    assert len(dom.built) == 2 and len(nodes["activity-list"].children) == 1

    # outputs of the cell a listed thread is on: Comments is looked at again, reads the same, is not redrawn
    dirty.clear()
    log.ingest(PATH, [CellChange("person", "output", commented, second + 1.6)])
    assert "comments" in dirty[-1] and "access" not in dirty[-1], dirty
    replaced = len(dom.replaced)
    draw()
    assert sections.draws["comments"] == 1 and len(dom.replaced) == replaced

    # the person edits the restricted cell's first line: Access lists the new line (one redraw)
    nb.set_source(restricted, "print('a new first line')")
    log.ingest(PATH, [CellChange("person", "edit", restricted, second + 1.7)])
    assert "access" in sections.dirty
    draw()
    assert sections.draws["access"] == 2, sections.draws
