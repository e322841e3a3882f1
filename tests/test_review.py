"""Review threads (webmcp_bridge.review.threads) on real corpus notebooks, over the in-memory host.

What a person sees: a comment on a range stays on its text through harmless edits, orphans when the text
goes, never jumps to a guess; an output comment survives a rerun that prints the same thing; threads travel
through save and reload; malformed metadata never breaks anything and is kept as it was.
"""

from __future__ import annotations

import asyncio
import copy
import json
from itertools import count

import pytest

from helpers import corpus_text
from host_memory import METADATA_KEY, MemoryNotebook, MemoryWorkspace
from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.core.nbjson import raw_output
from webmcp_bridge.host.protocol import RawItem, RawOutput
from webmcp_bridge.review.anchors import index_of, output_fingerprint, position_of
from webmcp_bridge.review.threads import CellAnchor, OutputAnchor, RangeAnchor, Review, parse_threads

EULER = "pytudes-euler.ipynb"  # nbformat 4.5 with ids
RUNNING = "notebook-running-code.ipynb"  # nbformat 4.4: ids given on load
# def euler_1(N=1000): ... return sum(i for i in range(1, N) if i % 3 == 0 or i % 5 == 0)\n\nrun(euler_1)
EULER_1 = "cell-0091"


def open_nb(name: str, path: str = "nb.ipynb") -> tuple[MemoryWorkspace, MemoryNotebook]:
    ws = MemoryWorkspace({path: corpus_text(name)})
    return ws, asyncio.run(ws.open_notebook(path, activate=True))


def clock():
    ticks = count(1_700_000_000)
    return lambda: float(next(ticks))


#: the page secret these tests' person signs with (review/signatures.py; tests/test_review_authors.py judges)
SECRET = bytes(range(32))


def review(nb, **limits) -> Review:
    return Review(nb, Limits(**limits) if limits else Limits(), now=clock(), key=SECRET)


def cell_id_of(nb: MemoryNotebook, source: str) -> str:
    return next(c["id"] for c in nb.nb["cells"] if c["source"] == source)


def selected(source: str, selection: dict) -> str:
    return source[index_of(source, selection["start"]) : index_of(source, selection["end"])]


def fails(code: str, nb: MemoryNotebook, action) -> ToolError:
    """``action()`` raises ToolError(code) and changes nothing in the notebook."""
    before, revision = json.dumps(nb.nb, sort_keys=True), nb.revision()
    with pytest.raises(ToolError) as info:
        action()
    assert info.value.code.value == code, info.value.payload()
    assert json.dumps(nb.nb, sort_keys=True) == before and nb.revision() == revision
    return info.value


# -- range anchors ---------------------------------------------------------------------------------------


def test_quote_anchor_is_exact_and_reports_its_selection():
    _, nb = open_nb(EULER)
    r = review(nb)
    source = nb.find_cell(EULER_1).source
    view = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "Why not a set of multiples?", "person")
    assert (view.state, view.status, view.kind, view.cell_id) == ("exact", "open", "range", EULER_1)
    assert view.selection == {"start": {"line": 2, "column": 41}, "end": {"line": 2, "column": 51}}
    assert selected(source, view.selection) == "i % 3 == 0"
    assert view.anchor["quote"] == "i % 3 == 0"
    assert source.endswith(view.anchor["prefix"], 0, source.index("i % 3")) and len(view.anchor["prefix"]) == 32
    assert view.messages[0].author == "person" and view.messages[0].body == "Why not a set of multiples?"
    assert view.messages[0].time == 1_700_000_000.0 and view.cell_index == nb.find_cell(EULER_1).index
    assert r.counts() == {"open": 1, "resolved": 0}


def test_harmless_edits_keep_the_range_exact_or_reanchored():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "check", "agent").id
    source = nb.find_cell(EULER_1).source
    # An edit on another line (the docstring) keeps the quote where it was: exact.
    nb.person_set_source(EULER_1, source.replace("Multiples of 3 and 5", "Multiples of three and five"))
    assert r.get(thread).state == "exact"
    # A line inserted above moves it: found once elsewhere, reanchored, and the new selection selects it.
    moved = "# Problem 1\n" + nb.find_cell(EULER_1).source + "\nprint('done')"
    nb.person_set_source(EULER_1, moved)
    view = r.get(thread)
    assert view.state == "reanchored" and view.selection["start"]["line"] == 3
    assert selected(moved, view.selection) == "i % 3 == 0"


