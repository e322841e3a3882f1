"""A person's keystroke between a tool's check and its write, under CPython: the write carries what the check read
(the protocol's ``expected``), the in-memory host refuses a cell that changed since, as the page does, and the
person's text is kept. The keystroke is made to land exactly there: the host's write method, patched, lets the
person type first (in the page, the bridge's worker crosses twice and the page runs the keystroke in between).
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers import make_bridge
from webmcp_bridge.tools import batch_toolset

PATH = "demo/nb.ipynb"
TYPED = "x = 'the person typed this'\n"


@pytest.fixture
def b():
    bridge = make_bridge({PATH: "notebook-running-code.ipynb"})
    bridge.reg.add_toolset(batch_toolset())
    bridge.open(PATH)
    return bridge


def _first_cell(b) -> dict[str, Any]:
    return b.ok("jupyter_get_cells", {"notebookPath": PATH, "startIndex": 0, "endIndex": 1})["cells"][0]


def _person_types_before(b, method: str, cell_id: str, monkeypatch) -> None:
    """The host's ``method`` runs only after the person set ``cell_id``'s source to TYPED."""
    raw = b.nb(PATH)
    original = getattr(raw, method)

    def person_first(*args: Any, **kwargs: Any) -> Any:
        raw.person_set_source(cell_id, TYPED)
        return original(*args, **kwargs)

    monkeypatch.setattr(raw, method, person_first)


def _refused(b, name: str, arguments: dict[str, Any], cell_id: str) -> dict[str, Any]:
    result = b.call(name, {"notebookPath": PATH, **arguments})
    assert result["isError"] is True, result["structuredContent"]
    error = result["structuredContent"]
    assert error["error"] == "STALE_CELL", error
    assert "the person typed this" in error["currentSourcePreview"]
    assert b.nb(PATH).find_cell(cell_id).source == TYPED  # the person's text is kept
    return error


def test_an_update_is_refused_when_the_person_typed_after_its_check(b, monkeypatch):
    cell = _first_cell(b)
    _person_types_before(b, "set_source", cell["id"], monkeypatch)
    args = {"cellId": cell["id"], "source": "y = 2\n", "expectedSourceHash": cell["sourceHash"]}
    error = _refused(b, "jupyter_update_cell", args, cell["id"])
    assert error["expectedSourceHash"] == cell["sourceHash"] != error["currentSourceHash"]


def test_an_edit_of_the_source_is_refused_the_same_way(b, monkeypatch):
    cell = _first_cell(b)
    first_line = cell["source"].splitlines()[0]
    _person_types_before(b, "set_source", cell["id"], monkeypatch)
    args = {"cellId": cell["id"], "oldText": first_line, "newText": "# replaced"}
    _refused(b, "jupyter_edit_cell_source", args, cell["id"])


def test_a_delete_is_refused_when_the_person_typed_after_its_check(b, monkeypatch):
    cell = _first_cell(b)
    _person_types_before(b, "delete_cell", cell["id"], monkeypatch)
    args = {"cellId": cell["id"], "expectedSourceHash": cell["sourceHash"]}
    _refused(b, "jupyter_delete_cell", args, cell["id"])


def test_a_batch_is_refused_whole_when_the_person_typed_in_one_of_its_cells(b, monkeypatch):
    cells = b.ok("jupyter_get_cells", {"notebookPath": PATH, "startIndex": 0, "endIndex": 2})["cells"]
    first, second = cells
    _person_types_before(b, "apply_edits", second["id"], monkeypatch)
    edits = [
        {"op": "update", "cellId": first["id"], "source": "a = 1\n", "expectedSourceHash": first["sourceHash"]},
        {"op": "delete", "cellId": second["id"], "expectedSourceHash": second["sourceHash"]},
    ]
    _refused(b, "jupyter_apply_edits", {"edits": edits}, second["id"])
    assert b.nb(PATH).find_cell(first["id"]).source == first["source"]  # all or nothing: the first is unchanged


def test_without_a_keystroke_in_between_the_same_writes_land(b):
    cell = _first_cell(b)
    args = {"notebookPath": PATH, "cellId": cell["id"], "source": "y = 2\n", "expectedSourceHash": cell["sourceHash"]}
    assert b.ok("jupyter_update_cell", args)["cell"]["sourceHash"] != cell["sourceHash"]
    assert b.nb(PATH).find_cell(cell["id"]).source == "y = 2\n"
