"""The agent's edits kept for review and revert (changes/undo.py): the diff, the revert plans, the markers."""

from __future__ import annotations

from webmcp_bridge.changes.undo import REFUSALS, EditJournal
from webmcp_bridge.propose.proposals import source_diff


def journal() -> EditJournal:
    ticks = iter(range(100, 10_000))
    return EditJournal(clock=lambda: float(next(ticks)))


def test_record_keeps_before_and_after_and_marks_the_cell_unseen() -> None:
    j = journal()
    edit = j.record("a.ipynb", "c1", "x = 1\n", "x = 2\n")
    assert edit is not None and (edit.id, edit.before, edit.after) == (1, "x = 1\n", "x = 2\n")
    assert j.record("a.ipynb", "c1", "same", "same") is None  # nothing changed: nothing kept
    assert j.unseen("a.ipynb") == {"c1"} and j.unseen("b.ipynb") == set()
    assert source_diff(edit.before, edit.after) == [["-", "x = 1"], ["+", "x = 2"]]


def test_revert_of_one_edit_leaves_the_others() -> None:
    j = journal()
    for cell in ("c1", "c2", "c3"):
        j.record("a.ipynb", cell, f"{cell} old", f"{cell} new")
    current = {"c1": "c1 new", "c2": "c2 new", "c3": "c3 new"}
    (step,) = j.plan(2, current)
    assert (step.cell_id, step.source, step.refused) == ("c2", "c2 old", None)


def test_a_persons_later_edit_refuses_the_revert() -> None:
    j = journal()
    j.record("a.ipynb", "c1", "old", "new")
    (step,) = j.plan(1, {"c1": "new, and the person typed"})
    assert step.refused == "changed" and step.reason == REFUSALS["changed"]
    (gone,) = j.plan(1, {})
    assert gone.refused == "gone"
    (unknown,) = j.plan(99, {"c1": "new"})
    assert unknown.refused == "unknown"


def test_an_older_edit_under_a_later_agent_edit_says_so() -> None:
    j = journal()
    j.record("a.ipynb", "c1", "v0", "v1")
    j.record("a.ipynb", "c1", "v1", "v2")
    (step,) = j.plan(1, {"c1": "v2"})
    assert step.refused == "agent-later"


def test_revert_since_unwinds_newest_first() -> None:
    j = journal()
    j.record("a.ipynb", "c1", "v0", "v1")
    j.record("a.ipynb", "c2", "w0", "w1")
    j.record("a.ipynb", "c1", "v1", "v2")
    j.record("b.ipynb", "c9", "z0", "z1")  # another notebook: never part of a.ipynb's plan
    steps = j.plan(1, {"c1": "v2", "c2": "w1"}, since=True)
    assert [(s.edit_id, s.source, s.refused) for s in steps] == [(3, "v1", None), (2, "w0", None), (1, "v0", None)]


def test_revert_since_keeps_every_edit_of_a_cell_the_person_changed() -> None:
    j = journal()
    j.record("a.ipynb", "c1", "v0", "v1")
    j.record("a.ipynb", "c2", "w0", "w1")
    j.record("a.ipynb", "c1", "v1", "v2")
    steps = j.plan(1, {"c1": "v2 typed", "c2": "w1"}, since=True)
    assert [(s.edit_id, s.refused) for s in steps] == [(3, "changed"), (2, None), (1, "changed")]


def test_a_reverted_edit_is_not_reverted_twice_and_counts_as_seen() -> None:
    j = journal()
    j.record("a.ipynb", "c1", "old", "new")
    j.mark_reverted(1)
    assert j.unseen("a.ipynb") == set()
    (step,) = j.plan(1, {"c1": "old"})
    assert step.refused == "reverted"


def test_seen_and_forgotten_cells_lose_their_marker() -> None:
    j = journal()
    heard: list[bool] = []
    j.subscribe(heard.append)
    j.record("a.ipynb", "c1", "a", "b")
    j.record("a.ipynb", "c2", "a", "b")
    j.record("a.ipynb", "c2", "b", "c")  # already unseen: heard, the unseen set unchanged
    assert j.mark_seen("a.ipynb", "c1") and not j.mark_seen("a.ipynb", "c1")
    j.forget_cell("a.ipynb", "c2")
    assert j.unseen("a.ipynb") == set() and heard == [True, True, False, True, True]