def test_deleting_the_quoted_text_orphans_and_never_guesses():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "check", "agent").id
    nb.person_set_source(EULER_1, nb.find_cell(EULER_1).source.replace("i % 3 == 0 or ", ""))
    view = r.get(thread)
    assert view.state == "orphaned" and view.selection is None
    assert view.anchor["quote"] == "i % 3 == 0"  # what it was about is still there to read
    with pytest.raises(ToolError) as info:
        r.focus(thread)
    assert info.value.code.value == "COMMENT_ANCHOR_STALE" and info.value.details["state"] == "orphaned"


def test_a_duplicated_quote_is_reanchored_by_its_context():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "check", "agent").id
    # The person adds a comment line quoting the same text above: two occurrences, one with the stored context.
    edited = "# note: i % 3 == 0 means divisible by 3\n" + nb.find_cell(EULER_1).source
    nb.person_set_source(EULER_1, edited)
    view = r.get(thread)
    assert view.state == "reanchored" and view.selection["start"] == {"line": 3, "column": 41}
    assert selected(edited, view.selection) == "i % 3 == 0"


def test_ambiguous_duplicates_orphan():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "check", "agent").id
    source = nb.find_cell(EULER_1).source
    twin = "def euler_1b(N=1000):\n    return sum(i for i in range(1, N) if i % 3 == 0 or i % 5 == 0)\n\nrun(euler_1)"
    nb.person_set_source(EULER_1, "# two versions\n" + source + "\n\n" + twin)
    view = r.get(thread)
    assert view.state == "orphaned" and view.selection is None  # both copies carry the stored context


def test_deleted_cell_is_cell_missing_for_every_anchor_kind():
    _, nb = open_nb(RUNNING)
    r = review(nb)
    printer = cell_id_of(nb, "print(a)")
    ids = [
        r.create(CellAnchor(printer), "whole cell", "person").id,
        r.create(RangeAnchor(printer, quote="print"), "range", "person").id,
        r.create(OutputAnchor(printer, 0), "output", "person").id,
    ]
    nb.person_delete_cell(printer)
    views = r.threads()
    assert [v.id for v in views] == ids
    assert {v.state for v in views} == {"cell-missing"} and all(
        v.cell_index is None and v.selection is None for v in views
    )
    with pytest.raises(ToolError) as info:
        r.focus(ids[0])
    assert info.value.code.value == "COMMENT_ANCHOR_STALE" and info.value.details["state"] == "cell-missing"


def test_create_from_a_quote_must_occur_exactly_once():
    _, nb = open_nb(EULER)
    r = review(nb)
    err = fails("INVALID_ARGUMENT", nb, lambda: r.create(RangeAnchor(EULER_1, quote="i % "), "x", "agent"))
    assert err.details["occurrences"] == 2 and "2 times" in err.message
    err = fails("INVALID_ARGUMENT", nb, lambda: r.create(RangeAnchor(EULER_1, quote="not in the cell"), "x", "agent"))
    assert err.details["occurrences"] == 0
    # Overlapping occurrences count too: "00" occurs twice in "1000".
    assert "N=1000" in nb.find_cell(EULER_1).source
    fails("INVALID_ARGUMENT", nb, lambda: r.create(RangeAnchor(EULER_1, quote="00"), "x", "agent"))
    fails("INVALID_ARGUMENT", nb, lambda: r.create(RangeAnchor(EULER_1), "x", "agent"))
    fails("INVALID_ARGUMENT", nb, lambda: r.create(RangeAnchor(EULER_1, quote="N", selection={}), "x", "agent"))
    fails("CELL_NOT_FOUND", nb, lambda: r.create(RangeAnchor("no-such-cell", quote="x"), "x", "agent"))
    fails(
        "TOO_LARGE",
        nb,
        lambda: review(nb, comment_quote_bytes=8).create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "x", "agent"),
    )
    assert r.counts() == {"open": 0, "resolved": 0}


