"""The 17 notebook tools over the in-memory host, fed with real corpus notebooks.

Every failing call goes through ``Bridge.fails``, which also asserts that no open notebook's JSON, no
revision and no workspace file changed.
"""

from __future__ import annotations

import base64
import json

import nbformat
import pytest

from helpers import Bridge, corpus_json, find_cell, make_bridge, text_of
from webmcp_bridge.core.images import image_size
from webmcp_bridge.core.limits import Limits, strip_ansi, utf8_len
from webmcp_bridge.core.snapshot import source_hash

RUN = "demo/running.ipynb"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def cells_of(b: Bridge, path: str | None = None, **kw) -> list[dict]:
    args = {"notebookPath": path} if path else {}
    return b.ok("jupyter_get_cells", {**args, **kw})["cells"]


def ids_in_order(b: Bridge, path: str | None = None) -> list[str]:
    return [c["id"] for c in cells_of(b, path, includeSource=False)]


def code_cell(b: Bridge, source: str) -> dict:
    return next(c for c in cells_of(b) if c["type"] == "code" and c["source"] == source)


@pytest.fixture
def scratch() -> Bridge:
    """An empty new notebook, created through the tools and current."""
    b = make_bridge({RUN: "notebook-running-code.ipynb"})
    b.ok("jupyter_create_notebook", {"name": "scratch", "directory": "demo"})
    return b


def add(b: Bridge, source: str, cell_type: str = "code") -> dict:
    return b.ok("jupyter_insert_cell", {"source": source, "cellType": cell_type})["cell"]


# -- context and workspace --------------------------------------------------------------------------------


def test_get_context_follows_the_current_notebook():
    b = make_bridge({RUN: "notebook-running-code.ipynb"})
    ctx = b.ok("jupyter_get_context")
    assert ctx["notebook"] is None and ctx["mode"] == "direct" and ctx["pending"] == [] and ctx["dialogs"] == []
    b.open(RUN)
    ctx = b.ok("jupyter_get_context")
    assert ctx["notebook"]["path"] == RUN
    assert ctx["notebook"]["dirty"] is False and ctx["notebook"]["cellCount"] == 28
    rev = ctx["notebook"]["revision"]
    assert ctx["kernel"]["status"] == "idle" and ctx["kernel"]["name"]
    assert set(ctx["focus"]) >= {"cellId", "cursor", "selection"}
    assert [d["path"] for d in ctx["openDocuments"]] == [RUN]
    add(b, "1 + 1")
    ctx = b.ok("jupyter_get_context")
    assert ctx["notebook"]["dirty"] is True and ctx["notebook"]["cellCount"] == 29 and ctx["notebook"]["revision"] > rev
    b.ok("jupyter_save_notebook")
    assert b.ok("jupyter_get_context")["notebook"]["dirty"] is False


@pytest.fixture
def tree() -> Bridge:
    return make_bridge(
        {"demo/running.ipynb": "notebook-running-code.ipynb", "empty.ipynb": "jupyterlite-empty.ipynb"},
        {
            "notes.md": "# notes",
            "demo/data/values.csv": "a,b\n1,2\n",
            "demo/data/deeper/more.txt": "x",
            ".hidden/secret.txt": "hidden",
            "demo/.ipynb_checkpoints/running-checkpoint.ipynb": "{}",
        },
    )


def test_list_workspace_root(tree):
    payload = tree.ok("jupyter_list_workspace")
    assert payload["truncated"] is False
    assert payload["entries"] == [
        {"path": "demo", "name": "demo", "type": "directory"},
        {"path": "empty.ipynb", "name": "empty.ipynb", "type": "notebook"},
        {"path": "notes.md", "name": "notes.md", "type": "file"},
    ]
    assert "# notes" not in json.dumps(payload)  # never contents


def test_list_workspace_recursive(tree):
    payload = tree.ok("jupyter_list_workspace", {"recursive": True})
    paths = [e["path"] for e in payload["entries"]]
    assert set(paths) == {
        "demo",
        "empty.ipynb",
        "notes.md",
        "demo/data",
        "demo/running.ipynb",
        "demo/data/values.csv",
        "demo/data/deeper",
        "demo/data/deeper/more.txt",
    }
    assert not any("hidden" in p or "checkpoint" in p for p in paths)
    assert paths.index("demo") < paths.index("demo/data") < paths.index("demo/data/deeper")
    sub = tree.ok("jupyter_list_workspace", {"path": "demo/data"})
    assert [e["path"] for e in sub["entries"]] == ["demo/data/deeper", "demo/data/values.csv"]


def test_list_workspace_limit(tree):
    payload = tree.ok("jupyter_list_workspace", {"recursive": True, "limit": 2})
    assert len(payload["entries"]) == 2 and payload["truncated"] is True
    exact = tree.ok("jupyter_list_workspace", {"recursive": True, "limit": 8})
    assert len(exact["entries"]) == 8 and exact["truncated"] is False
    assert tree.ok("jupyter_list_workspace", {"limit": 3})["truncated"] is False


