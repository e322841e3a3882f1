"""Cells the notebook's author locked (standard cell metadata ``editable: false`` / ``deletable: false``): the agent
cannot change a locked source or delete an undeletable cell through any tool, and jupyter_get_cell_access says so."""

from __future__ import annotations

import json

import pytest

from helpers import Bridge, corpus_json
from webmcp_bridge.tools import access_toolset, batch_toolset

PATH = "euler.ipynb"


@pytest.fixture
def locked() -> tuple[Bridge, str, str, str]:
    """pytudes-euler with its first code cell made ``editable: false`` and its second ``deletable: false``, as an
    author would save them; returns the bridge and the two ids plus a free code cell's id."""
    nb = corpus_json("pytudes-euler.ipynb")
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    code[0]["metadata"]["editable"] = False
    code[1]["metadata"]["deletable"] = False
    b = Bridge({PATH: json.dumps(nb)})
    b.reg.add_toolset(batch_toolset())
    b.reg.add_toolset(access_toolset())
    b.open(PATH)
    cells = [c for c in b.ok("jupyter_get_cells", {"endIndex": 40})["cells"] if c["type"] == "code"]
    return b, cells[0]["id"], cells[1]["id"], cells[2]["id"]


def snap(b: Bridge, cell_id: str) -> dict:
    return b.ok("jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]


def test_an_uneditable_cell_keeps_its_source(locked):
    b, frozen, _, _ = locked
    s = snap(b, frozen)
    err = b.fails(
        "jupyter_update_cell",
        {"cellId": frozen, "source": "x = 1", "expectedSourceHash": s["sourceHash"]},
        "CELL_LOCKED",
    )
    assert err["lock"] == "editable" and err["cellId"] == frozen
    b.fails("jupyter_edit_cell_source", {"cellId": frozen, "oldText": s["source"][:5], "newText": "zzz"}, "CELL_LOCKED")
    err = b.fails(
        "jupyter_apply_edits",
        {
            "edits": [
                {"op": "insert", "source": "ok"},
                {"op": "edit", "cellId": frozen, "oldText": s["source"][:5], "newText": "z"},
            ]
        },
        "CELL_LOCKED",
    )
    assert err["editIndex"] == 1
    b.fails(
        "jupyter_apply_edits",
        {"edits": [{"op": "update", "cellId": frozen, "source": "z", "expectedSourceHash": s["sourceHash"]}]},
        "CELL_LOCKED",
    )
    # still deletable and movable: only its source is locked (as in JupyterLab)
    b.ok("jupyter_delete_cell", {"cellId": frozen, "expectedSourceHash": s["sourceHash"]})


def test_an_undeletable_cell_stays(locked):
    b, _, kept, free = locked
    s = snap(b, kept)
    err = b.fails("jupyter_delete_cell", {"cellId": kept, "expectedSourceHash": s["sourceHash"]}, "CELL_LOCKED")
    assert err["lock"] == "deletable" and "deletable: false" in err["message"]
    f = snap(b, free)
    err = b.fails(
        "jupyter_apply_edits",
        {
            "edits": [
                {"op": "delete", "cellId": free, "expectedSourceHash": f["sourceHash"]},
                {"op": "delete", "cellId": kept, "expectedSourceHash": s["sourceHash"]},
            ]
        },
        "CELL_LOCKED",
    )
    assert err["editIndex"] == 1
    b.ok(
        "jupyter_update_cell",
        {"cellId": kept, "source": s["source"] + "\n# more", "expectedSourceHash": s["sourceHash"]},
    )  # editable


def test_cell_access_shows_the_locks(locked):
    b, frozen, kept, free = locked
    rows = {r["id"]: r for r in b.ok("jupyter_get_cell_access", {"cellIds": [frozen, kept, free]})["cells"]}
    assert (rows[frozen]["editable"], rows[frozen]["deletable"]) == (False, True)
    assert (rows[kept]["editable"], rows[kept]["deletable"]) == (True, False)
    assert (rows[free]["editable"], rows[free]["deletable"]) == (True, True)
    assert rows[frozen]["access"] == "write"  # the level is the person's; the lock is the author's


def test_a_site_authors_tool_goes_through_the_guard_too(locked):
    """The guard itself refuses, whatever tool calls it (here straight through the guarded notebook)."""
    import asyncio

    b, frozen, kept, _ = locked
    from webmcp_bridge.core.errors import ToolError

    nb = asyncio.run(b.reg.context.notebook(PATH))
    with pytest.raises(ToolError) as caught:
        nb.set_source(frozen, "overwritten")
    assert caught.value.code.value == "CELL_LOCKED"
    with pytest.raises(ToolError) as caught:
        nb.delete_cell(kept)
    assert caught.value.code.value == "CELL_LOCKED"
