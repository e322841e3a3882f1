"""The run rule (access/run_consent.py): while something the kernel reaches is hidden from the agent, every kernel
run the agent starts waits for the person's Accept with its code shown, in Direct mode too, unless the person
turned asking off for the notebook. Checked on the pure module and through the whole bridge (memory host)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from webmcp_bridge.access.levels import set_notebook_level
from webmcp_bridge.access.run_consent import (
    HIDDEN_CELLS,
    HIDDEN_NOTEBOOK,
    RunConsent,
    accept_runs,
    run_accepted,
    workspace_hides,
)
from webmcp_bridge.host.memory import MemoryWorkspace
from webmcp_bridge.host.protocol import Entry
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


def test_the_workspace_walk_finds_a_hidden_notebook_in_a_subfolder_and_fails_closed_past_its_bound():
    tree = {
        "": [Entry("a", "a", "directory"), Entry("x.txt", "x.txt", "file")],
        "a": [Entry("a/b", "b", "directory")],
        "a/b": [Entry("a/b/secret.ipynb", "secret.ipynb", "notebook")],
    }
    looked: list[str] = []

    async def list_dir(path: str):
        looked.append(path)
        return tree.get(path)

    async def hidden(path: str) -> bool:
        return path == "a/b/secret.ipynb"

    async def never(path: str) -> bool:
        return False

    assert asyncio.run(workspace_hides(list_dir, hidden)) is True
    assert looked == ["", "a", "a/b"]
    assert asyncio.run(workspace_hides(list_dir, never)) is False
    assert asyncio.run(workspace_hides(list_dir, never, max_entries=3)) is True  # 4 entries: too many to look at


def test_the_answer_is_reused_for_its_ttl_and_the_switch_turns_the_rule_off_per_notebook():
    now = [100.0]
    walks = [0]
    hides = [False]

    async def list_dir(path: str):
        walks[0] += 1
        return [Entry("n.ipynb", "n.ipynb", "notebook")] if path == "" else None

    async def hidden(path: str) -> bool:
        return hides[0]

    off = {"quiet.ipynb"}
    consent = RunConsent(lambda path: path in off, clock=lambda: now[0], ttl=5.0)

    def reason(path: str = "a.ipynb", cells: int = 0, open_hidden: bool = False, stamp: object = None) -> str | None:
        return asyncio.run(consent.reason(path, cells, open_hidden, list_dir, hidden, stamp))

    assert reason() is None and walks[0] == 1
    hides[0] = True
    now[0] += 4.9
    assert reason() is None and walks[0] == 1  # reused
    now[0] += 0.2
    assert reason() == HIDDEN_NOTEBOOK and walks[0] == 2
    hides[0] = False
    assert reason() == HIDDEN_NOTEBOOK and walks[0] == 2  # reused again
    assert reason(stamp=("closed-one",)) is None and walks[0] == 3  # the open notebooks changed: looked at again
    hides[0] = True
    consent.forget()
    assert reason(cells=1) == HIDDEN_CELLS
    assert reason("quiet.ipynb", cells=3, open_hidden=True) is None  # the person said stop asking for this one
    hides[0] = False
    consent.forget()
    assert reason(open_hidden=True) == HIDDEN_NOTEBOOK  # an open hidden notebook counts without any walk
    assert reason() is None

    def broken(path: str) -> bool:
        raise RuntimeError("storage gone")

    consent.set_switch(broken)
    assert reason(cells=1) == HIDDEN_CELLS  # a switch that cannot be read keeps asking


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


def test_run_code_waits_while_a_notebook_elsewhere_is_hidden_and_not_once_asking_is_off():
    bridge, ws = start({"work.ipynb": notebook("x = 1"), "private/plans.ipynb": notebook("plans", access="none")})
    result, proposal = asyncio.run(waiting_call(bridge, "jupyter_run_code", {"code": "print(2 + 2)"}, "accept"))
    assert proposal.code == "print(2 + 2)" and HIDDEN_NOTEBOOK in proposal.summary
    assert result["structuredContent"]["outputs"][0]["text"] == "4\n"
    bridge.guard.consent.set_switch(lambda path: path == "work.ipynb")  # the person's "Stop asking" for this notebook
    direct = asyncio.run(bridge.registry.call("jupyter_run_code", {"code": "print(3)"}))
    assert direct["isError"] is False and direct["structuredContent"]["outputs"][0]["text"] == "3\n"


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


def test_a_notebook_hidden_then_closed_is_found_at_once_not_after_the_reused_answer_expires():
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
