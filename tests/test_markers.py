"""The cell markers do no work while nothing they show changes: a person's print loop makes no DOM work (and no
look at the notebook after its first change), while the agent's edit, a new restriction and a new comment do.

The markers (``lab/ui/markers.py``) run here over the in-memory notebook with the real change log, registry,
review threads and access levels; only the two browser parts they use are stand-ins: the open notebooks (which
notebook is in front, its cells) and ``dom.js`` (which records what it is asked to draw)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from helpers import corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.access.levels import set_cell_level
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.core.limits import PANEL_FLUSH_SECONDS
from webmcp_bridge.host.protocol import CellChange
from webmcp_bridge.lab.ui.markers import CellMarkers
from webmcp_bridge.lab.ui.view import CellInfo
from webmcp_bridge.review.threads import CellAnchor, Review
from webmcp_bridge.session.bridge import build_bridge

PATH = "demo/euler.ipynb"
SETTLE = PANEL_FLUSH_SECONDS + 0.15  # a look is due this long after what triggered it


class OpenNotebooks:
    """Stand-in for lab/ui/notebooks.py: one notebook, in front."""

    def __init__(self, nb: Any) -> None:
        self.shown = nb
        self.current_id = "panel-1"
        self.watches: dict[str, Any] = {"panel-1": nb}
        self.listeners: list[Any] = []

    def subscribe(self, listener: Any) -> Any:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, kind: str) -> None:
        for listener in self.listeners:
            listener(kind, self.current_id)

    def current(self) -> Any:
        return self.shown

    def cells(self, nb: Any) -> dict[str, CellInfo]:
        return {
            c.id: CellInfo(c.index, c.cell_type, c.source[:20], c.output_count)
            for c in nb.read_cells(None, head_bytes=0, max_outputs=0)
        }


class Dom:
    """Stand-in for dom.js: records every call that would draw (the markers name the notebook by its path) and what
    the cells of each path show (every view open at the path shows the same)."""

    def __init__(self) -> None:
        self.drawn: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.shown: dict[str, dict[str, Any]] = {}

    def apply_markers(self, path: str, want: dict[str, Any], *_: Any) -> int:
        self.paths.append(path)
        self.drawn.append({cell_id: (sig, classes) for cell_id, (sig, classes, _strip) in want.items()})
        self.shown[path] = self.drawn[-1]
        return len(want)


def test_a_print_loop_makes_no_marker_work_and_the_agent_s_edit_does() -> None:
    ws = MemoryWorkspace({PATH: corpus_text("pytudes-euler.ipynb")})
    bridge = build_bridge(ws)
    nb = asyncio.run(ws.open_notebook(PATH, activate=True))
    ids = [c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0)]
    notebooks, dom = OpenNotebooks(nb), Dom()

    async def scenario() -> None:
        markers = CellMarkers(notebooks, bridge.registry, bridge.changes, dom)  # type: ignore[arg-type]
        markers.start()
        await asyncio.sleep(SETTLE)
        assert len(dom.drawn) == 1 and dom.drawn[0] == {}, dom.drawn  # the first look: no cell carries a marker

        # a person's print loop: 1,000 output changes of one cell, in bursts as the page delivers them
        looks = markers.renders
        for burst in range(20):
            bridge.changes.ingest(PATH, [CellChange("person", "output", ids[2], time.time()) for _ in range(50)])
            await asyncio.sleep(0.02 if burst % 5 else SETTLE)
        assert len(dom.drawn) == 1, dom.drawn  # nothing they show changed: no DOM work
        assert markers.renders - looks <= 1, markers.renders  # at most one look (a run's owner was unknown before)

        # the agent edits a cell: its ring goes on (one drawing), then off once the ring expired
        bridge.changes.ingest(PATH, [CellChange("agent", "edit", ids[1], time.time())])
        await asyncio.sleep(SETTLE)
        assert len(dom.drawn) == 2 and "webmcp-bridge-cell-working" in dom.drawn[1][ids[1]][1], dom.drawn
        markers.working[(PATH, ids[1])] = time.monotonic()  # as if WORKING_SECONDS had passed
        markers._schedule(0)
        await asyncio.sleep(0.05)
        assert len(dom.drawn) == 3 and ids[1] not in dom.drawn[2], dom.drawn

        # the person restricts a cell and comments on another: the notebook's stamp moves, one drawing each
        set_cell_level(nb, ids[3], "read")
        notebooks.emit("stamp")
        await asyncio.sleep(SETTLE)
        assert dom.drawn[-1][ids[3]][0].split("|")[1] == "read", dom.drawn[-1]
        Review(nb).create(CellAnchor(ids[4]), "Why this?", "person")
        notebooks.emit("stamp")
        await asyncio.sleep(SETTLE)
        assert dom.drawn[-1][ids[4]][0].startswith("1|"), dom.drawn[-1]
        drawn = len(dom.drawn)

        # the stamp moves again with nothing the markers show changed (the notebook in front again): a look, no drawing
        notebooks.emit("current")
        await asyncio.sleep(SETTLE)
        assert len(dom.drawn) == drawn, dom.drawn
        markers.dispose()
        assert dom.drawn[-1] == {}  # disposing takes every marker off
        assert set(dom.paths) == {PATH}  # always the notebook in front, by its path

    asyncio.run(scenario())


def test_the_agent_editing_an_unseen_cell_again_makes_no_new_look() -> None:
    ws = MemoryWorkspace({PATH: corpus_text("pytudes-euler.ipynb")})
    bridge = build_bridge(ws)
    nb = asyncio.run(ws.open_notebook(PATH, activate=True))
    ids = [c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0)]
    notebooks, dom = OpenNotebooks(nb), Dom()
    journal = EditJournal()  # the lab host's journal (lab/host.py), which the agent's writes record into

    async def scenario() -> None:
        markers = CellMarkers(notebooks, bridge.registry, bridge.changes, dom, journal)  # type: ignore[arg-type]
        markers.start()
        await asyncio.sleep(SETTLE)
        journal.record(PATH, ids[1], "a", "b")  # newly unseen: a look, and the cell carries its marker
        await asyncio.sleep(SETTLE)
        looks = markers.renders
        assert any(ids[1] in d for d in dom.drawn), dom.drawn
        for n in range(5):  # the agent edits the same cell again, still unseen: no look
            journal.record(PATH, ids[1], f"b{n}", f"c{n}")
            await asyncio.sleep(SETTLE)
        assert markers.renders == looks, markers.renders
        journal.record(PATH, ids[2], "a", "b")  # another cell newly unseen: a look
        await asyncio.sleep(SETTLE)
        assert markers.renders == looks + 1 and ids[2] in dom.drawn[-1], (markers.renders, dom.drawn)
        journal.mark_seen(PATH, ids[1])  # the person looked at it: a look, its marker goes
        await asyncio.sleep(SETTLE)
        assert markers.renders == looks + 2 and ids[1] not in dom.drawn[-1], (markers.renders, dom.drawn)
        markers.dispose()

    asyncio.run(scenario())


def test_a_notebook_open_in_two_views_loses_a_ring_that_ended_while_another_notebook_was_in_front() -> None:
    other = "demo/other.ipynb"
    ws = MemoryWorkspace({PATH: corpus_text("pytudes-euler.ipynb"), other: corpus_text("pytudes-euler.ipynb")})
    bridge = build_bridge(ws)
    nb = asyncio.run(ws.open_notebook(PATH, activate=True))
    nb_other = asyncio.run(ws.open_notebook(other, activate=False))
    ids = [c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0)]
    notebooks, dom = OpenNotebooks(nb), Dom()
    notebooks.current_id = "view-2"
    notebooks.watches = {"view-1": nb, "view-2": nb, "other": nb_other}

    def bring(key: str, shown: Any) -> None:
        notebooks.current_id, notebooks.shown = key, shown
        notebooks.emit("current")

    async def scenario() -> None:
        markers = CellMarkers(notebooks, bridge.registry, bridge.changes, dom)  # type: ignore[arg-type]
        markers.start()
        await asyncio.sleep(SETTLE)  # the second view in front: no markers
        bring("view-1", nb)
        await asyncio.sleep(SETTLE)
        bridge.changes.ingest(PATH, [CellChange("agent", "edit", ids[1], time.time())])
        await asyncio.sleep(SETTLE)
        assert "webmcp-bridge-cell-working" in dom.shown[PATH][ids[1]][1], dom.shown  # both views show the ring
        bring("other", nb_other)
        await asyncio.sleep(SETTLE)
        markers.working[(PATH, ids[1])] = time.monotonic()  # the ring ends while the other notebook is in front
        markers._schedule(0)
        await asyncio.sleep(0.05)
        bring("view-2", nb)
        await asyncio.sleep(SETTLE)
        assert dom.shown[PATH] == {}, dom.shown  # the second view in front again: the ring is gone from its cells
        markers.dispose()

    asyncio.run(scenario())
