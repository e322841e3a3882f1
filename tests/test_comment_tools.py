"""The 7 review-thread tools through the registry, over the in-memory host and real corpus notebooks.

Every failing call goes through ``Bridge.fails``: it also asserts that no open notebook's JSON, no revision
and no workspace file changed.
"""

from __future__ import annotations

import json

import pytest

from helpers import Bridge, make_bridge
from host_memory import METADATA_KEY
from webmcp_bridge.access.levels import set_cell_level
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.review.threads import CellAnchor, RangeAnchor, Review
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import review_toolset

EULER = "demo/euler.ipynb"
RUN = "demo/running.ipynb"
EULER_1 = "cell-0091"  # ... return sum(i for i in range(1, N) if i % 3 == 0 or i % 5 == 0)\n\nrun(euler_1)
TOOLS = (
    "jupyter_list_comments",
    "jupyter_get_comment",
    "jupyter_create_comment",
    "jupyter_reply_comment",
    "jupyter_resolve_comment",
    "jupyter_reopen_comment",
    "jupyter_focus_comment",
)


def review_bridge(limits: Limits = Limits()) -> Bridge:
    b = make_bridge({EULER: "pytudes-euler.ipynb", RUN: "notebook-running-code.ipynb"}, limits=limits)
    b.reg.add_toolset(review_toolset())
    b.open(RUN)
    b.open(EULER)
    return b


@pytest.fixture
def b() -> Bridge:
    return review_bridge()


def printer_id(b: Bridge) -> str:
    return next(c["id"] for c in b.nb(RUN).nb["cells"] if c["source"] == "print(a)")


def test_definitions_and_annotations():
    definitions = {d["name"]: d for d in build_bridge(None).registry.definitions()}  # type: ignore[arg-type]
    for name in TOOLS:
        d = definitions[name]
        assert "notebookPath" in d["inputSchema"]["properties"] and d["inputSchema"]["additionalProperties"] is False
        read = name in ("jupyter_list_comments", "jupyter_get_comment")
        assert d["annotations"] == {
            "readOnlyHint": read,
            "untrustedContentHint": True,
            "consequentialHint": False,
            "destructiveHint": False,
            "idempotentHint": name != "jupyter_create_comment" and name != "jupyter_reply_comment",
            "openWorldHint": False,
        }
    create = definitions["jupyter_create_comment"]["inputSchema"]
    assert set(create["properties"]) == {"notebookPath", "cellId", "body", "quote", "selection", "outputIndex"}
    assert set(create["required"]) == {"cellId", "body"}


def test_agent_comments_on_a_cell_a_range_a_selection_and_an_output(b):
    made = [
        b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "Whole cell."})["thread"],
        b.ok("jupyter_create_comment", {"cellId": EULER_1, "quote": "i % 3 == 0", "body": "This test."})["thread"],
        b.ok(
            "jupyter_create_comment",
            {
                "cellId": EULER_1,
                "body": "The call.",
                "selection": {"start": {"line": 4, "column": 0}, "end": {"line": 4, "column": 12}},
            },
        )["thread"],
        b.ok("jupyter_create_comment", {"cellId": EULER_1, "outputIndex": 0, "body": "233168 is right."})["thread"],
    ]
    assert [t["anchor"]["kind"] for t in made] == ["cell", "range", "range", "output"]
    assert {t["state"] for t in made} == {"exact"} and {t["status"] for t in made} == {"open"}
    assert made[1]["selection"] == {"start": {"line": 2, "column": 41}, "end": {"line": 2, "column": 51}}
    assert made[2]["anchor"]["quote"] == "run(euler_1)"
    assert all(t["messages"][0]["author"] == "agent" and t["messageCount"] == 1 for t in made)
    listed = b.ok("jupyter_list_comments")
    assert [t["id"] for t in listed["threads"]] == [t["id"] for t in made]
    assert (
        listed["truncated"] is False and listed["omittedCount"] == 0 and listed["counts"] == {"open": 4, "resolved": 0}
    )
    stored = b.nb(EULER).nb["metadata"][METADATA_KEY]
    assert stored["schemaVersion"] == 1 and [t["id"] for t in stored["threads"]] == [t["id"] for t in made]
    got = b.ok("jupyter_get_comment", {"threadId": made[3]["id"], "notebookPath": EULER})["thread"]
    assert got == made[3]
    assert b.ok("jupyter_get_context")["review"] == {"open": 4, "resolved": 0}


