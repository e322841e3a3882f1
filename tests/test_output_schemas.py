"""Output schemas (calls/payloads.py): every tool's outputSchema is generated from the pydantic models of its success
payload, and real results of every tool (its own payload, pending, denied, a collected call, an answered dialog) are
valid against it, closed (a key the models do not declare fails). The conftest checks every successful result of the
whole suite the same way; this file makes sure each tool is reached at least once, in one scenario on the in-memory
host."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest

from helpers import CHECKED_OUTPUTS, check_envelope, check_output_schema, closed_schema, corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.session.bridge import build_bridge, tools_manifest

NB = "talks/calculus.ipynb"


def every_tool() -> list[Any]:
    return build_bridge(MemoryWorkspace({})).registry.tools()


PUBLISHED = {d["name"]: d for d in tools_manifest()["definitions"]}  # what the loader registers


@pytest.mark.parametrize("tool", every_tool(), ids=lambda t: t.name)
def test_every_tool_publishes_a_valid_output_schema(tool):
    schema = tool.output_schema()
    assert schema is not None and schema["type"] == "object" and schema["anyOf"]
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator.check_schema(closed_schema(schema))
    text = json.dumps(schema)
    assert (
        "$ref" not in text and "$defs" not in text and "webmcp_bridge." not in text
    )  # inlined, no docstrings of the code
    statuses = {
        json.dumps(b["properties"].get("status", {}).get("const")) for b in schema["anyOf"] if "properties" in b
    }
    assert '"pending"' in statuses  # any call can go pending
    assert PUBLISHED[tool.name]["outputSchema"] == schema  # the loader registers exactly these


class Agent:
    """The page's registry over a memory workspace with dialogs; every result is checked explicitly too."""

    def __init__(self) -> None:
        self.ws = MemoryWorkspace({NB: corpus_text("handson-ml2-math-calculus.ipynb"), "notes/readme.txt": "notes\n"})
        self.ws.dialogs.confirm_restart = True
        self.limits = Limits(execution_timeout_seconds=1.0)
        self.bridge = build_bridge(self.ws, limits=self.limits, dialogs=self.ws.dialogs)
        self.reg = self.bridge.registry
        self.tools = {t.name: t for t in self.reg.tools()}
        self.checked: dict[str, int] = {}

    async def ok(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.reg.call(name, args or {})
        check_envelope(result, self.limits)
        assert result["isError"] is False, (name, result["structuredContent"])
        check_output_schema(self.tools[name], result)
        self.checked[name] = self.checked.get(name, 0) + 1
        return result["structuredContent"]


def test_the_real_results_of_every_tool_match_their_output_schema():
    async def scenario() -> Agent:
        a = Agent()
        await a.ok("jupyter_toolsets")
        await a.ok("jupyter_toolsets", {"enable": ["review"]})
        await a.ok("jupyter_get_context")
        await a.ok("jupyter_list_workspace", {"recursive": True})
        await a.ok("jupyter_open_notebook", {"path": NB})
        await a.ok("jupyter_get_context")  # with a notebook, a kernel and a focus
        await a.ok("jupyter_get_notebook_map")
        listing = await a.ok("jupyter_get_cells", {"includeOutputs": True})
        cells = listing["cells"]
        figure, table = (
            next(
                f"{listing['uri']}/cells/{c['id']}/outputs/{o['index']}"
                for c in cells
                for o in c.get("outputs", [])
                if o.get("mimeType") == mime
            )
            for mime in ("image/png", "text/html")
        )
        await a.ok("jupyter_get_output", {"uri": figure})  # an image
        await a.ok("jupyter_get_output", {"uri": table, "maxBytes": 64})  # a page of text
        await a.ok("jupyter_export_notebook", {"includeOutputs": True})
        await a.ok("jupyter_get_cells", {"cellIds": [cells[0]["id"]], "includeSource": False})
        new = (await a.ok("jupyter_insert_cell", {"source": "print('hi')", "referenceCellId": cells[0]["id"]}))["cell"]
        new = (
            await a.ok(
                "jupyter_update_cell",
                {"cellId": new["id"], "source": "print('hi!')", "expectedSourceHash": new["sourceHash"]},
            )
        )["cell"]
        new = (await a.ok("jupyter_edit_cell_source", {"cellId": new["id"], "oldText": "hi!", "newText": "hello"}))[
            "cell"
        ]
        await a.ok("jupyter_move_cell", {"cellId": new["id"], "referenceCellId": cells[2]["id"], "position": "below"})
        await a.ok("jupyter_run_cells", {"cellIds": [new["id"], cells[0]["id"]]})
        await a.ok("jupyter_run_code", {"code": "print(6 * 7)"})
        await a.ok(
            "jupyter_run_code",
            {"code": "import types\nbox = types.SimpleNamespace()\ngrid = {'a': [1]}\ndef area(w):\n    return w"},
        )
        await a.ok("jupyter_list_variables", {"limit": 5})
        for name in ("box", "grid", "area", "missing"):
            await a.ok("jupyter_inspect_variable", {"name": name})
        await a.ok("jupyter_search", {"query": "hello"})
        await a.ok("jupyter_search", {"query": r"def \w+", "regex": True, "limit": 1})  # a page with a cursor
        await a.ok("jupyter_clear_outputs", {"cellIds": [new["id"]]})
        await a.ok("jupyter_focus_cell", {"cellId": new["id"], "cursor": {"line": 0, "column": 2}})
        thread = (await a.ok("jupyter_create_comment", {"cellId": new["id"], "body": "Why hello?", "quote": "hello"}))[
            "thread"
        ]
        await a.ok("jupyter_reply_comment", {"threadId": thread["id"], "body": "A greeting."})
        await a.ok("jupyter_list_comments", {"status": "all"})
        await a.ok("jupyter_get_comment", {"threadId": thread["id"]})
        await a.ok("jupyter_focus_comment", {"threadId": thread["id"]})
        await a.ok("jupyter_resolve_comment", {"threadId": thread["id"], "message": "Done."})
        await a.ok("jupyter_reopen_comment", {"threadId": thread["id"]})
        await a.ok("jupyter_get_cell_access", {"startIndex": 0, "endIndex": 5})
        a.ws.current_notebook().person_set_source(cells[1]["id"], "typed by the person")
        await a.ok("jupyter_get_changes", {"since": 0})  # without a wait: the burst under way is marked typing
        a.ws.current_notebook().person_set_source(cells[12]["id"], cells[12]["source"] + "\n")  # a def, called below
        assert (await a.ok("jupyter_rerun_plan", {}))["cells"]
        await a.ok("jupyter_rerun_plan", {"cellId": cells[15]["id"]})
        await a.ok("jupyter_get_changes", {"since": 0, "wait": 1})
        await a.ok("jupyter_get_output_selection")
        a.bridge.shared.share(NB, new["id"], 0, "hello")
        await a.ok("jupyter_get_output_selection")
        written = await a.ok("jupyter_write_file", {"path": "notes/todo.txt", "content": "check the limits\n"})
        read = await a.ok("jupyter_read_file", {"path": "notes/todo.txt"})
        assert read["hash"] == written["hash"]
        edited = await a.ok(
            "jupyter_edit_file",
            {"path": "notes/todo.txt", "oldText": "limits", "newText": "bounds", "expectedHash": read["hash"]},
        )
        await a.ok(
            "jupyter_write_file",
            {"path": "notes/todo.txt", "content": "and the docs\n", "append": True, "expectedHash": edited["hash"]},
        )
        batch = await a.ok(
            "jupyter_apply_edits",
            {
                "edits": [
                    {"op": "insert", "source": "x = 1"},
                    {"op": "delete", "cellId": new["id"], "expectedSourceHash": new["sourceHash"]},
                ]
            },
        )
        assert [r["op"] for r in batch["results"]] == ["insert", "delete"]
        retyped = await a.ok("jupyter_set_cell_type", {"cellId": batch["results"][0]["cell"]["id"], "cellType": "raw"})
        assert retyped["changed"] is True and retyped["previousType"] == "code"
        await a.ok(
            "jupyter_delete_cell",
            {
                "cellId": batch["results"][0]["cell"]["id"],
                "expectedSourceHash": batch["results"][0]["cell"]["sourceHash"],
            },
        )
        await a.ok("jupyter_kernel_action", {"action": "interrupt"})
        # a restart asks first: the call goes pending with its dialog, answered by the agent
        pending = await a.ok("jupyter_kernel_action", {"action": "restart"})
        assert pending["status"] == "pending" and pending["dialog"]["title"] == "Restart Kernel?"
        answered = await a.ok("jupyter_answer_dialog", {"button": "Restart"})
        assert answered["restarted"] is True and answered["answered"]["button"] == "Restart"
        collected = await a.ok("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
        assert collected["restarted"] is True
        # Propose mode: a denied change is a normal result
        book = a.bridge.proposals
        book.set_mode("propose")

        async def deny_when_shown() -> None:
            while not book.waiting():
                await asyncio.sleep(0.01)
            book.deny(book.waiting()[0].id, "not now")

        denier = asyncio.ensure_future(deny_when_shown())
        denied = await a.ok("jupyter_insert_cell", {"source": "no"})
        await denier
        assert denied["status"] == "denied" and denied["reason"] == "not now"
        book.set_mode("direct")
        await a.ok("jupyter_save_notebook")
        await a.ok("jupyter_create_notebook", {"name": "fresh", "directory": "talks"})
        return a

    agent = asyncio.run(scenario())
    assert set(agent.checked) == set(agent.tools), sorted(set(agent.tools) - set(agent.checked))
    assert {"jupyter_get_cells", "jupyter_kernel_action", "jupyter_answer_dialog"} <= set(
        CHECKED_OUTPUTS
    )  # the conftest's check ran


def test_a_key_the_models_do_not_declare_fails_the_check():
    agent = Agent()
    result = asyncio.run(agent.reg.call("jupyter_list_workspace", {}))
    check_output_schema(agent.tools["jupyter_list_workspace"], result)
    for change in (
        {"surprise": 1},
        {"entries": [{"path": "a", "name": "a", "type": "file", "size": 3}]},
        {"entries": [{"path": "a", "name": "a", "type": "socket"}]},
        {"truncated": "no"},
    ):
        payload = {**result["structuredContent"], **change}
        drifted = {**result, "content": [{"type": "text", "text": json.dumps(payload)}], "structuredContent": payload}
        with pytest.raises(AssertionError, match="jupyter_list_workspace"):
            check_output_schema(agent.tools["jupyter_list_workspace"], drifted)