def test_list_workspace_errors(tree):
    tree.fails("jupyter_list_workspace", {"path": "nope"}, "PATH_NOT_FOUND")
    tree.fails("jupyter_list_workspace", {"path": "../"}, "INVALID_PATH")
    tree.fails("jupyter_list_workspace", {"limit": 501}, "INVALID_ARGUMENT")


def test_open_notebook(tree):
    opened = tree.ok("jupyter_open_notebook", {"path": "demo/running.ipynb"})
    assert opened["notebook"]["path"] == "demo/running.ipynb" and opened["notebook"]["cellCount"] == 28
    tree.fails("jupyter_open_notebook", {"path": "demo/missing.ipynb"}, "NOTEBOOK_NOT_FOUND")
    tree.fails("jupyter_open_notebook", {"path": "notes.md"}, "INVALID_PATH")
    tree.fails("jupyter_open_notebook", {"path": "/demo/running.ipynb"}, "INVALID_PATH")
    tree.fails("jupyter_open_notebook", {"path": "demo/data"}, "INVALID_PATH")
    # activate=false opens in the background: the person's current notebook does not change
    tree.ok("jupyter_open_notebook", {"path": "empty.ipynb", "activate": False})
    assert tree.ok("jupyter_get_context")["notebook"]["path"] == "demo/running.ipynb"


def test_open_notebook_revealing_a_cell(tree):
    tree.open("demo/running.ipynb")
    target = cells_of(tree)[5]["id"]
    tree.ok("jupyter_open_notebook", {"path": "empty.ipynb"})
    tree.ok("jupyter_open_notebook", {"path": "demo/running.ipynb", "cellId": target})
    ctx = tree.ok("jupyter_get_context")
    assert ctx["notebook"]["path"] == "demo/running.ipynb" and ctx["focus"]["cellId"] == target


def test_open_notebook_with_unknown_cell_fails_without_switching(tree):
    tree.open("empty.ipynb")
    tree.fails("jupyter_open_notebook", {"path": "demo/running.ipynb", "cellId": "no-such-cell"}, "CELL_NOT_FOUND")
    # a failed call should not have moved the person to another notebook
    assert tree.ok("jupyter_get_context")["notebook"]["path"] == "empty.ipynb"


def test_create_notebook(tree):
    created = tree.ok("jupyter_create_notebook", {"name": "analysis", "directory": "demo/data"})
    assert created["path"] == "demo/data/analysis.ipynb"
    assert created["notebook"]["cellCount"] == 0
    assert tree.ok("jupyter_get_context")["notebook"]["path"] == "demo/data/analysis.ipynb"
    nbformat.validate(nbformat.reads(tree.ws.files["demo/data/analysis.ipynb"], as_version=4))
    assert tree.ok("jupyter_create_notebook", {"name": "x.ipynb"})["path"] == "x.ipynb"
    tree.fails("jupyter_create_notebook", {"name": "analysis", "directory": "demo/data"}, "PATH_EXISTS")
    tree.fails("jupyter_create_notebook", {"name": "running.ipynb", "directory": "demo"}, "PATH_EXISTS")
    tree.fails("jupyter_create_notebook", {"name": "a", "directory": "nowhere"}, "PATH_NOT_FOUND")
    tree.fails("jupyter_create_notebook", {"name": "sub/a"}, "INVALID_PATH")
    tree.fails("jupyter_create_notebook", {"name": "a", "directory": "../x"}, "INVALID_PATH")
    tree.fails("jupyter_create_notebook", {"name": "a\u202e.ipynb"}, "INVALID_PATH")
    tree.fails("jupyter_create_notebook", {}, "INVALID_ARGUMENT")


# -- reading ------------------------------------------------------------------------------------------------


def test_get_cells_by_range_and_ids(running):
    b = running
    all_cells = cells_of(b)
    assert [c["index"] for c in all_cells] == list(range(28))
    assert len({c["id"] for c in all_cells}) == 28
    rng = cells_of(b, startIndex=3, endIndex=6)
    assert [c["index"] for c in rng] == [3, 4, 5]  # endIndex is exclusive
    assert cells_of(b, startIndex=26) == all_cells[26:]
    assert cells_of(b, startIndex=40) == []
    picked = cells_of(b, cellIds=[all_cells[9]["id"], all_cells[2]["id"]])
    assert [c["index"] for c in picked] == [9, 2]
    for c in picked:
        assert c == all_cells[c["index"]]
    code = all_cells[5]
    assert code["type"] == "code" and code["source"] == "print(a)" and code["executionCount"] == 2
    assert all_cells[0]["type"] == "markdown" and "executionCount" not in all_cells[0]
    assert code["sourceHash"] == source_hash("print(a)")
    no_src = cells_of(b, includeSource=False, endIndex=3)
    assert all("source" not in c and c["sourceHash"] for c in no_src)
    with_out = cells_of(b, cellIds=[code["id"]], includeOutputs=True)[0]
    assert with_out["outputs"] == [
        {
            "index": 0,
            "uri": f"notebook://demo/running.ipynb/cells/{code['id']}/outputs/0",
            "outputType": "stream",
            "mimeType": "text/plain",
            "bytes": 3,
            "preview": "10\n",
        }
    ]
    # the notebook's address once per result, not a cell's each; an output's own on its descriptor
    listed = b.ok("jupyter_get_cells", {"cellIds": [code["id"]], "includeOutputs": True})
    assert listed["uri"] == "notebook://demo/running.ipynb" and "uri" not in listed["cells"][0]