def test_create_from_a_selection_counts_utf16_columns():
    _, nb = open_nb("hf-quicktour-ja.ipynb")
    cid = next(c["id"] for c in nb.nb["cells"] if c["source"].startswith('classifier("私たちは🤗 Transformers'))
    source = nb.find_cell(cid).source
    r = review(nb)
    # "Transformers" starts at code point 18 but UTF-16 column 19 (🤗 is a surrogate pair), as the editor counts.
    assert source.index("Transformers") == 18
    view = r.create(
        RangeAnchor(cid, selection={"start": {"line": 0, "column": 19}, "end": {"line": 0, "column": 31}}),
        "name?",
        "person",
    )
    assert view.anchor["quote"] == "Transformers" and view.state == "exact"
    by_quote = r.create(RangeAnchor(cid, quote="Transformers"), "same", "agent")
    assert (
        by_quote.selection == view.selection == {"start": {"line": 0, "column": 19}, "end": {"line": 0, "column": 31}}
    )
    # A reversed selection is the same range; positions outside the source, inside 🤗, or empty are refused.
    reversed_ = r.create(
        RangeAnchor(cid, selection={"start": {"line": 0, "column": 31}, "end": {"line": 0, "column": 19}}), "r", "agent"
    )
    assert reversed_.anchor["quote"] == "Transformers"
    for bad in (
        {"start": {"line": 0, "column": 17}, "end": {"line": 0, "column": 31}},  # between the halves of 🤗
        {"start": {"line": 0, "column": 0}, "end": {"line": 1, "column": 0}},  # past the last line
        {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 10_000}},  # past the line's end
        {"start": {"line": 0, "column": 5}, "end": {"line": 0, "column": 5}},  # empty
        {"start": {"line": -1, "column": 0}, "end": {"line": 0, "column": 3}},
        {"start": {"line": True, "column": 0}, "end": {"line": 0, "column": 3}},
        {"start": {"line": 0}, "end": {"line": 0, "column": 3}},
    ):
        fails("INVALID_ARGUMENT", nb, lambda bad=bad: r.create(RangeAnchor(cid, selection=bad), "x", "agent"))


def test_positions_round_trip_over_a_multilingual_cell():
    _, nb = open_nb("hf-quicktour-ar.ipynb")
    source = max((c["source"] for c in nb.nb["cells"] if "🤗" in c["source"]), key=len)
    for i in range(0, len(source) + 1, 7):
        assert index_of(source, position_of(source, i)) == i


def test_reanchor_an_orphaned_thread_from_a_new_selection():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "check", "agent")
    r.reply(thread.id, "agreed", "person")
    nb.person_set_source(EULER_1, nb.find_cell(EULER_1).source.replace("i % 3 == 0", "not i % 3"))
    assert r.get(thread.id).state == "orphaned"
    line = nb.find_cell(EULER_1).source.split("\n")[2]
    start = line.index("not i % 3")
    view = r.reanchor(
        thread.id, EULER_1, {"start": {"line": 2, "column": start}, "end": {"line": 2, "column": start + 9}}
    )
    assert view.state == "exact" and view.anchor["quote"] == "not i % 3"
    assert [m.body for m in view.messages] == ["check", "agreed"] and view.status == "open"
    # To the whole cell, or another cell; a bad selection changes nothing.
    assert r.reanchor(thread.id, "cell-0092", None).kind == "cell"
    fails(
        "INVALID_ARGUMENT",
        nb,
        lambda: r.reanchor(thread.id, EULER_1, {"start": {"line": 99, "column": 0}, "end": {"line": 99, "column": 1}}),
    )
    fails("CELL_NOT_FOUND", nb, lambda: r.reanchor(thread.id, "gone", None))
    fails("COMMENT_NOT_FOUND", nb, lambda: r.reanchor("feedfeedfeed", EULER_1, None))


# -- output anchors --------------------------------------------------------------------------------------


def run(nb: MemoryNotebook, *cell_ids: str) -> None:
    for cid in cell_ids:
        asyncio.run(nb.run_cell(cid, 10))


