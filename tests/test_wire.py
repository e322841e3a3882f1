"""The host wire (host_wire.py, host_remote.py): every host-protocol call crosses as JSON text and comes back equal.

Each test compares a RemoteHost over a loopback to a WireServer on one MemoryWorkspace with a twin workspace called
directly: what the worker reads is what an in-process caller reads.
"""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from helpers import corpus_text, make_bridge
from host_memory import MemoryWorkspace
from host_remote import RemoteHost, RemoteNotebook, loopback_host
from host_wire import HOST_METHODS, NOTEBOOK_METHODS, WireServer
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.host.protocol import InsertOp, MoveOp, RawButton, SetSourceOp
from webmcp_bridge.lab.messages import WireError

FILES = {
    "demo/running.ipynb": corpus_text("notebook-running-code.ipynb"),
    "notes/a.txt": "alpha\nbeta\n",
}


def pair() -> tuple[MemoryWorkspace, RemoteHost, MemoryWorkspace]:
    """(the workspace behind the wire, the RemoteHost to it, a twin workspace called directly)."""
    ws = MemoryWorkspace(dict(FILES))
    return ws, loopback_host(WireServer(ws, ws.dialogs)), MemoryWorkspace(dict(FILES))


def test_workspace_contents_and_open_notebooks_cross_equal():
    ws, remote, twin = pair()

    async def both(host):
        return [
            await host.list_dir(""),
            await host.list_dir("nowhere"),
            await host.stat("notes/a.txt"),
            await host.read_text("notes/a.txt", 1000),
            await host.read_saved_notebook("demo/running.ipynb", 10**7, head_bytes=50, max_outputs=2),
            await host.notebook_bridge_metadata("demo/running.ipynb"),
            await host.write_text("notes/b.txt", "new ü\n"),
            await host.create_notebook("n.ipynb", "python3"),
            (await host.open_notebook("demo/running.ipynb", True)).path,
            host.open_documents(),
            host.find_open("demo/running.ipynb").path,
            host.find_open("n.ipynb"),
        ]

    assert asyncio.run(both(remote)) == asyncio.run(both(twin))
    assert ws.files["notes/b.txt"] == "new ü\n"
    nb = remote.current_notebook()
    assert isinstance(nb, RemoteNotebook) and nb is remote.find_open("demo/running.ipynb")  # one object per handle


def test_cells_kernel_and_view_cross_equal():
    _, remote, twin = pair()

    async def both(host):
        nb = await host.open_notebook("demo/running.ipynb", True)
        ids = [c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0)]
        out = [nb.cell_count(), nb.language(), nb.dirty(), nb.kernel(), nb.focus(), nb.tabs()]
        out.append([c.outputs for c in nb.read_cells(range(len(ids)), head_bytes=200, max_outputs=5)])
        out.append([(r.index, r.execution_count, r.edited) for r in nb.run_states(len(ids))])
        new = nb.apply_edits([InsertOp("code", "print(2)\n"), SetSourceOp(ids[0], "# one\n"), MoveOp(ids[1], ids[2])])
        out.append([c.source for c in nb.find_cells([ids[0], ids[1]])])
        out.append(await nb.run_code("print('hi')", 5, head_bytes=100, max_outputs=3))
        out.append((await nb.run_cell(new[0], 5)).status)
        nb.set_bridge_metadata({"access": "read", "n": [1, 2.5, None, True]})
        out.append(nb.bridge_metadata())
        out.append([(c.actor, c.kind, c.cell_id == new[0] or c.cell_id in ids) for c in nb.take_changes()])
        out.append(nb.access_state().notebook_access)
        out.append((await nb.save()).outcome)
        return out, len(new), new[1:] == ids[:1] + ids[1:2]

    (remote_out, *_), (direct_out, *_) = asyncio.run(both(remote)), asyncio.run(both(twin))
    assert remote_out == direct_out
    for name in ("find_cells", "read_cells", "apply_edits", "run_code", "run_cell", "save", "take_changes"):
        assert remote.crossings[name] >= 1, name


def test_every_protocol_method_is_known_to_the_codec():
    """The method tables are read from the protocol: the remote objects have every method, with its sync/async kind."""
    for table, cls in ((HOST_METHODS, RemoteHost), (NOTEBOOK_METHODS, RemoteNotebook)):
        assert len(table) > 10
        for name, method in table.items():
            assert asyncio.iscoroutinefunction(getattr(cls, name)) is method.is_async, name


def test_a_tool_error_crosses_with_code_message_and_details():
    _, remote, twin = pair()
    asyncio.run(remote.open_notebook("demo/running.ipynb", True))
    asyncio.run(twin.open_notebook("demo/running.ipynb", True))
    with pytest.raises(ToolError) as far:
        remote.current_notebook().read_output_text("nope", 0, "text/plain", 0, 10)
    with pytest.raises(ToolError) as near:
        twin.current_notebook().read_output_text("nope", 0, "text/plain", 0, 10)
    assert far.value.payload() == near.value.payload() and far.value.code is ErrorCode.CELL_NOT_FOUND
    with pytest.raises(ToolError) as big:
        asyncio.run(remote.read_text("notes/a.txt", 3))
    assert big.value.payload()["error"] == "TOO_LARGE" and big.value.details["maxBytes"] == 3


