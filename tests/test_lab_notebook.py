"""lab/notebook.py's decisions over what its JS half answers, under CPython: the module holds no JS object and
imports nothing of the browser (tests/test_lab_no_page_objects.py), so a stand-in for ``notebook.js`` / ``tabs.js``
that answers as they do (primitives, JSON text, awaitables) drives it here.

Covered: a handle whose panel is gone answers NOTEBOOK_NOT_FOUND; a kernel action's, a save's and a cell run's
outcomes (reported by the page as data) become the protocol's values or ToolErrors; a code run's messages, some
sent to the event sink in batches while the call waits and the rest with ``runFinish``, are merged in Python
(core/run_outputs.py), also on a timeout, and the sink's proxy is freed when the run ends; every read of an output
the page no longer holds is OUTPUT_NOT_FOUND. The real halves run
in playwright-tests (test_tools.py, test_more_tools.py, test_dialogs_abort.py, test_attacks_run.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace
from typing import Any

import pytest

import webmcp_bridge.lab.notebook as lab_notebook
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.images import ImageRequest
from webmcp_bridge.host.protocol import DeleteOp, SetSourceOp
from webmcp_bridge.lab.ffi import Proxies
from webmcp_bridge.lab.host import JupyterLabHost
from webmcp_bridge.lab.notebook import LabNotebook


class FakeProxy:
    """What ``create_proxy`` makes, as far as Proxies and JS use it: callable until destroyed."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.destroyed = fn, False

    def __call__(self, *args: Any) -> Any:
        assert not self.destroyed, "JS called a destroyed proxy"
        return self.fn(*args)

    def destroy(self) -> None:
        self.destroyed = True


def resolved(value: Any) -> asyncio.Future:
    future = asyncio.get_event_loop().create_future()
    future.set_result(value)
    return future


