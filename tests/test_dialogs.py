"""JupyterLab dialogs during agent calls (ownership, answering, reporting) and aborted calls, over the memory
host: MemoryDialogs stands in for JupyterLab's dialog queue, the registry is the one the page builds."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from helpers import check_envelope, corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.calls.pending import EAGER_TASKS
from webmcp_bridge.calls.registry import Annotations, Tool, ToolInput, Toolset
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.host.protocol import RawButton, RawInput
from webmcp_bridge.session.bridge import build_bridge

NB = "work/analysis.ipynb"
LIMITS = Limits(execution_timeout_seconds=2.0)
OK_CANCEL = (RawButton("Cancel", accept=False), RawButton("OK", accept=True))


class Agent:
    """The registry of the page over a memory workspace with dialogs, called as the agent calls it."""

    def __init__(self, limits: Limits = LIMITS) -> None:
        self.ws = MemoryWorkspace({NB: corpus_text("jupyterlite-empty.ipynb")})
        self.ws.dialogs.confirm_restart = True
        self.limits = limits
        self.reg = build_bridge(self.ws, limits=limits, dialogs=self.ws.dialogs).registry
        self.events: list[tuple[str, str | None]] = []
        self.reg.on_after(lambda e: self.events.append((e.tool, e.outcome)))

    async def call(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        result = await self.reg.call(name, args or {}, **kw)
        check_envelope(result, self.limits)
        return result

    async def ok(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        result = await self.call(name, args, **kw)
        assert result["isError"] is False, result["structuredContent"]
        return result["structuredContent"]

    async def fails(self, name: str, args: dict[str, Any], code: str) -> dict[str, Any]:
        result = await self.call(name, args)
        assert result["isError"] is True and result["structuredContent"]["error"] == code, result["structuredContent"]
        return result["structuredContent"]

    def notebook_state(self) -> str:
        return json.dumps(self.ws.open[NB].nb, sort_keys=True)


def run(scenario):
    return asyncio.run(scenario())


async def opened(agent: Agent) -> str:
    """Open the notebook; return the id of a code cell holding ``x = 41``, run once (execution count 1)."""
    await agent.ok("jupyter_open_notebook", {"path": NB})
    cell = (await agent.ok("jupyter_insert_cell", {"source": "x = 41"}))["cell"]
    ran = await agent.ok("jupyter_run_cells", {"cellIds": [cell["id"]]})
    assert ran["results"][0]["executionCount"] == 1
    return cell["id"]


# -- the restart confirmation ---------------------------------------------------------------------------------


def test_a_restart_waits_for_its_confirmation_which_the_agent_answers():
    async def scenario():
        agent = Agent()
        cell_id = await opened(agent)
        began = time.monotonic()
        pending = await agent.ok("jupyter_kernel_action", {"action": "restart"})
        assert time.monotonic() - began < 0.5  # at once, not after the execution timeout
        assert pending["status"] == "pending" and pending["tool"] == "jupyter_kernel_action"
        dialog = pending["dialog"]
        assert dialog["title"] == "Restart Kernel?" and "All variables will be lost" in dialog["body"]
        assert dialog["state"] == "shown" and dialog["shown"] is True and dialog["answerable"] is True
        assert dialog["buttons"] == [
            {"index": 0, "label": "Cancel", "kind": "reject"},
            {"index": 1, "label": "Restart", "kind": "accept", "warn": True},
        ]
        assert dialog["owner"] == {"tool": "jupyter_kernel_action", "pendingId": pending["pendingId"]}
        assert "jupyter_answer_dialog" in pending["message"]
        assert pending["dialogs"] == [dialog]  # every successful result lists the open dialogs

        context = await agent.ok("jupyter_get_context")
        assert context["dialogs"] == [dialog]
        assert [p["pendingId"] for p in context["pending"]] == [pending["pendingId"]]
        assert (await agent.ok("jupyter_get_cells"))["dialogs"] == [dialog]

        answered = await agent.ok("jupyter_answer_dialog", {"button": "Restart"})
        assert answered["answered"] == {"dialogId": dialog["id"], "button": "Restart", "buttonIndex": 1}
        assert answered["restarted"] is True and answered["action"] == "restart"
        assert "dialogs" not in answered
        assert agent.ws.dialogs.clicks == [(dialog["id"], 1, "agent")]
        assert (await agent.ok("jupyter_get_context"))["dialogs"] == []
        rerun = await agent.ok("jupyter_run_cells", {"cellIds": [cell_id]})
        assert rerun["results"][0]["executionCount"] == 1  # a fresh kernel counts from 1 again
        # the same final result can still be collected by its pending id
        again = await agent.ok("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
        assert again["restarted"] is True and "answered" not in again

    run(scenario)


def test_cancel_in_the_confirmation_keeps_the_kernel_and_is_a_normal_result():
    async def scenario():
        agent = Agent()
        await opened(agent)
        pending = await agent.ok("jupyter_kernel_action", {"action": "restart"})
        declined = await agent.ok("jupyter_answer_dialog", {"button": 0, "dialogId": pending["dialog"]["id"]})
        assert declined["restarted"] is False and "Cancel" in declined["message"]
        assert declined["answered"]["button"] == "Cancel" and declined["answered"]["buttonIndex"] == 0
        probe = (await agent.ok("jupyter_insert_cell", {"source": "print(x + 1)"}))["cell"]
        out = (await agent.ok("jupyter_run_cells", {"cellIds": [probe["id"]]}))["results"][0]
        assert out["outputs"][0]["preview"] == "42\n" and out["executionCount"] == 2  # same kernel, same state

    run(scenario)


def test_the_person_may_answer_the_agents_dialog_and_the_result_is_collected():
    async def scenario():
        agent = Agent()
        await opened(agent)
        pending = await agent.ok("jupyter_kernel_action", {"action": "restart"})
        assert agent.ws.dialogs.person_click(pending["dialog"]["id"], 1) == "clicked"
        final = await agent.ok("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
        assert final["restarted"] is True
        assert (await agent.fails("jupyter_answer_dialog", {"button": "Restart"}, "INVALID_ARGUMENT"))[
            "message"
        ] == "No dialog is open."

    run(scenario)


# -- ownership -------------------------------------------------------------------------------------------------


class AskInput(ToolInput):
    title: str
    linger: float = 0.0


def dialog_tools(agent: Agent) -> Toolset:
    """Two tools for ownership cases: one that asks a question through a dialog, one read-only that lingers."""

    async def ask(ctx, args: AskInput):
        await asyncio.sleep(args.linger)
        answer = await agent.ws.dialogs.ask(args.title, "Proceed?", OK_CANCEL)
        return {"answer": answer}

    async def linger(ctx, args: AskInput):
        await asyncio.sleep(args.linger)
        return {"lingered": args.linger}

    return Toolset(
        "test",
        "dialog cases",
        (
            Tool("ask", "Ask", "Opens a dialog.", AskInput, ask),
            Tool("linger", "Linger", "Waits.", AskInput, linger),
            Tool("linger_ro", "Linger", "Waits, read-only.", AskInput, linger, Annotations(read_only=True)),
        ),
    )


def with_test_tools() -> Agent:
    agent = Agent()
    agent.reg.add_toolset(dialog_tools(agent))
    return agent


def test_a_dialog_is_owned_only_when_exactly_one_call_can_own_it():
    async def scenario():
        agent = with_test_tools()
        # a read-only call running beside it does not count: the dialog is the asking call's
        reader = asyncio.ensure_future(agent.ok("linger_ro", {"title": "-", "linger": 0.3}))
        asked = await agent.ok("ask", {"title": "First?"})
        assert asked["status"] == "pending" and asked["dialog"]["owner"]["tool"] == "ask"
        await reader
        assert (await agent.ok("jupyter_answer_dialog", {"button": "OK"}))["answer"] == 1

        # two calls that can own dialogs are running: nobody owns the dialog, no call returns early
        slow = asyncio.ensure_future(agent.ok("linger", {"title": "-", "linger": 0.3}))
        asking = asyncio.ensure_future(agent.ok("ask", {"title": "Second?"}))
        await asyncio.sleep(0.1)
        assert not asking.done()
        context = await agent.ok("jupyter_get_context")
        (dialog,) = context["dialogs"]
        assert dialog["owner"] is None and dialog["answerable"] is False
        refused = await agent.fails("jupyter_answer_dialog", {"button": "OK"}, "INVALID_ARGUMENT")
        assert "only the person answers it" in refused["message"]
        assert agent.ws.dialogs.is_open(dialog["id"])
        assert (await slow)["dialogs"][0]["id"] == dialog["id"]  # reported on other results
        agent.ws.dialogs.person_click(dialog["id"], 0)
        assert (await asking) == {"answer": 0}

    run(scenario)


def test_a_dialog_opened_by_a_gesture_of_the_person_is_never_the_agents():
    async def scenario():
        agent = with_test_tools()
        lingering = asyncio.ensure_future(agent.ok("linger", {"title": "-", "linger": 0.2}))
        await asyncio.sleep(0.05)
        dialog_id, answer = agent.ws.dialogs.open(
            "Rename File", "New name", OK_CANCEL, by_person=True, input=RawInput("text", "data.csv")
        )
        result = await lingering
        assert result == {"lingered": 0.2, "dialogs": result["dialogs"]}  # the call did not go pending for it
        (dialog,) = result["dialogs"]
        assert dialog["id"] == dialog_id and dialog["owner"] is None and dialog["title"] == "Rename File"
        # the person's dialog is reported by title and buttons only: its body and input may name hidden things
        assert dialog["body"] == "" and "input" not in dialog
        for args in ({"button": "OK"}, {"button": 1, "dialogId": dialog_id}):
            await agent.fails("jupyter_answer_dialog", args, "INVALID_ARGUMENT")
        assert agent.ws.dialogs.is_open(dialog_id) and agent.ws.dialogs.clicks == [] and not answer.done()

    run(scenario)


def test_a_call_owns_at_most_one_open_dialog():
    async def scenario():
        agent = with_test_tools()
        asked = await agent.ok("ask", {"title": "First?"})
        # a second dialog while the only running call already waits on one: more likely the person's
        second, _ = agent.ws.dialogs.open("Something else", "?", OK_CANCEL)
        dialogs = (await agent.ok("jupyter_get_context"))["dialogs"]
        assert [(d["id"], d["state"], d["owner"] is not None) for d in dialogs] == [
            (asked["dialog"]["id"], "shown", True),
            (second, "queued", False),
        ]

    run(scenario)


def test_a_pending_call_that_opens_a_dialog_wakes_its_wait():
    async def scenario():
        agent = with_test_tools()
        first = await agent.ok("ask", {"title": "Late?", "linger": 2.5})  # past the 2 s timeout: pending, no dialog yet
        assert first["status"] == "pending" and "dialog" not in first
        began = time.monotonic()
        waited = await agent.ok("jupyter_wait_for_result", {"pendingId": first["pendingId"], "timeout": 1.9})
        assert time.monotonic() - began < 1.5 and waited["dialog"]["title"] == "Late?"
        assert waited["dialog"]["owner"]["pendingId"] == first["pendingId"]
        done = await agent.ok("jupyter_answer_dialog", {"button": "ok"})  # labels match ignoring case
        assert done["answer"] == 1 and done["answered"]["button"] == "OK"

    run(scenario)


# -- ambiguous answers change nothing -----------------------------------------------------------------------------


def test_ambiguous_or_impossible_answers_are_refused_and_click_nothing():
    async def scenario():
        agent = Agent()
        await opened(agent)
        dialogs = agent.ws.dialogs
        persons, persons_answer = dialogs.open(
            "Save changes?",
            "Unsaved",
            (
                RawButton("Cancel", accept=False),
                RawButton("Discard", accept=False, warn=True),
                RawButton("Save", accept=True),
            ),
            by_person=True,
        )
        pending = await agent.ok("jupyter_kernel_action", {"action": "restart"})
        mine = pending["dialog"]
        assert (
            mine["state"] == "queued"
            and mine["shown"] is False
            and mine["owner"] is not None
            and mine["answerable"] is False
        )
        assert "queued behind another dialog" in pending["message"]
        state = agent.notebook_state()
        cases = [
            ({"button": "Restart"}, "2 dialogs are open; pass dialogId"),
            ({"button": "Restart", "dialogId": mine["id"]}, "queued behind the dialog on screen"),
            ({"button": "Save", "dialogId": persons}, "only the person answers it"),
            ({"button": "Restart", "dialogId": "d-99"}, "No open dialog has id 'd-99'"),
        ]
        for args, words in cases:
            refused = await agent.fails("jupyter_answer_dialog", args, "INVALID_ARGUMENT")
            assert words in refused["message"], refused
        await agent.fails("jupyter_answer_dialog", {"button": -1}, "INVALID_ARGUMENT")
        await agent.fails("jupyter_answer_dialog", {"button": True}, "INVALID_ARGUMENT")
        assert dialogs.clicks == [] and dialogs.is_open(persons) and dialogs.is_open(mine["id"])
        assert agent.notebook_state() == state

        dialogs.person_click(persons, 2)  # the person saves: the agent's dialog is shown now
        assert await persons_answer == 2
        for args, words in [
            ({"button": "Yes"}, "no button labelled 'Yes'; its buttons: 0: 'Cancel', 1: 'Restart'"),
            ({"button": 7}, "has no button 7"),
        ]:
            assert words in (await agent.fails("jupyter_answer_dialog", args, "INVALID_ARGUMENT"))["message"]
        assert (await agent.ok("jupyter_answer_dialog", {"button": "Restart"}))["restarted"] is True

    run(scenario)


def test_duplicate_labels_and_disabled_buttons_are_refused():
    async def scenario():
        agent = with_test_tools()

        async def odd(ctx, args):
            return {
                "answer": await agent.ws.dialogs.ask(
                    "Odd", "?", (RawButton("OK", True), RawButton("OK", False), RawButton("Apply", True, disabled=True))
                )
            }

        agent.reg.add_toolset(Toolset("odd", "odd", (Tool("odd", "Odd", "Odd dialog.", AskInput, odd),)))
        pending = await agent.ok("odd", {"title": "-"})
        assert pending["dialog"]["buttons"][2] == {"index": 2, "label": "Apply", "kind": "accept", "disabled": True}
        assert (
            "Several buttons"
            in (await agent.fails("jupyter_answer_dialog", {"button": "OK"}, "INVALID_ARGUMENT"))["message"]
        )
        assert (
            "disabled"
            in (await agent.fails("jupyter_answer_dialog", {"button": "Apply"}, "INVALID_ARGUMENT"))["message"]
        )
        assert agent.ws.dialogs.clicks == []
        assert (await agent.ok("jupyter_answer_dialog", {"button": 1}))["answer"] == 1

    run(scenario)


# -- what is reported -------------------------------------------------------------------------------------------


def test_reports_are_bounded_and_never_carry_a_password():
    async def scenario():
        limits = Limits(execution_timeout_seconds=2.0, dialogs_listed=2)
        agent = Agent(limits)
        await agent.ok("jupyter_open_notebook", {"path": NB})
        body = "é" * 5000
        dialogs = agent.ws.dialogs
        dialogs.open("Log in", body, OK_CANCEL, input=RawInput("password", None), by_person=True)
        dialogs.open("T" * 1000, "short", tuple(RawButton(f"b{i}", True) for i in range(15)), by_person=True)
        dialogs.open("Third", "x", OK_CANCEL, by_person=True)
        context = await agent.ok("jupyter_get_context")
        first, second = context["dialogs"]
        assert "input" not in first and first["body"] == ""  # the person's dialogs: title and buttons only
        assert len(second["title"].encode()) <= limits.dialog_text_bytes
        assert len(second["buttons"]) == limits.dialog_buttons and second["omittedButtons"] == 5
        cells = await agent.ok("jupyter_get_cells")
        assert [d["id"] for d in cells["dialogs"]] == [first["id"], second["id"]] and cells["dialogsOmitted"] == 1

    run(scenario)


def test_attached_dialogs_never_break_the_result_cap():
    async def scenario():
        limits = Limits(execution_timeout_seconds=2.0, result_bytes=6000)
        agent = Agent(limits)
        await agent.ok("jupyter_open_notebook", {"path": NB})
        for i in range(5):
            agent.ws.dialogs.open(f"Dialog {i}", "ü" * 3000, OK_CANCEL, by_person=True)
        big = (await agent.ok("jupyter_insert_cell", {"source": "y = '" + "z" * 5500 + "'"}))["cell"]
        listing = await agent.ok("jupyter_get_cells", {"cellIds": [big["id"]]})  # check_envelope checks the cap
        assert listing["dialogs"] and all(set(d) >= {"id", "state", "answerable"} for d in listing["dialogs"])

    run(scenario)


# -- aborting ----------------------------------------------------------------------------------------------------


class SleepInput(ToolInput):
    seconds: float


def abort_tools(seen: list[str]) -> Toolset:
    async def sleepy(ctx, args: SleepInput):
        try:
            await asyncio.sleep(args.seconds)
        except asyncio.CancelledError:
            seen.append("cancelled")  # a handler sees the abort as CancelledError (Propose mode withdraws there)
            raise
        return {"slept": args.seconds}

    return Toolset("abort", "abort cases", (Tool("sleepy", "Sleepy", "Sleeps.", SleepInput, sleepy),))


def test_an_aborted_call_stops_its_handler_and_returns_aborted():
    async def scenario():
        agent = Agent()
        seen: list[str] = []
        agent.reg.add_toolset(abort_tools(seen))
        call = asyncio.ensure_future(agent.call("sleepy", {"seconds": 1.0}, invocation="inv-1"))
        await asyncio.sleep(0.05)
        assert agent.reg.cancel("inv-1") is True
        result = await call
        assert result["isError"] is True and result["structuredContent"]["error"] == "ABORTED"
        assert result["structuredContent"]["tool"] == "sleepy"
        assert seen == ["cancelled"] and ("sleepy", "ABORTED") in agent.events
        assert agent.reg.cancel("inv-1") is False  # over: nothing left to abort

    run(scenario)


def test_an_abort_before_the_call_starts_runs_nothing():
    async def scenario():
        agent = Agent()
        seen: list[str] = []
        agent.reg.add_toolset(abort_tools(seen))
        assert agent.reg.cancel("early") is False  # the abort overtook its call
        result = await agent.call("sleepy", {"seconds": 1.0}, invocation="early")
        assert result["structuredContent"]["error"] == "ABORTED" and seen == []
        # begun: with eager tasks (Python >= 3.12, as in Pyodide) the handler is entered in the call's own step,
        # so the abort reaches it at its first await; on an older Python the call is begun but not yet running
        # and is aborted without ever entering the handler
        call = asyncio.ensure_future(agent.call("sleepy", {"seconds": 1.0}, invocation="inv-2"))
        await asyncio.sleep(0)
        assert agent.reg.cancel("inv-2") is True
        assert (await call)["structuredContent"]["error"] == "ABORTED"
        assert seen == (["cancelled"] if EAGER_TASKS else [])

    run(scenario)


def test_an_aborted_run_leaves_the_notebook_as_it_was():
    async def scenario():
        agent = Agent()
        await agent.ok("jupyter_open_notebook", {"path": NB})
        ran: list[str] = []

        def executor(source: str, namespace: dict):
            ran.append(source)
            if source == "slow()":
                agent.reg.cancel("run-1")  # the agent's client aborts while this cell runs
            exec(source if source != "slow()" else "pass", namespace)
            return [], "ok"

        agent.ws.executor = executor
        ids = [
            (await agent.ok("jupyter_insert_cell", {"source": s}))["cell"]["id"] for s in ("slow()", "a = 1", "b = 2")
        ]
        before, revision = agent.notebook_state(), agent.ws.open[NB].revision()
        result = await agent.call("jupyter_run_cells", {"cellIds": ids}, invocation="run-1")
        assert result["structuredContent"]["error"] == "ABORTED"
        assert ran == ["slow()"]  # the cells after it never ran
        assert agent.notebook_state() == before and agent.ws.open[NB].revision() == revision

    run(scenario)


def test_a_call_that_went_pending_is_no_longer_tied_to_its_invocation():
    async def scenario():
        agent = Agent()
        agent.reg.add_toolset(abort_tools([]))
        first = await agent.ok("sleepy", {"seconds": 2.3}, invocation="inv-3")
        assert first["status"] == "pending"
        assert agent.reg.cancel("inv-3") is False
        final = await agent.ok("jupyter_wait_for_result", {"pendingId": first["pendingId"]})
        assert final == {"slept": 2.3}

    run(scenario)


def test_an_aborted_wait_for_a_pending_run_stops_the_run_and_says_so():
    async def scenario():
        agent = Agent()
        await agent.ok("jupyter_open_notebook", {"path": NB})
        nb = agent.ws.open[NB]
        plain_run, ran, interrupted = nb.run_cell, [], []

        async def run_cell(cell_id: str, timeout: float):  # the first cell sleeps, as a long computation would
            ran.append(cell_id)
            if len(ran) == 1:
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    interrupted.append(cell_id)  # the page's host interrupts the kernel here
                    raise
            return await plain_run(cell_id, timeout)

        nb.run_cell = run_cell
        ids = [(await agent.ok("jupyter_insert_cell", {"source": s}))["cell"]["id"] for s in ("slow()", "a = 1")]
        pending = await agent.ok("jupyter_run_cells", {"cellIds": ids}, invocation="run-9")
        assert pending["status"] == "pending"
        wait = asyncio.ensure_future(
            agent.call("jupyter_wait_for_result", {"pendingId": pending["pendingId"]}, invocation="wait-1")
        )
        await asyncio.sleep(0.05)
        assert agent.reg.cancel("wait-1") is True  # the agent's client aborts the wait
        stopped = (await wait)["structuredContent"]
        assert stopped["error"] == "ABORTED" and stopped["tool"] == "jupyter_wait_for_result"
        assert stopped["pendingId"] == pending["pendingId"] and stopped["pendingTool"] == "jupyter_run_cells"
        assert stopped["stopped"] is True and "stopped too" in stopped["message"]
        final = await agent.call("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
        assert final["structuredContent"]["error"] == "ABORTED"  # the run's own result says it was stopped
        assert interrupted == [ids[0]] and ran == [ids[0]]  # the cell after it never ran
        assert ("jupyter_wait_for_result", "ABORTED") in agent.events

    run(scenario)


def test_an_aborted_wait_for_another_pending_call_leaves_that_call_running():
    async def scenario():
        agent = Agent()
        agent.reg.add_toolset(abort_tools([]))
        first = await agent.ok("sleepy", {"seconds": 2.4}, invocation="inv-4")
        assert first["status"] == "pending"
        wait = asyncio.ensure_future(
            agent.call("jupyter_wait_for_result", {"pendingId": first["pendingId"]}, invocation="wait-2")
        )
        await asyncio.sleep(0.05)
        agent.reg.cancel("wait-2")
        aborted = (await wait)["structuredContent"]
        assert aborted["error"] == "ABORTED" and aborted["stopped"] is False and "goes on" in aborted["message"]
        assert await agent.ok("jupyter_wait_for_result", {"pendingId": first["pendingId"]}) == {"slept": 2.4}

    run(scenario)


# -- the save conflict ("File Changed") -------------------------------------------------------------------------


def test_cancel_in_the_file_changed_dialog_is_the_saves_real_outcome():
    """JupyterLab asks "File Changed" (Cancel, Revert, Overwrite) when the file changed on disk since it was
    opened; Cancel rejects the save. The agent answering Cancel gets a normal result, saved: false, the file on
    disk untouched: never INTERNAL_ERROR."""

    async def scenario():
        agent = Agent()
        await opened(agent)
        on_disk = agent.ws.files[NB].replace('"cells": [', '"cells": [', 1) + "\n"  # changed on disk meanwhile
        agent.ws.files[NB] = on_disk
        pending = await agent.ok("jupyter_save_notebook", {})
        assert pending["status"] == "pending" and pending["dialog"]["title"] == "File Changed", pending
        assert [b["label"] for b in pending["dialog"]["buttons"]] == ["Cancel", "Revert", "Overwrite"]
        declined = await agent.ok("jupyter_answer_dialog", {"button": "Cancel"})
        assert declined["saved"] is False and "Cancel" in declined["message"], declined
        assert declined["answered"]["button"] == "Cancel"
        assert agent.ws.files[NB] == on_disk  # nothing written
        assert (await agent.ok("jupyter_get_context"))["notebook"]["dirty"] is True
        again = await agent.ok("jupyter_save_notebook", {})  # asked again: the file still differs
        overwritten = await agent.ok(
            "jupyter_answer_dialog", {"button": "Overwrite", "dialogId": again["dialog"]["id"]}
        )
        assert overwritten["saved"] is True and "x = 41" in agent.ws.files[NB]
        assert (await agent.ok("jupyter_save_notebook", {}))["saved"] is True  # no conflict now: no dialog

    run(scenario)