def test_output_anchor_survives_a_rerun_printing_the_same_thing():
    _, nb = open_nb(RUNNING)
    r = review(nb)
    setter, printer = cell_id_of(nb, "a = 10"), cell_id_of(nb, "print(a)")
    view = r.create(OutputAnchor(printer, 0), "prints 10", "person")
    assert (
        view.state == "exact" and view.anchor["outputType"] == "stream" and view.anchor["mimeTypes"] == ["text/plain"]
    )
    count_before = nb.find_cell(printer).execution_count
    run(nb, setter, setter, printer)
    assert nb.find_cell(printer).execution_count != count_before  # only the count changed
    assert r.get(view.id).state == "exact"
    # A different output is reported, and so is an output that is gone.
    nb.person_set_source(setter, "a = 11")
    run(nb, setter, printer)
    assert r.get(view.id).state == "output-changed"
    nb.person_set_source(setter, "a = 10")
    run(nb, setter, printer)
    assert r.get(view.id).state == "exact"
    nb.clear_outputs(printer)
    assert r.get(view.id).state == "output-changed"


def test_output_anchor_errors_change_nothing():
    _, nb = open_nb(RUNNING)
    r = review(nb)
    printer = cell_id_of(nb, "print(a)")
    markdown = next(c["id"] for c in nb.nb["cells"] if c["cell_type"] == "markdown")
    fails("OUTPUT_NOT_FOUND", nb, lambda: r.create(OutputAnchor(printer, 1), "x", "agent"))
    fails("OUTPUT_NOT_FOUND", nb, lambda: r.create(OutputAnchor(markdown, 0), "x", "agent"))
    fails("INVALID_ARGUMENT", nb, lambda: r.create(OutputAnchor(printer, -1), "x", "agent"))
    fails("CELL_NOT_FOUND", nb, lambda: r.create(OutputAnchor("nope", 0), "x", "agent"))


def test_fingerprint_ignores_execution_counts_and_tracebacks():
    ws, nb = open_nb(EULER)
    r = review(nb)
    view = r.create(OutputAnchor(EULER_1, 0), "233168?", "agent")
    assert nb.nb["cells"][nb._index(EULER_1)]["outputs"][0]["output_type"] == "execute_result"
    nb.nb["cells"][nb._index(EULER_1)]["outputs"][0]["execution_count"] = 999
    nb.nb["cells"][nb._index(EULER_1)]["execution_count"] = 999
    assert r.get(view.id).state == "exact"
    error = json.loads(corpus_text("ipython-beyond-plain-python.ipynb"))
    err = next(o for c in error["cells"] for o in c.get("outputs", []) if o["output_type"] == "error")
    rerun = copy.deepcopy(err)
    rerun["traceback"] = [
        line.replace("<ipython-input-", "Cell In[77], <ipython-input-") for line in err["traceback"]
    ] + ["more"]
    assert output_fingerprint(raw_output(err, 1024)) == output_fingerprint(raw_output(rerun, 1024))
    rerun["evalue"] = "something else"
    assert output_fingerprint(raw_output(err, 1024)) != output_fingerprint(raw_output(rerun, 1024))
    # Size and head of each representation count; the stream name counts.
    base = RawOutput("stream", (RawItem("text/plain", 3, "10\n"),), name="stdout")
    assert output_fingerprint(base) != output_fingerprint(
        RawOutput("stream", (RawItem("text/plain", 3, "10\n"),), name="stderr")
    )
    assert output_fingerprint(base) != output_fingerprint(
        RawOutput("stream", (RawItem("text/plain", 4, "10\n"),), name="stdout")
    )


def test_focus_selects_the_range_or_highlights_the_output():
    _, nb = open_nb(RUNNING)
    r = review(nb)
    printer = cell_id_of(nb, "print(a)")
    ranged = r.create(RangeAnchor(printer, quote="a"), "which a?", "person")
    view, shown = r.focus(ranged.id)
    assert shown == "selection" and nb.focus().cell_id == printer and nb.focus().selection == ranged.selection
    output = r.create(OutputAnchor(printer, 0), "out", "person")
    assert r.focus(output.id)[1] == "output" and nb.highlighted == [(printer, 0)]
    nb.clear_outputs(printer)
    assert r.focus(output.id)[1] == "cell" and nb.highlighted == [(printer, 0)]  # the output is gone: the cell is shown
    whole = r.create(CellAnchor(printer), "cell", "person")
    assert r.focus(whole.id)[1] == "cell" and nb.focus().selection is None


# -- messages, status, bounds ----------------------------------------------------------------------------