class FakeLive:
    """Answers as notebook.js does for one open notebook, handle "p" at a.ipynb; any other handle is gone."""

    def __init__(self) -> None:
        self.kernel_outcome: dict[str, Any] = {"outcome": "done"}
        self.kernel_status = "idle"
        self.run_reply: Any = json.dumps({"status": "ok", "execution_count": 7})
        self.batches: list[list[dict]] = []  # sent to the sink when the run starts
        self.late: list[list[dict]] = []  # sent before the run finished but handed to the sink only after runFinish
        self.rest: list[dict] = []
        self.done: Any = json.dumps({"status": "ok", "execution_count": 2, "reason": None})
        self.sinks: list[FakeProxy] = []
        self.as_agent: list[bool] = []  # runCode's asAgent, per call
        self.finished: list[int] = []
        self.sources = {"c1": "x = 1", "c2": "y = 2"}  # the cells, by id
        self.revisions = 0  # how many times revision() crossed
        self.access_reads = 0  # how many times accessState() crossed
        self.pending: list[str] = []  # ids of the cells whose changes the page's log holds now
        self.expected: list[Any] = []  # expectedSource of each write
        self.output: dict[str, Any] | None = None  # what the output methods answer (JSON); None: the output is gone

    def _cell(self, cell_id: str) -> dict[str, Any]:
        index = list(self.sources).index(cell_id)
        return {"id": cell_id, "index": index, "cell_type": "code", "source": self.sources[cell_id],
                "execution_count": None, "outputs": [], "output_count": 0}  # fmt: skip

    def cells(self, handle: str, ids_json: str, head: int, max_outputs: int) -> str:
        self._check(handle)
        return json.dumps([self._cell(i) if i in self.sources else None for i in json.loads(ids_json)])

    def setSource(self, handle: str, cell_id: str, source: str, expected: Any) -> str | None:
        self.expected.append(expected)
        if cell_id not in self.sources:
            return None
        if expected is not None and self.sources[cell_id] != expected:
            return json.dumps({"changed": self._cell(cell_id)})
        before, self.sources[cell_id] = self.sources[cell_id], source
        return json.dumps({**self._cell(cell_id), "before": before, "revision": 9})

    def deleteCell(self, handle: str, cell_id: str, expected: Any) -> str | None:
        self.expected.append(expected)
        if expected is not None and self.sources[cell_id] != expected:
            return json.dumps({"changed": self._cell(cell_id)})
        gone = self._cell(cell_id)
        del self.sources[cell_id]
        return json.dumps(gone)

    def _check(self, handle: str) -> None:
        if handle != "p":
            raise RuntimeError(f"NotebookGone: no such notebook: {handle}")

    def path(self, handle: str) -> str:
        self._check(handle)
        return "a.ipynb"

    def revision(self, handle: str) -> int:
        self._check(handle)
        self.revisions += 1
        return 3

    def _facts(self, changes: list[str]) -> dict[str, Any]:
        return {"path": "a.ipynb", "revision": 5, "notebook": None, "cells": [], "cellCount": 2, "locks": [],
                "changes": [{"kind": "edit", "cellId": c, "time": 1.0, "agentWrite": False, "agentRun": False}
                            for c in changes]}  # fmt: skip

    def findViewed(self, path: str) -> str | None:
        if path != "a.ipynb":
            return None
        return json.dumps({"handle": "p", "state": None if self.pending else self._facts([])})

    def cellIds(self, handle: str) -> str:
        return json.dumps({"revision": 5, "ids": list(self.sources)})

    def applyEdits(self, handle: str, steps_json: str, revision: int, expected_json: str) -> str:
        self.batch_expected = json.loads(expected_json)
        for cell_id, expected in self.batch_expected.items():
            if self.sources[cell_id] != expected:
                return json.dumps({"changed": self._cell(cell_id)})
        for step in json.loads(steps_json):
            if step["op"] == "set_source":
                self.sources[step["cell_id"]] = step["source"]
            elif step["op"] == "delete":
                del self.sources[step["cell_id"]]
        return json.dumps({"ids": [], "befores": {}, "afters": {}})

    def accessState(self, handle: str) -> str:
        self._check(handle)
        self.access_reads += 1
        taken, self.pending = self.pending, []
        return json.dumps(self._facts(taken))

    def kernel(self, handle: str) -> str:
        self._check(handle)
        return json.dumps({"name": "python", "status": self.kernel_status, "displayName": "Python (Pyodide)"})

    def kernelAction(self, handle: str, action: str, command: str) -> asyncio.Future:
        assert command == "notebook:restart-kernel"
        return resolved(json.dumps(self.kernel_outcome))

    def executeAsAgent(self, handle: str, cell_id: str) -> Any:
        self._check(handle)
        return None if cell_id == "missing" else resolved(self.run_reply)

    def runCode(
        self, handle: str, code: str, silent: bool, flush_chars: int, flush_ms: int, sink: Any, as_agent: bool
    ) -> str:
        self._check(handle)
        self.as_agent.append(as_agent)
        if code == "refused":
            return json.dumps({"refused": "kernel is dead"})
        if code == "none":
            return json.dumps({"none": True})
        self.sinks.append(sink)
        for batch in self.batches:
            sink(json.dumps(batch))
        return json.dumps({"run": 1})

    def _output(self, handle: str, *args: Any) -> str | None:
        self._check(handle)
        return None if self.output is None else json.dumps(self.output)

    outputBytes = outputBinary = _output

    def resizeImage(self, handle: str, *args: Any) -> Any:
        answer = self._output(handle)
        return None if answer is None else resolved(answer)

    captureOutput = resizeImage

    def runDone(self, run: int) -> Any:
        if self.done is None:
            return asyncio.get_event_loop().create_future()  # never settles
        return resolved(self.done)

    def runFinish(self, run: int) -> str:
        self.finished.append(run)
        loop = asyncio.get_event_loop()
        for index, batch in enumerate(self.late):  # as the worker's queued messages: on later turns of the loop
            loop.call_later(0.01 * (index + 1), self.sinks[-1], json.dumps(batch))
        return json.dumps({"facts": self.rest, "sent": len(self.batches) + len(self.late)})


class FakeTabs:
    def __init__(self, answer: dict) -> None:
        self.answer = answer

    def save(self, path: str) -> asyncio.Future:
        assert path == "a.ipynb"
        return resolved(json.dumps(self.answer))


def notebook(handle: str = "p", tabs: FakeTabs | None = None) -> tuple[LabNotebook, FakeLive]:
    live = FakeLive()
    journal = SimpleNamespace(record=lambda *args: None)
    host = SimpleNamespace(live=live, tabs=tabs, tabs_read={}, journal=journal)
    return LabNotebook(host, handle), live  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def fake_proxies(monkeypatch):
    """Proxies whose proxies are FakeProxy (Pyodide's create_proxy does not exist under CPython)."""
    monkeypatch.setattr(lab_notebook, "Proxies", lambda: Proxies(create=FakeProxy))


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_write_hands_over_the_source_its_check_read_and_answers_the_revision_without_crossing_again():
    nb, live = notebook()
    read = nb.find_cell("c1").source  # the tool's check reads the cell
    written = nb.set_source("c1", "x = 2", read)
    assert live.expected == ["x = 1"] and written.source == "x = 2"
    assert nb.revision() == 9 and live.revisions == 0  # the write's own answer: no second crossing
    nb.find_cell("c1")
    assert nb.revision() == 3 and live.revisions == 1  # anything crossed since: read again
    nb.set_source("c2", "y = 3")  # no precondition given: nothing to check
    assert live.expected[-1] is None


