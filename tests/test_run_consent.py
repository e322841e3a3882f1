"""The run rule (access/run_consent.py): while something the kernel reaches is hidden from the agent, every kernel
run the agent starts waits for the person's Accept with its code shown, in Direct mode too, unless the person
turned asking off for the notebook. Checked on the pure module and through the whole bridge (memory host)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from host_memory import MemoryWorkspace
from webmcp_bridge.access.levels import set_notebook_level
from webmcp_bridge.access.run_consent import HIDDEN_CELLS, HIDDEN_NOTEBOOK, RunConsent
from webmcp_bridge.host.protocol import Entry
from webmcp_bridge.propose.hold import accept_runs, run_accepted
from webmcp_bridge.session.bridge import Bridge, build_bridge


def notebook(*sources: str, access: str | None = None, hidden: tuple[int, ...] = ()) -> str:
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "source": s,
            "outputs": [],
            "execution_count": None,
            "metadata": {"webmcp_bridge": {"access": "none"}} if i in hidden else {},
        }
        for i, s in enumerate(sources)
    ]
    metadata: dict[str, Any] = {"webmcp_bridge": {"access": access}} if access else {}
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": cells})


# -- the pure parts --------------------------------------------------------------------------------------------
def test_an_accepted_code_is_recognised_exactly_and_only_in_its_own_call():
    async def call() -> tuple[bool, bool, bool]:
        accept_runs(["print(1)"])
        return run_accepted("print(1)"), run_accepted("print(1) "), run_accepted("print(2)")

    assert asyncio.run(call()) == (True, False, False)
    assert asyncio.run(asyncio.sleep(0, run_accepted("print(1)"))) is False  # another call (task) never inherits it


def test_the_workspace_walk_finds_a_hidden_cell_in_a_subfolder_and_fails_closed_past_its_bound():
    tree = {
        "": [
            Entry("a", "a", "directory"),
            Entry("x.txt", "x.txt", "file"),
            Entry("open.ipynb", "open.ipynb", "notebook"),
        ],
        "a": [Entry("a/b", "b", "directory")],
        "a/b": [Entry("a/b/plans.ipynb", "plans.ipynb", "notebook")],
    }
    looked: list[str] = []
    read: list[str] = []
    blocks: dict[str, Any] = {"a/b/plans.ipynb": (None, [{"access": "read"}, {"access": "none"}]), "open.ipynb": None}

    async def list_dir(path: str):
        looked.append(path)
        return tree.get(path)

    async def saved(path: str):
        read.append(path)
        return blocks[path]

    consent = RunConsent()
    assert asyncio.run(consent.workspace_hides({"open.ipynb"}, list_dir, saved)) is True  # a hidden cell, not notebook
    assert looked == ["", "a", "a/b"] and read == ["a/b/plans.ipynb"]  # an open notebook is not read from its file
    blocks["a/b/plans.ipynb"] = ({"access": "read"}, [{"access": "write"}, {"access": "bogus"}])
    assert asyncio.run(consent.workspace_hides((), list_dir, saved)) is True  # a level it cannot read counts as none
    blocks["a/b/plans.ipynb"] = ({"access": "read"}, [{"access": "read"}])
    assert asyncio.run(consent.workspace_hides((), list_dir, saved)) is False
    assert asyncio.run(RunConsent(max_entries=3).workspace_hides((), list_dir, saved)) is True  # 4 entries: too many


def test_a_saved_notebook_is_read_again_when_its_modification_time_changes_not_on_a_clock():
    stamp = ["2026-12-07T01:00:00.000Z"]
    hides = [False]
    reads = [0]

    async def list_dir(path: str):
        return [Entry("n.ipynb", "n.ipynb", "notebook", stamp[0])] if path == "" else None

    async def saved(path: str):
        reads[0] += 1
        return ({"access": "none"} if hides[0] else None), []

    consent = RunConsent()
    consent.set_asking("quiet.ipynb", False)

    def reason(path: str = "a.ipynb", cells: int = 0, elsewhere: bool = False) -> str | None:
        return asyncio.run(consent.reason(path, cells, elsewhere, (), list_dir, saved))

    assert reason() is None and reads[0] == 1
    assert reason() is None and reads[0] == 1  # unchanged file: its answer is kept
    hides[0] = True  # saved as hidden by another tab: a new modification time
    stamp[0] = "2026-12-07T01:00:00.001Z"
    assert reason() == HIDDEN_NOTEBOOK and reads[0] == 2
    assert reason(cells=1) == HIDDEN_CELLS
    # "Stop asking" covers the notebook's own hidden cells only, never what is hidden elsewhere
    assert reason("quiet.ipynb", cells=3) == HIDDEN_NOTEBOOK
    hides[0], stamp[0] = False, "2026-12-07T01:00:01.000Z"
    assert reason("quiet.ipynb", cells=3) is None
    assert reason("quiet.ipynb", cells=3, elsewhere=True) == HIDDEN_NOTEBOOK  # another open notebook hides a cell
    consent.keep_open(["a.ipynb"])  # the switch ends with the notebook: a new one at this path is asked about again
    assert reason("quiet.ipynb", cells=1) == HIDDEN_CELLS


# -- through the bridge --------------------------------------------------------------------------------------
def start(files: dict[str, str]) -> tuple[Bridge, MemoryWorkspace]:
    ws = MemoryWorkspace(files)
    bridge = build_bridge(ws)
    asyncio.run(ws.open_notebook("work.ipynb", True))
    return bridge, ws


async def waiting_call(bridge: Bridge, name: str, args: dict[str, Any], answer: str) -> tuple[dict[str, Any], Any]:
    """Start a call, wait for its proposal, answer it ("accept" / "deny") as the person; (result, proposal)."""
    task = asyncio.ensure_future(bridge.registry.call(name, args))
    for _ in range(500):
        if bridge.proposals.waiting() or task.done():
            break
        await asyncio.sleep(0.01)
    assert not task.done(), task.result()  # it waits for the person
    proposal = bridge.proposals.waiting()[0]
    if answer == "accept":
        bridge.proposals.accept(proposal.id)
    else:
        bridge.proposals.deny(proposal.id)
    return await task, proposal


def test_run_cells_with_a_hidden_cell_waits_for_accept_in_direct_mode_and_shows_the_code():
    bridge, ws = start({"work.ipynb": notebook("secret = 'hunter2'", "x = 1", hidden=(0,))})
    assert bridge.proposals.mode == "direct"
    inserted = json.loads(
        json.dumps(
            asyncio.run(
                bridge.registry.call("jupyter_insert_cell", {"source": "print(len(globals()))", "position": "below"})
            )["structuredContent"]
        )
    )["cell"]["id"]
    result, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_cells", {"cellIds": [inserted]}, "deny"))
    assert proposal.code is not None and "print(len(globals()))" in proposal.code and HIDDEN_CELLS in proposal.summary
    assert result["structuredContent"]["status"] == "denied"
    assert ws.open["work.ipynb"].nb["cells"][2]["outputs"] == []  # nothing ran
    result, _ = asyncio.run(waiting_call(bridge, "jupyter_run_cells", {"cellIds": [inserted]}, "accept"))
    assert result["structuredContent"]["results"][0]["status"] == "ok"  # asked once: the guard knows it was accepted


def test_run_code_waits_while_a_notebook_elsewhere_is_hidden_even_when_asking_is_off_here():
    bridge, ws = start({"work.ipynb": notebook("x = 1"), "private/plans.ipynb": notebook("plans", access="none")})
    result, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "print(2 + 2)"}, "accept"))
    assert proposal.code == "print(2 + 2)" and HIDDEN_NOTEBOOK in proposal.summary
    assert result["structuredContent"]["outputs"][0]["text"] == "4\n"
    bridge.guard.consent.set_asking("work.ipynb", False)  # the person's "Stop asking" for this notebook
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "print(3)"}, "deny"))
    assert HIDDEN_NOTEBOOK in proposal.summary  # it covers this notebook's own hidden cells, not the workspace


def test_a_hidden_cell_of_another_saved_notebook_holds_the_run_and_stop_asking_lets_own_cells_through():
    bridge, ws = start({"work.ipynb": notebook("x = 1", "secret = 2", hidden=(1,)), "b.ipynb": notebook("ok")})
    bridge.guard.consent.set_asking("work.ipynb", False)
    direct = asyncio.run(bridge.registry.call("jupyter_run_code", {"code": "print(3)"}))
    assert direct["isError"] is False and direct["structuredContent"]["outputs"][0]["text"] == "3\n"
    ws.files["b.ipynb"] = notebook("ok", "the other notebook's secret", hidden=(1,))  # saved with a hidden cell
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "open('b.ipynb').read()"}, "deny"))
    assert HIDDEN_NOTEBOOK in proposal.summary


def test_a_hidden_cell_the_person_deleted_still_holds_the_agents_runs():
    """The kernel ran the hidden cell before it was deleted: its history and names still hold it, so the agent's
    code is still shown first (the deleted cell cannot be scrubbed by its id)."""
    bridge, ws = start({"work.ipynb": notebook("secret = 'hunter2'", "x = 1", hidden=(0,))})
    listed = asyncio.run(bridge.registry.call("jupyter_get_cells", {}))["structuredContent"]["cells"]
    assert [c["id"] for c in listed] == ["c1"]  # the guard has seen c0 hidden
    ws.open["work.ipynb"].person_delete_cell("c0")
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "print(In)"}, "deny"))
    assert proposal.code == "print(In)" and HIDDEN_CELLS in proposal.summary


def test_nothing_hidden_runs_at_once_as_before():
    bridge, _ = start({"work.ipynb": notebook("x = 1"), "other.ipynb": notebook("y = 2", access="read")})
    run = asyncio.run(bridge.registry.call("jupyter_run_cells", {}))
    assert run["isError"] is False and run["structuredContent"]["results"][0]["status"] == "ok"
    assert bridge.proposals.waiting() == []


def test_a_site_tool_that_runs_code_without_asking_is_held_by_the_guard():
    """A site author's tool calling nb.run_code directly: the guard itself shows the code to the person."""
    from webmcp_bridge.calls.registry import Tool, ToolInput, Toolset
    from webmcp_bridge.contrib.api import Contribution
    from webmcp_bridge.tools.common import CallContext

    class Input(ToolInput):
        pass

    async def peek(ctx: CallContext, args: Input) -> dict[str, Any]:
        nb = await ctx.notebook(None)
        run = await nb.run_code("print(secret)", 5.0, head_bytes=100, max_outputs=1)
        return {"status": run.status}

    ws = MemoryWorkspace({"work.ipynb": notebook("secret = 1", "x = 1", hidden=(0,))})
    bridge = build_bridge(
        ws,
        contributions=[
            Contribution(
                "site",
                toolsets=(Toolset("site", "A site's tools.", (Tool("site_peek", "Peek", "Runs code.", Input, peek),)),),
            )
        ],
    )
    asyncio.run(ws.open_notebook("work.ipynb", True))
    result, proposal = asyncio.run(waiting_call(bridge, "site_peek", {}, "deny"))
    assert proposal.code == "print(secret)" and proposal.tool == "site_peek"
    assert result["structuredContent"]["status"] == "denied"


@pytest.mark.parametrize("bound", [1])
def test_a_workspace_too_big_to_walk_is_asked(bound: int):
    bridge, _ = start({"work.ipynb": notebook("x = 1"), "a.txt": "a", "b.txt": "b"})
    bridge.guard.consent = RunConsent(max_entries=bound)
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "1"}, "deny"))
    assert HIDDEN_NOTEBOOK in proposal.summary


def test_a_notebook_hidden_then_closed_is_found_at_once():
    bridge, ws = start({"work.ipynb": notebook("x = 1"), "other.ipynb": notebook("y = 2")})
    assert (
        asyncio.run(bridge.registry.call("jupyter_run_code", {"code": "1"}))["isError"] is False
    )  # nothing hidden: walked
    other = asyncio.run(ws.open_notebook("other.ipynb", False))
    set_notebook_level(other, "none")  # the person hides it in the panel, saves and closes it
    ws.files["other.ipynb"] = notebook("y = 2", access="none")
    del ws.open["other.ipynb"]
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "2"}, "deny"))
    assert HIDDEN_NOTEBOOK in proposal.summary
