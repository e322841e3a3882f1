"""registry.py + the notebooks toolset: names, schemas, annotations, the envelope, argument checking,
errors that never raise, and hooks."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import jsonschema
import pytest

from helpers import ERROR_CODES, Bridge, check_envelope, make_bridge
from test_annotations import ALL_HINTS
from webmcp_bridge.calls.registry import CallEvent, Registry, Tool, ToolInput, Toolset
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import DEFAULT_LIMITS, MIB
from webmcp_bridge.tools import files_toolset, notebooks_toolset

# The product contract, "Argument names of the core tools": (required, optional). Every tool that works on a
# notebook also takes notebookPath.
TABLE: dict[str, tuple[set[str], set[str]]] = {
    "jupyter_get_context": (set(), set()),
    "jupyter_list_workspace": (set(), {"path", "recursive", "limit"}),
    "jupyter_open_notebook": ({"path"}, {"cellId", "activate"}),
    "jupyter_create_notebook": ({"name"}, {"directory", "kernel"}),
    "jupyter_save_notebook": (set(), set()),
    "jupyter_get_cells": (
        set(),
        {"cellIds", "startIndex", "endIndex", "includeSource", "includeOutputs", "sourceOffset"},
    ),
    "jupyter_get_output": (
        set(),
        {"cellId", "outputIndex", "uri", "mimeType", "offset", "maxBytes"},
    ),  # cellId + outputIndex, or uri
    "jupyter_insert_cell": (set(), {"referenceCellId", "position", "cellType", "source", "activate"}),
    "jupyter_update_cell": ({"cellId", "source", "expectedSourceHash"}, set()),
    "jupyter_edit_cell_source": ({"cellId", "oldText", "newText"}, {"expectedSourceHash"}),
    "jupyter_delete_cell": ({"cellId", "expectedSourceHash"}, set()),
    "jupyter_move_cell": ({"cellId", "referenceCellId"}, {"position"}),
    "jupyter_clear_outputs": (set(), {"cellIds"}),
    "jupyter_run_cells": (set(), {"cellIds", "startIndex", "endIndex", "stopOnError"}),
    "jupyter_focus_cell": ({"cellId"}, {"cursor", "selection"}),
    "jupyter_kernel_action": ({"action"}, set()),
    "jupyter_export_notebook": (set(), {"format", "includeOutputs", "offset"}),
    "jupyter_get_notebook_map": (set(), {"startIndex"}),
}
NOT_ON_A_NOTEBOOK = {
    "jupyter_get_context",
    "jupyter_list_workspace",
    "jupyter_open_notebook",
    "jupyter_create_notebook",
}
PURE_READS = {
    "jupyter_get_context",
    "jupyter_list_workspace",
    "jupyter_get_cells",
    "jupyter_get_output",
    "jupyter_export_notebook",
    "jupyter_get_notebook_map",
}
CONTENT_RETURNING = {
    "jupyter_get_cells",
    "jupyter_get_output",
    "jupyter_export_notebook",
    "jupyter_run_cells",
    "jupyter_get_notebook_map",
}
CONSEQUENTIAL = {
    "jupyter_update_cell",
    "jupyter_delete_cell",
    "jupyter_clear_outputs",
    "jupyter_run_cells",
    "jupyter_kernel_action",
}


@pytest.fixture(scope="module")
def definitions() -> dict[str, dict[str, Any]]:
    """The core tools: the notebooks toolset's and jupyter_export_notebook (served in the files toolset)."""
    reg = Registry(object())
    reg.add_toolset(notebooks_toolset())
    defs = reg.definitions()
    export = [t for t in files_toolset().tools if t.name == "jupyter_export_notebook"]
    defs += [t.definition() for t in export]
    assert len(defs) == len({d["name"] for d in defs})
    return {d["name"]: d for d in defs}


def test_the_17_tools_are_registered(definitions):
    assert set(definitions) == set(TABLE)
    toolset = notebooks_toolset()
    assert toolset.name == "notebooks" and len(toolset.tools) == 17
    # the map of the notebook took the export's place on the default page; the export is the files toolset's
    assert {t.name for t in toolset.tools} == set(TABLE) - {"jupyter_export_notebook"}
    for d in definitions.values():
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", d["name"])
        assert d["description"].strip() and d["title"].strip()
        assert set(d) == {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}