def test_a_person_typing_between_the_check_and_the_write_keeps_their_text():
    """In the worker the check (a read) and the write are two tasks of the page: the person's keystroke can land
    between them. The write then changes nothing and the agent gets STALE_CELL with the cell as it is."""
    nb, live = notebook()
    read = nb.find_cell("c1")
    live.sources["c1"] = "x = 1  # the person's"  # typed after the read
    with pytest.raises(ToolError) as err:
        nb.set_source("c1", "x = 2", read.source)
    assert err.value.code == ErrorCode.STALE_CELL
    assert err.value.details["expectedSourceHash"] != err.value.details["currentSourceHash"]
    assert "the person's" in err.value.details["currentSourcePreview"] and read.source == "x = 1"
    assert live.sources["c1"] == "x = 1  # the person's"
    read = nb.find_cell("c2")
    live.sources["c2"] = "y = 2  # the person's"
    with pytest.raises(ToolError) as err:
        nb.delete_cell("c2", read.source)
    assert err.value.code == ErrorCode.STALE_CELL and "c2" in live.sources


def test_the_access_state_read_with_the_handle_is_the_first_read_and_nothing_is_taken_with_it():
    live = FakeLive()
    host = SimpleNamespace(live=live)
    found = JupyterLabHost._viewed(host, live.findViewed("a.ipynb"))  # type: ignore[arg-type]
    assert found is not None and found.access_state().revision == 5 and live.access_reads == 0  # no crossing
    assert found.access_state().revision == 5 and live.access_reads == 1  # the next read crosses

    unused = JupyterLabHost._viewed(host, live.findViewed("a.ipynb"))  # type: ignore[arg-type]
    assert unused is not None
    unused.revision()  # something crossed first: the state read with the handle is not used any more
    unused.access_state()
    assert live.access_reads == 2

    live.pending = ["c1"]  # a change waits: the page gives no state, the reader takes the change
    waiting = JupyterLabHost._viewed(host, live.findViewed("a.ipynb"))  # type: ignore[arg-type]
    assert waiting is not None and [c.cell_id for c in waiting.access_state().changes] == ["c1"]
    assert live.access_reads == 3


def test_a_batch_hands_over_the_sources_its_check_read_of_the_cells_it_changes():
    nb, live = notebook()
    read = {c.id: c.source for c in nb.find_cells(["c1", "c2"])}
    nb.apply_edits([SetSourceOp("c1", "x = 5"), DeleteOp("c2")], read)
    assert live.batch_expected == {"c1": "x = 1", "c2": "y = 2"} and live.sources == {"c1": "x = 5"}
    nb, live = notebook()
    read = {c.id: c.source for c in nb.find_cells(["c1"])}
    live.sources["c1"] = "x = 1  # the person's"
    with pytest.raises(ToolError) as err:
        nb.apply_edits([SetSourceOp("c1", "x = 5")], read)
    assert err.value.code == ErrorCode.STALE_CELL and live.sources["c1"] == "x = 1  # the person's"


def test_a_closed_notebook_answers_notebook_not_found():
    nb, _ = notebook("closed-panel")
    with pytest.raises(ToolError) as err:
        nb.revision()
    assert err.value.code == ErrorCode.NOTEBOOK_NOT_FOUND
    open_nb, _ = notebook()
    assert open_nb.revision() == 3 and open_nb.path == "a.ipynb"


def test_another_failure_of_the_half_passes_unchanged():
    nb, live = notebook()
    live.revision = lambda handle: (_ for _ in ()).throw(RuntimeError("TypeError: x is undefined"))  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="x is undefined"):
        nb.revision()


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        ({"outcome": "none"}, "This notebook has no kernel."),
        ({"outcome": "unavailable"}, "JupyterLab's kernel restart is not available on this page."),
        ({"outcome": "failed", "message": "Kernel is dead"}, "The kernel did not restart: Kernel is dead"),
    ],
)
def test_a_kernel_action_the_page_could_not_do_is_kernel_unavailable(outcome, message):
    nb, live = notebook()
    live.kernel_outcome = outcome
    with pytest.raises(ToolError) as err:
        run(nb.kernel_action("restart", 1.0))
    assert err.value.code == ErrorCode.KERNEL_UNAVAILABLE and err.value.message == message


