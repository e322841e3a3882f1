"""snapshot.py: source hashes, cell snapshots, output descriptors, STALE_CELL, markdown export."""

from __future__ import annotations

import hashlib
import re

import pytest

from helpers import corpus_json, text_of
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import DEFAULT_LIMITS, Limits, utf8_len
from webmcp_bridge.core.nbjson import raw_output
from webmcp_bridge.core.snapshot import (
    cell_snapshot,
    check_hash,
    describe_output,
    export_markdown,
    source_hash,
    stale_cell_error,
)
from webmcp_bridge.host.protocol import RawCell, RawItem, RawOutput


def test_source_hash_is_stable_and_content_based():
    assert source_hash("print(1)") == hashlib.sha256(b"print(1)").hexdigest()[:16]
    assert source_hash("") == hashlib.sha256(b"").hexdigest()[:16]
    assert source_hash("a") != source_hash("a ")
    assert re.fullmatch(r"[0-9a-f]{16}", source_hash("مرحبا 🤗"))


def test_snapshot_of_a_code_cell():
    cell = RawCell(
        "abc",
        3,
        "code",
        "x = 1\nprint(x)",
        7,
        (RawOutput("stream", (RawItem("text/plain", 2, "1\n"),), name="stdout"),),
        1,
    )
    snap = cell_snapshot(cell, DEFAULT_LIMITS, include_outputs=True)
    assert snap == {
        "id": "abc",
        "index": 3,
        "type": "code",
        "sourceHash": source_hash("x = 1\nprint(x)"),
        "source": "x = 1\nprint(x)",
        "executionCount": 7,
        # a stream of stdout, its one representation text/plain, its preview whole: nothing else is said (no
        # path given: no address)
        "outputs": [{"index": 0, "outputType": "stream", "mimeType": "text/plain", "bytes": 2, "preview": "1\n"}],
    }
    bare = cell_snapshot(cell, DEFAULT_LIMITS, include_source=False)
    assert "source" not in bare and "outputs" not in bare and bare["sourceHash"] == snap["sourceHash"]
    assert bare["outputCount"] == 1  # not listed: counted
    quiet = cell_snapshot(RawCell("q", 0, "code", "x = 1", None), DEFAULT_LIMITS, include_outputs=True)
    assert quiet == {
        "id": "q",
        "index": 0,
        "type": "code",
        "sourceHash": source_hash("x = 1"),
        "source": "x = 1",
        "executionCount": None,
    }


def test_an_output_says_only_what_the_agent_cannot_derive():
    """A cut preview says so; stderr is named; a rich output names its representations and its richest one; an error
    gives its name and message, not the start of its traceback."""
    long = RawOutput("stream", (RawItem("text/plain", 1000, "x" * 300),), name="stderr")
    d = describe_output(0, long, DEFAULT_LIMITS)
    assert d["name"] == "stderr" and d["previewTruncated"] is True and d["preview"].endswith("…")
    frame = RawOutput("execute_result", (RawItem("text/html", 90, "<table>"), RawItem("text/plain", 5, "a  b\n")))
    assert describe_output(0, frame, DEFAULT_LIMITS) == {
        "index": 0,
        "outputType": "execute_result",
        "mimeType": "text/html",
        "mimeTypes": ["text/html", "text/plain"],
        "bytes": 95,
        "preview": "a  b\n",
    }
    error = RawOutput("error", (RawItem("text/plain", 400, "Traceback ..."),), ename="KeyError", evalue="'k'")
    assert describe_output(0, error, DEFAULT_LIMITS) == {
        "index": 0,
        "outputType": "error",
        "mimeType": "text/plain",
        "bytes": 400,
        "ename": "KeyError",
        "evalue": "'k'",
    }


def test_long_source_is_cut_but_hashed_whole():
    text = "".join(text_of(c["source"]) for c in corpus_json("hf-quicktour-ja.ipynb")["cells"])
    assert utf8_len(text) > 16 * 1024
    snap = cell_snapshot(RawCell("j", 0, "markdown", text), DEFAULT_LIMITS)
    assert snap["sourceTruncated"] is True and snap["sourceBytes"] == utf8_len(text)
    assert utf8_len(snap["source"]) <= DEFAULT_LIMITS.source_read_bytes
    assert text.startswith(snap["source"]) and snap["source"].encode("utf-8")
    assert snap["sourceHash"] == source_hash(text)
    assert "executionCount" not in snap  # markdown cells have none