def walk(node: Any, path: str = "$"):
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")


@pytest.mark.parametrize("name", sorted(TABLE))
def test_input_schema_shape(definitions, name):
    schema = definitions[name]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for path, node in walk(schema):
        if isinstance(node, dict):
            assert "$ref" not in node and "$defs" not in node and "definitions" not in node, path
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, f"nested object at {path} accepts unknown keys"
    jsonschema.Draft202012Validator.check_schema(schema)
    json.dumps(schema)  # plain JSON, as WebMCP needs


@pytest.mark.parametrize("name", sorted(TABLE))
def test_argument_names_match_the_contract(definitions, name):
    schema = definitions[name]["inputSchema"]
    required, optional = TABLE[name]
    expected = required | optional | (set() if name in NOT_ON_A_NOTEBOOK else {"notebookPath"})
    props = set(schema["properties"])
    assert expected <= props, f"missing {expected - props}"
    assert set(schema.get("required", [])) == required
    for prop in schema["properties"].values():
        assert prop.get("description"), f"{name}: an argument without a description"


def test_enumerations(definitions):
    def enum(tool, prop):
        node = definitions[tool]["inputSchema"]["properties"][prop]
        values = set(node.get("enum", [])) | ({node["const"]} if "const" in node else set())
        for option in node.get("anyOf", []):
            values |= set(option.get("enum", []))
        return values

    assert enum("jupyter_insert_cell", "position") == {"above", "below"}
    assert enum("jupyter_insert_cell", "cellType") == {"code", "markdown", "raw"}
    assert enum("jupyter_move_cell", "position") == {"above", "below"}
    assert enum("jupyter_kernel_action", "action") == {"interrupt", "restart"}
    assert enum("jupyter_export_notebook", "format") == {"markdown"}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_annotations(definitions, name):
    ann = definitions[name]["annotations"]
    assert set(ann) == ALL_HINTS  # WebMCP's three and MCP's three, each tool's own
    assert ann["readOnlyHint"] is (name in PURE_READS)
    if name in CONTENT_RETURNING:
        assert ann["untrustedContentHint"] is True
    if name in CONSEQUENTIAL:
        assert ann["consequentialHint"] is True
    if name in PURE_READS:
        assert ann["consequentialHint"] is False


def test_schema_and_validation_agree(definitions):
    """The schema an agent sees accepts what the tool accepts and refuses unknown keys (one source of truth)."""
    good = {
        "jupyter_get_cells": {"startIndex": 0, "endIndex": 2, "includeOutputs": True},
        "jupyter_focus_cell": {
            "cellId": "x",
            "selection": {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 1}},
        },
        "jupyter_insert_cell": {"position": "above", "cellType": "raw", "source": "s"},
    }
    for name, args in good.items():
        validator = jsonschema.Draft202012Validator(definitions[name]["inputSchema"])
        assert validator.is_valid(args)
        assert not validator.is_valid({**args, "bogus": 1})
    focus = jsonschema.Draft202012Validator(definitions["jupyter_focus_cell"]["inputSchema"])
    assert not focus.is_valid({"cellId": "x", "cursor": {"line": 0, "column": 0, "extra": 1}})
    assert not focus.is_valid({"cellId": "x", "cursor": {"line": -1, "column": 0}})


# -- calls --------------------------------------------------------------------------------------------


@pytest.fixture
def b(running) -> Bridge:
    return running


def first_code_cell(b: Bridge) -> dict[str, Any]:
    return next(c for c in b.ok("jupyter_get_cells")["cells"] if c["type"] == "code")


def test_envelope_text_equals_structured_content(b):
    result = b.call("jupyter_get_cells", {"endIndex": 3})
    assert result["isError"] is False
    assert len(result["content"]) == 1
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert [c["index"] for c in result["structuredContent"]["cells"]] == [0, 1, 2]


def test_the_result_text_the_page_gets_is_the_result(b):
    """result_json (the text the page's dispatcher hands the loader) writes structuredContent from the payload's
    own text: parsed back it is the very result, for successes, errors, truncated and image results."""
    from webmcp_bridge.calls.registry import result_json
    from webmcp_bridge.core.limits import Limits

    results = [
        b.call("jupyter_get_cells", {"includeOutputs": True}),
        b.call("jupyter_get_cells", {"cellIds": ["nope"]}),
        asyncio.run(custom_registry(limits=Limits(result_bytes=8 * 1024)).call("t_huge")),
    ]
    for result in results:
        assert hasattr(result, "payload_text"), type(result)
        assert json.loads(result_json(result)) == result
    assert results[2]["structuredContent"]["truncated"] is True
    plain = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}, "isError": False}
    assert json.loads(result_json(plain)) == plain