def test_the_agent_reads_what_the_person_wrote(b):
    person = b.person(EULER).create(
        RangeAnchor(EULER_1, quote="range(1, N)"), "Off by one? <script>alert(1)</script>", "person"
    )
    thread = b.ok("jupyter_list_comments")["threads"][0]
    assert thread["id"] == person.id and thread["messages"][0] == {
        "author": "person",
        "body": person.messages[0].body,
        "time": person.messages[0].time,
    }
    reply = b.ok("jupyter_reply_comment", {"threadId": person.id, "body": "No: range stops before N."})["thread"]
    assert [m["author"] for m in reply["messages"]] == ["person", "agent"]
    assert [m.author for m in b.person(EULER).get(person.id).messages] == ["person", "agent"]


def test_reply_resolve_reopen(b):
    tid = b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "Use a formula?"})["thread"]["id"]
    resolved = b.ok("jupyter_resolve_comment", {"threadId": tid, "message": "Done."})["thread"]
    assert (
        resolved["status"] == "resolved"
        and resolved["resolvedBy"] == "agent"
        and resolved["messages"][-1]["body"] == "Done."
    )
    assert b.ok("jupyter_list_comments")["threads"] == []
    assert [t["id"] for t in b.ok("jupyter_list_comments", {"status": "resolved"})["threads"]] == [tid]
    assert b.ok("jupyter_get_context")["review"] == {"open": 0, "resolved": 1}
    b.fails("jupyter_resolve_comment", {"threadId": tid}, "INVALID_ARGUMENT")
    reopened = b.ok("jupyter_reopen_comment", {"threadId": tid})["thread"]
    assert reopened["status"] == "open" and reopened["resolvedBy"] is None
    b.fails("jupyter_reopen_comment", {"threadId": tid}, "INVALID_ARGUMENT")
    assert b.ok("jupyter_resolve_comment", {"threadId": tid})["thread"]["messageCount"] == 2


def test_list_scope_cell_follows_the_persons_focus(b):
    on_1 = b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "one"})["thread"]["id"]
    on_2 = b.ok("jupyter_create_comment", {"cellId": "cell-0092", "body": "two"})["thread"]["id"]
    b.fails("jupyter_list_comments", {"scope": "cell"}, "INVALID_ARGUMENT")  # no active cell yet
    b.nb(EULER).person_set_focus("cell-0092")
    scoped = b.ok("jupyter_list_comments", {"scope": "cell"})
    assert (
        [t["id"] for t in scoped["threads"]] == [on_2] and scoped["cellId"] == "cell-0092" and scoped["scope"] == "cell"
    )
    explicit = b.ok("jupyter_list_comments", {"cellId": EULER_1})
    assert [t["id"] for t in explicit["threads"]] == [on_1] and explicit["scope"] == "cell"
    assert b.ok("jupyter_list_comments", {"cellId": "no-such-cell"})["threads"] == []
    b.fails("jupyter_list_comments", {"scope": "notebook", "cellId": EULER_1}, "INVALID_ARGUMENT")
    assert b.ok("jupyter_list_comments", {"notebookPath": RUN})["threads"] == []


def test_lists_are_bounded_and_say_what_was_left_out():
    b = review_bridge()
    ids = [b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": f"note {i}"})["thread"]["id"] for i in range(5)]
    page = b.ok("jupyter_list_comments", {"limit": 2})
    assert [t["id"] for t in page["threads"]] == ids[:2] and page["truncated"] is True and page["omittedCount"] == 3
    b.fails("jupyter_list_comments", {"limit": 0}, "INVALID_ARGUMENT")
    # Long threads: each listed with its first and latest messages; whole threads kept while they fit the cap.
    big = "x" * 8000
    for tid in ids:
        for _ in range(3):
            b.ok("jupyter_reply_comment", {"threadId": tid, "body": big})
    listed = b.ok("jupyter_list_comments")
    assert listed["truncated"] is True and 0 < len(listed["threads"]) < 5
    assert listed["omittedCount"] == 5 - len(listed["threads"])
    first = listed["threads"][0]
    assert first["messageCount"] == 4 and len(first["messages"]) == 3 and first["omittedMessageCount"] == 1
    assert first["messages"][0]["body"] == "note 0" and first["messages"][-1]["body"] == big
    small = review_bridge(Limits(comment_threads_listed=1))
    small.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "a"})
    small.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "b"})
    assert small.ok("jupyter_list_comments", {"limit": 50})["omittedCount"] == 1


