"""Toolsets per page (calls/toolsets.py): which toolsets a page serves (URL query, setting, default), the budget of
the default page, the discovery tool jupyter_toolsets, and disabled tools by name or glob, on the real registry
over the in-memory host."""

from __future__ import annotations

import asyncio
import json

import pytest

from helpers import check_envelope, corpus_json
from host_memory import MemoryWorkspace
from webmcp_bridge.calls.toolsets import disabled_by_patterns, words_of_query
from webmcp_bridge.core.limits import TOOL_BUDGET
from webmcp_bridge.session.bridge import ALWAYS_TOOLSETS, DEFAULT_TOOLSETS, build_bridge
from webmcp_bridge.session.settings import DEFAULT_SETTINGS, BridgeSettings, SettingsApplier

PATH = "demo/euler.ipynb"
ALL_TOOLSETS = ["notebooks", "calls", "access", "review", "files", "batch", "code", "variables", "search", "toolsets"]


class Page:
    """A session as a page starts it: the URL's words, then the settings at start-up (lab/session.py's order)."""

    def __init__(self, search: str | None = None, settings: BridgeSettings = DEFAULT_SETTINGS) -> None:
        ws = MemoryWorkspace({PATH: json.dumps(corpus_json("pytudes-euler.ipynb"))})
        self.bridge = build_bridge(ws)
        self.reg = self.bridge.registry
        self.switch = self.bridge.toolsets
        self.changes = 0
        self.switch.on_change = self._changed
        self.switch.query_words = words_of_query(search)
        self.switch.choose()
        self.applier = SettingsApplier(self.reg)
        self.applier.apply(settings, startup=True)
        ws_open = self.call("jupyter_open_notebook", {"path": PATH})
        assert ws_open["isError"] is False or ws_open["structuredContent"]["error"] == "UNKNOWN_TOOL"

    def _changed(self) -> None:
        self.changes += 1

    def call(self, name: str, args: dict | None = None) -> dict:
        result = asyncio.run(self.reg.call(name, args or {}))
        check_envelope(result, self.reg.limits)
        return result

    def served(self) -> set[str]:
        return {d["name"] for d in self.reg.definitions()}

    def toolset_tools(self, *names: str) -> set[str]:
        return {t.name for ts in self.reg.toolsets() if ts.name in names for t in ts.tools}


def test_query_words_are_the_comma_separated_values_of_every_toolsets_parameter():
    assert words_of_query(None) is None and words_of_query("") is None and words_of_query("?path=a.ipynb") is None
    assert words_of_query("?toolsets=notebooks,review") == ["notebooks", "review"]
    assert words_of_query("path=x&toolsets=review&toolsets=%20files%20,,code") == ["review", "files", "code"]
    assert words_of_query("?toolsets=") == [] and words_of_query("?toolsets=all+") == ["all"]
    assert words_of_query("?Toolsets=review") is None  # the key is exact, as URLSearchParams reads it


def test_the_default_page_serves_the_core_job_within_the_budget():
    page = Page()
    served = page.served()
    assert len(served) <= TOOL_BUDGET == 20
    assert served == page.toolset_tools(*DEFAULT_TOOLSETS, *ALWAYS_TOOLSETS)
    assert {
        "jupyter_get_cells",
        "jupyter_update_cell",
        "jupyter_run_cells",
        "jupyter_wait_for_result",
        "jupyter_toolsets",
    } <= served
    assert not served & page.toolset_tools("review", "files", "code")
    # every tool of the registry is one discovery call away
    assert {t for ts in page.switch.listing() for t in ts["tools"]} == {t.name for t in page.reg.tools()}


@pytest.mark.parametrize(
    "search, expected",
    [
        ("?toolsets=review", ["review", "toolsets"]),
        ("?toolsets=notebooks,review", ["notebooks", "review", "toolsets"]),
        ("?toolsets=all", ALL_TOOLSETS),
        ("?toolsets=default,code", ["notebooks", "calls", "code", "toolsets"]),
        ("?toolsets=", ["toolsets"]),
        ("?toolsets=review,no_such_set,constructor", ["review", "toolsets"]),
    ],
)
def test_the_url_chooses_the_toolsets(search, expected):
    page = Page(search)
    assert sorted(page.switch.on()) == sorted(expected)
    assert page.served() == page.toolset_tools(*expected)


def test_the_url_wins_over_the_setting_which_wins_over_the_default():
    assert sorted(Page(None, BridgeSettings(toolsets=("review",))).switch.on()) == ["review", "toolsets"]
    assert sorted(Page("?toolsets=files", BridgeSettings(toolsets=("review",))).switch.on()) == ["files", "toolsets"]
    page = Page()
    changed, problems = page.applier.apply(BridgeSettings(toolsets=("code", "nope")))
    assert changed is True and problems == ["toolsets: there is no toolset named 'nope'"]
    assert sorted(page.switch.on()) == ["code", "toolsets"]
    # a later change of another setting keeps what the agent turned on; a change of toolsets chooses again
    page.call("jupyter_toolsets", {"enable": ["review"]})
    assert page.applier.apply(BridgeSettings(toolsets=("code", "nope"), execution_timeout=5))[0] is False
    assert "review" in page.switch.on()
    assert page.applier.apply(BridgeSettings())[0] is True
    assert sorted(page.switch.on()) == sorted([*DEFAULT_TOOLSETS, *ALWAYS_TOOLSETS])


