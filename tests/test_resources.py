"""Notebooks, cells and outputs as MCP resources (session/resources.py): the templates, and reads on the real registry
over the in-memory host (through the access guard, whatever toolsets the page serves, refused for a tool the person
disabled), with their cache hints."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from test_access import HIDDEN, WORK, Agent, planted
from webmcp_bridge.core.uris import cell_uri, notebook_uri, output_uri
from webmcp_bridge.session.resources import OUTPUT_TTL_MS, SHORT_TTL_MS, TEMPLATES, ResourceError, read_resource


def read(agent: Agent, uri: str) -> dict:
    return asyncio.run(read_resource(agent.reg, uri))


def refused(agent: Agent, uri: str) -> dict:
    with pytest.raises(ResourceError) as caught:
        read(agent, uri)
    return caught.value.payload


@pytest.fixture
def agent() -> Agent:
    a = Agent(planted())
    a.ok("jupyter_open_notebook", {"path": WORK})
    return a


def template_regex(template: str) -> re.Pattern[str]:
    """RFC 6570 matching as the MCP SDK does it: {+var} spans '/', {var} does not."""
    pattern = re.escape(template).replace(r"\{\+path\}", "(.+)")
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", "([^/,]+)", pattern) + "$")


def test_the_templates_match_the_uris_most_specific_first():
    """(Whichever template a runtime matches, the one reader parses the uri itself: core/uris.py.)"""
    uris = [output_uri("a b/c.ipynb", "c1", 0), cell_uri("a b/c.ipynb", "c1"), notebook_uri("a b/c.ipynb")]
    for uri, expected in zip(uris, ["notebook-output", "notebook-cell", "notebook"], strict=True):
        first = next(t["name"] for t in TEMPLATES if template_regex(t["uriTemplate"]).match(uri))
        assert first == expected, uri


def test_a_notebook_a_cell_and_an_output_are_read_with_their_cache_hints(agent):
    listing = agent.ok("jupyter_get_cells", {"includeOutputs": True})
    notebook = read(agent, notebook_uri(WORK))
    assert notebook["ttlMs"] == SHORT_TTL_MS and notebook["cacheScope"] == "private"
    (item,) = notebook["contents"]
    assert item["uri"] == notebook_uri(WORK) and item["mimeType"] == "application/json"
    assert [c["id"] for c in json.loads(item["text"])["cells"]] == [c["id"] for c in listing["cells"]]
    cell = next(c for c in listing["cells"] if c.get("outputs"))
    # the listing gives the notebook's address once; a cell's and an output's follow from it
    assert listing["uri"] == notebook_uri(WORK)
    (item,) = read(agent, f"{listing['uri']}/cells/{cell['id']}")["contents"]
    assert json.loads(item["text"])["cells"][0]["outputs"] == cell["outputs"]
    address = output_uri(WORK, cell["id"], cell["outputs"][0]["index"])
    got = read(agent, address)
    assert got["ttlMs"] == OUTPUT_TTL_MS
    by_tool = agent.ok("jupyter_get_output", {"uri": address})
    assert got["contents"] == [{"uri": address, "mimeType": by_tool["mimeType"], "text": by_tool["text"]}]


def test_a_hidden_cell_reads_as_a_missing_one_and_bad_uris_are_refused(agent):
    hidden = refused(agent, cell_uri(WORK, HIDDEN[0]))
    missing = refused(agent, cell_uri(WORK, "ffffffff"))
    assert hidden["error"] == "CELL_NOT_FOUND" and json.dumps(hidden).replace(HIDDEN[0], "ffffffff") == json.dumps(
        missing
    )
    assert refused(agent, output_uri(WORK, HIDDEN[1], 0))["error"] == "CELL_NOT_FOUND"
    assert refused(agent, notebook_uri("private/hidden-plans.ipynb"))["error"] == "NOTEBOOK_NOT_FOUND"
    assert refused(agent, "notebook://../x.ipynb")["error"] == "INVALID_ARGUMENT"


def test_reads_are_served_whatever_the_toolsets_but_not_past_the_person(agent):
    agent.reg.set_toolsets_off(frozenset({"notebooks"}))
    assert read(agent, notebook_uri(WORK))["contents"]
    agent.reg.set_disabled(frozenset({"jupyter_get_cells"}))
    assert refused(agent, notebook_uri(WORK))["disabled"] is True