def test_the_journal_is_bounded_by_count_and_bytes() -> None:
    j = EditJournal(max_edits=2, max_bytes=100)
    for n in range(3):
        j.record("a.ipynb", f"c{n}", "a", "b")
    assert [e.id for e in j.edits()] == [2, 3]
    assert j.record("a.ipynb", "big", "x" * 60, "y" * 60) is None  # larger than the bound alone: not kept
    assert j.unseen("a.ipynb") >= {"big"}  # but the cell still carries its marker
    j.record("a.ipynb", "c5", "x" * 40, "y" * 40)
    assert [e.id for e in j.edits()] == [3, 5]
    j.record("a.ipynb", "c6", "x" * 10, "y" * 10)  # 80 + 20 + 2 bytes: over, the oldest go
    assert [e.id for e in j.edits()] == [5, 6]


def test_between_finds_the_edits_of_one_activity_row() -> None:
    j = journal()  # times 100, 101, 102
    j.record("a.ipynb", "c1", "v0", "v1")
    j.record("a.ipynb", "c1", "v1", "v2")
    j.record("a.ipynb", "c2", "w0", "w1")
    assert [e.id for e in j.between("a.ipynb", "c1", 100.0, 101.0, slack=0.5)] == [1, 2]
    assert [e.id for e in j.between("a.ipynb", "c1", 101.0, 101.0, slack=0.5)] == [2]


# -- what the panel shows of them (lab/ui/view.py, pure) ---------------------------------------------------------
def test_an_agent_edit_row_opens_its_review_and_other_rows_do_not() -> None:
    from webmcp_bridge.changes.log import ChangeLog
    from webmcp_bridge.host.protocol import CellChange
    from webmcp_bridge.lab.ui.activity_view import activity_item, change_row

    log = ChangeLog()
    agent, person = log.ingest(
        "a.ipynb", [CellChange("agent", "edit", "c1", 10.0), CellChange("person", "edit", "c2", 11.0)]
    )
    row = change_row(agent)
    assert row.edits == (10.0, 10.0)
    item = activity_item(row, None, "a.ipynb")
    # the row's own buttons, reached with Tab and pressed with Enter or Space: Diff and Revert of these edits
    buttons = [el for el in item.walk() if el.tag == "button" and el.attrs.get("data-action") != "reveal-cell"]
    assert [(b.attrs["data-action"], b.text_content()) for b in buttons] == [
        ("show-edits", "Diff"),
        ("revert-row", "Revert"),
    ]
    assert all(b.attrs["data-cell"] == "c1" and float(b.attrs["data-first"]) == 10.0 for b in buttons)
    other = activity_item(change_row(person), None, "a.ipynb")
    assert [el.attrs["data-action"] for el in other.walk() if "data-action" in el.attrs] == ["reveal-cell"]
    (revert,) = log.ingest("a.ipynb", [CellChange("person", "revert", "c1", 12.0)])
    assert "reverted the agent's edit of" in activity_item(change_row(revert), None, "a.ipynb").text_content()


def test_the_review_box_holds_every_source_as_text_with_revert_while_it_stands() -> None:
    from webmcp_bridge.lab.ui.activity_view import edits_review

    j = journal()
    payload = '<img src=x onerror="alert(1)">'
    standing = j.record("a.ipynb", "c1", "x = 1", payload)
    gone = j.record("a.ipynb", "c1", payload, "y")
    assert standing is not None and gone is not None
    j.mark_reverted(gone.id)
    edits = [gone, standing]
    box = edits_review(edits, [source_diff(e.before, e.after) for e in edits], "cell 1")
    assert payload in box.text_content()
    states = [el.attrs.get("data-state") for el in box.walk() if el.attrs.get("data-edit") and el.tag == "div"]
    assert states == ["reverted", "standing"]
    actions = [el.attrs["data-action"] for el in box.walk() if el.attrs.get("data-action", "").startswith("revert")]
    assert actions == ["revert-edit", "revert-since"]  # only the standing edit offers them
    assert all(el.tag in {"div", "span", "strong", "button", "time", "small", "p"} for el in box.walk())


def test_an_unseen_cell_carries_the_changed_by_agent_marker() -> None:
    from webmcp_bridge.lab.ui.view import cell_markers, marker_badges, marker_classes

    markers = cell_markers({}, {}, set(), set(), {"c1"})
    assert set(markers) == {"c1"} and markers["c1"].agent_changed
    assert marker_classes(markers["c1"])["webmcp-bridge-cell-agent-changed"]
    badge = marker_badges(markers["c1"], "c1", "a.ipynb")
    assert badge.text_content() == ""  # an icon, its meaning in its label
    assert badge.children[0].attrs["data-action"] == "show-edits"
    assert "The agent changed this cell" in str(badge.children[0].attrs["aria-label"])