def test_a_tool_of_a_toolset_that_is_off_is_refused_and_changes_nothing():
    page = Page("?toolsets=review")
    refused = page.call("jupyter_get_cells", {})
    payload = refused["structuredContent"]
    assert refused["isError"] is True and payload["error"] == "UNKNOWN_TOOL"
    assert (
        payload["toolset"] == "notebooks"
        and payload["toolsetEnabled"] is False
        and "jupyter_toolsets" in payload["message"]
    )


def test_the_discovery_tool_lists_and_turns_toolsets_on_and_off():
    page = Page()
    listed = page.call("jupyter_toolsets")["structuredContent"]
    assert [t["name"] for t in listed["toolsets"]] == ALL_TOOLSETS and listed["changed"] == []
    review = next(t for t in listed["toolsets"] if t["name"] == "review")
    assert review["enabled"] is False and "jupyter_create_comment" in review["tools"] and review["description"]
    assert next(t for t in listed["toolsets"] if t["name"] == "toolsets")["alwaysOn"] is True
    assert listed["registeredToolCount"] == len(page.served()) == 20 and page.changes == 0

    on = page.call("jupyter_toolsets", {"enable": ["review", "code"]})["structuredContent"]
    assert on["changed"] == ["review", "code"] and page.changes == 1
    assert (
        page.served() >= page.toolset_tools("review", "code")
        and on["registeredToolCount"] == 28
        and "warning" not in on
    )
    assert page.call("jupyter_list_comments", {})["isError"] is False
    again = page.call("jupyter_toolsets", {"enable": ["review"]})["structuredContent"]
    assert again["changed"] == [] and page.changes == 1  # nothing changed: the page registers nothing again

    many = page.call("jupyter_toolsets", {"enable": ["access", "batch", "files"]})["structuredContent"]
    assert many["registeredToolCount"] == 37 and "more than 30" in many["warning"]
    off = page.call("jupyter_toolsets", {"disable": ["notebooks", "files"]})["structuredContent"]
    assert off["changed"] == ["notebooks", "files"] and "jupyter_get_cells" not in page.served()


@pytest.mark.parametrize(
    "args, says",
    [
        ({"enable": ["reviews"]}, "no toolset named 'reviews'"),
        ({"disable": ["toolsets"]}, "always on"),
        ({"enable": ["review"], "disable": ["review"]}, "on and off at once"),
        ({"enable": ["review", "all"]}, "no toolset named 'all'"),
    ],
)
def test_the_discovery_tool_refuses_bad_requests_and_changes_nothing(args, says):
    page = Page()
    before = page.served()
    refused = page.call("jupyter_toolsets", args)
    assert refused["isError"] is True and refused["structuredContent"]["error"] == "INVALID_ARGUMENT", refused
    assert says in refused["structuredContent"]["message"]
    assert page.served() == before and page.changes == 0


def test_disabled_tools_take_names_and_globs_and_win_over_every_toolset():
    names = [
        "jupyter_get_cells",
        "jupyter_create_comment",
        "jupyter_reply_comment",
        "jupyter_read_file",
        "jupyter_write_file",
    ]
    hit, unmatched = disabled_by_patterns(
        ["jupyter_*_comment", "jupyter_[rw]*_file", "jupyter_get_cell", "JUPYTER_*"], names
    )
    assert hit == {"jupyter_create_comment", "jupyter_reply_comment", "jupyter_read_file", "jupyter_write_file"}
    assert unmatched == ["jupyter_get_cell", "JUPYTER_*"]  # exact names, case-sensitive globs

    page = Page(
        "?toolsets=all", BridgeSettings(disabled_tools=("jupyter_*_comment*", "jupyter_run_?ode", "jupyter_toolsets"))
    )
    served = page.served()
    assert not {n for n in served if n.endswith(("_comment", "_comments"))} and "jupyter_run_code" not in served
    assert "jupyter_toolsets" not in served and "jupyter_get_cells" in served
    listed = {t["name"]: t["tools"] for t in page.switch.listing()}
    assert (
        "review" not in listed and "code" not in listed and "toolsets" not in listed
    )  # all their tools disabled: gone
    assert listed["notebooks"] == [t.name for t in page.reg.toolsets()[0].tools]
    refused = page.call("jupyter_run_code", {"code": "1"})["structuredContent"]
    assert refused["error"] == "UNKNOWN_TOOL" and refused["disabled"] is True