def test_get_cells_errors(running):
    b = running
    some = cells_of(b)[0]["id"]
    p = b.fails("jupyter_get_cells", {"cellIds": [some, "nope"]}, "CELL_NOT_FOUND")
    assert p["cellId"] == "nope"
    b.fails("jupyter_get_cells", {"cellIds": [some], "startIndex": 0}, "INVALID_ARGUMENT")
    b.fails("jupyter_get_cells", {"notebookPath": "demo/other.ipynb"}, "NOTEBOOK_NOT_FOUND")


def test_reads_are_of_the_live_model(running):
    b = running
    target = cells_of(b)[4]
    b.nb(RUN).person_set_source(target["id"], "a = 11  # the person's unsaved edit")
    again = cells_of(b, cellIds=[target["id"]])[0]
    assert again["source"] == "a = 11  # the person's unsaved edit"
    assert again["sourceHash"] != target["sourceHash"]
    assert "a = 11" in b.ok("jupyter_export_notebook")["document"]


def stream_text(name: str, cell_index: int, output_index: int = 0) -> str:
    return text_of(corpus_json(name)["cells"][cell_index]["outputs"][output_index]["text"])


@pytest.mark.parametrize("max_bytes", [None, 4096, 1000, 97])
def test_get_output_pages_the_500_line_stream(running, max_bytes):
    b = running
    cell = cells_of(b)[27]
    assert cell["source"].startswith("for i in range(500)")
    expected = stream_text("notebook-running-code.ipynb", 27)
    assert expected.count("\n") == 500
    pages, offset = [], 0
    for _ in range(1000):
        args = {"cellId": cell["id"], "outputIndex": 0, "offset": offset}
        if max_bytes:
            args["maxBytes"] = max_bytes
        page = b.ok("jupyter_get_output", args)
        assert page["offset"] == offset and page["totalBytes"] == utf8_len(expected)
        assert utf8_len(page["text"]) <= (max_bytes or 16 * 1024)
        pages.append(page["text"])
        if page["nextOffset"] is None:
            break
        assert page["nextOffset"] == offset + utf8_len(page["text"])
        offset = page["nextOffset"]
    assert "".join(pages) == expected
    assert len(pages) > 1


def test_get_output_past_the_end(running):
    cell = cells_of(running)[27]
    page = running.ok("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "offset": 10**9})
    assert page["text"] == "" and page["nextOffset"] is None


def test_get_output_multibyte_paging():
    b = make_bridge({"euler.ipynb": "pytudes-euler.ipynb"})
    b.open("euler.ipynb")
    cell = find_cell(
        b,
        "euler.ipynb",
        lambda c: any(
            o["outputType"] == "stream" and o["bytes"] > 300 and "✅" in o["preview"] for o in c.get("outputs", [])
        ),
    )
    out = next(o for o in cell["outputs"] if o["outputType"] == "stream" and "✅" in o["preview"])
    pages, offset = [], 0
    while offset is not None:
        page = b.ok(
            "jupyter_get_output", {"cellId": cell["id"], "outputIndex": out["index"], "offset": offset, "maxBytes": 5}
        )
        page["text"].encode("utf-8")
        pages.append(page["text"])
        offset = page["nextOffset"]
    full = b.ok("jupyter_get_output", {"cellId": cell["id"], "outputIndex": out["index"]})
    assert full["nextOffset"] is None and "".join(pages) == full["text"] and "✅" in full["text"]


def test_get_output_pages_of_control_characters_are_never_cut():
    """Printed binary data escapes to 6 JSON bytes a character: each page shrinks to fit whole, none is skipped."""
    printed = b"".join(i.to_bytes(4, "little") for i in range(5000)).decode("latin-1")  # 20,000 characters
    cell = {"cell_type": "code", "id": "dump", "metadata": {}, "execution_count": 1, "source": "print(raw)"}
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": printed}]
    b = Bridge({"bin.ipynb": json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})})
    b.open("bin.ipynb")
    pages, offset = [], 0
    while offset is not None:
        page = b.ok("jupyter_get_output", {"cellId": "dump", "outputIndex": 0, "offset": offset})
        assert "truncation" not in page and page["offset"] == offset
        pages.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pages) == printed


