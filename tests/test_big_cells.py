"""Big cells: every byte of a source is readable in pages, and a write built from a cut read is refused.

The sizes are the ones a person meets (30 KB, 100 KB, and 250 KB just under the 256 KiB write cap), with
multibyte text (Japanese, emoji) straddling every page boundary.
"""

from __future__ import annotations

import pytest

from helpers import Bridge, corpus_json, make_bridge, text_of
from webmcp_bridge.core.limits import DEFAULT_LIMITS, KIB, Limits, utf8_len
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.session.settings import DEFAULT_SETTINGS, BridgeSettings, SettingsApplier
from webmcp_bridge.tools import batch_toolset

PAGE = DEFAULT_LIMITS.source_read_bytes


def big_source(size: int) -> str:
    """About ``size`` UTF-8 bytes of real multibyte text (the Japanese quick tour's markdown), arranged so a
    character of 3 or 4 bytes straddles byte 16384 (the first cut)."""
    ja = "".join(
        text_of(c["source"]) for c in corpus_json("hf-quicktour-ja.ipynb")["cells"] if c["cell_type"] == "markdown"
    )
    head = "x" * (PAGE - 2) + "日本😀"  # 日 spans bytes 16382..16384, 😀 16385..16388: both cross a cut
    text = head
    while utf8_len(text) < size:
        text += ja
    while utf8_len(text) > size:
        text = text[: len(text) - max(1, (utf8_len(text) - size) // 4)]
    return text


def setup(size: int, limits: Limits = DEFAULT_LIMITS) -> tuple[Bridge, str, str]:
    b = make_bridge({"ja.ipynb": "hf-quicktour-ja.ipynb"}, limits=limits)
    b.reg.add_toolset(batch_toolset())
    b.open("ja.ipynb")
    cell = b.ok("jupyter_get_cells", {"endIndex": 1})["cells"][0]
    text = big_source(size)
    b.nb("ja.ipynb").person_set_source(cell["id"], text)  # the person's own big cell
    return b, cell["id"], text


def read_all(b: Bridge, cell_id: str) -> tuple[str, list[dict]]:
    pages, offset, parts = [], 0, []
    while True:
        snap = b.ok("jupyter_get_cells", {"cellIds": [cell_id], "sourceOffset": offset})["cells"][0]
        pages.append(snap)
        parts.append(snap["source"])
        if snap.get("nextSourceOffset") is None:
            return "".join(parts), pages
        assert snap["nextSourceOffset"] > offset
        offset = snap["nextSourceOffset"]


@pytest.mark.parametrize("size", [30_000, 100_000, 250_000])
def test_every_byte_of_a_big_cell_is_readable_in_pages(size):
    b, cell_id, text = setup(size)
    assert abs(utf8_len(text) - size) < 8
    whole, pages = read_all(b, cell_id)
    assert whole == text  # nothing lost, nothing doubled, no character split
    assert len(pages) == -(-utf8_len(text) // PAGE) or len(pages) == -(-utf8_len(text) // PAGE) + 1
    for page in pages:
        assert page["sourceTruncated"] is True and page["sourceBytes"] == utf8_len(text)
        assert utf8_len(page["source"]) <= PAGE
        page["source"].encode("utf-8")  # strict: no lone surrogate from a split character
    assert pages[0]["sourceOffset"] == 0 and pages[1]["sourceOffset"] == utf8_len(pages[0]["source"])
    assert pages[0]["source"].endswith("x") and pages[1]["source"].startswith("日本😀")


@pytest.mark.parametrize("size", [30_000, 100_000, 250_000])
def test_a_write_built_from_a_cut_read_is_refused_and_changes_nothing(size):
    b, cell_id, text = setup(size)
    first = b.ok("jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    assert first["sourceTruncated"] is True
    added = first["source"] + "\nprint('one more line')\n"
    err = b.fails(
        "jupyter_update_cell",
        {"cellId": cell_id, "source": added, "expectedSourceHash": first["sourceHash"]},
        "SOURCE_NOT_FULLY_READ",
    )
    assert err["nextSourceOffset"] == utf8_len(first["source"]) and err["sourceBytes"] == utf8_len(text)
    assert "sourceOffset" in err["message"]
    assert b.nb("ja.ipynb").find_cell(cell_id).source == text
    # in a batch too
    err = b.fails(
        "jupyter_apply_edits",
        {"edits": [{"op": "update", "cellId": cell_id, "source": added, "expectedSourceHash": first["sourceHash"]}]},
        "SOURCE_NOT_FULLY_READ",
    )
    assert err["editIndex"] == 0
    # skipping a middle page is not reading it
    if size > 2 * PAGE:
        last = b.ok("jupyter_get_cells", {"cellIds": [cell_id], "sourceOffset": utf8_len(text) - 100})["cells"][0]
        assert last["nextSourceOffset"] is None
        b.fails(
            "jupyter_update_cell",
            {"cellId": cell_id, "source": added, "expectedSourceHash": first["sourceHash"]},
            "SOURCE_NOT_FULLY_READ",
        )
    # once every page was read, the same write (now built from the whole text) goes through
    whole, _ = read_all(b, cell_id)
    new = whole + "\nprint('one more line')\n"
    b.ok("jupyter_update_cell", {"cellId": cell_id, "source": new, "expectedSourceHash": first["sourceHash"]})
    assert b.nb("ja.ipynb").find_cell(cell_id).source == text + "\nprint('one more line')\n"


def test_a_person_edit_between_pages_means_reading_again():
    b, cell_id, text = setup(30_000)
    read_all(b, cell_id)
    b.nb("ja.ipynb").person_set_source(cell_id, text + "\n# the person's line")
    snap = b.ok("jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    b.fails(
        "jupyter_update_cell",
        {"cellId": cell_id, "source": "short", "expectedSourceHash": snap["sourceHash"]},
        "SOURCE_NOT_FULLY_READ",
    )
    whole, _ = read_all(b, cell_id)
    assert whole.endswith("# the person's line")
    b.ok("jupyter_update_cell", {"cellId": cell_id, "source": "short", "expectedSourceHash": snap["sourceHash"]})


def test_what_the_agent_wrote_itself_or_edited_in_place_needs_no_reread():
    b, cell_id, text = setup(30_000)
    # edit_cell_source keeps every byte it does not replace: allowed without reading every page
    b.ok("jupyter_edit_cell_source", {"cellId": cell_id, "oldText": "日本😀", "newText": "日本😀!"})
    assert b.nb("ja.ipynb").find_cell(cell_id).source == text.replace("日本😀", "日本😀!", 1)
    big = big_source(100_000)
    new = b.ok("jupyter_insert_cell", {"source": big})["cell"]
    b.ok("jupyter_update_cell", {"cellId": new["id"], "source": big + "#", "expectedSourceHash": new["sourceHash"]})


def test_small_cells_are_unchanged_by_paging(running):
    snap = running.ok("jupyter_get_cells", {"endIndex": 3})["cells"]
    assert all("sourceTruncated" not in c and "sourceOffset" not in c for c in snap)
    # a source that fits one page comes back whole whatever sourceOffset says: a tail written back would drop the head
    at = running.ok("jupyter_get_cells", {"endIndex": 1, "sourceOffset": 3})["cells"][0]
    assert at == snap[0]


def test_a_source_that_shrank_between_pages_comes_back_whole():
    b, cell_id, text = setup(30_000)
    first = b.ok("jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    mine = "# the person's note: keep this\n" + text[:12_000]
    b.nb("ja.ipynb").person_set_source(cell_id, mine)  # the person cut the cell down while the agent read page 1
    second = b.ok("jupyter_get_cells", {"cellIds": [cell_id], "sourceOffset": first["nextSourceOffset"]})["cells"][0]
    assert second["source"] == mine and "sourceTruncated" not in second  # not an empty "last page" with the new hash
    assert second["sourceHash"] != first["sourceHash"]


def test_a_cut_read_stays_cut_when_the_person_raises_the_result_cap():
    """Pages read under a small result cap are a cut read after the person raises the cap, until read whole."""
    b, cell_id, _ = setup(30_000)
    code = "".join(f"df['total_{i}'] = df['price_{i}'] * df['qty_{i}']  # line {i}\n" for i in range(60))
    b.nb("ja.ipynb").person_set_source(cell_id, code)  # 3.5 KB: whole under the default cap
    settings = SettingsApplier(b.reg)
    settings.apply(BridgeSettings(result_bytes=4096))
    first = b.ok("jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    assert first["sourceTruncated"] is True and first["nextSourceOffset"] < utf8_len(code)
    settings.apply(DEFAULT_SETTINGS)
    write = {"cellId": cell_id, "source": first["source"] + "df.to_csv('out.csv')\n"}
    err = b.fails("jupyter_update_cell", {**write, "expectedSourceHash": first["sourceHash"]}, "SOURCE_NOT_FULLY_READ")
    assert err["nextSourceOffset"] == first["nextSourceOffset"]
    # an in-place edit of that cut read leaves the new source cut too
    b.ok("jupyter_edit_cell_source", {"cellId": cell_id, "oldText": "# line 0\n", "newText": "# line zero\n"})
    edited = b.nb("ja.ipynb").find_cell(cell_id).source
    b.fails("jupyter_update_cell", {**write, "expectedSourceHash": source_hash(edited)}, "SOURCE_NOT_FULLY_READ")
    # the person shrinks it and the agent's next page is empty: still nothing of the current source was read
    settings.apply(BridgeSettings(result_bytes=4096))
    shorter = code[:2000]
    b.nb("ja.ipynb").person_set_source(cell_id, shorter)
    empty = b.ok("jupyter_get_cells", {"cellIds": [cell_id], "sourceOffset": 2000})["cells"][0]
    assert empty["source"] == "" and empty["nextSourceOffset"] is None
    settings.apply(DEFAULT_SETTINGS)
    b.fails("jupyter_update_cell", {**write, "expectedSourceHash": empty["sourceHash"]}, "SOURCE_NOT_FULLY_READ")
    # read whole under the bigger cap, the write goes through
    whole = b.ok("jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    assert whole["source"] == shorter and "sourceTruncated" not in whole
    b.ok("jupyter_update_cell", {**write, "expectedSourceHash": whole["sourceHash"]})
    assert b.nb("ja.ipynb").find_cell(cell_id).source == write["source"]


def test_a_page_of_escaped_text_still_fits_the_result_cap():
    """Control characters take 6 bytes each in JSON: the page shrinks so it is never cut with an ellipsis."""
    b, cell_id, _ = setup(30_000)
    text = "\x01\x02" * 12_000 + "end"
    b.nb("ja.ipynb").person_set_source(cell_id, text)
    whole, pages = read_all(b, cell_id)
    assert whole == text and all(not p["source"].endswith("…") for p in pages)


@pytest.mark.parametrize("size", [100_000, 250_000])
def test_export_continues_where_it_stopped(size):
    b, cell_id, text = setup(size)
    parts, offset, rounds = [], 0, 0
    while True:
        page = b.ok("jupyter_export_notebook", {"includeOutputs": True, "offset": offset})
        assert "truncation" not in page  # paged, never cut
        parts.append(page["document"])
        rounds += 1
        if page["nextOffset"] is None:
            assert page["truncated"] is False
            break
        assert page["truncated"] is True and page["nextOffset"] > offset
        offset = page["nextOffset"]
    document = "".join(parts)
    assert rounds >= size // (50 * KIB)
    assert text in document  # the whole big cell, with the multibyte text at every cut
    last_md = next(
        text_of(c["source"])
        for c in reversed(corpus_json("hf-quicktour-ja.ipynb")["cells"])
        if c["cell_type"] == "markdown"
    )
    assert last_md in document  # and the notebook's end


# -- CRLF line ends -------------------------------------------------------------------------------------------


def crlf_bridge() -> tuple[Bridge, str]:
    import json

    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": "crlf-1",
                "metadata": {},
                "source": ["a = 1\r\n", "b = 2\r\n", "c = 3\r"],
                "outputs": [],
                "execution_count": None,
            }
        ],
    }
    b = Bridge({"crlf.ipynb": json.dumps(nb)})
    b.reg.add_toolset(batch_toolset())
    b.open("crlf.ipynb")
    return b, "crlf-1"


def test_a_crlf_cell_reads_as_the_editor_shows_it_and_lf_text_matches():
    b, cell_id = crlf_bridge()
    snap = b.ok("jupyter_get_cells")["cells"][0]
    assert snap["source"] == "a = 1\nb = 2\nc = 3\n"
    b.ok("jupyter_edit_cell_source", {"cellId": cell_id, "oldText": "b = 2\nc", "newText": "b = 20\nc"})
    b.ok(
        "jupyter_edit_cell_source", {"cellId": cell_id, "oldText": "a = 1\r\nb", "newText": "a = 10\r\nb"}
    )  # CRLF matches too
    assert b.nb("crlf.ipynb").find_cell(cell_id).source == "a = 10\nb = 20\nc = 3\n"
    now = b.ok("jupyter_get_cells")["cells"][0]
    b.ok(
        "jupyter_update_cell",
        {"cellId": cell_id, "source": "x = 1\r\ny = 2\r\n", "expectedSourceHash": now["sourceHash"]},
    )
    assert b.nb("crlf.ipynb").find_cell(cell_id).source == "x = 1\ny = 2\n"
    b.ok(
        "jupyter_apply_edits",
        {
            "edits": [
                {"op": "edit", "cellId": cell_id, "oldText": "x = 1\r\n", "newText": "x = 3\r\n"},
                {"op": "insert", "source": "p = 1\r\nq = 2"},
            ]
        },
    )
    assert [c.source for c in b.nb("crlf.ipynb").read_cells(None, head_bytes=0, max_outputs=0)] == [
        "x = 3\ny = 2\n",
        "p = 1\nq = 2",
    ]
