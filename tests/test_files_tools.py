"""jupyter_read_file / jupyter_write_file through the registry, over the in-memory host.

The workspace holds real corpus notebooks beside text files; every failing call goes through ``Bridge.fails``
(no open notebook, revision or workspace file changed).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from helpers import Bridge, corpus_text, make_bridge
from webmcp_bridge.access.levels import set_notebook_level
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.session.bridge import build_bridge

EULER = "demo/euler.ipynb"
NOTES = "demo/notes.md"
LOG = "demo/data/log.txt"
# a text longer than one page, with 1-, 2-, 3- and 4-byte characters on every line
LONG = "".join(f"{i:05d} é✓ 日本 🙂 line\n" for i in range(2000))
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


def files_bridge(limits: Limits = Limits()) -> Bridge:
    b = make_bridge(
        {EULER: "pytudes-euler.ipynb", "top.ipynb": "jupyterlite-empty.ipynb"},
        {
            NOTES: "# Notes\n\nSome *text* — with ünïcödé.\n",
            LOG: LONG,
            "demo/data/figure.png": PNG,
            "demo/data/upload.csv": "a,b\n1,é\n".encode(),
            "demo/data/nul.txt": "a\x00b",
            ".hidden/secret.txt": "secret",
            "demo/.ipynb_checkpoints/euler-checkpoint.txt": "old",
        },
        limits=limits,
    )
    b.open(EULER)
    return b


@pytest.fixture
def b() -> Bridge:
    return files_bridge()


def test_definitions_and_annotations():
    definitions = {d["name"]: d for d in build_bridge(None).registry.definitions()}  # type: ignore[arg-type]
    read, write = definitions["jupyter_read_file"], definitions["jupyter_write_file"]
    assert read["annotations"] == {
        "readOnlyHint": True,
        "untrustedContentHint": True,
        "consequentialHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert write["annotations"] == {
        "readOnlyHint": False,
        "untrustedContentHint": True,
        "consequentialHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert set(read["inputSchema"]["properties"]) == {"path", "offset", "maxBytes"}
    assert read["inputSchema"]["required"] == ["path"]
    assert set(write["inputSchema"]["properties"]) == {"path", "content", "overwrite", "append", "expectedHash"}
    assert set(write["inputSchema"]["required"]) == {"path", "content"}


def test_read_a_small_file_whole(b):
    page = b.ok("jupyter_read_file", {"path": NOTES})
    text = "# Notes\n\nSome *text* — with ünïcödé.\n"
    assert page == {
        "path": NOTES,
        "text": text,
        "offset": 0,
        "nextOffset": None,
        "totalBytes": len(text.encode()),
        "hash": source_hash(text),
        "truncated": False,
    }
    assert b.ok("jupyter_read_file", {"path": "./demo//notes.md/"})["text"] == text  # normalized like every path


def test_a_long_multibyte_file_pages_by_utf8_offset_and_joins_back_exactly(b):
    total = len(LONG.encode())
    pages, offset = [], 0
    while offset is not None:
        page = b.ok("jupyter_read_file", {"path": LOG, "offset": offset, "maxBytes": 5000})
        assert page["offset"] == offset and page["totalBytes"] == total and page["hash"] == source_hash(LONG)
        assert 0 < len(page["text"].encode()) <= 5000
        assert page["truncated"] is (page["nextOffset"] is not None)
        pages.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pages) == LONG and len(pages) >= total // 5000
    default = b.ok("jupyter_read_file", {"path": LOG})
    assert len(default["text"].encode()) <= 16 * 1024 and default["truncated"] is True
    huge = b.ok("jupyter_read_file", {"path": LOG, "maxBytes": 10**9})  # capped at the page size
    assert huge["text"] == default["text"]


def test_an_offset_inside_a_character_moves_back_to_its_start(b):
    start = LONG.index("🙂")
    byte = len(LONG[:start].encode())
    page = b.ok("jupyter_read_file", {"path": LOG, "offset": byte + 2, "maxBytes": 8})
    assert page["offset"] == byte and page["text"].startswith("🙂")
    past = b.ok("jupyter_read_file", {"path": LOG, "offset": 10**9})
    assert past["text"] == "" and past["nextOffset"] is None and past["truncated"] is False


def test_text_that_json_escapes_long_still_fits_the_result_whole(b):
    control = "\x01\x02" * 20_000  # each escapes to 6 bytes of JSON
    b.ws.files["demo/control.txt"] = control
    pages, offset = [], 0
    while offset is not None:
        page = b.ok("jupyter_read_file", {"path": "demo/control.txt", "offset": offset})
        assert "truncation" not in page  # the page was made smaller, not cut by the result cap
        pages.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pages) == control


def test_a_text_file_uploaded_as_bytes_reads_as_text(b):
    assert b.ok("jupyter_read_file", {"path": "demo/data/upload.csv"})["text"] == "a,b\n1,é\n"


@pytest.mark.parametrize("path", ["demo/data/figure.png", "demo/data/nul.txt"])
def test_binary_files_are_refused_whole(b, path):
    refused = b.fails("jupyter_read_file", {"path": path}, "INVALID_PATH")
    assert refused["binary"] is True and "not a UTF-8 text file" in refused["message"]
    assert "PNG" not in json.dumps(refused) and "\\u0000" not in json.dumps(refused)


def test_missing_files_folders_and_bad_paths(b):
    assert b.fails("jupyter_read_file", {"path": "demo/missing.txt"}, "PATH_NOT_FOUND")["path"] == "demo/missing.txt"
    assert "folder" in b.fails("jupyter_read_file", {"path": "demo/data"}, "INVALID_PATH")["message"]
    for bad in ["../outside.txt", "/etc/passwd", "C:/x.txt", "demo\\notes.md", "", "demo/\u202etxt.md"]:
        b.fails("jupyter_read_file", {"path": bad}, "INVALID_ARGUMENT" if bad == "" else "INVALID_PATH")
    b.fails("jupyter_read_file", {"path": NOTES, "offset": -1}, "INVALID_ARGUMENT")
    b.fails("jupyter_read_file", {"path": NOTES, "maxBytes": 0}, "INVALID_ARGUMENT")
    b.fails("jupyter_read_file", {"path": NOTES, "extra": 1}, "INVALID_ARGUMENT")


@pytest.mark.parametrize("path", [".hidden/secret.txt", "demo/.ipynb_checkpoints/euler-checkpoint.txt", ".bashrc"])
def test_hidden_names_are_refused_like_list_workspace_hides_them(b, path):
    assert "hidden" in b.fails("jupyter_read_file", {"path": path}, "INVALID_PATH")["message"]
    b.fails(
        "jupyter_write_file",
        {"path": path, "content": "x", "overwrite": True, "expectedHash": source_hash("x")},
        "INVALID_PATH",
    )


class Spy:
    """Counts the workspace calls the file tools make (a refused notebook path must make none)."""

    def __init__(self, b: Bridge) -> None:
        self.calls: list[str] = []
        for name in ("read_text", "write_text", "stat", "list_dir", "open_notebook", "notebook_bridge_metadata"):
            original = getattr(b.ws, name)

            async def spy(*args, _name=name, _original=original, **kwargs):
                self.calls.append(_name)
                return await _original(*args, **kwargs)

            setattr(b.ws, name, spy)


def test_notebooks_are_refused_before_the_workspace_is_looked_at(b):
    """A visible notebook, a hidden one (access "none") and a missing one get the same answer, with no
    workspace call at all: the file tools cannot be used to read around access control, nor to probe it."""
    hidden = asyncio.run(b.ws.open_notebook("top.ipynb", False))
    set_notebook_level(hidden, "none")
    spy = Spy(b)
    answers = {}
    for path in [EULER, "top.ipynb", "demo/missing.ipynb", "demo/Upper.IPYNB"]:
        answers[path] = b.fails("jupyter_read_file", {"path": path}, "INVALID_PATH")
        written = b.fails(
            "jupyter_write_file",
            {"path": path, "content": "{}", "overwrite": True, "expectedHash": source_hash("{}")},
            "INVALID_PATH",
        )
        assert written["message"] == answers[path]["message"]
    assert spy.calls == []
    assert len({json.dumps({k: v for k, v in a.items() if k != "path"}) for a in answers.values()}) == 1
    assert b.ws.files[EULER] == corpus_text("pytudes-euler.ipynb")


def test_write_a_new_file_then_read_it_back(b):
    content = "x,y\n1,2\n3,é🙂\n"
    written = b.ok("jupyter_write_file", {"path": "demo/data/new.csv", "content": content})
    assert written == {
        "path": "demo/data/new.csv",
        "created": True,
        "bytes": len(content.encode()),
        "hash": source_hash(content),
        "totalBytes": len(content.encode()),
        "appended": False,
    }
    assert b.ws.files["demo/data/new.csv"] == content
    back = b.ok("jupyter_read_file", {"path": "demo/data/new.csv"})
    assert back["text"] == content and back["hash"] == written["hash"]
    assert b.ok("jupyter_write_file", {"path": "empty.txt", "content": ""})["bytes"] == 0  # at the root, empty


def test_an_existing_file_is_replaced_only_with_overwrite_and_the_hash_read(b):
    before = b.ws.files[NOTES]
    assert "overwrite" in b.fails("jupyter_write_file", {"path": NOTES, "content": "new"}, "PATH_EXISTS")["message"]
    assert (
        "expectedHash"
        in b.fails("jupyter_write_file", {"path": NOTES, "content": "new", "overwrite": True}, "INVALID_ARGUMENT")[
            "message"
        ]
    )
    read = b.ok("jupyter_read_file", {"path": NOTES})
    b.ws.files[NOTES] = before + "A line the person added.\n"  # the person edits after the agent read
    stale = b.fails(
        "jupyter_write_file",
        {"path": NOTES, "content": "new", "overwrite": True, "expectedHash": read["hash"]},
        "STALE_FILE",
    )
    assert stale["currentHash"] == source_hash(b.ws.files[NOTES]) and "the person added" in stale["currentPreview"]
    assert b.ws.files[NOTES].endswith("A line the person added.\n")
    again = b.ok("jupyter_read_file", {"path": NOTES})
    replaced = b.ok(
        "jupyter_write_file", {"path": NOTES, "content": "new", "overwrite": True, "expectedHash": again["hash"]}
    )
    assert replaced["created"] is False and b.ws.files[NOTES] == "new"


def test_a_file_deleted_since_it_was_read_is_not_recreated_silently(b):
    read = b.ok("jupyter_read_file", {"path": NOTES})
    del b.ws.files[NOTES]
    gone = b.fails(
        "jupyter_write_file",
        {"path": NOTES, "content": "x", "overwrite": True, "expectedHash": read["hash"]},
        "STALE_FILE",
    )
    assert gone["currentHash"] is None and NOTES not in b.ws.files


def test_writes_that_are_refused_change_nothing(b):
    b.fails("jupyter_write_file", {"path": "demo/nowhere/new.txt", "content": "x"}, "PATH_NOT_FOUND")
    b.fails(
        "jupyter_write_file",
        {"path": "demo/data", "content": "x", "overwrite": True, "expectedHash": "0" * 16},
        "INVALID_PATH",
    )
    png = b.fails(
        "jupyter_write_file",
        {"path": "demo/data/figure.png", "content": "x", "overwrite": True, "expectedHash": "0" * 16},
        "INVALID_PATH",
    )
    assert png["binary"] is True and b.ws.files["demo/data/figure.png"] == PNG
    b.fails("jupyter_write_file", {"path": NOTES, "content": 5}, "INVALID_ARGUMENT")
    b.fails("jupyter_write_file", {"path": NOTES, "content": "x", "overwrite": "yes"}, "INVALID_ARGUMENT")


def test_a_write_over_the_cap_is_refused_never_truncated():
    small = files_bridge(Limits(file_write_bytes=1000))
    refused = small.fails("jupyter_write_file", {"path": "demo/big.txt", "content": "é" * 501}, "TOO_LARGE")
    assert refused["bytes"] == 1002 and refused["maxBytes"] == 1000 and "demo/big.txt" not in small.ws.files
    assert small.ok("jupyter_write_file", {"path": "demo/big.txt", "content": "é" * 500})["bytes"] == 1000


def test_a_file_over_the_read_cap_is_refused_not_loaded():
    small = files_bridge(Limits(file_read_bytes=10_000))
    refused = small.fails("jupyter_read_file", {"path": LOG}, "TOO_LARGE")
    assert refused["bytes"] == len(LONG.encode()) and refused["maxBytes"] == 10_000
    assert small.ok("jupyter_read_file", {"path": NOTES})["truncated"] is False