def test_reply_resolve_reopen_record_authors_and_times():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(CellAnchor(EULER_1), "Could this use a formula?", "person").id
    r.reply(thread, "Yes: inclusion-exclusion.", "agent")
    view = r.resolve(thread, "agent", "Done in the next cell.")
    assert view.status == "resolved" and view.resolved_by == "agent" and view.resolved_at == view.updated_at
    assert [(m.author, m.body) for m in view.messages] == [
        ("person", "Could this use a formula?"),
        ("agent", "Yes: inclusion-exclusion."),
        ("agent", "Done in the next cell."),
    ]
    assert [m.time for m in view.messages] == sorted(m.time for m in view.messages)
    assert (
        r.counts() == {"open": 0, "resolved": 1}
        and r.threads() == []
        and [v.id for v in r.threads("resolved")] == [thread]
    )
    fails("INVALID_ARGUMENT", nb, lambda: r.resolve(thread, "person"))
    view = r.reopen(thread, "person")
    assert view.status == "open" and view.resolved_by is None and view.resolved_at is None
    assert "resolvedBy" not in nb.nb["metadata"][METADATA_KEY]["threads"][0]
    fails("INVALID_ARGUMENT", nb, lambda: r.reopen(thread, "person"))
    assert r.resolve(thread, "person").messages[-1].body == "Done in the next cell."  # no message: none added


def test_bodies_and_counts_are_bounded_and_refused_whole():
    _, nb = open_nb(EULER)
    r = review(nb, comment_body_bytes=16, comment_messages_stored=2, comment_threads_stored=2)
    thread = r.create(CellAnchor(EULER_1), "short", "agent").id
    err = fails("TOO_LARGE", nb, lambda: r.reply(thread, "é" * 9, "agent"))  # 18 bytes of UTF-8
    assert err.details == {"field": "body", "bytes": 18, "maxBytes": 16}
    fails("TOO_LARGE", nb, lambda: r.create(CellAnchor(EULER_1), "x" * 17, "agent"))
    fails("TOO_LARGE", nb, lambda: r.resolve(thread, "agent", "x" * 17))
    for blank in ("", "   \n"):
        fails("INVALID_ARGUMENT", nb, lambda blank=blank: r.reply(thread, blank, "agent"))
    fails("INVALID_ARGUMENT", nb, lambda: r.reply(thread, "hi", "robot"))  # type: ignore[arg-type]
    r.reply(thread, "second", "person")
    fails("TOO_LARGE", nb, lambda: r.reply(thread, "third", "person"))
    r.create(CellAnchor(EULER_1), "two", "agent")
    fails("TOO_LARGE", nb, lambda: r.create(CellAnchor(EULER_1), "three", "agent"))
    for call in (
        lambda: r.get("feedfeedfeed"),
        lambda: r.reply("feedfeedfeed", "x", "agent"),
        lambda: r.resolve("feedfeedfeed", "agent"),
        lambda: r.reopen("feedfeedfeed", "agent"),
    ):
        err = fails("COMMENT_NOT_FOUND", nb, call)
        assert err.message == "No comment thread with id 'feedfeedfeed' in this notebook."


def test_to_json_keeps_the_first_and_latest_messages():
    _, nb = open_nb(EULER)
    r = review(nb)
    thread = r.create(CellAnchor(EULER_1), "m0", "person").id
    for i in range(1, 6):
        r.reply(thread, f"m{i}", "agent" if i % 2 else "person")
    payload = r.get(thread).to_json(max_messages=3)
    assert [m["body"] for m in payload["messages"]] == ["m0", "m4", "m5"]
    assert payload["messageCount"] == 6 and payload["omittedMessageCount"] == 3
    assert [m["body"] for m in r.get(thread).to_json()["messages"]] == [f"m{i}" for i in range(6)]
    assert set(payload) >= {
        "id",
        "status",
        "state",
        "cellId",
        "cellIndex",
        "anchor",
        "selection",
        "createdAt",
        "updatedAt",
    }


def test_ids_are_short_random_hex_and_unique():
    _, nb = open_nb(EULER)
    r = review(nb)
    ids = [r.create(CellAnchor(EULER_1), f"c{i}", "agent").id for i in range(30)]
    assert len(set(ids)) == 30 and all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


# -- storage ---------------------------------------------------------------------------------------------