def test_get_output_error_text_has_no_ansi():
    b = make_bridge({"beyond.ipynb": "ipython-beyond-plain-python.ipynb"})
    b.open("beyond.ipynb")
    cell = cells_of(b, cellIds=[cells_of(b, includeSource=False)[61]["id"]], includeOutputs=True)[0]
    assert cell["outputs"][0]["outputType"] == "error" and cell["outputs"][0]["ename"] == "ZeroDivisionError"
    page = b.ok("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0})
    raw = "\n".join(corpus_json("ipython-beyond-plain-python.ipynb")["cells"][61]["outputs"][0]["traceback"])
    assert "\x1b" in raw and "\x1b" not in page["text"]
    assert page["text"] == strip_ansi(raw)


@pytest.fixture
def beyond() -> Bridge:
    b = make_bridge({"beyond.ipynb": "ipython-beyond-plain-python.ipynb"})
    b.open("beyond.ipynb")
    return b


def png_cell(b: Bridge) -> dict:
    return cells_of(b, cellIds=[cells_of(b, includeSource=False)[79]["id"]], includeOutputs=True)[0]


def test_get_output_png_is_an_image_block(beyond):
    cell = png_cell(beyond)
    assert cell["outputs"][0]["mimeTypes"] == ["image/png", "text/plain"]
    result = beyond.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "mimeType": "image/png"})
    assert result["isError"] is False
    text_block, image = result["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    raw = base64.b64decode(image["data"], validate=True)
    assert raw.startswith(PNG_SIGNATURE)
    expected = "".join(
        text_of(
            corpus_json("ipython-beyond-plain-python.ipynb")["cells"][79]["outputs"][0]["data"]["image/png"]
        ).split()
    )
    assert image["data"] != expected and image_size("image/png", raw) == (1024, 670)  # 1199 pixels wide: a bounded copy
    assert image["data"][:64] not in text_block["text"] and "iVBORw0KGgo" not in text_block["text"]
    assert result["structuredContent"]["image"]["bytes"] == len(raw)
    assert result["structuredContent"]["bytes"] == len(base64.b64decode(expected))  # the original's size
    whole = beyond.call(
        "jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "mimeType": "image/png", "original": True}
    )
    assert whole["content"][1]["data"] == expected
    # without a mimeType the image is returned (its text/plain is only "<IPython.core.display.Image object>")
    default = beyond.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0})
    assert default["structuredContent"]["mimeType"] == "image/png" and default["content"][1]["data"] == image["data"]
    plain = beyond.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "mimeType": "text/plain"})
    assert len(plain["content"]) == 1 and plain["structuredContent"]["mimeType"] == "text/plain"


def test_image_over_the_cap_is_too_large():
    b = make_bridge({"beyond.ipynb": "ipython-beyond-plain-python.ipynb"}, limits=Limits(image_bytes=1000))
    b.open("beyond.ipynb")
    cell = png_cell(b)
    p = b.fails(
        "jupyter_get_output",
        {"cellId": cell["id"], "outputIndex": 0, "mimeType": "image/png", "original": True},
        "TOO_LARGE",
    )
    assert p["maxBytes"] == 1000 and p["bytes"] > 1000