def test_a_call_that_never_waits_is_answered_within_the_callers_step(b):
    """start_eagerly (what the page's dispatcher uses): with eager tasks (Python >= 3.12, Pyodide's 3.14) a call whose
    host methods are synchronous is done when start_eagerly returns, so the page answers it without a single turn of
    the event loop; an older Python schedules it, and it is done after one turn."""
    from webmcp_bridge.calls.pending import EAGER_TASKS, start_eagerly

    async def scenario() -> None:
        task = start_eagerly(b.reg.call("jupyter_get_cells", {"endIndex": 2}))
        assert task.done() is EAGER_TASKS
        result = await task
        assert result["isError"] is False and len(result["structuredContent"]["cells"]) == 2
        assert b.reg.pending.running() == []  # settled with it: nothing left for a later turn

    asyncio.run(scenario())


def test_dict_and_json_text_arguments_are_the_same(b):
    as_dict = b.call("jupyter_get_cells", {"startIndex": 2, "endIndex": 5})
    as_text = b.call("jupyter_get_cells", '{"startIndex": 2, "endIndex": 5}')
    assert as_dict == as_text
    assert b.call("jupyter_get_context", "")["isError"] is False
    assert b.call("jupyter_get_context", None)["isError"] is False


def test_unknown_tool(b):
    payload = b.fails("jupyter_no_such_tool", {}, "UNKNOWN_TOOL")
    assert "jupyter_no_such_tool" in payload["message"]
    b.fails("", {}, "UNKNOWN_TOOL")


@pytest.mark.parametrize(
    "tool, args",
    [
        ("jupyter_get_cells", {"bogus": 1}),
        ("jupyter_get_cells", {"start_index": 3}),  # snake_case is not the wire name: must not be silently ignored
        ("jupyter_update_cell", {"cellId": "a", "source": "b", "expected_source_hash": "c", "expectedSourceHash": "c"}),
        ("jupyter_get_context", {"x": None}),
        ("jupyter_update_cell", {"cellId": "a", "source": "b", "expectedSourceHash": "c", "force": True}),
        ("jupyter_focus_cell", {"cellId": "a", "cursor": {"line": 0, "column": 0, "extra": 1}}),
    ],
)
def test_unknown_arguments_are_errors(b, tool, args):
    payload = b.fails(tool, args, "INVALID_ARGUMENT")
    assert payload["problems"]


@pytest.mark.parametrize(
    "tool, args",
    [
        ("jupyter_get_cells", {"startIndex": "5"}),  # string for int
        ("jupyter_get_cells", {"startIndex": True}),  # bool for int
        ("jupyter_get_cells", {"startIndex": 1.5}),  # float for int
        ("jupyter_get_cells", {"startIndex": -1}),  # below the minimum
        ("jupyter_get_cells", {"cellIds": "abc"}),  # string for list
        ("jupyter_get_cells", {"includeOutputs": "true"}),  # string for bool
        ("jupyter_update_cell", {"cellId": "a", "source": 5, "expectedSourceHash": "c"}),  # int for string
        ("jupyter_update_cell", {"cellId": None, "source": "x", "expectedSourceHash": "c"}),  # null for required
        ("jupyter_update_cell", {"source": "x", "expectedSourceHash": "c"}),  # missing required
        ("jupyter_focus_cell", {"cellId": "a", "cursor": [0, 1]}),  # list for object
        ("jupyter_insert_cell", {"position": "left"}),
        ("jupyter_insert_cell", {"cellType": "sql"}),
        ("jupyter_kernel_action", {"action": "kill"}),
        ("jupyter_list_workspace", {"limit": 0}),
        ("jupyter_get_output", {"cellId": "", "outputIndex": 0}),
    ],
)
def test_wrong_types_are_invalid_argument(b, tool, args):
    payload = b.fails(tool, args, "INVALID_ARGUMENT")
    assert payload["problems"] and all({"loc", "msg", "type"} <= set(p) for p in payload["problems"])


