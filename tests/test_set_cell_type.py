"""jupyter_set_cell_type over the in-memory host: the type changes, the source and id and metadata stay, a code cell's
outputs go (nbformat), the guard's rules (access, locks, hashes, Propose mode) hold, and the change log says "type"."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nbformat

from helpers import Bridge
from webmcp_bridge.access import levels as access
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.tools import access_toolset, batch_toolset

PATH = "types.ipynb"
SOURCE = "# a person's text\r\nprint('kept exactly')  \n\n"  # CRLF is normalized on load: compare with the cell's own


def notebook() -> str:
    def code(cell_id: str, source: str, **meta: Any) -> dict[str, Any]:
        outputs = [
            {"output_type": "stream", "name": "stdout", "text": "kept exactly\n"},
            {"output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "3"}, "metadata": {}},
        ]
        return {
            "cell_type": "code",
            "id": cell_id,
            "metadata": meta,
            "source": source,
            "outputs": outputs,
            "execution_count": 3,
        }

    cells = [
        code("c-run", SOURCE, tags=["keep"]),
        {
            "cell_type": "markdown",
            "id": "m-att",
            "metadata": {},
            "source": "![x](attachment:x.png)",
            "attachments": {"x.png": {"image/png": "iVBORw0KGgo="}},
        },
        {"cell_type": "raw", "id": "r-raw", "metadata": {}, "source": "raw text"},
        code("c-lock", "x = 1", editable=False),
        code("c-free", "y = 2"),
    ]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    return json.dumps(nb)


def bridge() -> Bridge:
    b = Bridge({PATH: notebook()})
    b.reg.add_toolset(batch_toolset())
    b.reg.add_toolset(access_toolset())
    b.open(PATH)
    return b


def raw_cell(b: Bridge, cell_id: str) -> dict[str, Any]:
    return next(c for c in b.nb(PATH).nb["cells"] if c["id"] == cell_id)


def test_a_code_cell_becomes_markdown_keeping_its_text_id_and_metadata_and_losing_its_outputs():
    b = bridge()
    before = raw_cell(b, "c-run")
    source, metadata = before["source"], dict(before["metadata"])
    result = b.ok("jupyter_set_cell_type", {"cellId": "c-run", "cellType": "markdown"})
    assert result["changed"] is True and result["previousType"] == "code" and result["droppedOutputs"] == 2
    assert result["cell"]["id"] == "c-run" and result["cell"]["sourceHash"] == source_hash(source)
    after = raw_cell(b, "c-run")
    assert after["cell_type"] == "markdown" and after["source"] == source and after["metadata"] == metadata
    assert "outputs" not in after and "execution_count" not in after
    nbformat.validate(nbformat.from_dict(b.nb(PATH).nb))  # what a save writes is valid nbformat 4
    read = b.ok("jupyter_get_cells", {"cellIds": ["c-run"]})["cells"][0]
    assert read["type"] == "markdown" and read["sourceHash"] == result["cell"]["sourceHash"]

    back = b.ok("jupyter_set_cell_type", {"cellId": "c-run", "cellType": "code"})
    assert back["previousType"] == "markdown" and "droppedOutputs" not in back
    code = raw_cell(b, "c-run")
    assert code["source"] == source and code["outputs"] == [] and code["execution_count"] is None
    nbformat.validate(nbformat.from_dict(b.nb(PATH).nb))


def test_markdown_keeps_its_attachments_into_raw_and_the_same_type_changes_nothing():
    b = bridge()
    b.ok("jupyter_set_cell_type", {"cellId": "m-att", "cellType": "raw"})
    assert raw_cell(b, "m-att")["attachments"] == {"x.png": {"image/png": "iVBORw0KGgo="}}
    revision = b.nb(PATH).revision()
    same = b.ok("jupyter_set_cell_type", {"cellId": "r-raw", "cellType": "raw"})
    assert same["changed"] is False and same["previousType"] == "raw" and b.nb(PATH).revision() == revision


def test_the_guard_refuses_locked_hidden_read_only_and_stale_cells():
    b = bridge()
    locked = b.fails("jupyter_set_cell_type", {"cellId": "c-lock", "cellType": "markdown"}, "CELL_LOCKED")
    assert locked["lock"] == "editable" and locked["cellId"] == "c-lock"
    b.fails(
        "jupyter_set_cell_type",
        {"cellId": "c-free", "cellType": "raw", "expectedSourceHash": source_hash("something else")},
        "STALE_CELL",
    )
    b.fails("jupyter_set_cell_type", {"cellId": "c-free", "cellType": "python"}, "INVALID_ARGUMENT")
    b.fails("jupyter_set_cell_type", {"cellId": "nope", "cellType": "raw"}, "CELL_NOT_FOUND")
    raw = b.nb(PATH)
    access.set_cell_level(raw, "c-free", "read")
    b.fails("jupyter_set_cell_type", {"cellId": "c-free", "cellType": "raw"}, "CELL_ACCESS_DENIED")
    access.set_cell_level(raw, "c-free", "none")
    b.fails("jupyter_set_cell_type", {"cellId": "c-free", "cellType": "raw"}, "CELL_NOT_FOUND")
    access.set_notebook_level(raw, "read")
    b.fails("jupyter_set_cell_type", {"cellId": "r-raw", "cellType": "code"}, "NOTEBOOK_ACCESS_DENIED")


def test_the_access_block_survives_and_the_change_log_says_type():
    b = bridge()
    raw_cell(b, "c-free")["metadata"]["webmcp_bridge"] = {"access": "write", "threads": []}  # as a save holds it
    block = dict(raw_cell(b, "c-free")["metadata"]["webmcp_bridge"])
    since = b.ok("jupyter_get_changes", {})["seq"]
    b.ok("jupyter_set_cell_type", {"cellId": "c-free", "cellType": "raw"})
    assert raw_cell(b, "c-free")["metadata"]["webmcp_bridge"] == block
    changes = b.ok("jupyter_get_changes", {"since": since})["changes"]
    assert [(c["actor"], c["kind"], c["cellId"]) for c in changes] == [("agent", "type", "c-free")]


def test_propose_mode_holds_the_change_until_the_person_accepts():
    b = bridge()
    book = b.reg.context.proposals
    book.set_mode("propose")

    async def go(accept: bool) -> tuple[dict[str, Any], Any, str]:
        task = asyncio.ensure_future(b.reg.call("jupyter_set_cell_type", {"cellId": "c-free", "cellType": "markdown"}))
        while not book.waiting():
            await asyncio.sleep(0.01)
        proposal = book.waiting()[0]
        during = raw_cell(b, "c-free")["cell_type"]
        (book.accept if accept else book.deny)(proposal.id)
        return await task, proposal, during

    result, proposal, during = asyncio.run(go(accept=False))
    assert result["structuredContent"]["status"] == "denied" and during == "code"
    assert raw_cell(b, "c-free")["cell_type"] == "code"
    assert (proposal.kind, proposal.cell_id) == ("type", "c-free") and "to markdown" in proposal.summary
    assert "1 output" in proposal.summary or "2 output" in proposal.summary
    result, _, during = asyncio.run(go(accept=True))
    assert during == "code" and result["isError"] is False, result["structuredContent"]
    assert raw_cell(b, "c-free")["cell_type"] == "markdown"


def test_a_lock_the_author_set_while_the_proposal_waited_refuses_the_change_after_accept():
    """The person accepts, but the cell was made uneditable meanwhile: CELL_LOCKED, the type unchanged."""
    b = bridge()
    book = b.reg.context.proposals
    book.set_mode("propose")

    async def go() -> dict[str, Any]:
        task = asyncio.ensure_future(b.reg.call("jupyter_set_cell_type", {"cellId": "c-free", "cellType": "markdown"}))
        while not book.waiting():
            await asyncio.sleep(0.01)
        raw_cell(b, "c-free")["metadata"]["editable"] = False  # the author's lock, set while the box waits
        b.nb(PATH)._changed()
        book.accept(book.waiting()[0].id)
        return await task

    result = asyncio.run(go())
    assert result["isError"] is True and result["structuredContent"]["error"] == "CELL_LOCKED"
    assert raw_cell(b, "c-free")["cell_type"] == "code"


def test_the_guard_itself_refuses_a_locked_cell_whatever_a_tool_checked():
    """A tool (a site's, say) that skips its own check still meets the guard's lock check on the write."""
    b = bridge()

    async def write() -> Any:
        nb = await b.reg.context.host.open_notebook(PATH, False)
        return nb.set_cell_type("c-lock", "markdown")

    try:
        asyncio.run(write())
    except Exception as err:  # noqa: BLE001 - the error is what is checked
        assert getattr(err, "code", None) == "CELL_LOCKED"
    else:
        raise AssertionError("the guard let a locked cell change its type")
    assert raw_cell(b, "c-lock")["cell_type"] == "code"