def test_get_output_errors(beyond):
    cell = png_cell(beyond)
    beyond.fails("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 1}, "OUTPUT_NOT_FOUND")
    beyond.fails(
        "jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "mimeType": "image/jpeg"}, "OUTPUT_NOT_FOUND"
    )
    markdown = next(c for c in cells_of(beyond) if c["type"] == "markdown")
    beyond.fails("jupyter_get_output", {"cellId": markdown["id"], "outputIndex": 0}, "OUTPUT_NOT_FOUND")
    beyond.fails("jupyter_get_output", {"cellId": "nope", "outputIndex": 0}, "CELL_NOT_FOUND")
    beyond.fails("jupyter_get_output", {"cellId": cell["id"], "outputIndex": -1}, "INVALID_ARGUMENT")


def test_image_blocks_always_carry_real_base64():
    """The hostile fixture stores script text, empty strings and non-base64 under image/png and image/jpeg. An
    agent must never receive that as MCP image content: each such representation is refused with
    OUTPUT_NOT_FOUND, the stored text never echoed; a real PNG of another notebook still comes back as an image."""
    b = make_bridge(
        {"inject.ipynb": "nbconvert-inject-payloads.ipynb", "beyond.ipynb": "ipython-beyond-plain-python.ipynb"}
    )
    b.open("inject.ipynb")
    stored = corpus_json("nbconvert-inject-payloads.ipynb")["cells"]
    refused = []
    for cell in cells_of(b, includeOutputs=True):
        for out in cell.get("outputs", []):
            for mime in out["mimeTypes"]:
                if mime not in ("image/png", "image/jpeg"):
                    continue
                result = b.call(
                    "jupyter_get_output", {"cellId": cell["id"], "outputIndex": out["index"], "mimeType": mime}
                )
                payload = result["structuredContent"]
                assert result["isError"] is True and payload["error"] == "OUTPUT_NOT_FOUND", payload
                assert f"not a valid {mime} image" in payload["message"] and len(result["content"]) == 1
                data = text_of(stored[cell["index"]]["outputs"][out["index"]]["data"][mime])
                assert not data or data not in result["content"][0]["text"]
                refused.append((cell["index"], mime))
    assert refused == [
        (4, "image/png"),
        (5, "image/jpeg"),
        (6, "image/png"),
        (7, "image/jpeg"),
        (8, "image/png"),
        (9, "image/png"),
        (10, "image/png"),
    ]
    b.open("beyond.ipynb")
    real = b.call("jupyter_get_output", {"cellId": png_cell(b)["id"], "outputIndex": 0, "mimeType": "image/png"})
    assert real["isError"] is False and base64.b64decode(real["content"][1]["data"], validate=True).startswith(
        PNG_SIGNATURE
    )


# -- writing ------------------------------------------------------------------------------------------------


def test_insert_cells(running):
    b = running
    before = ids_in_order(b)
    ref = before[5]
    above = b.ok(
        "jupyter_insert_cell",
        {"referenceCellId": ref, "position": "above", "cellType": "markdown", "source": "## above"},
    )["cell"]
    assert above["index"] == 5
    below = b.ok(
        "jupyter_insert_cell", {"referenceCellId": ref, "position": "below", "cellType": "raw", "source": "raw text"}
    )["cell"]
    assert below["index"] == 7
    end = b.ok("jupyter_insert_cell", {"source": "print('end')"})["cell"]
    assert end["index"] == 30
    start = b.ok("jupyter_insert_cell", {"position": "above", "source": "# first"})["cell"]
    assert start["index"] == 0
    order = ids_in_order(b)
    assert order == [start["id"], *before[:5], above["id"], ref, below["id"], *before[6:], end["id"]]
    snaps = {c["id"]: c for c in cells_of(b)}
    assert snaps[above["id"]]["type"] == "markdown" and snaps[above["id"]]["source"] == "## above"
    assert snaps[below["id"]]["type"] == "raw"
    assert snaps[end["id"]]["type"] == "code" and snaps[end["id"]]["executionCount"] is None
    for c in (above, below, end, start):
        assert snaps[c["id"]]["sourceHash"] == c["sourceHash"]
    b.fails("jupyter_insert_cell", {"referenceCellId": "nope", "source": "x"}, "CELL_NOT_FOUND")
    b.fails("jupyter_insert_cell", {"cellType": "heading"}, "INVALID_ARGUMENT")


def test_insert_with_activate_moves_focus(running):
    cell = running.ok("jupyter_insert_cell", {"source": "x", "activate": True})["cell"]
    assert running.ok("jupyter_get_context")["focus"]["cellId"] == cell["id"]


def test_update_with_the_right_hash(running):
    b = running
    cell = cells_of(b)[4]
    updated = b.ok(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "a = 'déjà vu 🤗'", "expectedSourceHash": cell["sourceHash"]},
    )["cell"]
    assert updated["id"] == cell["id"] and updated["sourceHash"] == source_hash("a = 'déjà vu 🤗'")
    assert cells_of(b, cellIds=[cell["id"]])[0]["source"] == "a = 'déjà vu 🤗'"
    # the old hash is now stale
    b.fails(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "x", "expectedSourceHash": cell["sourceHash"]},
        "STALE_CELL",
    )


def test_update_with_a_stale_hash_keeps_the_persons_edit(running):
    b = running
    cell = cells_of(b)[5]
    persons = "print(a)  # the person fixed this while the agent was thinking"
    b.nb(RUN).person_set_source(cell["id"], persons)
    p = b.fails(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "print('agent')", "expectedSourceHash": cell["sourceHash"]},
        "STALE_CELL",
    )
    assert p["currentSourceHash"] == source_hash(persons)
    assert p["currentSourcePreview"] == persons
    assert p["cellId"] == cell["id"]
    assert b.nb(RUN).find_cell(cell["id"]).source == persons
    # retrying with the hash from the error succeeds
    b.ok(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "print('agent')", "expectedSourceHash": p["currentSourceHash"]},
    )
    b.fails("jupyter_update_cell", {"cellId": "nope", "source": "x", "expectedSourceHash": "0" * 16}, "CELL_NOT_FOUND")


def test_stale_preview_is_bounded(running):
    b = running
    cell = cells_of(b)[5]
    b.nb(RUN).person_set_source(cell["id"], "日本語のテキスト " * 500)
    p = b.fails("jupyter_delete_cell", {"cellId": cell["id"], "expectedSourceHash": cell["sourceHash"]}, "STALE_CELL")
    assert utf8_len(p["currentSourcePreview"]) <= 400 and p["currentSourcePreview"].startswith("日本語")


