"""bounds.py and the result/write caps as an agent sees them on the largest corpus notebooks."""

from __future__ import annotations

import json
import re

import pytest

from helpers import Bridge, corpus_json, make_bridge, text_of
from webmcp_bridge.core.bounds import dumps, fit_payload, json_bytes
from webmcp_bridge.core.limits import DEFAULT_LIMITS, KIB, Limits, utf8_len

CAP = DEFAULT_LIMITS.result_bytes
BIG = ["handson-ml2-math-calculus.ipynb", "handson-ml2-tools-pandas.ipynb"]


# -- fit_payload on its own ------------------------------------------------------------------------------


def test_small_payload_is_untouched():
    payload = {"a": "x" * 10, "items": [1, 2, 3]}
    assert fit_payload(dict(payload), 1000) == payload
    assert "truncated" not in fit_payload(dict(payload), 1000)


def test_long_strings_are_cut_and_reported():
    text = "مرحبا بالعالم 🤗 " * 3000
    payload = fit_payload({"id": "keep-me", "document": text, "sourceHash": "abc"}, 8 * KIB)
    assert json_bytes(payload) <= 8 * KIB
    assert payload["truncated"] is True
    cut = payload["truncation"][0]
    assert cut["path"] == "document" and cut["totalBytes"] == utf8_len(text) and cut["keptBytes"] < cut["totalBytes"]
    assert payload["document"].endswith("…")
    kept = payload["document"][:-1]
    assert text.startswith(kept) and utf8_len(kept) == cut["keptBytes"]
    assert payload["id"] == "keep-me" and payload["sourceHash"] == "abc"


def test_long_lists_are_cut_and_reported():
    payload = fit_payload({"cells": [{"id": f"c{i}", "n": i} for i in range(5000)]}, 4 * KIB)
    assert json_bytes(payload) <= 4 * KIB
    report = {c["path"]: c for c in payload["truncation"]}
    assert report["cells"]["totalItems"] == 5000
    assert report["cells"]["keptItems"] == len(payload["cells"]) > 0
    assert [c["n"] for c in payload["cells"]] == list(range(len(payload["cells"])))  # the first items, in order


def test_escaping_heavy_strings_fit():
    text = '"\\\n\t' * 20000  # every character doubles in JSON
    payload = fit_payload({"text": text}, 4 * KIB)
    assert json_bytes(payload) <= 4 * KIB and text.startswith(payload["text"][:-1])


def test_tiny_cap_gives_a_minimal_result():
    payload = fit_payload({"cells": [{"id": "x" * 500}] * 3}, 120)
    assert json_bytes(payload) <= 120 and payload["truncated"] is True


# -- the tools, on the biggest corpus notebooks --------------------------------------------------------------


@pytest.fixture(scope="module")
def big() -> Bridge:
    b = make_bridge({name: name for name in BIG})
    for name in BIG:
        b.open(name)
    return b


