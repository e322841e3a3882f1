"""The person's settings (JupyterLab Settings Editor, plugin jupyterlab-webmcp-bridge:plugin): the shipped schema,
parsing into validated settings, Limits derived from them, and their effect on the real registry over the in-memory host
(limits, disabled tools, the start-up mode)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import subprocess
import sys
import time

import pytest

from helpers import REPO, check_envelope, corpus_json
from host_memory import MemoryWorkspace
from webmcp_bridge.contrib.builtin import BUILTIN_PREFIX, builtin_contributions
from webmcp_bridge.core.limits import (
    DEFAULT_LIMITS,
    EXECUTION_TIMEOUT_BOUNDS,
    MAX_PATH_BYTES,
    MAX_TOOLSET_WORDS,
    RESULT_BYTES_BOUNDS,
    RUN_TIMEOUT_BOUNDS,
    TOOL_NAME_MAX_CHARS,
    Limits,
)
from webmcp_bridge.propose.proposals import MODES
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.session.settings import (
    DEFAULT_SETTINGS,
    PAGE_LIMITS,
    PLUGIN_ID,
    BridgeSettings,
    SettingsApplier,
    limits_for,
    parse_settings,
)
from webmcp_bridge.session.settings_model import schema_text, settings_schema

PATH = "demo/euler.ipynb"


def test_the_shipped_schema_matches_the_parser():
    """JupyterLite names a federated extension's plugin '<package name>:<schema file stem>' (the build writes the
    schema into the package's schemaDir, tests/test_build.py); its defaults and bounds are the ones Python
    applies."""
    package = json.loads((REPO / "lite" / "extension" / "package.json").read_text())
    assert f"{package['name']}:plugin" == PLUGIN_ID
    assert package["jupyterlab"]["schemaDir"] == f"schemas/{package['name']}"
    assert not (REPO / "lite" / "extension" / "schemas").exists()  # no hand-written copy to drift
    schema = settings_schema()
    props = schema["properties"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(props) == {
        "executionTimeout",
        "runTimeout",
        "resultBytes",
        "disabledTools",
        "toolsets",
        "defaultMode",
        "contributions",
    }
    assert props["runTimeout"]["default"] == DEFAULT_SETTINGS.run_timeout == DEFAULT_LIMITS.run_timeout_seconds == 120
    assert (props["runTimeout"]["minimum"], props["runTimeout"]["maximum"]) == (1, 86400)
    assert (
        props["executionTimeout"]["default"]
        == DEFAULT_SETTINGS.execution_timeout
        == DEFAULT_LIMITS.execution_timeout_seconds
        == 20
    )
    assert (
        (props["executionTimeout"]["minimum"], props["executionTimeout"]["maximum"])
        == EXECUTION_TIMEOUT_BOUNDS
        == (1, 600)
    )
    assert props["resultBytes"]["default"] == DEFAULT_SETTINGS.result_bytes == DEFAULT_LIMITS.result_bytes == 51200
    assert (props["resultBytes"]["minimum"], props["resultBytes"]["maximum"]) == RESULT_BYTES_BOUNDS == (4096, 1048576)
    assert props["disabledTools"]["default"] == [] and props["disabledTools"]["items"]["type"] == "string"
    assert props["defaultMode"]["enum"] == ["direct", "propose"] and props["defaultMode"]["default"] == "direct"
    assert props["toolsets"]["default"] is None and props["toolsets"]["type"] == ["array", "null"]
    # the schema's patterns accept what the parser accepts: globs in disabledTools, names in toolsets
    assert re.fullmatch(props["disabledTools"]["items"]["pattern"], "jupyter_*_[!r]e?d")
    assert not re.fullmatch(props["toolsets"]["items"]["pattern"], "note*")
    assert (
        props["contributions"]["default"] == [] and props["contributions"]["items"]["type"] == "string"
    )  # read by contrib/config.py
    for prop in props.values():
        assert prop["title"] and prop["description"]
    # the toolsets' description names every built-in toolset the person can choose (toolsets: always there)
    named = props["toolsets"]["description"].split("(names: ", 1)[1].split(", or a toolset", 1)[0].split(", ")
    builtin = [c.name.removeprefix(BUILTIN_PREFIX) for c in builtin_contributions()]
    assert named == [name for name in builtin if name != "toolsets"]
    # the schema's defaults parse to the default settings with no problem
    assert parse_settings({k: v["default"] for k, v in props.items()}) == (DEFAULT_SETTINGS, [])


#: every keyword the settings schema may use: what JupyterLab's settings registry (draft-07) and its form read
DRAFT_07_KEYWORDS = {
    "title",
    "description",
    "type",
    "properties",
    "additionalProperties",
    "default",
    "minimum",
    "maximum",
    "items",
    "pattern",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "enum",
}


def keywords_and_numbers(node, path=()):
    """Every keyword the schema ``node`` uses (a property's name is not one) and every number in it (not in a
    ``default``) by its path, as (set, dict)."""
    used: set[str] = set()
    numbers: dict[tuple[str, ...], float] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            if path and path[-1] == "properties":  # key is a setting's name
                inner = keywords_and_numbers(value, (*path[:-1], key))
            else:
                used.add(key)
                if key == "default":
                    continue
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    numbers[(*path, key)] = value
                inner = keywords_and_numbers(value, (*path, key))
            used |= inner[0]
            numbers.update(inner[1])
    return used, numbers


def test_every_bound_of_the_schema_is_a_limit():
    """The schema's numbers (its bounds and the timeouts' and cap's defaults) are core/limits.py's, and it is within
    draft-07 as JupyterLab reads it: no $ref, $defs or anyOf."""
    schema = settings_schema()
    used, numbers = keywords_and_numbers(schema)
    assert used <= DRAFT_07_KEYWORDS, used - DRAFT_07_KEYWORDS
    assert numbers == {
        ("executionTimeout", "minimum"): EXECUTION_TIMEOUT_BOUNDS[0],
        ("executionTimeout", "maximum"): EXECUTION_TIMEOUT_BOUNDS[1],
        ("runTimeout", "minimum"): RUN_TIMEOUT_BOUNDS[0],
        ("runTimeout", "maximum"): RUN_TIMEOUT_BOUNDS[1],
        ("resultBytes", "minimum"): RESULT_BYTES_BOUNDS[0],
        ("resultBytes", "maximum"): RESULT_BYTES_BOUNDS[1],
        ("toolsets", "maxItems"): MAX_TOOLSET_WORDS,
        ("contributions", "items", "maxLength"): MAX_PATH_BYTES,
    }
    props = schema["properties"]
    assert props["executionTimeout"]["default"] == DEFAULT_LIMITS.execution_timeout_seconds
    assert props["runTimeout"]["default"] == DEFAULT_LIMITS.run_timeout_seconds
    assert props["resultBytes"]["default"] == DEFAULT_LIMITS.result_bytes
    assert props["defaultMode"]["enum"] == list(MODES)
    for key in ("disabledTools", "toolsets"):  # a name or glob of 1..TOOL_NAME_MAX_CHARS characters
        pattern = props[key]["items"]["pattern"]
        assert re.fullmatch(pattern, "j" * TOOL_NAME_MAX_CHARS) and not re.fullmatch(
            pattern, "j" * (TOOL_NAME_MAX_CHARS + 1)
        )
        assert not re.fullmatch(pattern, "") and not re.fullmatch(pattern, "jupyter_run_code\n")


def test_python_m_prints_the_schema_the_build_writes():
    """``python -m webmcp_bridge.session.settings_model`` prints the plugin.json the build writes (the command the
    docs give to look at it)."""
    done = subprocess.run(
        [sys.executable, "-m", "webmcp_bridge.session.settings_model"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "py_src"), "PATH": ""},
        check=True,
    )
    assert done.stdout == schema_text() and json.loads(done.stdout) == settings_schema()


@pytest.mark.parametrize(
    "key, name, bounds",
    [
        ("executionTimeout", "execution_timeout", EXECUTION_TIMEOUT_BOUNDS),
        ("runTimeout", "run_timeout", RUN_TIMEOUT_BOUNDS),
        ("resultBytes", "result_bytes", RESULT_BYTES_BOUNDS),
    ],
)
def test_a_number_outside_its_bounds_is_repaired_and_reported(key, name, bounds):
    """A stored number past either bound of core/limits.py is clamped to it, and the repair is told."""
    low, high = bounds
    shown = str if isinstance(low, int) else (lambda v: f"{v:g}")
    for given, used in ((low - 1, low), (high + 1, high), (high * 10, high)):
        settings, problems = parse_settings({key: given})
        assert settings == dataclasses.replace(DEFAULT_SETTINGS, **{name: used})
        assert problems == [f"{key} {shown(given)} is outside {shown(low)}..{shown(high)}; using {shown(used)}"]
    assert parse_settings({key: low}) == (dataclasses.replace(DEFAULT_SETTINGS, **{name: low}), [])
    assert parse_settings({key: high}) == (dataclasses.replace(DEFAULT_SETTINGS, **{name: high}), [])


def test_too_many_toolset_words_are_bounded_by_the_limit():
    words = [f"set{i:03d}" for i in range(MAX_TOOLSET_WORDS + 7)]
    settings, problems = parse_settings({"toolsets": list(reversed(words))})
    assert settings.toolsets == tuple(words[:MAX_TOOLSET_WORDS])
    assert problems == [f"toolsets: only the first {MAX_TOOLSET_WORDS} entries (sorted) are used"]


def test_the_numbers_in_the_texts_are_the_schemas():
    """The numbers the person reads about the settings are the ones applied: the toolsets' description counts the
    tools a default page serves (tools.json's default and always-on toolsets), and the table of docs/TOOLS.md
    ("Settings") gives each number setting's default and bounds."""
    from webmcp_bridge.session.bridge import tools_manifest

    props = settings_schema()["properties"]
    manifest = tools_manifest()
    served = {
        name for ts in (*manifest["aliases"]["default"], *manifest["always"]) for name in manifest["toolsets"][ts]
    }
    assert f"({len(served)} tools with the discovery tool" in props["toolsets"]["description"]
    tools_md = (REPO / "docs" / "TOOLS.md").read_text(encoding="utf-8")
    for key in ("executionTimeout", "runTimeout", "resultBytes"):
        row = re.search(rf"^\| `{key}` \| ([^|]+) \| ([^|]+) \|", tools_md, re.MULTILINE)
        assert row, key
        default, bounds = row[1].strip(), row[2].strip().removesuffix(" s")
        rule = props[key]
        assert default == shown(rule["default"]) and bounds == f"{shown(rule['minimum'])}–{shown(rule['maximum'])}", key


def shown(number: float) -> str:
    """A number as docs/TOOLS.md writes it: 20, 4096, 2.5."""
    return str(int(number)) if float(number).is_integer() else str(number)


def test_parse_valid_settings():
    settings, problems = parse_settings(
        {
            "executionTimeout": 2.5,
            "resultBytes": 8192,
            "disabledTools": ["jupyter_run_code", "jupyter_write_file", "jupyter_run_code"],
            "defaultMode": "propose",
            "someFutureKey": 1,
        }
    )
    assert problems == []
    assert settings == BridgeSettings(2.5, 8192, ("jupyter_run_code", "jupyter_write_file"), "propose")
    assert parse_settings({}) == (DEFAULT_SETTINGS, [])
    assert parse_settings(None) == (DEFAULT_SETTINGS, [])


@pytest.mark.parametrize(
    "raw, expected, problem",
    [
        ({"executionTimeout": "20"}, DEFAULT_SETTINGS, "executionTimeout is not a number"),
        ({"executionTimeout": True}, DEFAULT_SETTINGS, "executionTimeout is not a number"),
        ({"executionTimeout": float("nan")}, DEFAULT_SETTINGS, "executionTimeout is not a number"),
        ({"executionTimeout": 0}, BridgeSettings(execution_timeout=1.0), "outside 1..600; using 1"),
        ({"executionTimeout": 86400}, BridgeSettings(execution_timeout=600.0), "using 600"),
        ({"resultBytes": 10.5}, DEFAULT_SETTINGS, "resultBytes is not an integer"),
        ({"resultBytes": None}, DEFAULT_SETTINGS, "resultBytes is not an integer"),
        ({"resultBytes": 100}, BridgeSettings(result_bytes=4096), "using 4096"),
        ({"resultBytes": 10**9}, BridgeSettings(result_bytes=1048576), "using 1048576"),
        ({"disabledTools": "jupyter_run_code"}, DEFAULT_SETTINGS, "disabledTools is not a list"),
        (
            {"disabledTools": ["jupyter_run_code", 5, "", "bad name!", "x" * 129]},
            BridgeSettings(disabled_tools=("jupyter_run_code",)),
            "4 entry(ies) are not tool names or globs",
        ),
        ({"toolsets": "review"}, DEFAULT_SETTINGS, "toolsets is not a list"),
        (
            {"toolsets": ["review", "re*view", 7]},
            BridgeSettings(toolsets=("review",)),
            "2 entry(ies) are not toolset names",
        ),
        ({"defaultMode": "auto"}, DEFAULT_SETTINGS, "defaultMode must be one of direct, propose"),
        ("not an object", DEFAULT_SETTINGS, "not an object"),
    ],
)
def test_malformed_settings_fall_back_and_say_why(raw, expected, problem):
    settings, problems = parse_settings(raw)
    assert settings == expected
    assert len(problems) == 1 and problem in problems[0], problems


def test_too_many_disabled_tools_are_bounded():
    settings, problems = parse_settings({"disabledTools": [f"tool_{i:04d}" for i in range(300)]})
    assert len(settings.disabled_tools) == 200 and settings.disabled_tools[0] == "tool_0000"
    assert problems and "only the first 200" in problems[0]


def test_limits_follow_the_settings_without_compounding():
    base = Limits()
    limits = limits_for(base, BridgeSettings(execution_timeout=3, result_bytes=4096))
    assert limits.execution_timeout_seconds == 3.0 and limits.result_bytes == 4096
    for name in PAGE_LIMITS:  # a page of text must still fit in one (smaller) result
        assert getattr(limits, name) < getattr(base, name) and getattr(limits, name) <= 4096 // 2
    assert limits.input_bytes == base.input_bytes and limits.run_cells == base.run_cells  # the rest untouched
    bigger = limits_for(base, BridgeSettings(result_bytes=1048576))
    assert bigger.result_bytes == 1048576
    assert all(getattr(bigger, name) == getattr(base, name) for name in PAGE_LIMITS)  # never scaled up
    assert limits_for(base, DEFAULT_SETTINGS) == base
    site = Limits(result_bytes=20_000, run_cells=7)  # a site's own limits are the base
    assert limits_for(site, DEFAULT_SETTINGS).run_cells == 7


class Session:
    """The real registry over the in-memory host with one notebook open."""

    def __init__(self) -> None:
        ws = MemoryWorkspace({PATH: json.dumps(corpus_json("pytudes-euler.ipynb"))})
        self.reg = build_bridge(ws).registry
        self.applier = SettingsApplier(self.reg)
        self.nb_call("jupyter_open_notebook", {"path": PATH})
        self.nb = ws.open[PATH]

    def nb_call(self, name: str, args: dict | None = None) -> dict:
        result = asyncio.run(self.reg.call(name, args or {}))
        check_envelope(result, self.reg.limits)
        return result


def test_applied_limits_reach_the_registry_and_every_handler():
    s = Session()
    changed, problems = s.applier.apply(BridgeSettings(execution_timeout=7, result_bytes=4096))
    assert (changed, problems) == (False, [])
    assert s.reg.limits is s.reg.context.limits
    assert s.reg.limits.result_bytes == 4096 and s.reg.limits.execution_timeout_seconds == 7
    listing = s.nb_call("jupyter_get_cells", {"includeOutputs": True})  # check_envelope: under the new cap
    assert len(listing["content"][0]["text"].encode()) <= 4096
    assert s.nb_call("jupyter_get_context")["structuredContent"]["limits"]["resultBytes"] == 4096
    s.applier.apply(DEFAULT_SETTINGS)
    assert s.reg.limits == DEFAULT_LIMITS and s.reg.context.limits == DEFAULT_LIMITS


def test_a_short_execution_timeout_makes_a_waiting_proposal_pending():
    s = Session()
    s.applier.apply(BridgeSettings(execution_timeout=1, default_mode="propose"), startup=True)
    cell = s.nb_call("jupyter_get_cells", {"startIndex": 1, "endIndex": 2})["structuredContent"]["cells"][0]
    book = s.reg.context.proposals

    async def scenario():
        started = time.monotonic()
        first = await s.reg.call(
            "jupyter_update_cell", {"cellId": cell["id"], "source": "x = 1", "expectedSourceHash": cell["sourceHash"]}
        )
        waited = time.monotonic() - started
        assert [p.tool for p in book.waiting()] == ["jupyter_update_cell"]
        book.deny(book.waiting()[0].id, "later")
        final = await s.reg.call("jupyter_wait_for_result", {"pendingId": first["structuredContent"]["pendingId"]})
        return first, waited, final

    first, waited, final = asyncio.run(scenario())
    assert first["structuredContent"]["status"] == "pending" and 0.9 <= waited < 3
    assert final["structuredContent"]["status"] == "denied" and final["structuredContent"]["reason"] == "later"


def test_disabled_tools_leave_the_definitions_and_are_refused():
    s = Session()
    names = {d["name"] for d in s.reg.definitions()}
    assert {"jupyter_run_code", "jupyter_delete_cell"} <= names
    changed, problems = s.applier.apply(BridgeSettings(disabled_tools=("jupyter_delete_cell", "jupyter_no_such_tool")))
    assert changed is True and problems == ["disabledTools: 'jupyter_no_such_tool' matches no tool"]
    assert {d["name"] for d in s.reg.definitions()} == names - {"jupyter_delete_cell"}
    cell = s.nb_call("jupyter_get_cells", {"startIndex": 1, "endIndex": 2})["structuredContent"]["cells"][0]
    before = json.dumps(s.nb.nb, sort_keys=True)
    refused = s.nb_call("jupyter_delete_cell", {"cellId": cell["id"], "expectedSourceHash": cell["sourceHash"]})
    payload = refused["structuredContent"]
    assert refused["isError"] is True and payload["error"] == "UNKNOWN_TOOL" and payload["disabled"] is True
    assert "turned off" in payload["message"] and "disabledTools" in payload["message"]
    assert json.dumps(s.nb.nb, sort_keys=True) == before
    assert s.applier.apply(BridgeSettings(disabled_tools=("jupyter_delete_cell",)))[0] is False  # same set: no change
    assert s.applier.apply(DEFAULT_SETTINGS)[0] is True  # enabled again
    assert (
        s.nb_call("jupyter_delete_cell", {"cellId": cell["id"], "expectedSourceHash": cell["sourceHash"]})["isError"]
        is False
    )


def test_the_default_mode_applies_at_start_up_only():
    s = Session()
    book = s.reg.context.proposals
    s.applier.apply(BridgeSettings(default_mode="propose"), startup=True)
    assert book.mode == "propose"
    book.set_mode("direct")  # the person's switch
    s.applier.apply(BridgeSettings(default_mode="propose", execution_timeout=5))  # a later change of settings
    assert book.mode == "direct" and s.reg.limits.execution_timeout_seconds == 5


def test_build_definitions_are_not_affected_by_settings():
    """The build's tools.json lists every tool; only the page's registration leaves disabled ones out."""
    from helpers import tool_definitions

    assert {d["name"] for d in tool_definitions()} == {t.name for t in build_bridge(None).registry.tools()}  # type: ignore[arg-type]