def test_edit_cell_source(running):
    b = running
    cell = cells_of(b)[27]  # for i in range(500):\n    print(2**i - 1)
    edited = b.ok("jupyter_edit_cell_source", {"cellId": cell["id"], "oldText": "range(500)", "newText": "range(5)"})[
        "cell"
    ]
    new_source = cell["source"].replace("range(500)", "range(5)")
    assert edited["sourceHash"] == source_hash(new_source)
    assert b.nb(RUN).find_cell(cell["id"]).source == new_source
    p = b.fails(
        "jupyter_edit_cell_source", {"cellId": cell["id"], "oldText": "range(500)", "newText": "x"}, "INVALID_ARGUMENT"
    )
    assert p["occurrences"] == 0
    p = b.fails("jupyter_edit_cell_source", {"cellId": cell["id"], "oldText": "i", "newText": "j"}, "INVALID_ARGUMENT")
    assert p["occurrences"] >= 2
    b.fails("jupyter_edit_cell_source", {"cellId": cell["id"], "oldText": "", "newText": "x"}, "INVALID_ARGUMENT")
    b.fails(
        "jupyter_edit_cell_source",
        {"cellId": cell["id"], "oldText": "range(5)", "newText": "range(6)", "expectedSourceHash": cell["sourceHash"]},
        "STALE_CELL",
    )
    b.ok(
        "jupyter_edit_cell_source",
        {
            "cellId": cell["id"],
            "oldText": "range(5)",
            "newText": "range(6)",
            "expectedSourceHash": edited["sourceHash"],
        },
    )


def test_delete_cell(running):
    b = running
    before = cells_of(b)
    victim = before[6]
    deleted = b.ok("jupyter_delete_cell", {"cellId": victim["id"], "expectedSourceHash": victim["sourceHash"]})
    assert deleted["deleted"]["id"] == victim["id"]
    assert ids_in_order(b) == [c["id"] for c in before if c["id"] != victim["id"]]
    b.fails("jupyter_get_cells", {"cellIds": [victim["id"]]}, "CELL_NOT_FOUND")
    b.fails(
        "jupyter_delete_cell", {"cellId": victim["id"], "expectedSourceHash": victim["sourceHash"]}, "CELL_NOT_FOUND"
    )
    other = before[7]
    b.fails("jupyter_delete_cell", {"cellId": other["id"], "expectedSourceHash": before[8]["sourceHash"]}, "STALE_CELL")
    b.fails("jupyter_delete_cell", {"cellId": other["id"]}, "INVALID_ARGUMENT")  # the hash is required


def test_move_cell(running):
    b = running
    order = ids_in_order(b)
    first, last = order[0], order[-1]
    moved = b.ok("jupyter_move_cell", {"cellId": first, "referenceCellId": last, "position": "below"})["cell"]
    assert moved == {"id": first, "index": 27}
    assert ids_in_order(b) == order[1:] + [first]
    moved = b.ok("jupyter_move_cell", {"cellId": first, "referenceCellId": order[1], "position": "above"})["cell"]
    assert moved["index"] == 0 and ids_in_order(b) == order
    # down by one, up by one
    b.ok("jupyter_move_cell", {"cellId": order[3], "referenceCellId": order[4], "position": "below"})
    assert ids_in_order(b)[3:5] == [order[4], order[3]]
    b.ok("jupyter_move_cell", {"cellId": order[3], "referenceCellId": order[4], "position": "above"})
    assert ids_in_order(b) == order
    # no-op moves keep the order
    b.ok("jupyter_move_cell", {"cellId": order[3], "referenceCellId": order[2], "position": "below"})
    assert ids_in_order(b) == order
    b.fails("jupyter_move_cell", {"cellId": order[3], "referenceCellId": order[3]}, "INVALID_ARGUMENT")
    b.fails("jupyter_move_cell", {"cellId": order[3], "referenceCellId": "nope"}, "CELL_NOT_FOUND")
    b.fails("jupyter_move_cell", {"cellId": "nope", "referenceCellId": order[3]}, "CELL_NOT_FOUND")


def test_clear_outputs(running):
    b = running
    cells = cells_of(b)
    md, printed, stream = cells[0], cells[5], cells[27]
    b.fails("jupyter_clear_outputs", {"cellIds": [printed["id"], "nope"]}, "CELL_NOT_FOUND")
    assert b.nb(RUN).find_cell(printed["id"]).output_count == 1  # the valid id was not cleared either
    cleared = b.ok("jupyter_clear_outputs", {"cellIds": [printed["id"], md["id"]]})["cleared"]
    assert cleared == [printed["id"]]
    after = cells_of(b, cellIds=[printed["id"], stream["id"]], includeOutputs=True)
    assert "outputs" not in after[0] and after[0]["executionCount"] is None and "outputCount" not in after[0]
    assert len(after[1]["outputs"]) == 1
    everything = b.ok("jupyter_clear_outputs")["cleared"]
    assert set(everything) == {c["id"] for c in cells if c["type"] == "code"}
    assert all(c.get("outputCount", 0) == 0 for c in cells_of(b))