def test_focus_comment(b):
    printer = printer_id(b)
    ranged = b.ok("jupyter_create_comment", {"notebookPath": RUN, "cellId": printer, "quote": "(a)", "body": "a?"})[
        "thread"
    ]
    shown = b.ok("jupyter_focus_comment", {"notebookPath": RUN, "threadId": ranged["id"]})
    assert shown["shown"] == "selection" and shown["focus"]["cellId"] == printer
    assert shown["focus"]["selection"] == {"start": {"line": 0, "column": 5}, "end": {"line": 0, "column": 8}}
    output = b.ok("jupyter_create_comment", {"notebookPath": RUN, "cellId": printer, "outputIndex": 0, "body": "10"})[
        "thread"
    ]
    assert b.ok("jupyter_focus_comment", {"notebookPath": RUN, "threadId": output["id"]})["shown"] == "output"
    assert b.nb(RUN).highlighted == [(printer, 0)]
    b.nb(RUN).person_set_source(printer, "print(b)")
    stale = b.fails("jupyter_focus_comment", {"notebookPath": RUN, "threadId": ranged["id"]}, "COMMENT_ANCHOR_STALE")
    assert stale["state"] == "orphaned" and stale["threadId"] == ranged["id"]
    b.nb(RUN).person_delete_cell(printer)
    stale = b.fails("jupyter_focus_comment", {"notebookPath": RUN, "threadId": output["id"]}, "COMMENT_ANCHOR_STALE")
    assert stale["state"] == "cell-missing"
    states = {t["id"]: t["state"] for t in b.ok("jupyter_list_comments", {"notebookPath": RUN})["threads"]}
    assert states == {ranged["id"]: "cell-missing", output["id"]: "cell-missing"}


def test_output_comment_survives_a_rerun_through_the_tools(b):
    printer = printer_id(b)
    setter = next(c["id"] for c in b.nb(RUN).nb["cells"] if c["source"] == "a = 10")
    tid = b.ok("jupyter_create_comment", {"notebookPath": RUN, "cellId": printer, "outputIndex": 0, "body": "10"})[
        "thread"
    ]["id"]
    b.ok("jupyter_run_cells", {"notebookPath": RUN, "cellIds": [setter, setter, printer]})
    assert b.ok("jupyter_get_comment", {"notebookPath": RUN, "threadId": tid})["thread"]["state"] == "exact"
    b.ok("jupyter_edit_cell_source", {"notebookPath": RUN, "cellId": setter, "oldText": "10", "newText": "12"})
    b.ok("jupyter_run_cells", {"notebookPath": RUN, "cellIds": [setter, printer]})
    assert b.ok("jupyter_get_comment", {"notebookPath": RUN, "threadId": tid})["thread"]["state"] == "output-changed"


def test_every_error_path_changes_nothing(b):
    tid = b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "first"})["thread"]["id"]
    missing = []
    for name, extra in (
        ("jupyter_get_comment", {}),
        ("jupyter_reply_comment", {"body": "x"}),
        ("jupyter_resolve_comment", {}),
        ("jupyter_reopen_comment", {}),
        ("jupyter_focus_comment", {}),
    ):
        missing.append(b.fails(name, {"threadId": "0123456789ab", **extra}, "COMMENT_NOT_FOUND"))
    assert {p["message"] for p in missing} == {"No comment thread with id '0123456789ab' in this notebook."}
    create = "jupyter_create_comment"
    b.fails(create, {"cellId": "no-such-cell", "body": "x"}, "CELL_NOT_FOUND")
    b.fails(create, {"cellId": EULER_1, "body": "x", "quote": "i % 3", "outputIndex": 0}, "INVALID_ARGUMENT")
    b.fails(
        create,
        {
            "cellId": EULER_1,
            "body": "x",
            "quote": "i % 3",
            "selection": {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 1}},
        },
        "INVALID_ARGUMENT",
    )
    assert b.fails(create, {"cellId": EULER_1, "body": "x", "quote": "i % "}, "INVALID_ARGUMENT")["occurrences"] == 2
    assert b.fails(create, {"cellId": EULER_1, "body": "x", "quote": "absent"}, "INVALID_ARGUMENT")["occurrences"] == 0
    b.fails(
        create,
        {
            "cellId": EULER_1,
            "body": "x",
            "selection": {"start": {"line": 9, "column": 0}, "end": {"line": 9, "column": 1}},
        },
        "INVALID_ARGUMENT",
    )
    b.fails(
        create,
        {
            "cellId": EULER_1,
            "body": "x",
            "selection": {"start": {"line": 0, "column": 2}, "end": {"line": 0, "column": 2}},
        },
        "INVALID_ARGUMENT",
    )
    b.fails(create, {"cellId": EULER_1, "body": "x", "outputIndex": 3}, "OUTPUT_NOT_FOUND")
    b.fails(create, {"cellId": EULER_1, "body": "x" * 8193}, "TOO_LARGE")
    b.fails(create, {"cellId": EULER_1, "body": "  "}, "INVALID_ARGUMENT")
    b.fails(create, {"cellId": EULER_1, "body": ""}, "INVALID_ARGUMENT")
    b.fails(
        create, {"cellId": EULER_1, "body": "x", "author": "person"}, "INVALID_ARGUMENT"
    )  # no tool writes as the person
    b.fails(create, {"cellId": EULER_1, "body": "x", "outputIndex": "0"}, "INVALID_ARGUMENT")
    b.fails(create, {"cellId": EULER_1, "body": "x", "notebookPath": "demo/missing.ipynb"}, "NOTEBOOK_NOT_FOUND")
    b.fails("jupyter_reply_comment", {"threadId": tid, "body": "é" * 4097}, "TOO_LARGE")
    b.fails("jupyter_resolve_comment", {"threadId": tid, "message": "x" * 8193}, "TOO_LARGE")
    b.fails("jupyter_reopen_comment", {"threadId": tid}, "INVALID_ARGUMENT")
    b.fails("jupyter_list_comments", {"status": "closed"}, "INVALID_ARGUMENT")
    b.fails("jupyter_get_comment", {"threadId": ""}, "INVALID_ARGUMENT")
    assert b.ok("jupyter_get_comment", {"threadId": tid})["thread"]["messageCount"] == 1