def png_chunks(name: str) -> list[str]:
    """Base64 snippets taken from the middle of every PNG output of a corpus notebook."""
    chunks = []
    for cell in corpus_json(name)["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            if data:
                b64 = "".join(text_of(data).split())
                chunks.append(b64[len(b64) // 2 : len(b64) // 2 + 48])
    return chunks


def assert_no_binary(text: str, chunks: list[str]) -> None:
    assert "iVBORw0KGgo" not in text  # base64 of the PNG signature
    for chunk in chunks:
        assert chunk not in text
    assert not re.search(r"[A-Za-z0-9+/]{400,}", text)


@pytest.mark.parametrize("name", BIG)
def test_get_cells_with_outputs_fits_the_cap(big, name):
    result = big.call("jupyter_get_cells", {"notebookPath": name, "includeOutputs": True})
    text = result["content"][0]["text"]
    assert utf8_len(text) <= CAP
    payload = result["structuredContent"]
    assert payload["truncated"] is True
    assert payload["cells"] and all(c["sourceHash"] and c["id"] for c in payload["cells"])
    if "truncation" in payload:
        assert all("path" in cut for cut in payload["truncation"])
    assert_no_binary(text, png_chunks(name))


@pytest.mark.parametrize("name", BIG)
def test_paging_by_next_start_index_visits_every_cell(big, name):
    """An agent that follows nextStartIndex until it is absent must see every cell exactly once, even
    when the result cap (not only the cell-count cap) shortened the list."""
    seen: list[int] = []
    start = 0
    total = None
    for _ in range(200):
        payload = big.ok("jupyter_get_cells", {"notebookPath": name, "includeOutputs": True, "startIndex": start})
        total = payload["cellCount"]
        seen.extend(c["index"] for c in payload["cells"])
        if "nextStartIndex" not in payload:
            break
        start = payload["nextStartIndex"]
    assert seen == list(range(total)), f"skipped cells: {sorted(set(range(total)) - set(seen))[:10]}..."


@pytest.mark.parametrize("name", BIG)
def test_omitted_count_matches_what_was_left_out(big, name):
    payload = big.ok("jupyter_get_cells", {"notebookPath": name, "includeOutputs": True})
    assert payload["omittedCount"] == payload["cellCount"] - len(payload["cells"])


@pytest.mark.parametrize("name", BIG)
def test_export_with_outputs_fits_the_cap(big, name):
    result = big.call("jupyter_export_notebook", {"notebookPath": name, "includeOutputs": True})
    text = result["content"][0]["text"]
    assert utf8_len(text) <= CAP
    payload = result["structuredContent"]
    assert payload["truncated"] is True and payload["nextOffset"] == utf8_len(payload["document"])
    assert "truncation" not in payload  # a part of the document, never cut by the result cap
    assert payload["document"].startswith("#") or payload["document"].startswith("*")
    assert_no_binary(text, png_chunks(name))
    assert "[image/png output," in payload["document"]


@pytest.mark.parametrize(
    "name, figures", [("handson-ml2-math-calculus.ipynb", 6), ("handson-ml2-tools-pandas.ipynb", 7)]
)
def test_every_page_of_cells_is_free_of_binary(big, name, figures):
    chunks = png_chunks(name)
    assert len(chunks) == figures
    start = 0
    while True:
        result = big.call(
            "jupyter_get_cells",
            {"notebookPath": name, "includeOutputs": True, "startIndex": start, "endIndex": start + 30},
        )
        assert_no_binary(result["content"][0]["text"], chunks)
        cells = result["structuredContent"]["cells"]
        last = cells[-1]["index"]
        if last + 1 >= result["structuredContent"]["cellCount"]:
            break
        start = last + 1


def test_long_source_is_cut_with_size_and_still_updatable():
    b = make_bridge({"ja.ipynb": "hf-quicktour-ja.ipynb"})
    b.open("ja.ipynb")
    ja = "".join(
        text_of(c["source"]) for c in corpus_json("hf-quicktour-ja.ipynb")["cells"] if c["cell_type"] == "markdown"
    )
    long = (ja * 2)[:20000]
    assert utf8_len(long) > 16 * KIB
    cell = b.ok("jupyter_insert_cell", {"cellType": "markdown", "source": long})["cell"]
    snap = b.ok("jupyter_get_cells", {"cellIds": [cell["id"]]})["cells"][0]
    assert snap["sourceTruncated"] is True and snap["sourceBytes"] == utf8_len(long)
    assert utf8_len(snap["source"]) <= DEFAULT_LIMITS.source_read_bytes
    assert long.startswith(snap["source"])
    assert snap["sourceHash"] == cell["sourceHash"]  # the hash is of the whole source
    b.ok("jupyter_update_cell", {"cellId": cell["id"], "source": "short", "expectedSourceHash": snap["sourceHash"]})


MULTILINGUAL = {
    "ja.ipynb": "hf-quicktour-ja.ipynb",
    "ar.ipynb": "hf-quicktour-ar.ipynb",
    "tour.ipynb": "notebook-v7-tour.ipynb",
}


@pytest.mark.parametrize("path", sorted(MULTILINGUAL))
def test_multibyte_results_stay_valid_when_cut(path):
    cap = 4 * KIB
    b = make_bridge(MULTILINGUAL, limits=Limits(result_bytes=cap))
    originals = {i: text_of(c["source"]) for i, c in enumerate(corpus_json(MULTILINGUAL[path])["cells"])}
    result = b.call("jupyter_get_cells", {"notebookPath": path})
    text = result["content"][0]["text"]
    assert utf8_len(text) <= cap
    text.encode("utf-8")  # strict: a split code point or lone surrogate would raise
    payload = result["structuredContent"]
    # get_cells keeps whole cells while they fit and reports the rest (paging never skips a cell)
    assert payload["truncated"] is True and payload["omittedCount"] == len(originals) - len(payload["cells"]) > 0
    assert payload["nextStartIndex"] == len(payload["cells"])
    for cell in payload["cells"]:
        src = cell["source"]
        kept = src[:-1] if src.endswith("…") and src != originals[cell["index"]] else src
        assert originals[cell["index"]].startswith(kept)
    export = b.call("jupyter_export_notebook", {"notebookPath": path})
    assert export["structuredContent"]["truncated"] is True
    document = export["structuredContent"]["document"]
    document.encode("utf-8")
    assert export["structuredContent"]["nextOffset"] == utf8_len(document)  # the rest is the next part
    assert any(ch > "\u0600" for ch in document)  # multibyte text survived, not replaced


WRITE_CAP = DEFAULT_LIMITS.source_write_bytes


def test_writes_over_the_cap_are_refused_and_change_nothing(running):
    b = running
    cell = next(c for c in b.ok("jupyter_get_cells")["cells"] if c["type"] == "code")
    too_big = "# é\n" * (WRITE_CAP // 5 + 100)  # 5 bytes a line
    assert WRITE_CAP < utf8_len(too_big) < DEFAULT_LIMITS.input_bytes
    p = b.fails("jupyter_insert_cell", {"source": too_big}, "TOO_LARGE")
    assert p["maxBytes"] == WRITE_CAP and p["bytes"] == utf8_len(too_big)
    b.fails(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": too_big, "expectedSourceHash": cell["sourceHash"]},
        "TOO_LARGE",
    )
    b.fails(
        "jupyter_edit_cell_source",
        {"cellId": cell["id"], "oldText": cell["source"][:3], "newText": too_big},
        "TOO_LARGE",
    )
    # an edit whose replacement is small but whose result is over the cap is refused too
    half = "x" * (WRITE_CAP // 2 + 10)
    b.ok(
        "jupyter_update_cell", {"cellId": cell["id"], "source": half + "MARK", "expectedSourceHash": cell["sourceHash"]}
    )
    b.fails("jupyter_edit_cell_source", {"cellId": cell["id"], "oldText": "MARK", "newText": half}, "TOO_LARGE")
    exactly = "y" * WRITE_CAP
    new = b.ok("jupyter_insert_cell", {"source": exactly})["cell"]
    assert (
        b.nb("demo/running.ipynb").find_cell(new["id"]).source == exactly
    )  # at the cap: accepted whole, never truncated


def test_dumps_is_compact_utf8():
    assert dumps({"a": "é", "b": [1, 2]}) == '{"a":"é","b":[1,2]}'
    assert json_bytes({"a": "é"}) == len('{"a":"é"}'.encode())
    assert json.loads(dumps({"t": "🤗"})) == {"t": "🤗"}