# -- running ------------------------------------------------------------------------------------------------


def test_run_cells_status_and_outputs(scratch):
    b = scratch
    a = add(b, "x = 21")
    c = add(b, "print(x * 2)")
    m = add(b, "# a note", "markdown")
    e = add(b, "1 / 0")
    d = add(b, "print('after')")
    res = b.ok("jupyter_run_cells")["results"]
    assert [r["cellId"] for r in res] == [a["id"], c["id"], m["id"], e["id"], d["id"]]
    assert [r["status"] for r in res] == ["ok", "ok", "skipped", "error", "skipped"]
    assert res[1]["outputs"][0]["preview"] == "42\n" and "name" not in res[1]["outputs"][0]  # stdout
    assert res[0]["executionCount"] < res[1]["executionCount"] < res[3]["executionCount"]
    err = res[3]["outputs"][-1]
    assert err["outputType"] == "error" and err["ename"] == "ZeroDivisionError" and "preview" not in err
    page = b.ok("jupyter_get_output", {"cellId": e["id"], "outputIndex": 0})
    assert "\x1b" not in page["text"] and "ZeroDivisionError" in page["text"]
    cont = b.ok("jupyter_run_cells", {"cellIds": [e["id"], d["id"]], "stopOnError": False})["results"]
    assert [r["status"] for r in cont] == ["error", "ok"]
    assert cont[1]["outputs"][0]["preview"] == "after\n"
    snap = cells_of(b, cellIds=[d["id"]], includeOutputs=True)[0]
    assert snap["executionCount"] == cont[1]["executionCount"] and snap["outputs"][0]["preview"] == "after\n"


def test_run_cells_by_range(scratch):
    b = scratch
    for i in range(4):
        add(b, f"print({i})")
    res = b.ok("jupyter_run_cells", {"startIndex": 1, "endIndex": 3})["results"]
    assert [r["index"] for r in res] == [1, 2] and [r["outputs"][0]["preview"] for r in res] == ["1\n", "2\n"]
    some = cells_of(b)[0]["id"]
    b.fails("jupyter_run_cells", {"cellIds": [some], "startIndex": 0}, "INVALID_ARGUMENT")
    b.fails("jupyter_run_cells", {"cellIds": [some, "nope"]}, "CELL_NOT_FOUND")


def test_run_refuses_too_many_cells():
    b = make_bridge({"pandas.ipynb": "handson-ml2-tools-pandas.ipynb"})
    b.open("pandas.ipynb")
    p = b.fails("jupyter_run_cells", {}, "TOO_LARGE")
    assert p["count"] == 308 and p["maxCount"] == 100


def test_run_with_a_kernel_that_is_not_ready_says_why_and_what_to_do(scratch):
    """KERNEL_UNAVAILABLE tells the agent what the kernel's status means and what to do, and how long it really
    waited: a dead kernel is restarted; one still "starting" (or stuck there) is tried again later, then restarted."""
    b = scratch
    add(b, "print(1)")
    nb = b.ws.current_notebook()
    nb.kernel_status = "dead"
    dead = b.fails("jupyter_run_cells", {}, "KERNEL_UNAVAILABLE")
    assert dead["kernel"]["status"] == "dead" and "jupyter_kernel_action restart" in dead["message"], dead
    nb.kernel_status = "starting"
    starting = b.fails("jupyter_run_cells", {}, "KERNEL_UNAVAILABLE")
    assert "still starting" in starting["message"] and "call again" in starting["message"], starting
    assert starting["waitedSeconds"] < 5  # the in-memory kernel answers at once: the message never claims a longer wait
    assert "waiting 0 s" in starting["message"]


def test_kernel_restart_clears_state(scratch):
    b = scratch
    a = add(b, "secret = 1")
    c = add(b, "print(secret)")
    b.ok("jupyter_run_cells", {"cellIds": [a["id"]]})
    assert b.ok("jupyter_run_cells", {"cellIds": [c["id"]]})["results"][0]["status"] == "ok"
    k = b.ok("jupyter_kernel_action", {"action": "restart"})
    assert k["kernel"]["status"] == "idle"
    res = b.ok("jupyter_run_cells", {"cellIds": [c["id"]]})["results"][0]
    assert res["status"] == "error" and res["executionCount"] == 1
    assert b.ok("jupyter_kernel_action", {"action": "interrupt"})["kernel"]["status"] == "idle"
    b.fails("jupyter_kernel_action", {"action": "shutdown"}, "INVALID_ARGUMENT")


# -- focus, export, save --------------------------------------------------------------------------------------