def test_threads_travel_through_save_and_reload():
    ws, nb = open_nb(RUNNING, "demo/running.ipynb")
    nb.nb["metadata"][METADATA_KEY] = {"access": "write", "custom": [1, 2]}
    r = review(nb)
    printer = cell_id_of(nb, "print(a)")
    made = [
        r.create(CellAnchor(printer), "cell", "person"),
        r.create(RangeAnchor(printer, quote="(a)"), "range", "agent"),
        r.create(OutputAnchor(printer, 0), "output", "agent"),
    ]
    r.resolve(made[0].id, "person", "ok")
    asyncio.run(nb.save())
    saved = json.loads(ws.files["demo/running.ipynb"])
    block = saved["metadata"][METADATA_KEY]
    assert block["schemaVersion"] == 1 and block["access"] == "write" and block["custom"] == [1, 2]
    assert [t["id"] for t in block["threads"]] == [t.id for t in made]
    del ws.open["demo/running.ipynb"]
    reloaded = asyncio.run(ws.open_notebook("demo/running.ipynb", activate=True))
    again = review(reloaded).threads("all")
    assert [(v.id, v.state, v.status) for v in again] == [
        (made[0].id, "exact", "resolved"),
        (made[1].id, "exact", "open"),
        (made[2].id, "exact", "open"),
    ]
    assert [m.body for m in again[0].messages] == ["cell", "ok"]
    assert asyncio.run(ws.notebook_bridge_metadata("demo/running.ipynb"))["threads"] == block["threads"]


def valid_thread(thread_id: str, cell_id: str = EULER_1) -> dict:
    return {
        "id": thread_id,
        "status": "open",
        "anchor": {"kind": "cell", "cellId": cell_id},
        "messages": [{"author": "person", "body": "hello", "time": 1.5}],
    }


MALFORMED_ENTRIES = [
    1,
    "thread",
    None,
    [],
    {},
    {"id": 5},
    {"id": ""},
    {"id": "x" * 65, "status": "open", "anchor": {"kind": "cell", "cellId": EULER_1}, "messages": []},
    {**valid_thread("bad-status"), "status": "closed"},
    {**valid_thread("bad-kind"), "anchor": {"kind": "word", "cellId": EULER_1}},
    {**valid_thread("no-cell"), "anchor": {"kind": "cell"}},
    {**valid_thread("cell-int"), "anchor": {"kind": "cell", "cellId": 7}},
    {
        **valid_thread("range-no-quote"),
        "anchor": {
            "kind": "range",
            "cellId": EULER_1,
            "prefix": "",
            "suffix": "",
            "selection": {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 1}},
        },
    },
    {
        **valid_thread("range-bad-sel"),
        "anchor": {
            "kind": "range",
            "cellId": EULER_1,
            "quote": "def",
            "prefix": "",
            "suffix": "",
            "selection": {"start": {"line": "0", "column": 0}, "end": {"line": 0, "column": 3}},
        },
    },
    {
        **valid_thread("output-neg"),
        "anchor": {"kind": "output", "cellId": EULER_1, "outputIndex": -1, "fingerprint": "x"},
    },
    {
        **valid_thread("output-bool"),
        "anchor": {"kind": "output", "cellId": EULER_1, "outputIndex": True, "fingerprint": "x"},
    },
    {**valid_thread("msgs-dict"), "messages": {"0": "hi"}},
    {**valid_thread("anchor-list"), "anchor": ["cell", EULER_1]},
    valid_thread("dup"),
]


