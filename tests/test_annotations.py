"""Tool annotations: the MCP hints (destructive, idempotent, open world) every built-in tool states, beside WebMCP's
(read only, untrusted content, consequential), in the definitions Python registers and in the build's tools.json."""

from __future__ import annotations

import pytest

from helpers import builtin_toolsets, tool_definitions
from webmcp_bridge.calls.registry import Annotations, Tool
from webmcp_bridge.contrib import ToolInput
from webmcp_bridge.session.bridge import tools_manifest

ALL_HINTS = {
    "readOnlyHint",
    "untrustedContentHint",
    "consequentialHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
}

#: the tools that may delete, overwrite or reset: what an MCP client that asks only for destructive tools asks for
DESTRUCTIVE = {
    "jupyter_save_notebook",
    "jupyter_update_cell",
    "jupyter_edit_cell_source",
    "jupyter_delete_cell",
    "jupyter_clear_outputs",
    "jupyter_run_cells",
    "jupyter_kernel_action",
    "jupyter_answer_dialog",
    "jupyter_write_file",
    "jupyter_apply_edits",
    "jupyter_set_cell_type",
    "jupyter_run_code",
    "jupyter_edit_file",
}


def by_name() -> dict[str, dict]:
    return {d["name"]: d["annotations"] for d in tool_definitions()}


def test_every_builtin_tool_states_every_hint():
    annotations = by_name()
    assert len(annotations) == 41
    for name, hints in annotations.items():
        assert set(hints) == ALL_HINTS, name
        assert all(isinstance(v, bool) for v in hints.values()), name
        assert hints["openWorldHint"] is False, name


def test_deletes_overwrites_restarts_and_clears_are_destructive():
    annotations = by_name()
    assert {name for name, hints in annotations.items() if hints["destructiveHint"]} == DESTRUCTIVE
    # the other writes only add or point
    for name in (
        "jupyter_insert_cell",
        "jupyter_move_cell",
        "jupyter_focus_cell",
        "jupyter_create_notebook",
        "jupyter_open_notebook",
        "jupyter_create_comment",
        "jupyter_toolsets",
    ):
        assert annotations[name]["destructiveHint"] is False and annotations[name]["readOnlyHint"] is False, name


def test_reads_are_idempotent_and_never_destructive():
    reads = {name: hints for name, hints in by_name().items() if hints["readOnlyHint"]}
    assert len(reads) == 17
    for name, hints in reads.items():
        assert hints["idempotentHint"] is True and hints["destructiveHint"] is False, name
    annotations = by_name()
    for name in (
        "jupyter_insert_cell",
        "jupyter_edit_cell_source",
        "jupyter_run_cells",
        "jupyter_run_code",
        "jupyter_kernel_action",
        "jupyter_apply_edits",
        "jupyter_write_file",
        "jupyter_edit_file",
    ):
        assert annotations[name]["idempotentHint"] is False, name  # write_file: an append adds again
    for name in ("jupyter_update_cell", "jupyter_delete_cell", "jupyter_clear_outputs"):
        assert annotations[name]["idempotentHint"] is True, name


@pytest.mark.parametrize(
    "name", ["jupyter_get_context", "jupyter_list_workspace", "jupyter_get_changes", "jupyter_get_cell_access"]
)
def test_tools_returning_page_text_are_marked_untrusted(name):
    assert by_name()[name]["untrustedContentHint"] is True


def test_every_tool_that_reads_the_page_is_untrusted_content():
    # every read returns something of the page (names, sources, outputs, comments, changes), and so does a write's
    # error (a STALE_CELL preview); the tools that return nothing of the page are the two of only structure
    annotations = by_name()
    plain = {name for name, hints in annotations.items() if not hints["untrustedContentHint"]}
    assert plain == {
        "jupyter_open_notebook",
        "jupyter_create_notebook",
        "jupyter_save_notebook",
        "jupyter_insert_cell",
        "jupyter_move_cell",
        "jupyter_clear_outputs",
        "jupyter_kernel_action",
        "jupyter_focus_cell",
        "jupyter_toolsets",
    }
    assert all(annotations[name]["readOnlyHint"] is False for name in plain)


def test_tools_json_carries_the_same_hints():
    manifest = {d["name"]: d["annotations"] for d in tools_manifest()["definitions"]}
    assert manifest == by_name()
    assert manifest["jupyter_delete_cell"]["destructiveHint"] is True


class _In(ToolInput):
    pass


async def _noop(ctx, args):
    return {}


def test_a_site_tool_publishes_only_the_hints_it_states():
    plain = Tool("site_plain", "Plain", "Does nothing.", _In, _noop, Annotations(read_only=True))
    assert plain.definition()["annotations"] == {
        "readOnlyHint": True,
        "untrustedContentHint": False,
        "consequentialHint": False,
    }
    stated = Tool(
        "site_wipe", "Wipe", "Wipes.", _In, _noop, Annotations(destructive=True, idempotent=True, open_world=False)
    )
    assert stated.definition()["annotations"] == {
        "readOnlyHint": False,
        "untrustedContentHint": False,
        "consequentialHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def test_a_write_states_webmcps_hints_and_mcps_together():
    tools = {t.name: t for ts in builtin_toolsets() for t in ts.tools}
    update = tools["jupyter_update_cell"].annotations
    assert (update.read_only, update.untrusted_content, update.consequential) == (False, True, True)
    assert (update.destructive, update.idempotent, update.open_world) == (True, True, False)
