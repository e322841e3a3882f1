"""core/run_outputs.py: a kernel request's iopub messages merged into outputs as JupyterLab's output area merges
them (streams of one name joined, clear_output honoured, at once or on the next output), with only the first
outputs kept and a stream's text kept up to a bound while the rest is measured. The JupyterLab host reports the
messages (``notebook.js`` runCode, tests/test_notebook_js_runs.py); these are the rules it relies on."""

from __future__ import annotations

import asyncio
import json

import pytest

from webmcp_bridge.core.run_outputs import RunBatches, RunOutputs


def stream(text: str, name: str = "stdout") -> dict:
    return {"type": "stream", "name": name, "text": text}


def display(text: str, kind: str = "display_data") -> dict:
    return {"type": kind, "data": {"text/plain": text}}


def merged(messages: list, max_outputs: int = 10, keep_chars: int = 1000) -> RunOutputs:
    run = RunOutputs(max_outputs, keep_chars)
    run.add_all(messages)
    return run


def heads(run: RunOutputs, head_bytes: int = 10**6) -> list[tuple[str, str]]:
    return [(o.output_type, o.items[0].head) for o in run.raw(head_bytes)]


def test_consecutive_streams_of_one_name_are_one_output():
    run = merged([stream("a"), stream("b"), stream("!", "stderr"), stream("c"), display("d"), stream("e")])
    assert heads(run) == [("stream", "ab"), ("stream", "!"), ("stream", "c"), ("display_data", "d"), ("stream", "e")]
    assert run.count == 5
    assert [o.name for o in run.raw(10)] == ["stdout", "stderr", "stdout", None, "stdout"]


def test_clear_output_empties_at_once_or_before_the_next_output():
    run = merged([stream("a"), {"type": "clear_output", "wait": False}, stream("b")])
    assert heads(run) == [("stream", "b")] and run.count == 1
    waiting = merged([stream("a"), {"type": "clear_output", "wait": True}])
    assert heads(waiting) == [("stream", "a")]  # nothing new came: what was there stays
    waiting.add(display("b"))
    assert heads(waiting) == [("display_data", "b")] and waiting.count == 1
    # a stream after a waiting clear starts a new output, not the continuation of the cleared one
    again = merged([stream("a"), {"type": "clear_output", "wait": True}, stream("b"), stream("c")])
    assert heads(again) == [("stream", "bc")] and again.count == 1


def test_only_the_first_outputs_are_kept_and_the_others_counted():
    run = merged([display("1"), display("2"), stream("s"), stream("t"), display("4")], max_outputs=2)
    assert heads(run) == [("display_data", "1"), ("display_data", "2")]
    assert run.count == 4  # the stream's two messages made one output
    # a stream continuing an output that was not kept is not added to a kept one
    run = merged([stream("kept"), display("x"), stream("a"), stream("b")], max_outputs=2)
    assert heads(run) == [("stream", "kept"), ("display_data", "x")] and run.count == 3


def test_a_stream_is_kept_up_to_the_bound_and_measured_whole():
    run = merged([stream("x" * 600), stream("y" * 600), stream("z" * 10)], keep_chars=1000)
    ((item,),) = [o.items for o in run.raw(10**6)]
    assert item.head == "x" * 600 + "y" * 400  # what is held
    assert item.bytes == 1210  # all of it
    assert run.raw(5)[0].items[0].head == "xxxxx"  # the head asked for, from what is held
    # once cut, nothing more is kept even when a later message would fit
    assert merged([stream("a" * 1001), stream("b")], keep_chars=1000).raw(10**6)[0].items[0].head == "a" * 1000


def test_sizes_are_utf8_bytes_and_the_text_is_ansi_stripped():
    run = merged([stream("\x1b[31mred\x1b[0m é😀")])
    (item,) = run.raw(10**6)[0].items
    assert item.head == "red é😀" and item.bytes == len("red é😀".encode())
    # the part past the bound is measured as it came, escape sequences included
    cut = merged([stream("ab"), stream("\x1b[1mc")], keep_chars=2)
    assert cut.raw(10)[0].items[0].bytes == 2 + len("\x1b[1mc")


def test_errors_and_results():
    run = merged(
        [
            {"type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": ["a", "b"]},
            {"type": "error", "ename": None, "evalue": "x", "traceback": []},
            display("42", "execute_result"),
        ]
    )
    first, second, result = run.raw(100)
    assert (first.ename, first.evalue, first.items[0].head) == ("ZeroDivisionError", "division by zero", "a\nb")
    assert (second.ename, second.items[0].head) == ("", ": x")
    assert (result.output_type, result.items[0].head) == ("execute_result", "42")


def test_unknown_or_malformed_messages_change_nothing():
    run = merged([stream("a"), {"type": "status"}, "text", None, {"type": "display_data", "data": "not a dict"}])
    assert run.count == 2
    assert [o.output_type for o in run.raw(10)] == ["stream", "display_data"]
    assert run.raw(10)[1].items == ()  # a display without data has no representation


def _batch(text: str) -> str:
    return json.dumps([{"type": "stream", "name": "stdout", "text": text}])


def test_run_batches_wait_while_batches_keep_arriving_and_stop_at_a_silence():
    async def scenario() -> tuple[int, int, str, int, float]:
        merged = RunOutputs(5, 100)
        batches = RunBatches(merged)
        loop = asyncio.get_running_loop()
        for i in range(5):  # a queue handed over one batch every 30 ms: 150 ms in all, longer than the 50 ms bound
            loop.call_later(0.03 * (i + 1), batches.receive, _batch(str(i)))
        all_came = await batches.wait_for(5, 0.05)
        at_once = await batches.wait_for(0, 0.05)  # nothing sent: no wait
        started = loop.time()
        missing = await batches.wait_for(7, 0.05)  # two never come: the wait ends 50 ms after the last one
        return all_came, at_once, merged.raw(100)[0].items[0].head, missing, loop.time() - started

    all_came, at_once, text, missing, waited = asyncio.run(scenario())
    assert (all_came, at_once, text) == (0, 0, "01234")
    assert missing == 2 and 0.05 <= waited < 1.0


def test_run_batches_wait_can_be_cancelled():
    async def scenario() -> bool:
        batches = RunBatches(RunOutputs(5, 100))
        task = asyncio.ensure_future(batches.wait_for(1, 60.0))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        batches.receive(_batch("late"))  # a batch after the cancel is merged, no waiter is woken
        return batches.received == 1

    assert asyncio.run(scenario())
