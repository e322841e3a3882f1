"""How many times one tool call reaches into the host (a crossing into JS on the live JupyterLab host).

Every method of :class:`webmcp_bridge.lab.notebook.LabNotebook` that the guard calls makes one call of its JS
half (``notebook.js``), so counting the calls the guard makes on the in-memory notebook counts the crossings
of the same call in the page. Only outermost calls are counted (a host method calling another host method is
one crossing). The browser half of this measure is in ``playwright-tests/test_tools.py``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter

import pytest

from helpers import make_bridge
from host_memory import MemoryNotebook
from webmcp_bridge.core.limits import UPDATE_CROSSINGS
from webmcp_bridge.host.protocol import LiveNotebook

PROTOCOL_METHODS = sorted(
    name for name, _ in inspect.getmembers(LiveNotebook, inspect.isfunction) if not name.startswith("_")
)


@pytest.fixture
def counted(monkeypatch) -> Counter:
    """Counts outermost calls of every host-protocol method on any MemoryNotebook, by method name."""
    counts: Counter = Counter()
    depth = [0]
    for name in PROTOCOL_METHODS:
        original = getattr(MemoryNotebook, name, None)
        if original is None or inspect.iscoroutinefunction(original):
            continue

        def wrapper(self, *args, _original=original, _name=name, **kwargs):
            if depth[0] == 0:
                counts[_name] += 1
            depth[0] += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                depth[0] -= 1

        monkeypatch.setattr(MemoryNotebook, name, wrapper)
    return counts


def _update_once(counted: Counter, notebook: str) -> tuple[dict, Counter]:
    b = make_bridge({"demo/nb.ipynb": notebook})
    b.open("demo/nb.ipynb")
    cell = b.ok("jupyter_get_cells", {"notebookPath": "demo/nb.ipynb", "startIndex": 0, "endIndex": 3})["cells"][1]
    counted.clear()
    done = b.ok(
        "jupyter_update_cell",
        {
            "notebookPath": "demo/nb.ipynb",
            "cellId": cell["id"],
            "source": "x = 1\n",
            "expectedSourceHash": cell["sourceHash"],
        },
    )
    return done, Counter(counted)


def test_update_cell_crosses_at_most_the_bound(counted):
    done, counts = _update_once(counted, "notebook-running-code.ipynb")
    assert done["cell"]["id"] and done["notebook"]["revision"] > 0
    print("jupyter_update_cell crossings:", sum(counts.values()), dict(counts))
    assert sum(counts.values()) <= UPDATE_CROSSINGS, dict(counts)
    assert counts["revision"] <= 1, dict(counts)  # the view carries the revision the step read
    assert counts["find_cells"] + counts["find_cell"] <= 1, dict(counts)  # the cell is read once in a direct write


def test_update_cell_with_hidden_and_read_only_cells_crosses_as_often(counted):
    b = make_bridge({"demo/nb.ipynb": "notebook-running-code.ipynb"})
    b.open("demo/nb.ipynb")
    from webmcp_bridge.access.levels import set_cell_level

    raw = b.nb("demo/nb.ipynb")
    ids = [c["id"] for c in raw.nb["cells"]]
    set_cell_level(raw, ids[0], "none")
    set_cell_level(raw, ids[2], "read")
    cell = b.ok("jupyter_get_cells", {"notebookPath": "demo/nb.ipynb", "startIndex": 0, "endIndex": 3})["cells"][0]
    assert cell["id"] == ids[1]
    counted.clear()
    b.ok(
        "jupyter_update_cell",
        {
            "notebookPath": "demo/nb.ipynb",
            "cellId": ids[1],
            "source": "y = 2\n",
            "expectedSourceHash": cell["sourceHash"],
        },
    )
    assert sum(counted.values()) <= UPDATE_CROSSINGS, dict(counted)
    denied = b.fails(
        "jupyter_update_cell",
        {"notebookPath": "demo/nb.ipynb", "cellId": ids[2], "source": "z\n", "expectedSourceHash": "0" * 16},
        "STALE_CELL",
    )
    assert denied["cellId"] == ids[2]


def test_a_level_changed_while_a_call_waits_is_seen_after_the_await():
    """The view of a call step is refreshed after an await: a cell the person hides while a proposal waits is
    refused when the call goes on, exactly as an unknown id."""
    b = make_bridge({"demo/nb.ipynb": "notebook-running-code.ipynb"})
    b.open("demo/nb.ipynb")
    from webmcp_bridge.access.levels import set_cell_level

    raw = b.nb("demo/nb.ipynb")
    cell = b.ok("jupyter_get_cells", {"notebookPath": "demo/nb.ipynb", "startIndex": 1, "endIndex": 2})["cells"][0]
    book = b.reg.context.proposals
    book.mode = "propose"

    async def scenario() -> dict:
        call = asyncio.ensure_future(
            b.reg.call(
                "jupyter_update_cell",
                {
                    "notebookPath": "demo/nb.ipynb",
                    "cellId": cell["id"],
                    "source": "w = 3\n",
                    "expectedSourceHash": cell["sourceHash"],
                },
            )
        )
        while not book.waiting():
            await asyncio.sleep(0)
        set_cell_level(raw, cell["id"], "none")  # the person hides the cell, then accepts
        book.accept(book.waiting()[0].id)
        return await call

    result = asyncio.run(scenario())
    assert result["isError"] is True and result["structuredContent"]["error"] == "CELL_NOT_FOUND", result
    assert raw.nb["cells"][1]["source"] != "w = 3\n"


def test_a_listing_looks_up_only_the_open_notebooks(monkeypatch):
    """A listing says which of its notebooks are open (the page's host reads the open notebooks once for it) and the
    guard looks up (a crossing each in the page) only those; the others' levels come from their saved files. The
    live levels still decide for an open notebook."""
    from host_memory import MemoryWorkspace
    from webmcp_bridge.access.levels import set_notebook_level

    b = make_bridge({f"demo/nb{i}.ipynb": "notebook-running-code.ipynb" for i in range(4)})
    b.open("demo/nb0.ipynb")
    set_notebook_level(b.nb("demo/nb0.ipynb"), "none")  # hidden live, not saved
    lookups: Counter = Counter()
    find_open, open_documents = MemoryWorkspace.find_open, MemoryWorkspace.open_documents

    def counted_find(self, path):
        lookups["find_open"] += 1
        return find_open(self, path)

    def counted_documents(self):
        lookups["open_documents"] += 1
        return open_documents(self)

    monkeypatch.setattr(MemoryWorkspace, "find_open", counted_find)
    monkeypatch.setattr(MemoryWorkspace, "open_documents", counted_documents)
    listed = [e["path"] for e in b.ok("jupyter_list_workspace", {"path": "demo"})["entries"]]
    assert listed == ["demo/nb1.ipynb", "demo/nb2.ipynb", "demo/nb3.ipynb"]
    assert lookups["find_open"] == 1 and lookups["open_documents"] <= 1, dict(lookups)