def test_threads_travel_through_save_and_reload(b):
    printer = printer_id(b)
    made = [
        b.ok("jupyter_create_comment", {"notebookPath": RUN, "cellId": printer, **anchor, "body": "saved"})["thread"][
            "id"
        ]
        for anchor in ({}, {"quote": "print"}, {"outputIndex": 0})
    ]
    b.ok("jupyter_save_notebook", {"notebookPath": RUN})
    del b.ws.open[RUN]
    b.open(RUN)
    listed = b.ok("jupyter_list_comments", {"notebookPath": RUN})["threads"]
    assert [(t["id"], t["state"], t["cellId"]) for t in listed] == [(tid, "exact", printer) for tid in made]
    assert json.loads(b.ws.files[RUN])["metadata"][METADATA_KEY]["threads"][0]["messages"][0]["body"] == "saved"


def test_malformed_metadata_never_breaks_the_tools(b):
    raw = b.nb(EULER)
    junk = [7, {"id": "x"}, {"id": "y", "status": "open", "anchor": "cell", "messages": []}]
    raw.nb["metadata"][METADATA_KEY] = {"schemaVersion": "?", "threads": junk, "other": {"keep": True}}
    assert b.ok("jupyter_list_comments", {"status": "all"})["threads"] == []
    tid = b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "fine"})["thread"]["id"]
    stored = raw.nb["metadata"][METADATA_KEY]
    assert stored["other"] == {"keep": True} and tid in [t["id"] for t in stored["threads"] if isinstance(t, dict)]
    assert [t for t in stored["threads"] if not (isinstance(t, dict) and t.get("id") == tid)] == junk
    assert b.ok("jupyter_get_context")["review"] == {"open": 1, "resolved": 0}
    raw.nb["metadata"][METADATA_KEY] = "not a dict"
    assert b.ok("jupyter_list_comments")["threads"] == [] and b.ok("jupyter_get_context")["review"] == {
        "open": 0,
        "resolved": 0,
    }
    assert b.ok("jupyter_create_comment", {"cellId": EULER_1, "body": "again"})["thread"]["state"] == "exact"


def test_threads_on_hidden_cells_are_indistinguishable_from_missing_ones(b):
    raw = b.nb(EULER)
    person = b.person(EULER)
    hidden = person.create(CellAnchor("cell-0092"), "secret plan", "person").id
    shown = person.create(CellAnchor(EULER_1), "visible", "person").id
    set_cell_level(raw, "cell-0092", "none")
    listed = b.ok("jupyter_list_comments", {"status": "all"})
    assert [t["id"] for t in listed["threads"]] == [shown] and listed["counts"] == {"open": 1, "resolved": 0}
    assert "secret plan" not in json.dumps(listed) and hidden not in json.dumps(listed)
    missing = b.fails("jupyter_get_comment", {"threadId": hidden}, "COMMENT_NOT_FOUND")
    assert missing["message"] == f"No comment thread with id {hidden!r} in this notebook."
    b.fails("jupyter_create_comment", {"cellId": "cell-0092", "body": "x"}, "CELL_NOT_FOUND")
    b.ok("jupyter_reply_comment", {"threadId": shown, "body": "agent reply"})
    assert {v.id for v in Review(raw).threads()} == {hidden, shown}
    assert Review(raw).get(hidden).messages[0].body == "secret plan"  # kept for the person