def test_the_same_tool_error_reaches_the_agent_over_the_wire():
    payloads = []
    for route in ("direct", "wire"):
        from helpers import HOST_ROUTE

        HOST_ROUTE["route"] = route
        b = make_bridge({"demo/running.ipynb": "notebook-running-code.ipynb"})
        HOST_ROUTE["route"] = "direct"
        b.open("demo/running.ipynb")
        payloads.append(
            b.fails("jupyter_get_cells", {"notebookPath": "demo/running.ipynb", "cellIds": ["zz"]}, "CELL_NOT_FOUND")
        )
        assert (b.remote is not None) is (route == "wire")
    assert payloads[0] == payloads[1]


def test_a_batch_answers_in_order_and_runs_every_call():
    _, remote, _ = pair()
    nb = asyncio.run(remote.open_notebook("demo/running.ipynb", True))
    ids = [c.id for c in nb.read_cells(None, head_bytes=0, max_outputs=0)]
    before = sum(remote.crossings.values())
    values = remote.batch(
        [
            (nb, "find_cell", {"cell_id": ids[2]}),
            (nb, "cell_count", {}),
            (nb, "find_cell", {"cell_id": ids[0]}),
            ("host", "open_documents", {}),
        ]
    )
    assert [values[0].id, values[1], values[2].id] == [ids[2], len(ids), ids[0]]
    assert values[3][0].path == "demo/running.ipynb"
    assert sum(remote.crossings.values()) == before + 1 and remote.crossings["batch"] == 1
    with pytest.raises(ToolError) as failed:
        remote.batch([(nb, "find_cell", {"cell_id": "zz"}), (nb, "set_source", {"cell_id": ids[0], "source": "z"})])
    assert failed.value.code is ErrorCode.CELL_NOT_FOUND
    assert nb.find_cell(ids[0]).source == "z"  # the call after the failing one ran


@pytest.mark.parametrize(
    "value",
    [{"a": {1, 2}}, {"a": math.nan}, {1: "int key"}, {"a": object()}, {"a": b"bytes"}],
    ids=["set", "nan", "int-key", "object", "bytes"],
)
def test_a_value_that_is_not_json_is_refused_before_it_crosses(value):
    ws, remote, _ = pair()
    nb = asyncio.run(remote.open_notebook("demo/running.ipynb", True))
    revision, crossed = ws.open["demo/running.ipynb"].revision(), sum(remote.crossings.values())
    with pytest.raises(WireError, match=r"set_bridge_metadata\(value\)"):
        nb.set_bridge_metadata(value)
    assert sum(remote.crossings.values()) == crossed
    assert ws.open["demo/running.ipynb"].revision() == revision


def test_an_unreadable_message_is_answered_as_a_wire_error():
    ws = MemoryWorkspace(dict(FILES))
    server = WireServer(ws)
    for text in (
        "not json",
        json.dumps({"id": 3, "target": "host"}),
        json.dumps({"id": 4, "target": "host", "method": "nope", "args": {}}),
        json.dumps({"id": 5, "target": "host", "method": "find_open", "args": {"path": 7}}),
    ):
        answer = json.loads(server.answer(text))
        assert answer["error"]["kind"] == "wire", answer


def test_dialogs_cross_and_their_events_reach_the_watcher():
    ws, remote, _ = pair()
    seen = []
    remote.dialogs.watch(lambda: seen.append(1))

    async def scenario():
        asked = asyncio.ensure_future(
            ws.dialogs.ask("Sure?", "Really.", [RawButton("No", False), RawButton("Yes", True)])
        )
        await asyncio.sleep(0)
        shown = remote.dialogs.snapshot(100)
        assert [d.title for d in shown] == ["Sure?"] and shown[0].buttons[1].label == "Yes"
        assert remote.dialogs.click(shown[0].id, 1) == "clicked"
        return await asked

    assert asyncio.run(scenario()) == 1 and seen


def test_one_update_call_reports_its_crossings():
    """A tool call over the wire: every host call is one crossing, counted by method (the count the page publishes)."""
    from helpers import HOST_ROUTE

    HOST_ROUTE["route"] = "wire"
    try:
        b = make_bridge({"demo/nb.ipynb": "notebook-running-code.ipynb"})
    finally:
        HOST_ROUTE["route"] = "direct"
    b.open("demo/nb.ipynb")
    cell = b.ok("jupyter_get_cells", {"notebookPath": "demo/nb.ipynb", "startIndex": 0, "endIndex": 3})["cells"][1]
    assert b.remote is not None
    b.remote.crossings.clear()
    b.ok(
        "jupyter_update_cell",
        {
            "notebookPath": "demo/nb.ipynb",
            "cellId": cell["id"],
            "source": "x = 1\n",
            "expectedSourceHash": cell["sourceHash"],
        },
    )
    counts = json.loads(b.remote.crossings_json())
    print("jupyter_update_cell crossings over the wire:", sum(counts.values()), counts)
    assert 1 <= sum(counts.values()) <= 6 and counts.get("set_source", 0) + counts.get("apply_edits", 0) == 1
    assert b.nb("demo/nb.ipynb").find_cell(cell["id"]).source == "x = 1\n"
