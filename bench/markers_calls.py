"""What the cell markers cost the agent's edits, under CPython: 20 ``jupyter_update_cell`` calls of one cell of a
1,000-cell notebook (``bench/notebooks.py``), with the markers (``lab/ui/markers.py``) running over the notebook in
front and the edit journal recording each write as the lab host does (``lab/notebook.py``). Prints the p50 and the
total of the calls, how many looks the markers made and their time in all (ms). Not a test: figures only.

Usage: PYTHONPATH=py_src python bench/markers_calls.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import nbformat

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]  # the in-memory host is the test harness's

import notebooks  # noqa: E402
from host_memory import MemoryWorkspace  # noqa: E402
from webmcp_bridge.changes.undo import EditJournal  # noqa: E402
from webmcp_bridge.core.limits import PANEL_FLUSH_SECONDS  # noqa: E402
from webmcp_bridge.lab.ui.markers import CellMarkers  # noqa: E402
from webmcp_bridge.lab.ui.view import CellInfo  # noqa: E402
from webmcp_bridge.session.bridge import build_bridge  # noqa: E402

PATH = "bench/cells-1000.ipynb"
TARGET = "c0501"  # the cell bench/run.py's update_cell rewrites in the 1,000-cell notebook


class Front:
    """Stand-in for the open notebooks (lab/ui/notebooks.py): one notebook, in front."""

    def __init__(self, nb: Any) -> None:
        self.nb = nb
        self.current_id = "panel-1"
        self.watches = {"panel-1": nb}

    def subscribe(self, listener: Any) -> Any:
        return lambda: None

    def current(self) -> Any:
        return self.nb

    def cells(self, nb: Any) -> dict[str, CellInfo]:
        return {
            c.id: CellInfo(c.index, c.cell_type, c.source[:20], c.output_count)
            for c in nb.read_cells(None, head_bytes=0, max_outputs=0)
        }


class Dom:
    """Stand-in for dom.js: draws nothing."""

    def apply_markers(self, *_: Any) -> int:
        return 0


async def main(calls: int) -> None:
    ws = MemoryWorkspace({PATH: nbformat.writes(notebooks.cells_notebook(1000))})
    bridge = build_bridge(ws)
    nb = await ws.open_notebook(PATH, activate=True)
    journal = EditJournal()
    set_source = nb.set_source

    def recorded(cell_id: str, source: str, expected: str | None = None) -> Any:  # as the lab host records a write
        before = nb.read_cells([nb._index(cell_id)], head_bytes=0, max_outputs=0)[0].source
        raw = set_source(cell_id, source, expected)
        journal.record(PATH, cell_id, before, source)
        return raw

    nb.set_source = recorded
    markers = CellMarkers(Front(nb), bridge.registry, bridge.changes, Dom(), journal)  # type: ignore[arg-type]
    render = markers.render
    look_ms: list[float] = []

    def timed_render() -> None:
        began = time.perf_counter()
        render()
        look_ms.append((time.perf_counter() - began) * 1000)

    markers.render = timed_render  # type: ignore[method-assign]
    markers.start()
    await asyncio.sleep(PANEL_FLUSH_SECONDS + 0.1)
    looks, look_ms[:] = markers.renders, []
    original = nb.read_cells([nb._index(TARGET)], head_bytes=0, max_outputs=0)[0].source
    got = await bridge.registry.call("jupyter_get_cells", {"notebookPath": PATH, "cellIds": [TARGET]})
    digest = got["structuredContent"]["cells"][0]["sourceHash"]
    ms: list[float] = []
    for n in range(calls):
        source = original + "\n# edited by the benchmark" if n % 2 == 0 else original
        began = time.perf_counter()
        result = await bridge.registry.call(
            "jupyter_update_cell",
            {"notebookPath": PATH, "cellId": TARGET, "source": source, "expectedSourceHash": digest},
        )
        ms.append((time.perf_counter() - began) * 1000)
        assert not result.get("isError"), result
        digest = result["structuredContent"]["cell"]["sourceHash"]
        await asyncio.sleep(0.02)  # the agent's next call comes after a turn or two of the loop
    await asyncio.sleep(PANEL_FLUSH_SECONDS + 0.1)
    markers.dispose()
    print(
        f"{calls} update_cell calls: p50 {statistics.median(ms):.2f} ms, total {sum(ms):.1f} ms; "
        f"marker looks {markers.renders - looks}, {sum(look_ms):.1f} ms in all"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    asyncio.run(main(parser.parse_args().calls))