@pytest.mark.parametrize(
    "block",
    [
        None,
        5,
        "threads",
        [valid_thread("a")],
        {"threads": "x"},
        {"threads": {"a": valid_thread("a")}},
        {"threads": None},
        {"schemaVersion": "one", "threads": MALFORMED_ENTRIES},
        {"schemaVersion": 7, "access": "read", "threads": MALFORMED_ENTRIES},
        {"threads": [valid_thread("dup"), *MALFORMED_ENTRIES]},
    ],
)
def test_malformed_metadata_never_breaks_list_or_create_and_is_kept(block):
    _, nb = open_nb(EULER)
    if block is not None:
        nb.nb["metadata"][METADATA_KEY] = copy.deepcopy(block)
    r = review(nb)
    listed = r.threads("all")
    assert all(v.cell_id == EULER_1 for v in listed)
    has_list = isinstance(block, dict) and isinstance(block.get("threads"), list)
    assert [v.id for v in listed] == (["dup"] if has_list else [])  # the one valid entry, read once
    new = r.create(RangeAnchor(EULER_1, quote="i % 3 == 0"), "new", "agent")
    stored = nb.nb["metadata"][METADATA_KEY]
    if isinstance(block, dict):
        for key, value in block.items():
            if key not in ("threads", "schemaVersion"):
                assert stored[key] == value
        if isinstance(block.get("threads"), list):
            assert stored["threads"][:-1] == block["threads"]  # every entry kept, untouched, in order
        if isinstance(block.get("schemaVersion"), int):
            assert stored["schemaVersion"] == block["schemaVersion"]
    assert stored["schemaVersion"] in (1, 7) and stored["threads"][-1]["id"] == new.id
    assert r.get(new.id).state == "exact"
    # Writing to a valid thread next to malformed ones keeps them too.
    before = copy.deepcopy(stored["threads"][:-1])
    r.resolve(new.id, "agent", "closing")
    assert nb.nb["metadata"][METADATA_KEY]["threads"][:-1] == before
    assert r.counts()["resolved"] == 1


def test_malformed_entries_are_skipped_and_duplicates_read_once():
    _, nb = open_nb(EULER)
    nb.nb["metadata"][METADATA_KEY] = {"threads": [valid_thread("dup"), *MALFORMED_ENTRIES]}
    r = review(nb)
    assert [v.id for v in r.threads("all")] == ["dup"]
    assert r.counts() == {"open": 1, "resolved": 0} and r.count("all") == 1
    assert [t["id"] for t in parse_threads(nb.bridge_metadata())] == ["dup"]


def test_malformed_messages_are_skipped_when_read_and_kept_when_written():
    _, nb = open_nb(EULER)
    thread = valid_thread("t1")
    thread["messages"] += [
        {"author": "robot", "body": "x", "time": 2},
        {"author": "agent", "body": 3, "time": 2},
        {"author": "agent", "body": "nan time", "time": float("nan")},
        "text",
        None,
        {"author": "agent", "body": "fine", "time": 3},
    ]
    thread["createdAt"] = "yesterday"
    nb.nb["metadata"][METADATA_KEY] = {"threads": [thread]}
    r = review(nb)
    view = r.get("t1")
    assert [m.body for m in view.messages] == ["hello", "fine"] and view.created_at is None
    r.reply("t1", "third", "agent")
    stored = nb.nb["metadata"][METADATA_KEY]["threads"][0]["messages"]
    assert stored[:-1] == thread["messages"] and stored[-1]["body"] == "third"
    assert review(nb).get("t1").to_json()["messageCount"] == 3


def test_stored_range_with_a_selection_outside_the_source_still_resolves():
    _, nb = open_nb(EULER)
    thread = valid_thread("t1")
    thread["anchor"] = {
        "kind": "range",
        "cellId": EULER_1,
        "quote": "run(euler_1)",
        "prefix": "",
        "suffix": "",
        "selection": {"start": {"line": 400, "column": 9}, "end": {"line": 400, "column": 20}},
    }
    nb.nb["metadata"][METADATA_KEY] = {"threads": [thread]}
    view = review(nb).get("t1")
    assert view.state == "reanchored" and view.selection["start"]["line"] == 4


def test_threads_filter_by_status_and_cell_with_a_limit():
    _, nb = open_nb(EULER)
    r = review(nb)
    made = [r.create(CellAnchor(cid), f"on {cid}", "agent").id for cid in (EULER_1, "cell-0092", EULER_1, EULER_1)]
    r.resolve(made[2], "person")
    assert [v.id for v in r.threads(cell_id=EULER_1)] == [made[0], made[3]]
    assert [v.id for v in r.threads("all", EULER_1, limit=2)] == made[0:1] + made[2:3]
    assert r.count("all", EULER_1) == 3 and r.count("resolved") == 1
    assert r.counts_by_cell() == {EULER_1: 2, "cell-0092": 1}
    assert r.threads(cell_id="no-such-cell") == []
    with pytest.raises(ToolError):
        r.threads("closed")  # type: ignore[arg-type]
