"""Propose mode through the real registry over the in-memory host: the person (this test) accepts or
denies each change the agent asks for; nothing is applied before the person's Accept."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest

from helpers import check_envelope, corpus_json
from host_memory import MemoryWorkspace
from webmcp_bridge.access import levels as access
from webmcp_bridge.core.limits import DEFAULT_LIMITS, preview
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools.batch import HEADER_LINE_BYTES

PATH = "demo/euler.ipynb"


def stub_kernel(source: str, namespace: dict) -> tuple[list[dict[str, Any]], str]:
    return [{"output_type": "stream", "name": "stdout", "text": f"ran {len(source)} chars\n"}], "ok"


class Session:
    """An agent and a person around one notebook, in propose mode."""

    def __init__(self, limits=DEFAULT_LIMITS) -> None:
        self.ws = MemoryWorkspace({PATH: json.dumps(corpus_json("pytudes-euler.ipynb"))}, executor=stub_kernel)
        self.reg = build_bridge(self.ws, limits=limits).registry
        self.book = self.reg.context.proposals
        self.limits = limits
        asyncio.run(self.reg.call("jupyter_open_notebook", {"path": PATH}))
        self.nb = self.ws.open[PATH]
        self.book.set_mode("propose")

    def cells(self, n: int = 6) -> list[dict[str, Any]]:
        return asyncio.run(self.reg.call("jupyter_get_cells", {"startIndex": 0, "endIndex": n}))["structuredContent"][
            "cells"
        ]

    def snapshot(self) -> str:
        return json.dumps(self.nb.nb["cells"], sort_keys=True)

    def around(self, tool: str, args: dict, person) -> dict[str, Any]:
        """Call ``tool``; once its proposal shows, let ``person(proposal)`` act; return the result."""

        async def scenario():
            call = asyncio.ensure_future(self.reg.call(tool, args))
            for _ in range(200):
                await asyncio.sleep(0.01)
                if self.book.waiting() or call.done():
                    break
            waiting = self.book.waiting()
            outcome = person(waiting[0] if waiting else None)
            if asyncio.iscoroutine(outcome):
                await outcome
            return await call

        result = asyncio.run(scenario())
        check_envelope(result, self.limits)
        return result


@pytest.fixture
def s() -> Session:
    return Session()


def test_update_waits_for_accept_and_shows_a_diff(s: Session) -> None:
    cell = s.cells()[1]
    before = s.snapshot()
    seen = {}

    def person(proposal):
        seen["p"] = proposal.to_json()
        assert s.snapshot() == before  # nothing applied while it waits
        s.book.accept(proposal.id)

    result = s.around(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "answer = 42", "expectedSourceHash": cell["sourceHash"]},
        person,
    )
    assert result["isError"] is False and result["structuredContent"]["cell"]["id"] == cell["id"]
    assert s.nb.find_cell(cell["id"]).source == "answer = 42"
    proposal = seen["p"]
    assert proposal["kind"] == "update" and proposal["cellId"] == cell["id"]
    assert ["+", "answer = 42"] in proposal["diff"] and any(op == "-" for op, _ in proposal["diff"])
    assert s.book.waiting() == []


def test_deny_returns_a_normal_result_with_the_reason(s: Session) -> None:
    cell = s.cells()[1]
    before = s.snapshot()
    result = s.around(
        "jupyter_delete_cell",
        {"cellId": cell["id"], "expectedSourceHash": cell["sourceHash"]},
        lambda p: s.book.deny(p.id, "keep this cell, it explains the problem"),
    )
    payload = result["structuredContent"]
    assert result["isError"] is False and payload["status"] == "denied"
    assert payload["reason"] == "keep this cell, it explains the problem" and payload["tool"] == "jupyter_delete_cell"
    assert s.snapshot() == before


def test_a_stale_accept_is_refused(s: Session) -> None:
    cell = s.cells()[1]

    def person(proposal):
        s.nb.person_set_source(cell["id"], "the person typed this meanwhile")
        s.book.accept(proposal.id)

    result = s.around(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "agent text", "expectedSourceHash": cell["sourceHash"]},
        person,
    )
    assert result["isError"] is True and result["structuredContent"]["error"] == "STALE_CELL"
    assert s.nb.find_cell(cell["id"]).source == "the person typed this meanwhile"


def test_insert_delete_move_clear_edit_and_run_all_wait_for_the_person(s: Session) -> None:
    cells = s.cells(8)
    code = [c for c in cells if c["type"] == "code"]
    calls = [
        ("jupyter_insert_cell", {"referenceCellId": cells[0]["id"], "source": "new = 1"}, "insert"),
        (
            "jupyter_edit_cell_source",
            {"cellId": code[0]["id"], "oldText": code[0]["source"][:12], "newText": "X"},
            "edit",
        ),
        (
            "jupyter_move_cell",
            {"cellId": cells[2]["id"], "referenceCellId": cells[0]["id"], "position": "above"},
            "move",
        ),
        ("jupyter_clear_outputs", {"cellIds": [code[0]["id"]]}, "clear"),
        ("jupyter_run_cells", {"cellIds": [code[0]["id"]]}, "run"),
        ("jupyter_delete_cell", {"cellId": cells[3]["id"], "expectedSourceHash": cells[3]["sourceHash"]}, "delete"),
    ]
    for tool, args, kind in calls:
        before = s.snapshot()
        kinds = []
        result = s.around(
            tool, args, lambda p, kinds=kinds: (kinds.append(p.kind if p else None), s.book.deny(p.id) if p else None)
        )
        assert kinds == [kind], tool
        assert result["structuredContent"]["status"] == "denied" and s.snapshot() == before, tool
    run = {}
    result = s.around(
        "jupyter_run_cells",
        {"cellIds": [code[0]["id"]]},
        lambda p: (run.setdefault("code", p.code), s.book.accept(p.id)),
    )
    assert result["structuredContent"]["results"][0]["status"] == "ok"
    assert code[0]["source"] in run["code"]  # the person saw the code that ran


def test_a_run_accepted_after_the_person_changed_its_code_is_refused_and_runs_nothing(s: Session) -> None:
    code = [c for c in s.cells(8) if c["type"] == "code"][:2]
    counts = [s.nb.find_cell(c["id"]).execution_count for c in code]

    def person(proposal):
        s.nb.person_set_source(code[1]["id"], "person_work = 1")
        s.book.accept(proposal.id)

    result = s.around("jupyter_run_cells", {"cellIds": [c["id"] for c in code]}, person)
    error = result["structuredContent"]
    assert error["error"] == "STALE_CELL" and error["cellId"] == code[1]["id"], error
    assert error["expectedSourceHash"] == code[1]["sourceHash"]  # the hash of what the person was shown
    assert [s.nb.find_cell(c["id"]).execution_count for c in code] == counts  # not even the unchanged cell ran


def test_a_mode_listener_can_unsubscribe(s: Session) -> None:
    seen: list[str] = []
    unsubscribe = s.book.on_mode(seen.append)
    s.book.set_mode("direct")
    unsubscribe()
    unsubscribe()  # a second call is harmless
    s.book.set_mode("propose")
    assert seen == ["direct"]


def test_one_proposal_per_cell(s: Session) -> None:
    cell = s.cells()[1]
    args = {"cellId": cell["id"], "source": "first", "expectedSourceHash": cell["sourceHash"]}

    async def scenario():
        first = asyncio.ensure_future(s.reg.call("jupyter_update_cell", args))
        while not s.book.waiting():
            await asyncio.sleep(0.01)
        second = await s.reg.call("jupyter_update_cell", {**args, "source": "second"})
        s.book.deny(s.book.waiting()[0].id)
        return second, await first

    second, first = asyncio.run(scenario())
    assert second["structuredContent"]["error"] == "PROPOSAL_ALREADY_PENDING"
    assert first["structuredContent"]["status"] == "denied"


def test_deleting_the_cell_denies_its_proposal(s: Session) -> None:
    cell = s.cells()[1]
    result = s.around(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "x", "expectedSourceHash": cell["sourceHash"]},
        lambda p: s.nb.person_delete_cell(cell["id"]),
    )
    payload = result["structuredContent"]
    assert payload["status"] == "denied" and payload["reason"] == "the cell was deleted"


def test_a_clear_accepted_after_the_person_deleted_one_of_its_cells_clears_the_rest(s: Session) -> None:
    ids = [c["id"] for c in s.cells(30) if c["type"] == "code" and c.get("outputCount")][:3]
    assert len(ids) == 3

    def person(proposal):
        s.nb.person_delete_cell(ids[1])
        s.book.accept(proposal.id)

    result = s.around("jupyter_clear_outputs", {"cellIds": ids}, person)
    assert result["isError"] is False and result["structuredContent"]["cleared"] == [ids[0], ids[2]]
    assert [c["outputs"] for c in s.nb.nb["cells"] if c["id"] in ids] == [[], []]


def test_a_clear_accepted_after_the_person_made_one_of_its_cells_read_only_clears_nothing(s: Session) -> None:
    ids = [c["id"] for c in s.cells(30) if c["type"] == "code" and c.get("outputCount")][:3]
    before = [c["outputs"] for c in s.nb.nb["cells"] if c["id"] in ids]

    def person(proposal):
        access.set_cell_level(s.nb, ids[2], "read")
        s.book.accept(proposal.id)

    result = s.around("jupyter_clear_outputs", {"cellIds": ids}, person)
    assert result["isError"] is True and result["structuredContent"]["error"] == "CELL_ACCESS_DENIED"
    assert [c["outputs"] for c in s.nb.nb["cells"] if c["id"] in ids] == before  # not the first two either


def test_closing_the_notebook_denies_its_proposal(s: Session) -> None:
    cell = s.cells()[1]
    result = s.around(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "x", "expectedSourceHash": cell["sourceHash"]},
        lambda p: s.ws.open.pop(PATH),
    )
    assert result["structuredContent"]["reason"] == "the notebook was closed"


def test_a_cancelled_call_withdraws_its_proposal_and_changes_nothing(s: Session) -> None:
    cell = s.cells()[1]
    before = s.snapshot()
    settled = []
    s.book.subscribe(lambda event, p: settled.append(event))

    async def scenario():
        call = asyncio.ensure_future(
            s.reg.call(
                "jupyter_update_cell", {"cellId": cell["id"], "source": "x", "expectedSourceHash": cell["sourceHash"]}
            )
        )
        while not s.book.waiting():
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(scenario())
    assert s.book.waiting() == [] and settled == ["created", "settled"] and s.snapshot() == before


def test_a_long_wait_goes_pending_and_is_collected(s: Session) -> None:
    quick = Session(dataclasses.replace(DEFAULT_LIMITS, execution_timeout_seconds=0.2))
    cell = quick.cells()[1]

    async def scenario():
        first = await quick.reg.call(
            "jupyter_update_cell", {"cellId": cell["id"], "source": "late", "expectedSourceHash": cell["sourceHash"]}
        )
        assert first["structuredContent"]["status"] == "pending"
        quick.book.accept(quick.book.waiting()[0].id)
        return await quick.reg.call(
            "jupyter_wait_for_result", {"pendingId": first["structuredContent"]["pendingId"], "timeout": 5}
        )

    final = asyncio.run(scenario())
    assert final["isError"] is False and final["structuredContent"]["cell"]["id"] == cell["id"]
    assert quick.nb.find_cell(cell["id"]).source == "late"


def test_a_write_that_was_not_proposed_is_refused_in_propose_mode(s: Session) -> None:
    cell = s.cells()[1]
    guarded = s.reg.context.host.current_notebook()
    with pytest.raises(Exception) as caught:
        guarded.set_source(cell["id"], "sneaky")
    assert getattr(caught.value, "code", None).value == "INTERNAL_ERROR"
    assert s.nb.find_cell(cell["id"]).source == cell["source"]


def test_direct_mode_applies_at_once(s: Session) -> None:
    s.book.set_mode("direct")
    cell = s.cells()[1]
    result = asyncio.run(
        s.reg.call(
            "jupyter_update_cell", {"cellId": cell["id"], "source": "now", "expectedSourceHash": cell["sourceHash"]}
        )
    )
    assert result["isError"] is False and s.nb.find_cell(cell["id"]).source == "now"


def test_apply_edits_is_one_proposal_and_run_code_shows_its_code(s: Session) -> None:
    cells = s.cells(4)
    edits = [
        {"op": "update", "cellId": cells[1]["id"], "source": "first = 1", "expectedSourceHash": cells[1]["sourceHash"]},
        {"op": "insert", "referenceCellId": cells[0]["id"], "source": "inserted = 2"},
        {"op": "delete", "cellId": cells[2]["id"], "expectedSourceHash": cells[2]["sourceHash"]},
    ]
    seen = []
    before = s.snapshot()
    result = s.around(
        "jupyter_apply_edits", {"edits": edits}, lambda p: (seen.append(p.to_json()), s.book.deny(p.id, "not now"))
    )
    assert result["structuredContent"]["status"] == "denied" and s.snapshot() == before
    diff = seen[0]["diff"]

    def named(cell: dict) -> str:  # the person's position (1-based) and first line (cut as the header cuts it)
        line = next(ln.strip() for ln in cell["source"].split("\n") if ln.strip())
        return f"cell {cell['index'] + 1} «{preview(line, HEADER_LINE_BYTES)}»"

    assert seen[0]["kind"] == "batch" and [line for op, line in diff if op == "@"] == [
        f"edit 1 of 3: change {named(cells[1])}",
        f"edit 2 of 3: insert a code cell below {named(cells[0])}",
        f"edit 3 of 3: delete {named(cells[2])}",
    ]
    assert ["+", "first = 1"] in diff and ["+", "inserted = 2"] in diff
    result = s.around("jupyter_apply_edits", {"edits": edits}, lambda p: s.book.accept(p.id))
    assert result["isError"] is False and s.nb.find_cell(cells[1]["id"]).source == "first = 1"
    code = []
    result = s.around(
        "jupyter_run_code", {"code": "print(6 * 7)"}, lambda p: (code.append(p.code), s.book.accept(p.id))
    )
    assert code == ["print(6 * 7)"] and result["structuredContent"]["status"] == "ok"


def test_a_batch_accepted_after_the_person_changed_a_cell_is_refused(s: Session) -> None:
    cells = s.cells(3)
    edits = [
        {"op": "update", "cellId": cells[1]["id"], "source": "agent", "expectedSourceHash": cells[1]["sourceHash"]}
    ]

    def person(p):
        s.nb.person_set_source(cells[1]["id"], "person")
        s.book.accept(p.id)

    result = s.around("jupyter_apply_edits", {"edits": edits}, person)
    assert result["structuredContent"]["error"] == "STALE_CELL" and s.nb.find_cell(cells[1]["id"]).source == "person"


def test_what_cannot_be_shown_in_full_is_refused_not_cut(s: Session) -> None:
    cell = s.cells()[1]
    big = "\n".join(f"line_{i} = {i}" for i in range(500))
    before = s.snapshot()
    result = s.around(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": big, "expectedSourceHash": cell["sourceHash"]},
        lambda p: None,
    )
    assert result["structuredContent"]["error"] == "TOO_LARGE" and s.snapshot() == before and s.book.waiting() == []
    result = s.around("jupyter_run_code", {"code": "x = 1\n" * 7000}, lambda p: None)
    assert result["structuredContent"]["error"] == "TOO_LARGE"


def test_switching_to_direct_while_a_proposal_waits_still_rechecks(s: Session) -> None:
    code = next(c for c in s.cells(8) if c["type"] == "code")
    old = code["source"][:12]

    def person(p):
        s.nb.person_set_source(code["id"], code["source"] + "\nperson_work = 1")
        s.book.set_mode("direct")
        s.book.accept(p.id)

    result = s.around("jupyter_edit_cell_source", {"cellId": code["id"], "oldText": old, "newText": "X"}, person)
    assert result["structuredContent"]["error"] == "STALE_CELL"
    assert s.nb.find_cell(code["id"]).source.endswith("person_work = 1")


def test_a_restart_is_proposed(s: Session) -> None:
    kinds = []
    result = s.around(
        "jupyter_kernel_action", {"action": "restart"}, lambda p: (kinds.append(p.kind), s.book.deny(p.id))
    )
    assert kinds == ["restart"] and result["structuredContent"]["status"] == "denied"