def test_focus_cell(running):
    b = running
    cell = cells_of(b)[27]
    f = b.ok("jupyter_focus_cell", {"cellId": cell["id"], "cursor": {"line": 1, "column": 4}})["focus"]
    assert f == {"cellId": cell["id"], "cursor": {"line": 1, "column": 4}, "selection": None}
    sel = {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 3}}
    f = b.ok("jupyter_focus_cell", {"cellId": cell["id"], "selection": sel})["focus"]
    assert f["selection"] == sel
    assert b.ok("jupyter_get_context")["focus"]["selection"] == sel
    b.fails(
        "jupyter_focus_cell",
        {"cellId": cell["id"], "cursor": {"line": 0, "column": 0}, "selection": sel},
        "INVALID_ARGUMENT",
    )
    b.fails("jupyter_focus_cell", {"cellId": "nope"}, "CELL_NOT_FOUND")
    b.fails("jupyter_focus_cell", {"cellId": cell["id"], "cursor": {"line": -1, "column": 0}}, "INVALID_ARGUMENT")


def test_export_markdown(running):
    b = running
    tricky = 'readme = """\n```python\nprint("nested fence")\n```\n"""'
    add(b, tricky)
    doc = b.ok("jupyter_export_notebook")["document"]
    assert doc.startswith("# Running Code")
    assert "```python\nprint(a)\n```" in doc
    assert "````python\n" + tricky + "\n````" in doc
    assert "0\n1\n3\n7" not in doc  # no outputs unless asked
    with_outputs = b.ok("jupyter_export_notebook", {"includeOutputs": True, "format": "markdown"})
    assert "```text\n10\n```" in with_outputs["document"]
    assert "hi, stderr" in with_outputs["document"]
    b.fails("jupyter_export_notebook", {"format": "html"}, "INVALID_ARGUMENT")


def test_save_writes_the_live_model(running):
    b = running
    cell = add(b, "print('saved by the agent')")
    saved = b.ok("jupyter_save_notebook")
    assert saved["saved"] is True and saved["path"] == RUN
    on_disk = json.loads(b.ws.files[RUN])
    assert any(
        text_of(c["source"]) == "print('saved by the agent')" and c["id"] == cell["id"] for c in on_disk["cells"]
    )
    b.fails("jupyter_save_notebook", {"notebookPath": "demo/none.ipynb"}, "NOTEBOOK_NOT_FOUND")


def test_notebook_path_works_on_a_background_notebook():
    b = make_bridge({RUN: "notebook-running-code.ipynb", "euler.ipynb": "pytudes-euler.ipynb"})
    b.open(RUN)
    euler_ids = [c["id"] for c in corpus_json("pytudes-euler.ipynb")["cells"]]
    got = b.ok("jupyter_get_cells", {"notebookPath": "euler.ipynb", "endIndex": 5})
    assert [c["id"] for c in got["cells"]] == euler_ids[:5]  # nbformat 4.5 ids are kept as they are
    cell = got["cells"][0]
    b.ok(
        "jupyter_update_cell",
        {
            "notebookPath": "euler.ipynb",
            "cellId": cell["id"],
            "source": "# edited",
            "expectedSourceHash": cell["sourceHash"],
        },
    )
    assert b.ok("jupyter_get_context")["notebook"]["path"] == RUN  # the person's view did not move
    b.fails(
        "jupyter_update_cell", {"cellId": cell["id"], "source": "x", "expectedSourceHash": "0" * 16}, "CELL_NOT_FOUND"
    )  # not in the current notebook


@pytest.mark.parametrize("name", ["ipython-beyond-plain-python.ipynb", "sci-python-lecture-1.ipynb"])
def test_no_terminal_escapes_reach_the_agent(name):
    b = make_bridge({"n.ipynb": name})
    b.open("n.ipynb")
    assert "\x1b" in corpus_text_raw(name)
    start, errors = 0, 0
    while True:
        result = b.call("jupyter_get_cells", {"startIndex": start, "endIndex": start + 60, "includeOutputs": True})
        assert "\\u001b" not in result["content"][0]["text"] and "\x1b" not in result["content"][0]["text"]
        payload = result["structuredContent"]
        for cell in payload["cells"]:
            for out in cell.get("outputs", []):
                if out["outputType"] == "error":
                    errors += 1
                    page = b.ok("jupyter_get_output", {"cellId": cell["id"], "outputIndex": out["index"]})
                    assert "\x1b" not in page["text"] and page["text"]
        if payload["cells"][-1]["index"] + 1 >= payload["cellCount"]:
            break
        start = payload["cells"][-1]["index"] + 1
    assert errors == {"ipython-beyond-plain-python.ipynb": 4, "sci-python-lecture-1.ipynb": 5}[name]
    export = b.call("jupyter_export_notebook", {"includeOutputs": True})["content"][0]["text"]
    assert "\\u001b" not in export


def corpus_text_raw(name: str) -> str:
    return "".join("\n".join(o.get("traceback", [])) for c in corpus_json(name)["cells"] for o in c.get("outputs", []))
