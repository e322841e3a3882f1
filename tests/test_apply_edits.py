"""jupyter_apply_edits through the registry, over the in-memory host and real corpus notebooks.

A batch is checked up front and applied all or nothing: every refused batch goes through ``Bridge.fails``,
which asserts that no open notebook's JSON, no revision and no workspace file changed.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from helpers import Bridge, make_bridge
from webmcp_bridge.access.levels import set_cell_level, set_notebook_level
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import batch_toolset

EULER = "demo/euler.ipynb"
RUN = "demo/running.ipynb"
E1, E2, E3 = "cell-0091", "cell-0092", "cell-0093"  # the code cells of Problems 1, 2, 3
H1, H2, H3 = "hdr-0000", "hdr-0001", "hdr-0002"  # their markdown headers (E1 follows H1, ...)


def batch_bridge(limits: Limits = Limits()) -> Bridge:
    b = make_bridge({EULER: "pytudes-euler.ipynb", RUN: "notebook-running-code.ipynb"}, limits=limits)
    b.reg.add_toolset(batch_toolset())
    b.open(RUN)
    b.open(EULER)
    return b


@pytest.fixture
def b() -> Bridge:
    return batch_bridge()


def cells(b: Bridge, path: str = EULER) -> dict[str, dict]:
    return {
        c["id"]: c for c in b.ok("jupyter_get_cells", {"notebookPath": path, "startIndex": 0, "endIndex": 200})["cells"]
    }


def order(b: Bridge, path: str = EULER) -> list[str]:
    return [c["id"] for c in b.nb(path).nb["cells"]]


def source(b: Bridge, cell_id: str, path: str = EULER) -> str:
    return next(c["source"] for c in b.nb(path).nb["cells"] if c["id"] == cell_id)


def apply(b: Bridge, edits: list[dict], **kw) -> dict:
    return b.ok("jupyter_apply_edits", {"edits": edits, **kw})


def test_definition_is_a_plain_union_of_five_ops():
    definition = next(d for d in build_bridge(None).registry.definitions() if d["name"] == "jupyter_apply_edits")  # type: ignore[arg-type]
    assert definition["annotations"] == {
        "readOnlyHint": False,
        "untrustedContentHint": True,
        "consequentialHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    schema = definition["inputSchema"]
    text = json.dumps(schema)
    assert "$ref" not in text and "discriminator" not in text and "oneOf" not in text
    edits = schema["properties"]["edits"]
    assert schema["required"] == ["edits"] and edits["minItems"] == 1 and edits["maxItems"] == 50
    variants = {v["properties"]["op"]["const"]: v for v in edits["items"]["anyOf"]}
    assert set(variants) == {"insert", "update", "edit", "delete", "move"}
    assert all(v["additionalProperties"] is False for v in variants.values())
    assert set(variants["update"]["required"]) == {"op", "cellId", "source", "expectedSourceHash"}
    assert set(variants["edit"]["required"]) == {"op", "cellId", "oldText", "newText"}
    assert set(variants["delete"]["required"]) == {"op", "cellId", "expectedSourceHash"}
    assert set(variants["move"]["required"]) == {"op", "cellId", "referenceCellId"}
    assert variants["insert"]["required"] == ["op"]


def test_a_mixed_batch_applies_in_order_as_one_revision(b):
    before = cells(b)
    ids = order(b)
    revision = b.nb(EULER).revision()
    result = apply(
        b,
        [
            {
                "op": "insert",
                "referenceCellId": H1,
                "position": "above",
                "cellType": "markdown",
                "source": "## Added by the agent",
            },
            {
                "op": "update",
                "cellId": E1,
                "source": "def euler_1(N=1000):\n    return sum(i for i in range(N) if i % 3 == 0 or i % 5 == "
                "0)\n\nrun(euler_1)",
                "expectedSourceHash": before[E1]["sourceHash"],
            },
            {
                "op": "edit",
                "cellId": E2,
                "oldText": "x%2 == 0",
                "newText": "x % 2 == 0",
                "expectedSourceHash": before[E2]["sourceHash"],
            },
            {"op": "move", "cellId": E3, "referenceCellId": H1, "position": "above"},
            {"op": "delete", "cellId": H3, "expectedSourceHash": before[H3]["sourceHash"]},
            {"op": "insert", "cellType": "code", "source": "print('at the end')"},
            {"op": "insert", "position": "above", "cellType": "raw", "source": "at the start"},
        ],
    )
    new_md, new_end, new_start = (
        result["results"][0]["cell"]["id"],
        result["results"][5]["cell"]["id"],
        result["results"][6]["cell"]["id"],
    )
    expected = [new_start] + [i for i in ids if i not in (E3, H3)]
    expected.insert(expected.index(H1), E3)
    expected.insert(expected.index(E3), new_md)
    expected.append(new_end)
    assert order(b) == expected
    assert b.nb(EULER).revision() == revision + 1  # one change of the notebook for the whole batch
    assert result["notebook"] == {"path": EULER, "revision": revision + 1, "cellCount": len(expected)}
    index = {cell_id: i for i, cell_id in enumerate(expected)}
    assert [r["editIndex"] for r in result["results"]] == list(range(7))
    assert [r["op"] for r in result["results"]] == ["insert", "update", "edit", "move", "delete", "insert", "insert"]
    for r in result["results"]:
        if r["op"] == "delete":
            assert r["deleted"] == {"id": H3}
        else:  # every cell as the whole batch left it
            cell = r["cell"]
            assert cell["index"] == index[cell["id"]] and cell["sourceHash"] == source_hash(source(b, cell["id"]))
    assert "x % 2 == 0" in source(b, E2) and source(b, new_md) == "## Added by the agent"
    assert next(c for c in b.nb(EULER).nb["cells"] if c["id"] == new_start)["cell_type"] == "raw"
    moved = next(c for c in b.nb(EULER).nb["cells"] if c["id"] == E3)
    assert moved["source"] == before[E3]["source"] and moved["outputs"]  # a move keeps the cell whole
    saved = b.ok("jupyter_save_notebook", {"notebookPath": EULER})
    assert saved["saved"] is True
    nbformat.validate(nbformat.reads(b.ws.files[EULER], as_version=4))


def test_the_agents_changes_are_recorded_as_the_agents(b):
    before = cells(b)
    apply(
        b,
        [
            {"op": "insert", "source": "x = 1"},
            {"op": "edit", "cellId": E1, "oldText": "N=1000", "newText": "N=10"},
            {"op": "delete", "cellId": H2, "expectedSourceHash": before[H2]["sourceHash"]},
        ],
    )
    cells(b)  # a read through the guard collects the notebook's changes
    entries = [e for e in b.reg.context.changes.entries(EULER)]
    assert {(e.kind, e.cell_id) for e in entries} >= {("edit", E1), ("delete", H2)}
    assert {e.actor for e in entries} == {"agent"}


def test_a_bad_hash_in_the_middle_changes_nothing(b):
    before = cells(b)
    refused = b.fails(
        "jupyter_apply_edits",
        {
            "edits": [
                {"op": "insert", "referenceCellId": H1, "source": "# would be new"},
                {"op": "update", "cellId": E1, "source": "x = 1", "expectedSourceHash": before[E1]["sourceHash"]},
                {
                    "op": "delete",
                    "cellId": E2,
                    "expectedSourceHash": before[E3]["sourceHash"],
                },  # the hash of another cell
                {"op": "move", "cellId": E3, "referenceCellId": H1},
            ]
        },
        "STALE_CELL",
    )
    assert refused["editIndex"] == 2 and refused["message"].startswith("edit 2: ")
    assert refused["cellId"] == E2 and refused["currentSourceHash"] == before[E2]["sourceHash"]
    assert refused["currentSourcePreview"].startswith("def euler_2")


def test_a_persons_edit_after_the_read_fails_the_batch_and_is_kept(b):
    before = cells(b)
    b.nb(EULER).person_set_source(E1, "# the person's version")
    refused = b.fails(
        "jupyter_apply_edits",
        {
            "edits": [
                {"op": "update", "cellId": E2, "source": "fine", "expectedSourceHash": before[E2]["sourceHash"]},
                {"op": "update", "cellId": E1, "source": "agent", "expectedSourceHash": before[E1]["sourceHash"]},
            ]
        },
        "STALE_CELL",
    )
    assert refused["editIndex"] == 1 and "the person's version" in refused["currentSourcePreview"]
    assert source(b, E1) == "# the person's version"


@pytest.mark.parametrize(
    "edits,code,index,words",
    [
        (
            [{"op": "insert", "source": "x"}, {"op": "move", "cellId": "no-such-cell", "referenceCellId": H1}],
            "CELL_NOT_FOUND",
            1,
            "No cell with id",
        ),
        ([{"op": "insert", "referenceCellId": "missing", "source": "x"}], "CELL_NOT_FOUND", 0, "No cell with id"),
        ([{"op": "edit", "cellId": E2, "oldText": "a", "newText": "b"}], "INVALID_ARGUMENT", 0, "occurs"),
        (
            [{"op": "edit", "cellId": E1, "oldText": "not in the cell", "newText": "b"}],
            "INVALID_ARGUMENT",
            0,
            "does not occur",
        ),
        (
            [{"op": "insert", "source": "x"}, {"op": "move", "cellId": E1, "referenceCellId": E1}],
            "INVALID_ARGUMENT",
            1,
            "itself",
        ),
        ([{"op": "insert", "source": "x"}, {"op": "insert", "source": "é" * 140_000}], "TOO_LARGE", 1, "source is"),
    ],
)
def test_a_failing_edit_is_named_and_nothing_changes(b, edits, code, index, words):
    refused = b.fails("jupyter_apply_edits", {"edits": edits}, code)
    assert (
        refused["editIndex"] == index
        and refused["message"].startswith(f"edit {index}: ")
        and words in refused["message"]
    )


def test_a_cell_deleted_earlier_in_the_batch_cannot_be_named_again(b):
    before = cells(b)
    delete = {"op": "delete", "cellId": E1, "expectedSourceHash": before[E1]["sourceHash"]}
    for later in [
        {"op": "edit", "cellId": E1, "oldText": "1000", "newText": "10"},
        {"op": "insert", "referenceCellId": E1, "source": "x"},
        {"op": "move", "cellId": E2, "referenceCellId": E1},
        delete,
    ]:
        refused = b.fails("jupyter_apply_edits", {"edits": [delete, later]}, "INVALID_ARGUMENT")
        assert refused["editIndex"] == 1 and "deleted by edit 0" in refused["message"]


def test_ops_see_the_earlier_ops_and_hashes_are_the_ones_read_before_the_batch(b):
    before = cells(b)
    result = apply(
        b,
        [
            {
                "op": "edit",
                "cellId": E1,
                "oldText": "N=1000",
                "newText": "N=2000",
                "expectedSourceHash": before[E1]["sourceHash"],
            },
            {
                "op": "edit",
                "cellId": E1,
                "oldText": "N=2000",
                "newText": "N=3000",
            },  # finds the text the first edit wrote
            {"op": "update", "cellId": E2, "source": "y = 2\nz = 3", "expectedSourceHash": before[E2]["sourceHash"]},
            {
                "op": "edit",
                "cellId": E2,
                "oldText": "z = 3",
                "newText": "z = 4",
                "expectedSourceHash": before[E2]["sourceHash"],
            },
            {"op": "move", "cellId": E1, "referenceCellId": E3},
            {"op": "insert", "referenceCellId": E1, "position": "below", "source": "# right after E1, where it is now"},
        ],
    )
    assert "N=3000" in source(b, E1) and source(b, E2) == "y = 2\nz = 4"
    ids = order(b)
    assert ids.index(E1) == ids.index(E3) + 1 and ids[ids.index(E1) + 1] == result["results"][5]["cell"]["id"]
    assert (
        result["results"][0]["cell"] == result["results"][1]["cell"] == result["results"][4]["cell"]
    )  # E1 as it ended


def test_an_edit_then_delete_of_one_cell_reports_both(b):
    before = cells(b)
    result = apply(
        b,
        [
            {"op": "update", "cellId": E1, "source": "gone soon", "expectedSourceHash": before[E1]["sourceHash"]},
            {"op": "delete", "cellId": E1, "expectedSourceHash": before[E1]["sourceHash"]},
        ],
    )
    assert result["results"] == [
        {"editIndex": 0, "op": "update", "deleted": {"id": E1}},
        {"editIndex": 1, "op": "delete", "deleted": {"id": E1}},
    ]
    assert E1 not in order(b)


def test_batches_are_bounded_and_validated_by_the_schema(b):
    b.fails("jupyter_apply_edits", {"edits": []}, "INVALID_ARGUMENT")
    b.fails("jupyter_apply_edits", {"edits": [{"op": "insert", "source": "x"}] * 51}, "INVALID_ARGUMENT")
    b.fails("jupyter_apply_edits", {"edits": [{"op": "rename", "cellId": E1}]}, "INVALID_ARGUMENT")
    b.fails("jupyter_apply_edits", {"edits": [{"op": "insert", "source": "x", "extra": 1}]}, "INVALID_ARGUMENT")
    b.fails(
        "jupyter_apply_edits", {"edits": [{"op": "delete", "cellId": E1}]}, "INVALID_ARGUMENT"
    )  # the hash is required
    b.fails(
        "jupyter_apply_edits",
        {"edits": [{"op": "update", "cell_id": E1, "source": "x", "expectedSourceHash": "0" * 16}]},
        "INVALID_ARGUMENT",
    )
    b.fails("jupyter_apply_edits", {"edits": [{"op": "insert", "position": "beside"}]}, "INVALID_ARGUMENT")
    small = batch_bridge(Limits(batch_edits=3))
    refused = small.fails(
        "jupyter_apply_edits", {"edits": [{"op": "insert", "source": str(i)} for i in range(4)]}, "TOO_LARGE"
    )
    assert refused["maxCount"] == 3


def test_another_notebook_by_path_and_no_notebook(b):
    first = cells(b, RUN)
    target = next(c for c in first.values() if c["type"] == "code")
    apply(
        b, [{"op": "edit", "cellId": target["id"], "oldText": target["source"][:5], "newText": "#"}], notebookPath=RUN
    )
    assert source(b, target["id"], RUN).startswith("#")
    b.fails(
        "jupyter_apply_edits", {"edits": [{"op": "insert"}], "notebookPath": "demo/missing.ipynb"}, "NOTEBOOK_NOT_FOUND"
    )
    empty = make_bridge({EULER: "pytudes-euler.ipynb"})
    empty.reg.add_toolset(batch_toolset())
    empty.fails("jupyter_apply_edits", {"edits": [{"op": "insert"}]}, "NO_ACTIVE_NOTEBOOK")


def test_access_levels_apply_to_every_edit_of_the_batch(b):
    raw = b.nb(EULER)
    set_cell_level(raw, E1, "read")
    set_cell_level(raw, E2, "none")
    before = cells(b)
    assert E2 not in before
    denied = b.fails(
        "jupyter_apply_edits",
        {
            "edits": [
                {"op": "insert", "source": "x"},
                {"op": "edit", "cellId": E1, "oldText": "N=1000", "newText": "N=1"},
            ]
        },
        "CELL_ACCESS_DENIED",
    )
    assert denied["editIndex"] == 1
    hidden = b.fails(
        "jupyter_apply_edits",
        {"edits": [{"op": "insert", "source": "x"}, {"op": "move", "cellId": E2, "referenceCellId": H1}]},
        "CELL_NOT_FOUND",
    )
    unknown = b.fails(
        "jupyter_apply_edits",
        {"edits": [{"op": "insert", "source": "x"}, {"op": "move", "cellId": "cell-9999", "referenceCellId": H1}]},
        "CELL_NOT_FOUND",
    )
    assert (
        hidden["message"].replace(E2, "ID") == unknown["message"].replace("cell-9999", "ID")
        and hidden["editIndex"] == unknown["editIndex"] == 1
    )
    b.fails(
        "jupyter_apply_edits", {"edits": [{"op": "insert", "referenceCellId": E2, "source": "x"}]}, "CELL_NOT_FOUND"
    )
    # next to a read-only cell is fine: it is not changed
    result = apply(
        b,
        [
            {"op": "insert", "referenceCellId": E1, "source": "# below the read-only cell"},
            {"op": "move", "cellId": E3, "referenceCellId": E1, "position": "above"},
        ],
    )
    ids = order(b)
    assert ids[ids.index(E1) + 1] == result["results"][0]["cell"]["id"] and ids[ids.index(E1) - 1] == E3
    set_notebook_level(raw, "read")
    b.fails("jupyter_apply_edits", {"edits": [{"op": "insert", "source": "x"}]}, "NOTEBOOK_ACCESS_DENIED")


def test_a_big_source_the_batch_wrote_can_be_replaced_without_reading_it_back(b):
    """The agent knows every byte of a source its batch wrote whole; an edit of a cut read stays cut."""
    table = "PRIMES = [\n" + "".join(f"    ({i}, {i * i}, {i * i * i}),  # row {i}\n" for i in range(900)) + "]\n"
    assert len(table) > 16 * 1024  # read back, it would come in pages
    before = cells(b)
    done = apply(
        b,
        [
            {"op": "update", "cellId": E1, "source": table, "expectedSourceHash": before[E1]["sourceHash"]},
            {"op": "insert", "referenceCellId": E2, "position": "below", "source": table},
        ],
    )["results"]
    for written in (done[0]["cell"], done[1]["cell"]):
        b.ok(
            "jupyter_update_cell",
            {
                "cellId": written["id"],
                "source": table + "N = len(PRIMES)\n",
                "expectedSourceHash": written["sourceHash"],
            },
        )
    # the person's big cell, read only in part: an edit of it leaves a source the agent has not read whole
    b.nb(EULER).person_set_source(E2, table)
    page = b.ok("jupyter_get_cells", {"notebookPath": EULER, "cellIds": [E2]})["cells"][0]
    assert page["sourceTruncated"] is True
    edited = apply(b, [{"op": "edit", "cellId": E2, "oldText": "# row 0\n", "newText": "# first row\n"}])
    b.fails(
        "jupyter_update_cell",
        {"cellId": E2, "source": page["source"], "expectedSourceHash": edited["results"][0]["cell"]["sourceHash"]},
        "SOURCE_NOT_FULLY_READ",
    )