@pytest.mark.parametrize("raw", ["[]", "5", '"x"', "null", "true", "{bad json", '{"a": 1', "[{}]"])
def test_non_object_json_is_invalid_argument(b, raw):
    b.fails("jupyter_get_cells", raw, "INVALID_ARGUMENT")


def test_non_json_serialisable_arguments_do_not_raise(b):
    """The registry's promise is that nothing raises out of call(): a dict that json cannot encode
    (a set, as a careless caller might pass) must come back as INVALID_ARGUMENT."""
    result = asyncio.run(b.reg.call("jupyter_get_cells", {"cellIds": {"a", "b"}}))
    check_envelope(result, b.limits)
    assert result["isError"] is True
    assert result["structuredContent"]["error"] == "INVALID_ARGUMENT"


def test_errors_do_not_echo_the_input(b):
    payload = b.fails("jupyter_get_cells", {"startIndex": "SECRET-TOKEN-1234"}, "INVALID_ARGUMENT")
    assert "SECRET-TOKEN-1234" not in json.dumps(payload)


def test_arguments_over_one_mib_are_too_large(b):
    cell = first_code_cell(b)
    source = "x" * (MIB + 10)
    payload = b.fails(
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": source, "expectedSourceHash": cell["sourceHash"]},
        "TOO_LARGE",
    )
    assert payload["maxBytes"] == DEFAULT_LIMITS.input_bytes and payload["bytes"] > MIB
    b.fails("jupyter_insert_cell", json.dumps({"source": "é" * (MIB // 2 + 10)}), "TOO_LARGE")  # counted in UTF-8 bytes


def test_no_active_notebook():
    b = make_bridge({"a.ipynb": "jupyterlite-empty.ipynb"})
    assert b.ok("jupyter_get_context")["notebook"] is None
    for tool, args in [
        ("jupyter_get_cells", {}),
        ("jupyter_insert_cell", {"source": "x"}),
        ("jupyter_run_cells", {}),
        ("jupyter_export_notebook", {}),
        ("jupyter_save_notebook", {}),
    ]:
        b.fails(tool, args, "NO_ACTIVE_NOTEBOOK")
    assert b.ws.files["a.ipynb"]  # untouched


def test_contract_error_codes_exist():
    for code in [
        "NO_ACTIVE_NOTEBOOK",
        "NOTEBOOK_NOT_FOUND",
        "CELL_NOT_FOUND",
        "STALE_CELL",
        "INVALID_PATH",
        "PATH_EXISTS",
        "INVALID_ARGUMENT",
        "KERNEL_UNAVAILABLE",
        "ABORTED",
        "CELL_ACCESS_DENIED",
        "NOTEBOOK_ACCESS_DENIED",
        "COMMENT_NOT_FOUND",
        "COMMENT_ANCHOR_STALE",
        "PROPOSAL_ALREADY_PENDING",
        "INTERNAL_ERROR",
    ]:
        assert code in ERROR_CODES
    assert all(c.value == c.name for c in ErrorCode)


# -- custom toolsets, internal errors, hooks ------------------------------------------------------------


class NoArgs(ToolInput):
    pass


async def boom(ctx, args):
    raise RuntimeError("secret internals /home/user/.token")


async def expected_failure(ctx, args):
    raise ToolError(ErrorCode.CELL_NOT_FOUND, "No cell with id 'x' in this notebook.", cellId="x")


async def fine(ctx, args):
    return {"value": 42}


async def huge(ctx, args):
    return {"items": [{"id": str(i), "text": "ü" * 500} for i in range(400)]}


def custom_registry(**kw) -> Registry:
    reg = Registry(object(), **kw)
    reg.add_toolset(
        Toolset(
            "test",
            "tools for tests",
            (
                Tool("t_boom", "Boom", "Raises a plain exception.", NoArgs, boom),
                Tool("t_expected", "Expected", "Raises a ToolError.", NoArgs, expected_failure),
                Tool("t_fine", "Fine", "Works.", NoArgs, fine),
                Tool("t_huge", "Huge", "Returns too much.", NoArgs, huge),
            ),
        )
    )
    return reg


def test_plain_exception_becomes_internal_error():
    reg = custom_registry()
    result = asyncio.run(reg.call("t_boom", {}))
    check_envelope(result, DEFAULT_LIMITS)
    assert result["isError"] is True
    assert result["structuredContent"]["error"] == "INTERNAL_ERROR"
    assert ".token" not in result["content"][0]["text"]


def test_tool_error_payload():
    result = asyncio.run(custom_registry().call("t_expected"))
    check_envelope(result, DEFAULT_LIMITS)
    assert result["structuredContent"] == {
        "error": "CELL_NOT_FOUND",
        "message": "No cell with id 'x' in this notebook.",
        "cellId": "x",
    }


def test_result_cap_applies_to_every_tool_and_is_configurable():
    from webmcp_bridge.core.limits import Limits

    for cap in (DEFAULT_LIMITS.result_bytes, 8 * 1024):
        limits = Limits(result_bytes=cap)
        result = asyncio.run(custom_registry(limits=limits).call("t_huge"))
        check_envelope(result, limits)
        payload = result["structuredContent"]
        assert payload["truncated"] is True and payload["truncation"]
        assert all(item["text"].encode("utf-8") for item in payload["items"])


def test_duplicate_tools_and_bad_names_are_refused():
    reg = custom_registry()
    with pytest.raises(ValueError):
        reg.add_toolset(Toolset("test", "again", ()))
    with pytest.raises(ValueError):
        reg.add_toolset(Toolset("other", "dup tool", (Tool("t_fine", "Fine", "Works.", NoArgs, fine),)))
    with pytest.raises(ValueError):
        Tool("bad name!", "Bad", "Bad name.", NoArgs, fine)
    with pytest.raises(ValueError):
        Tool("x" * 129, "Bad", "Too long.", NoArgs, fine)
    with pytest.raises(ValueError):
        Tool("no_description", "Bad", "  ", NoArgs, fine)


def test_hooks_see_before_and_after():
    reg = custom_registry()
    before: list[CallEvent] = []
    after: list[CallEvent] = []
    reg.on_before(before.append)
    reg.on_after(after.append)
    calls = [
        ("t_fine", {}),
        ("t_boom", {}),
        ("t_expected", {}),
        ("nope", {}),
        ("t_fine", {"x": 1}),
        ("t_fine", '{"big": "' + "y" * 5000 + '"}'),
    ]
    for name, args in calls:
        asyncio.run(reg.call(name, args))
    assert [e.tool for e in before] == [n for n, _ in calls] == [e.tool for e in after]
    assert [e.outcome for e in after] == [
        "ok",
        "INTERNAL_ERROR",
        "CELL_NOT_FOUND",
        "UNKNOWN_TOOL",
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT",
    ]
    for b_event, a_event in zip(before, after, strict=True):
        assert b_event.outcome is None and b_event.duration is None
        assert a_event.call_id == b_event.call_id
        assert isinstance(a_event.duration, float) and a_event.duration >= 0
        assert len(a_event.arguments.encode("utf-8")) <= 200  # a bounded summary, not the input
    assert len({e.call_id for e in after}) == len(calls)


def test_a_raising_hook_does_not_break_the_call():
    reg = custom_registry()
    seen: list[str] = []

    def broken(event):
        raise ValueError("listener bug")

    reg.on_before(broken)
    reg.on_after(broken)
    reg.on_after(lambda e: seen.append(e.outcome))
    result = asyncio.run(reg.call("t_fine"))
    assert result["isError"] is False and result["structuredContent"] == {"value": 42}
    assert seen == ["ok"]


def test_a_hook_unsubscribes_with_the_function_it_was_given_back():
    reg = custom_registry()
    seen: list[str] = []
    stop_before = reg.on_before(lambda e: seen.append(f"before {e.tool}"))
    stop_after = reg.on_after(lambda e: seen.append(f"after {e.outcome}"))
    asyncio.run(reg.call("t_fine"))
    stop_before()
    asyncio.run(reg.call("t_fine"))
    stop_after()
    stop_after()  # a second unsubscribe does nothing
    asyncio.run(reg.call("t_fine"))
    assert seen == ["before t_fine", "after ok", "after ok"]


def test_tools_on_the_real_toolset_report_outcomes(b):
    outcomes: list[str] = []
    b.reg.on_after(lambda e: outcomes.append(e.outcome))
    b.call("jupyter_get_cells", {"endIndex": 1})
    b.call("jupyter_get_cells", {"cellIds": ["nope"]})
    assert outcomes == ["ok", "CELL_NOT_FOUND"]
