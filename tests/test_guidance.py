"""The guidance for agents: the bridge's text, a site's paragraphs, what jupyter_get_context returns with
includeGuidance, and the MCP prompt's data."""

from __future__ import annotations

import asyncio
import json

import pytest

from helpers import Bridge, corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.contrib import Contribution
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.limits import GUIDANCE_BASE_BYTES, GUIDANCE_BYTES, utf8_len
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools.guidance import BASE_GUIDANCE, PROMPT_NAME, guidance_text, prompts_json


def context(registry, **arguments) -> dict:
    result = asyncio.run(registry.call("jupyter_get_context", arguments))
    assert result["isError"] is False, result
    return result["structuredContent"]


def test_the_bridges_text_is_short_and_covers_how_to_work_here():
    assert utf8_len(BASE_GUIDANCE) <= GUIDANCE_BASE_BYTES < GUIDANCE_BYTES < 2048
    for topic in (
        "jupyter_get_cells",
        "sourceHash",
        "expectedSourceHash",
        "STALE_CELL",
        "pending",
        "jupyter_wait_for_result",
        "Propose mode",
        "denied",
        "CELL_ACCESS_DENIED",
        "hidden",
        "never instructions",
        "jupyter_toolsets",
        "includeErrors",
    ):
        assert topic in BASE_GUIDANCE, topic
    # every tool it names is a tool of the bridge
    tools = {d["name"] for d in json.loads(json.dumps(build_bridge(MemoryWorkspace({})).registry.definitions()))}
    named = {word.strip(".,:;()") for word in BASE_GUIDANCE.split() if word.startswith("jupyter_")}
    assert named and named <= tools, named - tools


def test_get_context_returns_it_only_when_asked():
    bridge = Bridge({"a.ipynb": corpus_text("jupyterlite-empty.ipynb")})
    assert "guidance" not in bridge.ok("jupyter_get_context")
    assert bridge.ok("jupyter_get_context", {"includeGuidance": True})["guidance"] == BASE_GUIDANCE
    schema = next(t for t in bridge.reg.tools() if t.name == "jupyter_get_context").input_schema()
    assert schema["properties"]["includeGuidance"] == {
        "default": False,
        "description": schema["properties"]["includeGuidance"]["description"],
        "type": "boolean",
    }
    bridge.fails("jupyter_get_context", {"includeGuidance": "yes"}, "INVALID_ARGUMENT")


def test_a_site_contribution_adds_its_paragraph():
    paragraph = "This course site grades with course_submit: run every cell before you submit."
    diagnostics = Diagnostics()
    bridge = build_bridge(
        MemoryWorkspace({}),
        contributions=[Contribution("course", guidance=paragraph), Contribution("quiet")],
        diagnostics=diagnostics,
    )
    text = context(bridge.registry, includeGuidance=True)["guidance"]
    assert text == f"{BASE_GUIDANCE}\n\n{paragraph}"
    assert diagnostics.to_json() == []


def test_paragraphs_that_do_not_fit_are_left_out_whole_with_a_diagnostic():
    room = GUIDANCE_BYTES - utf8_len(BASE_GUIDANCE) - 2
    first, second, third = "a" * (room - 40), "b" * 100, "c" * 30
    diagnostics = Diagnostics()
    text = guidance_text([("one", first), ("two", second), ("three", third), ("empty", "  ")], diagnostics)
    assert text == f"{BASE_GUIDANCE}\n\n{first}\n\n{third}"  # "two" left out, "three" still fits after it
    assert utf8_len(text) <= GUIDANCE_BYTES
    [problem] = diagnostics.to_json()
    assert (problem["name"], problem["kind"], problem["severity"]) == ("two", "extension", "warning")
    assert "100 bytes" in problem["reason"] and "left out" in problem["reason"]


def test_a_paragraph_that_is_not_text_is_refused():
    with pytest.raises(ValueError, match="guidance"):
        Contribution("bad", guidance=["not", "text"])  # type: ignore[arg-type]


def test_the_prompt_carries_the_same_text():
    text = guidance_text([("site", "Be kind.")])
    [prompt] = json.loads(prompts_json(text))
    assert prompt["name"] == PROMPT_NAME == "jupyter_guidance"
    assert prompt["description"] and prompt["title"]
    assert prompt["result"]["messages"] == [{"role": "user", "content": {"type": "text", "text": text}}]
    assert prompt["result"]["description"] == prompt["description"]
