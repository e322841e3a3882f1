"""jupyter_run_code through the registry, over the in-memory host (its kernel: Python's exec in the
notebook's namespace) and real corpus notebooks."""

from __future__ import annotations

import json

import pytest

from helpers import Bridge, make_bridge
from webmcp_bridge.access.levels import set_notebook_level
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.host.protocol import RawItem, RawOutput
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import code_toolset
from webmcp_bridge.tools.code import _shares, describe_run_outputs

DEMO = "demo/python.ipynb"
RUN = "demo/running.ipynb"


def code_bridge(limits: Limits = Limits()) -> Bridge:
    b = make_bridge({DEMO: "jupyterlite-demo-python.ipynb", RUN: "notebook-running-code.ipynb"}, limits=limits)
    b.reg.add_toolset(code_toolset())
    b.open(RUN)
    b.open(DEMO)
    return b


@pytest.fixture
def b() -> Bridge:
    return code_bridge()


def notebook_json(b: Bridge, path: str = DEMO) -> str:
    return json.dumps(b.nb(path).nb, sort_keys=True)


def test_definition():
    definition = next(d for d in build_bridge(None).registry.definitions() if d["name"] == "jupyter_run_code")  # type: ignore[arg-type]
    assert definition["annotations"] == {
        "readOnlyHint": False,
        "untrustedContentHint": True,
        "consequentialHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    schema = definition["inputSchema"]
    assert set(schema["properties"]) == {"notebookPath", "code", "timeout"} and schema["required"] == ["code"]


def test_code_runs_without_touching_the_notebook(b):
    before, revision, dirty = notebook_json(b), b.nb(DEMO).revision(), b.nb(DEMO).dirty()
    run = b.ok("jupyter_run_code", {"code": "total = sum(range(10))\nprint('total', total)"})
    assert run["status"] == "ok" and run["path"] == DEMO and run["truncated"] is False
    assert run["outputCount"] == 1
    [out] = run["outputs"]
    assert out == {
        "index": 0,
        "outputType": "stream",
        "mimeType": "text/plain",
        "bytes": 9,
        "text": "total 45\n",
        "textTruncated": False,
    }
    assert run["kernel"]["status"] == "idle"
    assert notebook_json(b) == before and b.nb(DEMO).revision() == revision and b.nb(DEMO).dirty() == dirty


def test_code_shares_the_namespace_the_cells_run_in(b):
    b.ok("jupyter_run_code", {"code": "from_code = 6 * 7"})
    first = b.nb(DEMO).person_insert_cell(0, "code", "print(from_code)")
    ran = b.ok("jupyter_run_cells", {"cellIds": [first]})["results"][0]
    assert ran["status"] == "ok" and ran["outputs"][0]["preview"] == "42\n"
    assert b.ok("jupyter_run_code", {"code": "print(from_code + 1)"})["outputs"][0]["text"] == "43\n"
    other = b.ok("jupyter_run_code", {"code": "print('from_code' in globals())", "notebookPath": RUN})
    assert other["outputs"][0]["text"] == "False\n"  # each notebook has its own kernel


def test_an_error_is_reported_with_its_outputs_and_no_ansi(b):
    run = b.ok("jupyter_run_code", {"code": "print('before')\n1 / 0"})
    assert run["status"] == "error"
    stream, error = run["outputs"]
    assert stream["text"] == "before\n"
    assert (
        error["outputType"] == "error"
        and error["ename"] == "ZeroDivisionError"
        and error["evalue"] == "division by zero"
    )
    assert "ZeroDivisionError" in error["text"] and "\x1b" not in json.dumps(run)


def test_long_outputs_share_a_bounded_text_budget(b):
    code = "for i in range(20000):\n    print(i, 'é✓ 日本 🙂')\nraise ValueError('the end')"
    run = b.ok("jupyter_run_code", {"code": code})
    stream, error = run["outputs"]
    full = "".join(f"{i} é✓ 日本 🙂\n" for i in range(20000))
    assert stream["bytes"] == len(full.encode()) and stream["textTruncated"] is True
    assert full.startswith(stream["text"]) and len(stream["text"].encode()) <= 16 * 1024
    assert error["textTruncated"] is False and error["text"].endswith(
        "ValueError: the end"
    )  # a short error is kept whole
    assert run["truncated"] is True
    assert len(stream["text"].encode()) + len(error["text"].encode()) <= 16 * 1024


def test_many_outputs_are_counted_and_the_first_ones_listed():
    def many(source: str, namespace: dict):
        outputs = [
            {
                "output_type": "display_data",
                "data": {"text/plain": f"item {i}", "image/png": "iVBORw0KGgo="},
                "metadata": {},
            }
            for i in range(30)
        ]
        return outputs, "ok"

    b = code_bridge()
    b.ws.executor = many
    run = b.ok("jupyter_run_code", {"code": "show()"})
    assert run["outputCount"] == 30 and len(run["outputs"]) == 20 and run["truncated"] is True
    assert run["outputs"][3]["text"] == "item 3" and run["outputs"][3]["mimeTypes"] == ["text/plain", "image/png"]
    assert "iVBOR" not in json.dumps(run)  # binary data is never inlined


def test_fair_shares():
    assert _shares([10, 20, 30], 100) == [10, 20, 30]
    assert _shares([10, 1000, 5000], 1000) == [10, 495, 495]
    assert _shares([], 100) == []
    outputs = (
        RawOutput("stream", (RawItem("text/plain", 5, "hello"),), name="stdout"),
        RawOutput("display_data", (RawItem("image/png", 100, "", True),)),
    )
    described = describe_run_outputs(outputs, Limits())
    assert described[0]["text"] == "hello" and "text" not in described[1] and "preview" not in described[0]


def test_a_read_only_notebook_refuses_and_runs_nothing(b):
    set_notebook_level(b.nb(DEMO), "read")
    b.fails("jupyter_run_code", {"code": "ran = True"}, "NOTEBOOK_ACCESS_DENIED")
    assert "ran" not in b.nb(DEMO)._namespace
    hidden = b.nb(RUN)
    set_notebook_level(hidden, "none")
    missing = b.fails("jupyter_run_code", {"code": "x = 1", "notebookPath": "demo/missing.ipynb"}, "NOTEBOOK_NOT_FOUND")
    refused = b.fails("jupyter_run_code", {"code": "x = 1", "notebookPath": RUN}, "NOTEBOOK_NOT_FOUND")
    assert refused["message"].replace(RUN, "P") == missing["message"].replace("demo/missing.ipynb", "P")


def test_no_kernel_and_bad_arguments(b):
    b.nb(DEMO).kernel_status = "dead"
    assert b.fails("jupyter_run_code", {"code": "1"}, "KERNEL_UNAVAILABLE")["kernel"]["status"] == "dead"
    b.nb(DEMO).kernel_status = "idle"
    b.fails("jupyter_run_code", {"code": ""}, "INVALID_ARGUMENT")
    b.fails("jupyter_run_code", {"code": "1", "timeout": 0}, "INVALID_ARGUMENT")
    b.fails("jupyter_run_code", {"code": "1", "timeout": 601}, "INVALID_ARGUMENT")
    b.fails("jupyter_run_code", {"code": "1", "timeout": "5"}, "INVALID_ARGUMENT")
    b.fails("jupyter_run_code", {"code": "1", "cell": "x"}, "INVALID_ARGUMENT")
    assert b.fails("jupyter_run_code", {"code": "#" * (256 * 1024 + 1)}, "TOO_LARGE")["field"] == "code"
    assert (
        b.ok("jupyter_run_code", {"code": "print(1)", "timeout": 5})["status"] == "ok"
    )  # an integer number of seconds
    assert b.ok("jupyter_run_code", {"code": "print(1)", "timeout": 0.5})["status"] == "ok"
    b.fails("jupyter_run_code", {"code": "1", "notebookPath": "notes.txt"}, "INVALID_PATH")


def test_run_code_in_a_notebook_with_hidden_cells_asks_the_person_first_even_in_direct_mode():
    """What hidden cells defined lives in the kernel: code the agent runs there is shown to the person first."""
    import asyncio
    import json as _json

    from helpers import check_envelope, corpus_json
    from host_memory import MemoryWorkspace
    from webmcp_bridge.access import levels
    from webmcp_bridge.session.bridge import build_bridge

    ws = MemoryWorkspace({"e.ipynb": _json.dumps(corpus_json("pytudes-euler.ipynb"))})
    reg = build_bridge(ws).registry
    asyncio.run(reg.call("jupyter_open_notebook", {"path": "e.ipynb"}))
    book = reg.context.proposals
    assert book.mode == "direct"
    direct = asyncio.run(reg.call("jupyter_run_code", {"code": "print(6 * 7)"}))
    assert direct["isError"] is False and not book.waiting()
    nb = ws.open["e.ipynb"]
    levels.set_cell_level(nb, nb.read_cells([3], head_bytes=0, max_outputs=0)[0].id, "none")

    async def scenario(accept: bool):
        call = asyncio.ensure_future(reg.call("jupyter_run_code", {"code": "print(6 * 7)"}))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if book.waiting():
                break
        waiting = book.waiting()
        assert waiting and waiting[0].code == "print(6 * 7)" and not call.done()
        (book.accept if accept else book.deny)(waiting[0].id)
        return await call

    ran = asyncio.run(scenario(True))
    check_envelope(ran, Limits())
    assert ran["isError"] is False and ran["structuredContent"]["status"] == "ok"
    denied = asyncio.run(scenario(False))["structuredContent"]
    assert denied["status"] == "denied"
