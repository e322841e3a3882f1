"""jupyter_get_changes and the change log (webmcp_bridge.changes.log): what an agent following the person
is told. ``missed`` means entries were dropped from the bounded log, nothing else: changes merged into one
entry (keystrokes coalescing) are all still there."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from helpers import check_envelope, corpus_text
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.limits import CHANGE_LOG_SIZE, DEFAULT_LIMITS
from webmcp_bridge.host.memory import MemoryWorkspace
from webmcp_bridge.host.protocol import CellChange
from webmcp_bridge.session.bridge import build_bridge


class Agent:
    """Every toolset over a MemoryWorkspace of one real notebook, opened; ``ok`` checks the envelope."""

    def __init__(self, name: str) -> None:
        self.ws = MemoryWorkspace({name: corpus_text(name)})
        self.reg = build_bridge(self.ws).registry
        self.ok("jupyter_open_notebook", {"path": name})

    def ok(self, tool: str, arguments: Any = None) -> dict[str, Any]:
        result = asyncio.run(self.reg.call(tool, arguments))
        check_envelope(result, DEFAULT_LIMITS)
        assert result["isError"] is False, result["structuredContent"]
        return result["structuredContent"]


def test_coalesced_keystrokes_are_not_reported_as_missed():
    b = Agent("jupyterlite-demo-python.ipynb")
    cell = b.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    nb = b.ws.current_notebook()
    for typed in ("a", "ab", "abc"):  # three keystrokes, one coalesced entry
        nb.person_set_source(cell["id"], cell["source"] + typed)
    changes = b.ok("jupyter_get_changes", {"since": 0})
    assert [(c["actor"], c["kind"], c["cellId"], c["count"]) for c in changes["changes"]] == [("person", "edit", cell["id"], 3)]
    assert "missed" not in changes, changes
    later = b.ok("jupyter_get_changes", {"since": changes["seq"]})
    assert later["changes"] == [] and "missed" not in later


def test_missed_is_reported_once_entries_were_dropped():
    log = ChangeLog(max_entries=3)
    now = time.time()
    log.ingest("n.ipynb", [CellChange("person", "edit", f"c{i}", now) for i in range(5)])  # five cells: two dropped
    assert [e.cell_id for e in log.entries()] == ["c2", "c3", "c4"]
    assert log.missed_since(0) and log.missed_since(1)  # c0 (seq 1) and c1 (seq 2) are gone
    assert not log.missed_since(2) and not log.missed_since(5)
    b = Agent("jupyterlite-empty.ipynb")
    assert "missed" not in b.ok("jupyter_get_changes", {"since": 0})  # nothing ever dropped


def test_changes_the_host_dropped_before_the_log_saw_them_are_reported_missed():
    """A person's replace-all over a 223-cell notebook changes every cell three times before the bridge reads the
    notebook again: 669 changes, more than the host buffers (CHANGE_LOG_SIZE). The oldest are dropped before they
    reach the log, and an agent that read the log before is told it missed some; one that read after is not, and
    a smaller burst misses nothing."""
    b = Agent("pytudes-euler.ipynb")
    nb = b.ws.current_notebook()
    cells = b.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 200, "includeSource": False})["cells"]
    cells += b.ok("jupyter_get_cells", {"startIndex": 200, "endIndex": 300, "includeSource": False})["cells"]
    assert len(cells) == 223
    before = b.ok("jupyter_get_changes", {"since": 0})
    sources = {c["id"]: c["id"] for c in cells}
    for round_ in range(3):
        for cell in cells:
            sources[cell["id"]] += f" r{round_}"
            nb.person_set_source(cell["id"], sources[cell["id"]])
    assert 3 * len(cells) > CHANGE_LOG_SIZE
    after = b.ok("jupyter_get_changes", {"since": before["seq"], "limit": 200})
    assert after.get("missed") is True, {k: v for k, v in after.items() if k != "changes"}
    # what was kept are the newest changes: the last round's edits of the last cells
    assert after["changes"][-1]["cellId"] == cells[-1]["id"] and after["changes"][-1]["actor"] == "person"
    assert "missed" not in b.ok("jupyter_get_changes", {"since": after["seq"]})
    # a burst the host can hold (two rounds over 200 cells: 400 changes) is not a miss
    for round_ in range(2):
        for cell in cells[:200]:
            sources[cell["id"]] += f" s{round_}"
            nb.person_set_source(cell["id"], sources[cell["id"]])
    held = b.ok("jupyter_get_changes", {"since": after["seq"], "limit": 200})
    assert "missed" not in held and held["changes"], {k: v for k, v in held.items() if k != "changes"}