def test_a_declined_restart_changes_nothing_and_a_done_one_waits_for_the_kernel():
    nb, live = notebook()
    live.kernel_outcome = {"outcome": "declined"}
    assert run(nb.kernel_action("restart", 1.0)) is None
    live.kernel_outcome = {"outcome": "done"}
    info = run(nb.kernel_action("interrupt", 1.0))
    assert (info.name, info.status, info.display_name) == ("python", "idle", "Python (Pyodide)")


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ({"failed": {"name": "ModalCancelError", "message": "Cancel"}}, "cancelled"),
        ({"failed": {"name": "Error", "message": "ModalDuplicateError: already open"}}, "dialog-open"),
        ({"outcome": "saved", "lastModified": "2026-12-06T01:00:00Z", "hash": None}, "saved"),
    ],
)
def test_a_save_reports_what_the_page_did(answer, outcome):
    nb, _ = notebook(tabs=FakeTabs(answer))
    saved = run(nb.save())
    assert saved.outcome == outcome
    assert saved.revision == (3 if outcome == "saved" else None)


def test_a_save_that_went_ahead_without_the_tabs_lock_says_so():
    """tabs.js waited its deadline for the save lock (held by kernel code) and saved without it."""
    answer = {"outcome": "saved", "lastModified": "2026-12-06T01:00:00Z", "hash": None, "unlocked": True}
    nb, _ = notebook(tabs=FakeTabs(answer))
    saved = run(nb.save())
    assert (saved.saved, saved.unlocked, saved.revision) == (True, True, 3)
    plain = run(notebook(tabs=FakeTabs({**answer, "unlocked": False}))[0].save())
    assert (plain.saved, plain.unlocked) == (True, False)


def test_a_save_that_failed_otherwise_is_an_internal_error():
    nb, _ = notebook(tabs=FakeTabs({"failed": {"name": "Error", "message": "Forbidden"}}))
    with pytest.raises(ToolError) as err:
        run(nb.save())
    assert err.value.code == ErrorCode.INTERNAL_ERROR and "Forbidden" in err.value.message


def test_a_cell_run_reports_the_reply():
    nb, live = notebook()
    assert run(nb.run_cell("c1", 1.0)) == lab_notebook.RunResult("c1", "ok", 7)
    live.run_reply = json.dumps({"status": "error", "execution_count": 8})
    assert run(nb.run_cell("c1", 1.0)) == lab_notebook.RunResult("c1", "error", 8)
    live.run_reply = json.dumps({"status": "failed", "execution_count": None})
    assert run(nb.run_cell("c1", 1.0)) == lab_notebook.RunResult("c1", "error", None)
    live.run_reply = json.dumps({"status": "ok", "execution_count": None})  # an empty cell: nothing ran
    assert run(nb.run_cell("c1", 1.0)) == lab_notebook.RunResult("c1", "ok", None)
    with pytest.raises(ToolError) as err:
        run(nb.run_cell("missing", 1.0))
    assert err.value.code == ErrorCode.CELL_NOT_FOUND


def stream(text: str, name: str = "stdout") -> dict:
    return {"type": "stream", "name": name, "text": text}


def test_a_code_run_merges_the_batches_and_the_rest_in_python():
    nb, live = notebook()
    live.batches = [[stream("a"), stream("b")], [stream("c"), stream("!", "stderr")]]
    live.rest = [stream("d", "stderr"), {"type": "execute_result", "data": {"text/plain": "42"}}]
    done = run(nb.run_code("print()", 1.0, head_bytes=100, max_outputs=10))
    assert done.status == "ok" and done.execution_count == 2 and done.output_count == 3
    assert [(o.output_type, o.items[0].head) for o in done.outputs] == [
        ("stream", "abc"),
        ("stream", "!d"),
        ("execute_result", "42"),
    ]
    assert live.finished == [1] and live.sinks[0].destroyed  # the run is finished and its sink freed