def test_describe_real_outputs():
    nb = corpus_json("ipython-beyond-plain-python.ipynb")
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    errors = [describe_output(0, raw_output(o, 240), DEFAULT_LIMITS) for o in outputs if o["output_type"] == "error"]
    assert len(errors) == 4
    for d in errors:
        assert d["ename"] == "ZeroDivisionError" and "\x1b" not in d["evalue"] and "preview" not in d
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert pngs
    d = describe_output(1, raw_output(pngs[0], 240), DEFAULT_LIMITS)
    assert "image/png" in d["mimeTypes"] and d["mimeType"] == "image/png"
    png_b64 = "".join(text_of(pngs[0]["data"]["image/png"]).split())
    assert png_b64[:40] not in d.get("preview", "")
    assert d["bytes"] >= len(png_b64) * 3 // 4 - 2


def test_preview_prefers_plain_text_over_html():
    nb = corpus_json("handson-ml2-tools-pandas.ipynb")
    frame = next(o for c in nb["cells"] for o in c.get("outputs", []) if "text/html" in o.get("data", {}))
    d = describe_output(0, raw_output(frame, 240), DEFAULT_LIMITS)
    assert d["mimeTypes"][:2] == list(frame["data"])[:2]
    assert "<table" not in d["preview"]
    assert d["preview"] and text_of(frame["data"]["text/plain"]).startswith(d["preview"].rstrip("…"))


def test_outputs_per_cell_cap():
    limits = Limits(outputs_per_cell=2)
    outs = tuple(RawOutput("stream", (RawItem("text/plain", 1, str(i)),), name="stdout") for i in range(2))
    snap = cell_snapshot(RawCell("c", 0, "code", "", None, outs, 5), limits, include_outputs=True)
    assert len(snap["outputs"]) == 2 and snap["outputsOmitted"] == 3 and "outputCount" not in snap


def test_stale_cell_error():
    cell = RawCell("c", 0, "code", "person's text " * 100)
    check_hash(cell, None, DEFAULT_LIMITS)
    check_hash(cell, source_hash(cell.source), DEFAULT_LIMITS)
    with pytest.raises(ToolError) as info:
        check_hash(cell, "0123456789abcdef", DEFAULT_LIMITS)
    err = info.value
    assert err.code is ErrorCode.STALE_CELL
    payload = err.payload()
    assert payload["currentSourceHash"] == source_hash(cell.source)
    assert payload["expectedSourceHash"] == "0123456789abcdef"
    assert utf8_len(payload["currentSourcePreview"]) <= DEFAULT_LIMITS.error_preview_bytes
    assert payload["currentSourcePreview"].startswith("person's text")
    assert stale_cell_error(cell, "x", DEFAULT_LIMITS).payload()["cellId"] == "c"


def fences(document: str) -> list[str]:
    return re.findall(r"^(`{3,})", document, flags=re.M)


def test_export_fence_survives_backticks():
    tricky = 'doc = """\n```python\nprint(1)\n```\n"""\n'
    cells = [
        RawCell("m", 0, "markdown", "# Title"),
        RawCell("c", 1, "code", tricky),
        RawCell("r", 2, "raw", "````raw````"),
    ]
    doc = export_markdown(cells, language="python", include_outputs=False)
    assert "````python\n" + tricky + "````" in doc
    assert "`````raw\n````raw````\n`````" in doc
    assert doc.startswith("# Title\n")
    # Every fence that opens is closed by the same fence, so the code cell's inner ``` stays inside it.
    lines = doc.splitlines()
    opener = lines.index("````python")
    closer = lines.index("````", opener + 1)
    assert lines[opener + 1 : closer] == tricky.rstrip("\n").split("\n")


def test_export_outputs_are_text_and_images_are_notes():
    nb = corpus_json("ipython-beyond-plain-python.ipynb")
    cells = []
    for i, c in enumerate(nb["cells"]):
        outs = tuple(raw_output(o, 4096) for o in c.get("outputs", [])) if c["cell_type"] == "code" else ()
        cells.append(
            RawCell(str(i), i, c["cell_type"], text_of(c["source"]), c.get("execution_count"), outs, len(outs))
        )
    doc = export_markdown(cells, language="python", include_outputs=True)
    assert "\x1b" not in doc
    assert "ZeroDivisionError" in doc
    assert re.search(r"\[image/png output, \d+ bytes\]", doc)
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            if "image/png" in o.get("data", {}):
                b64 = "".join(text_of(o["data"]["image/png"]).split())
                assert b64[100:160] not in doc
