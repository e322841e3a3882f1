"""Under CPython: no whole-file overwrite from a cut read, jupyter_edit_file and
append, Propose mode holding every change to the workspace, and the small leaks (a hidden ``X.IPYNB``, the
comment dialog's title)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from helpers import Bridge, corpus_json
from host_memory import MemoryWorkspace
from webmcp_bridge.access import guard as access
from webmcp_bridge.calls.registry import Annotations, Tool, ToolInput, Toolset
from webmcp_bridge.contrib.api import Contribution
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.core.source_reads import SourceReads
from webmcp_bridge.lab.ui.proposal_view import proposal_box, workspace_corner
from webmcp_bridge.lab.ui.view import comment_title
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import notebooks_toolset

BIG = "big/log.txt"
# about 1.3 MB of text: 80 pages of 16 KiB, with a few multi-byte characters
BIG_TEXT = "".join(f"{i:07d} entry é✓ {'x' * 40}\n" for i in range(24_000))


def bridge(files: dict[str, str] | None = None) -> Bridge:
    b = Bridge(
        {
            "top.ipynb": json.dumps(corpus_json("jupyterlite-empty.ipynb")),
            BIG: BIG_TEXT,
            "small.txt": "one\ntwo\n",
            **(files or {}),
        }
    )
    return b


def read_all(b: Bridge, path: str) -> tuple[str, str]:
    parts, offset, digest = [], 0, ""
    while offset is not None:
        page = b.ok("jupyter_read_file", {"path": path, "offset": offset})
        parts.append(page["text"])
        offset, digest = page["nextOffset"], page["hash"]
    return "".join(parts), digest


# -- item 3: the cells' rule for files ------------------------------------------------------------------------
def test_source_reads_lists_the_unread_ranges() -> None:
    reads = SourceReads()
    assert reads.unread_ranges("f", "", "h", 100) == [(0, 100)]
    reads.record("f", "", "h", 10, 20)
    reads.record("f", "", "h", 50, 60)
    assert reads.unread_ranges("f", "", "h", 100) == [(0, 10), (20, 50), (60, 100)]
    assert reads.unread_ranges("f", "", "h", 100, limit=2) == [(0, 10), (20, 50)]
    reads.record("f", "", "h", 0, 100)
    assert reads.unread_ranges("f", "", "h", 100) == [] and reads.unread_ranges("f", "", "h", 0) == []
    reads.mark_known("g", "", "h")
    assert reads.unread_ranges("g", "", "h", 5) == []


def test_an_overwrite_built_from_a_cut_read_is_refused_and_the_file_stays() -> None:
    b = bridge()
    first = b.ok("jupyter_read_file", {"path": BIG})
    assert first["truncated"] is True and first["totalBytes"] == len(BIG_TEXT.encode())
    refused = b.fails(
        "jupyter_write_file",
        {"path": BIG, "content": first["text"] + "one more line\n", "overwrite": True, "expectedHash": first["hash"]},
        "FILE_NOT_FULLY_READ",
    )
    assert refused["nextOffset"] == first["nextOffset"] and refused["totalBytes"] == first["totalBytes"]
    assert refused["unreadRanges"][0] == [first["nextOffset"], first["totalBytes"]]
    assert "jupyter_edit_file" in refused["message"] and "append" in refused["message"]
    assert b.ws.files[BIG] == BIG_TEXT
    # a page in the middle only: both gaps are named
    b.ok("jupyter_read_file", {"path": BIG, "offset": 100_000})
    gaps = b.fails(
        "jupyter_write_file",
        {"path": BIG, "content": "x", "overwrite": True, "expectedHash": first["hash"]},
        "FILE_NOT_FULLY_READ",
    )["unreadRanges"]
    assert len(gaps) == 2 and gaps[0][0] == first["nextOffset"] and gaps[1][1] == first["totalBytes"]


def test_every_page_read_allows_the_overwrite_and_the_agents_own_version_is_known() -> None:
    b = bridge()
    text, digest = read_all(b, BIG)
    assert text == BIG_TEXT
    short = "short now\n"
    written = b.ok("jupyter_write_file", {"path": BIG, "content": short, "overwrite": True, "expectedHash": digest})
    assert b.ws.files[BIG] == short and written["totalBytes"] == len(short)
    # the agent wrote this version: it may replace it without reading it again
    b.ok("jupyter_write_file", {"path": BIG, "content": "again\n", "overwrite": True, "expectedHash": written["hash"]})
    assert b.ws.files[BIG] == "again\n"


def test_a_persons_change_needs_a_new_full_read() -> None:
    b = bridge()
    _, digest = read_all(b, BIG)
    changed = BIG_TEXT + "the person's line\n"
    b.ws.files[BIG] = changed
    stale = b.fails(
        "jupyter_write_file", {"path": BIG, "content": "x", "overwrite": True, "expectedHash": digest}, "STALE_FILE"
    )
    first = b.ok("jupyter_read_file", {"path": BIG})
    assert stale["currentHash"] == first["hash"]
    b.fails(
        "jupyter_write_file",
        {"path": BIG, "content": "x", "overwrite": True, "expectedHash": first["hash"]},
        "FILE_NOT_FULLY_READ",
    )
    assert b.ws.files[BIG] == changed


def test_edit_file_changes_a_big_file_without_reading_it_whole() -> None:
    b = bridge()
    first = b.ok("jupyter_read_file", {"path": BIG})
    edited = b.ok(
        "jupyter_edit_file",
        {"path": BIG, "oldText": "0012345 entry", "newText": "0012345 EDITED", "expectedHash": first["hash"]},
    )
    expected = BIG_TEXT.replace("0012345 entry", "0012345 EDITED")
    assert b.ws.files[BIG] == expected and edited == {
        "path": BIG,
        "replacements": 1,
        "totalBytes": len(expected.encode()),
        "hash": source_hash(expected),
    }
    # not read whole: an overwrite of the edited version is still refused
    b.fails(
        "jupyter_write_file",
        {"path": BIG, "content": "x", "overwrite": True, "expectedHash": edited["hash"]},
        "FILE_NOT_FULLY_READ",
    )
    many = b.fails(
        "jupyter_edit_file",
        {"path": BIG, "oldText": " entry é✓", "newText": "!", "expectedHash": edited["hash"]},
        "INVALID_ARGUMENT",
    )
    assert many["occurrences"] == 23_999
    assert (
        b.fails(
            "jupyter_edit_file",
            {"path": BIG, "oldText": "not there", "newText": "!", "expectedHash": edited["hash"]},
            "INVALID_ARGUMENT",
        )["occurrences"]
        == 0
    )
    b.fails(
        "jupyter_edit_file",
        {"path": BIG, "oldText": "0012346", "newText": "!", "expectedHash": first["hash"]},
        "STALE_FILE",
    )
    b.fails(
        "jupyter_edit_file",
        {"path": "top.ipynb", "oldText": "a", "newText": "b", "expectedHash": "0" * 16},
        "INVALID_PATH",
    )
    b.fails(
        "jupyter_edit_file",
        {"path": "TOP.IPYNB", "oldText": "a", "newText": "b", "expectedHash": "0" * 16},
        "INVALID_PATH",
    )
    b.fails(
        "jupyter_edit_file",
        {"path": "missing.txt", "oldText": "a", "newText": "b", "expectedHash": "0" * 16},
        "PATH_NOT_FOUND",
    )
    small = b.ok("jupyter_read_file", {"path": "small.txt"})
    both = b.ok(
        "jupyter_edit_file",
        {"path": "small.txt", "oldText": "o", "newText": "0", "expectedHash": small["hash"], "replaceAll": True},
    )
    assert b.ws.files["small.txt"] == "0ne\ntw0\n" and both["replacements"] == 2
    # it had read small.txt whole and chose the edit: it knows the new version
    b.ok("jupyter_write_file", {"path": "small.txt", "content": "z\n", "overwrite": True, "expectedHash": both["hash"]})


def test_append_keeps_every_byte_and_needs_no_full_read() -> None:
    b = bridge()
    first = b.ok("jupyter_read_file", {"path": BIG})
    appended = b.ok(
        "jupyter_write_file", {"path": BIG, "content": "tail line\n", "append": True, "expectedHash": first["hash"]}
    )
    assert b.ws.files[BIG] == BIG_TEXT + "tail line\n"
    assert appended["appended"] is True and appended["created"] is False and appended["bytes"] == 10
    assert appended["totalBytes"] == len((BIG_TEXT + "tail line\n").encode())
    b.ok("jupyter_write_file", {"path": BIG, "content": "more\n", "append": True})  # the hash is optional
    assert b.ws.files[BIG].endswith("tail line\nmore\n")
    b.fails(
        "jupyter_write_file", {"path": BIG, "content": "x", "append": True, "expectedHash": first["hash"]}, "STALE_FILE"
    )
    b.fails("jupyter_write_file", {"path": BIG, "content": "x", "append": True, "overwrite": True}, "INVALID_ARGUMENT")
    created = b.ok("jupyter_write_file", {"path": "new.txt", "content": "fresh\n", "append": True})
    assert created["created"] is True and b.ws.files["new.txt"] == "fresh\n"


# -- item 4: Propose mode holds every change to the workspace -----------------------------------------------
async def settle(
    b: Bridge, name: str, args: dict[str, Any], accept: bool
) -> tuple[dict[str, Any], Any, dict[str, str]]:
    """Call in Propose mode; when the proposal shows, note the files, then accept or deny it."""
    book = b.reg.context.proposals
    task = asyncio.ensure_future(b.reg.call(name, args))
    while not book.waiting():
        await asyncio.sleep(0.01)
        assert not task.done(), task.result()
    [proposal] = book.waiting()
    files_before = dict(b.ws.files)
    (book.accept if accept else book.deny)(proposal.id)
    return await task, proposal, files_before


@pytest.mark.parametrize(
    "name,args,kind",
    [
        ("jupyter_write_file", {"path": "notes.md", "content": "hello\n"}, "write_file"),
        ("jupyter_write_file", {"path": "small.txt", "content": "three\n", "append": True}, "append_file"),
        (
            "jupyter_edit_file",
            {"path": "small.txt", "oldText": "two", "newText": "2", "expectedHash": source_hash("one\ntwo\n")},
            "edit_file",
        ),
        ("jupyter_create_notebook", {"name": "fresh"}, "create_notebook"),
    ],
)
def test_propose_mode_holds_file_writes_and_new_notebooks(name: str, args: dict[str, Any], kind: str) -> None:
    b = bridge()
    b.reg.context.proposals.set_mode("propose")
    before = dict(b.ws.files)
    result, proposal, during = asyncio.run(settle(b, name, args, accept=False))
    assert result["isError"] is False and result["structuredContent"]["status"] == "denied"
    assert during == before == b.ws.files  # nothing written while it waited, nor after Deny
    assert (proposal.scope, proposal.kind, proposal.cell_id) == ("workspace", kind, None)
    result, proposal, during = asyncio.run(settle(b, name, args, accept=True))
    assert during == before and result["isError"] is False, result["structuredContent"]
    assert b.ws.files != before  # written once accepted


def test_the_file_proposals_show_what_changes() -> None:
    b = bridge()
    b.reg.context.proposals.set_mode("propose")
    _, proposal, _ = asyncio.run(
        settle(b, "jupyter_write_file", {"path": "small.txt", "content": "tail\n", "append": True}, False)
    )
    assert proposal.diff == [["+", "tail"]] and proposal.path == "small.txt"
    first = b.ok("jupyter_read_file", {"path": BIG})
    _, proposal, _ = asyncio.run(
        settle(
            b,
            "jupyter_edit_file",
            {"path": BIG, "oldText": "0012345 entry", "newText": "0012345 EDITED", "expectedHash": first["hash"]},
            False,
        )
    )
    assert proposal.diff is not None and proposal.diff[0] == ["…", "line 12346"]
    assert ["-", "0012345 entry é✓ " + "x" * 40] in proposal.diff and [
        "+",
        "0012345 EDITED é✓ " + "x" * 40,
    ] in proposal.diff
    box = json.dumps(proposal_box(proposal).to_json())
    assert '"data-scope": "workspace"' in box and "The lines this edit changes:" in box
    assert "proposal-corner" in json.dumps(workspace_corner().to_json())


def test_a_file_changed_while_the_proposal_waited_is_not_overwritten() -> None:
    b = bridge()
    b.reg.context.proposals.set_mode("propose")
    small = b.ok("jupyter_read_file", {"path": "small.txt"})

    async def go() -> dict[str, Any]:
        book = b.reg.context.proposals
        task = asyncio.ensure_future(
            b.reg.call(
                "jupyter_write_file",
                {"path": "small.txt", "content": "agent\n", "overwrite": True, "expectedHash": small["hash"]},
            )
        )
        while not book.waiting():
            await asyncio.sleep(0.01)
        b.ws.files["small.txt"] = "the person typed\n"
        book.accept(book.waiting()[0].id)
        return await task

    result = asyncio.run(go())
    assert result["structuredContent"]["error"] == "STALE_FILE" and b.ws.files["small.txt"] == "the person typed\n"


def test_the_guard_refuses_an_unproposed_file_write_or_notebook_in_propose_mode() -> None:
    b = bridge()
    b.reg.context.proposals.set_mode("propose")
    guard = b.reg.context.host
    with pytest.raises(Exception, match="not proposed"):
        asyncio.run(guard.write_text("sneaky.txt", "x"))
    with pytest.raises(Exception, match="not proposed"):
        asyncio.run(guard.create_notebook("sneaky.ipynb", None))
    assert "sneaky.txt" not in b.ws.files and "sneaky.ipynb" not in b.ws.files


class NoteInput(ToolInput):
    text: str


async def write_note(ctx: Any, args: NoteInput) -> dict[str, Any]:
    await ctx.host.write_text("site-note.txt", args.text)
    return {"written": True}


async def count_files(ctx: Any, args: NoteInput) -> dict[str, Any]:
    return {"entries": len(await ctx.host.list_dir("") or [])}


def test_a_site_tool_that_is_not_read_only_waits_for_accept_in_propose_mode() -> None:
    site = Contribution(
        "site",
        toolsets=(
            Toolset(
                "site",
                "A site's tools.",
                (
                    Tool("site_write_note", "Write note", "Write a note file.", NoteInput, write_note),
                    Tool(
                        "site_count",
                        "Count",
                        "Count the root's entries.",
                        NoteInput,
                        count_files,
                        Annotations(read_only=True),
                    ),
                ),
            ),
        ),
    )
    ws = MemoryWorkspace({"a.txt": "a"})
    b = build_bridge(ws, contributions=[site], toolsets=[notebooks_toolset()])
    b.proposals.set_mode("propose")

    async def go(accept: bool) -> tuple[dict[str, Any], dict[str, str]]:
        task = asyncio.ensure_future(b.registry.call("site_write_note", {"text": "from the site tool"}))
        while not b.proposals.waiting():
            await asyncio.sleep(0.01)
        [proposal] = b.proposals.waiting()
        assert (proposal.kind, proposal.scope, proposal.tool) == ("site_tool", "workspace", "site_write_note")
        assert any("from the site tool" in line for _op, line in proposal.diff or [])
        during = dict(ws.files)
        (b.proposals.accept if accept else b.proposals.deny)(proposal.id)
        return await task, during

    denied, during = asyncio.run(go(False))
    assert (
        denied["structuredContent"]["status"] == "denied"
        and "site-note.txt" not in ws.files
        and "site-note.txt" not in during
    )
    accepted, during = asyncio.run(go(True))
    assert (
        accepted["isError"] is False
        and "site-note.txt" not in during
        and ws.files["site-note.txt"] == "from the site tool"
    )
    # a read-only one is not held
    counted = asyncio.run(b.registry.call("site_count", {"text": ""}))
    assert counted["isError"] is False and not b.proposals.waiting()


# -- item 8: small leaks ---------------------------------------------------------------------------------------
def hidden_notebook() -> str:
    nb = corpus_json("jupyterlite-empty.ipynb")
    nb["metadata"]["webmcp_bridge"] = {"schemaVersion": 1, "access": "none"}
    return json.dumps(nb)


def test_a_hidden_notebook_in_capitals_is_not_listed_nor_found() -> None:
    b = bridge(
        {
            "secret/X.IPYNB": hidden_notebook(),
            "secret/Y.Ipynb": hidden_notebook(),
            "secret/visible.IPYNB": json.dumps(corpus_json("jupyterlite-empty.ipynb")),
        }
    )
    listed = [e["path"] for e in b.ok("jupyter_list_workspace", {"path": "secret"})["entries"]]
    assert listed == ["secret/visible.IPYNB"]
    for path in ("secret/X.IPYNB", "secret/Y.Ipynb"):
        assert (
            b.fails("jupyter_open_notebook", {"path": path}, "NOTEBOOK_NOT_FOUND")["message"]
            == f"No notebook at {path!r}."
        )
    assert b.ok("jupyter_open_notebook", {"path": "secret/visible.IPYNB"})["notebook"]["path"] == "secret/visible.IPYNB"


def test_the_comment_dialog_names_no_index_while_anything_is_hidden() -> None:
    assert str(comment_title("cell", "cell 4", False)) == "Comment on cell 4"
    assert str(comment_title("output 2", "cell 4", False)) == "Comment on output 2 of cell 4"
    assert str(comment_title("cell", "cell 4", True)) == "Comment on this cell"
    assert str(comment_title("the selection", "cell 4", True)) == "Comment on the selection of this cell"
    assert not hasattr(access, "comment_title")  # the person's side decides it, not the guard