def test_batches_the_page_sent_before_the_end_but_handed_over_after_it_are_kept_in_order():
    nb, live = notebook()
    live.batches = [[stream("a")]]
    live.late = [[stream("b")], [stream("c"), stream("!", "stderr")]]  # in the worker's queue when runFinish answers
    live.rest = [stream("d", "stderr")]
    done = run(nb.run_code("print()", 1.0, head_bytes=100, max_outputs=10))
    assert [(o.output_type, o.items[0].head) for o in done.outputs] == [("stream", "abc"), ("stream", "!d")]
    assert done.reason is None and live.sinks[0].destroyed  # complete, and the sink freed only once they arrived


def test_a_batch_that_never_arrives_ends_the_wait_after_its_bound(monkeypatch):
    monkeypatch.setattr(lab_notebook, "LATE_BATCH_SECONDS", 0.05)
    nb, live = notebook()
    live.batches = [[stream("a")]]
    live.rest = [stream("d")]
    finish = live.runFinish
    live.runFinish = lambda run_id: json.dumps({**json.loads(finish(run_id)), "sent": 2})  # one batch is lost
    started = time.monotonic()
    done = run(nb.run_code("print()", 1.0, head_bytes=100, max_outputs=10))
    assert 0.05 <= time.monotonic() - started < 1.0  # it waited for the lost batch, and only as long as the bound
    assert done.status == "ok" and [o.items[0].head for o in done.outputs] == ["ad"]
    assert done.reason == (
        "the outputs are incomplete: 1 batch(es) of its outputs did not reach the bridge (none for 0.05 s)"
    )
    assert live.sinks[0].destroyed


def test_a_code_run_that_times_out_returns_what_arrived():
    nb, live = notebook()
    live.done = None
    live.batches = [[stream("partial")]]
    done = run(nb.run_code("while True: pass", 0.01, head_bytes=100, max_outputs=10))
    assert done.status == "timeout" and "no reply from the kernel" in (done.reason or "")
    assert [o.items[0].head for o in done.outputs] == ["partial"]
    assert live.finished == [1] and live.sinks[0].destroyed


def test_the_agents_code_claims_the_kernel_and_the_bridges_own_scrub_does_not():
    nb, live = notebook()
    run(nb.run_code("print(1)", 1.0, head_bytes=100, max_outputs=1))
    run(nb.scrub_kernel_history([1], ["secret = 1"]))
    assert live.as_agent == [True, False]  # notebook.js makes the kernel the agent's only for the first


@pytest.mark.parametrize(
    ("code", "message"),
    [("refused", "The kernel refused the request: kernel is dead"), ("none", "This notebook has no kernel.")],
)
def test_a_code_run_the_kernel_cannot_take_is_kernel_unavailable(code, message):
    nb, live = notebook()
    with pytest.raises(ToolError) as err:
        run(nb.run_code(code, 1.0, head_bytes=10, max_outputs=1))
    assert err.value.code == ErrorCode.KERNEL_UNAVAILABLE and err.value.message == message
    assert live.finished == []


def test_every_read_of_an_output_the_page_no_longer_holds_is_output_not_found_and_an_answer_is_read_as_its_data():
    """The output's text, its binary data and head, a copy of its image and a picture of it: the page answers null
    for an output that is gone (its cell rerun or cleared), which is OUTPUT_NOT_FOUND naming the cell, every time."""
    nb, live = notebook()
    request = ImageRequest(10, 10, "image/png")
    reads = {
        "text": lambda: nb.read_output_text("c1", 0, "text/plain", 0, 100),
        "binary": lambda: nb.read_output_binary("c1", 0, "image/png", 100),
        "head": lambda: nb.read_output_binary_head("c1", 0, "image/png", 3),
        "copy": lambda: run(nb.encode_output_image("c1", 0, "image/png", request)),
        "picture": lambda: run(nb.capture_output("c1", 0, 100)),
    }
    for name, read in reads.items():
        with pytest.raises(ToolError) as caught:
            read()
        assert caught.value.code == ErrorCode.OUTPUT_NOT_FOUND, name
        assert caught.value.details == {"cellId": "c1"}, name
        assert "gone" in caught.value.message, name
    live.output = {"data": "YWJj", "first": 0, "total": 3, "bytes": 3, "width": 2, "height": 1, "mime": "image/png",
                   "status": "empty"}  # fmt: skip
    assert reads["text"]().text == "abc"
    assert reads["binary"]() == ("YWJj", 3)
    assert reads["head"]() == (b"abc", 3)
    assert reads["copy"]().width == 2
    assert reads["picture"]().status == "empty"
