"""Outputs and cells addressed like resources (core/uris.py): the notebook:// forms, round trips, the refusal of bad
URIs, the uri and mimeType of every output descriptor, and jupyter_get_output by uri on the real registry over the
in-memory host (a hidden cell's uri gets what a missing cell's gets)."""

from __future__ import annotations

import json
import random

import pytest

from helpers import make_bridge
from test_access import HIDDEN, WORK, Agent, planted
from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.paths import normalize_path
from webmcp_bridge.core.raw import RawItem, RawOutput
from webmcp_bridge.core.snapshot import richest_mime
from webmcp_bridge.core.uris import NotebookAddress, cell_uri, notebook_uri, output_uri, parse_uri

PATHS = [
    "a.ipynb",
    "demo/analysis.ipynb",
    "deep/er/still/x.IPYNB",
    "with space/My Notebook (1).ipynb",
    "données/analyse été.ipynb",
    "cells/x.ipynb",
    "a/cells/b.ipynb",
    "outputs/cells/0.ipynb",
    "100%.ipynb",
    "q?a#b&c=d.ipynb",
    "emoji 📓/n+b.ipynb",
    "t~ilde/._.ipynb",
]
IDS = ["c1", "8f2a6e1b-4c3d-4e5f-9a0b-1c2d3e4f5a6b", "a/b", "cells", "outputs", "with space", "ünïcode", "%41", "0"]


def random_text(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def test_the_canonical_forms():
    assert notebook_uri("demo/analysis.ipynb") == "notebook://demo/analysis.ipynb"
    assert cell_uri("demo/analysis.ipynb", "c1") == "notebook://demo/analysis.ipynb/cells/c1"
    assert output_uri("demo/analysis.ipynb", "c1", 2) == "notebook://demo/analysis.ipynb/cells/c1/outputs/2"
    assert (
        output_uri("with space/é (1).ipynb", "a/b", 0)
        == "notebook://with%20space/%C3%A9%20%281%29.ipynb/cells/a%2Fb/outputs/0"
    )


@pytest.mark.parametrize("path", PATHS)
def test_every_address_round_trips(path):
    for address in [
        NotebookAddress(path),
        *(NotebookAddress(path, i) for i in IDS),
        *(NotebookAddress(path, i, n) for i in IDS for n in (0, 7, 2**31 - 1)),
    ]:
        uri = address.uri
        assert parse_uri(uri) == address, uri
        assert parse_uri(uri).uri == uri
        assert uri.isascii() and " " not in uri


def test_random_addresses_round_trip():
    rng = random.Random(11)
    alphabet = "abcXYZ019 -_.~!$&'()*+,;=:@%/?#[]é日\u200b🙂"
    tried = 0
    while tried < 500:
        parts = [random_text(rng, alphabet, rng.randint(1, 6)) for _ in range(rng.randint(0, 3))]
        path = "/".join([*parts, random_text(rng, alphabet, rng.randint(1, 8)) + ".ipynb"])
        try:
            if normalize_path(path) != path:
                continue
        except ToolError:  # not a workspace path: no tool reports such a path, so no uri is made of it
            continue
        tried += 1
        address = NotebookAddress(path, random_text(rng, alphabet, rng.randint(1, 12)), rng.randint(0, 50))
        assert parse_uri(address.uri) == address, address


@pytest.mark.parametrize(
    "uri, expected",
    [
        ("NOTEBOOK://a.ipynb/cells/c1", NotebookAddress("a.ipynb", "c1")),  # the scheme in any case
        ("notebook://a%2eipynb/cells/c%31", NotebookAddress("a.ipynb", "c1")),  # lower-case, needless escapes
        (
            "notebook://n(1).ipynb/cells/x=y/outputs/3",
            NotebookAddress("n(1).ipynb", "x=y", 3),
        ),  # sub-delims as they are
        ("notebook://cells/cells.ipynb/cells/cells/outputs/0", NotebookAddress("cells/cells.ipynb", "cells", 0)),
        ("notebook://a/cells/b.ipynb", NotebookAddress("a/cells/b.ipynb")),  # a folder named cells: still a notebook
    ],
)
def test_other_spellings_parse_to_the_same_address(uri, expected):
    assert parse_uri(uri) == expected


@pytest.mark.parametrize(
    "uri, says",
    [
        ("", "empty"),
        ("file://a.ipynb", "notebook://"),
        ("notebook:a.ipynb", "notebook://"),
        ("notebook://a.ipynb?x=1", "query or fragment"),
        ("notebook://a.ipynb#top", "query or fragment"),
        ("notebook://", "empty segment"),
        ("notebook:///a.ipynb", "empty segment"),
        ("notebook://a.ipynb/", "empty segment"),
        ("notebook://a//b.ipynb", "empty segment"),
        ("notebook://a.ipynb/cells/", "empty segment"),
        ("notebook://a b.ipynb", "must be percent-encoded"),
        ("notebook://é.ipynb", "must be percent-encoded"),
        ("notebook://a\\b.ipynb", "must be percent-encoded"),
        ("notebook://a%zz.ipynb", "escape"),
        ("notebook://a%C3.ipynb", "not UTF-8"),
        ("notebook://../a.ipynb", "not a workspace path"),
        ("notebook://a/%2E%2E/b.ipynb", "not a workspace path"),
        ("notebook://a%2Fb.ipynb", "encoded '/'"),
        ("notebook://notes.txt", "does not name a notebook"),
        ("notebook://a.ipynb/cells", "does not name a notebook"),
        ("notebook://a.ipynb/cells/c1/outputs", "does not name a notebook"),
        ("notebook://a.ipynb/cells/c1/outputs/-1", "whole number"),
        ("notebook://a.ipynb/cells/c1/outputs/01", "leading zeros"),
        ("notebook://a.ipynb/cells/c1/outputs/1.5", "whole number"),
        ("notebook://a.ipynb/cells/c1/outputs/2147483648", "2147483647"),
        ("notebook://a.ipynb/cells/c1/outputs/%31", "whole number"),
        ("notebook://a.ipynb/cells/" + "x" * 257, "1 to 256 characters"),
        ("notebook://a.ipynb/cells/c1/output/0", "does not name a notebook"),
        ("notebook://" + "a" * 9000 + ".ipynb", "longer than"),
    ],
)
def test_bad_uris_are_invalid_argument(uri, says):
    with pytest.raises(ToolError) as caught:
        parse_uri(uri)
    assert caught.value.code.value == "INVALID_ARGUMENT"
    assert says in caught.value.message, caught.value.message


def item(mime: str, binary: bool = False) -> RawItem:
    return RawItem(mime, 10, "x", binary)


@pytest.mark.parametrize(
    "mimes, richest",
    [
        (["text/plain", "image/png"], "image/png"),  # a figure: never its "<Figure …>" text
        (["image/svg+xml", "text/plain", "image/png"], "image/png"),
        (["text/plain", "text/html"], "text/html"),  # a table
        (["text/plain", "application/vnd.jupyter.widget-view+json"], "application/vnd.jupyter.widget-view+json"),
        (["application/vnd.plotly.v1+json", "text/html", "text/plain"], "text/html"),
        (["text/plain", "text/latex"], "text/latex"),
        (["text/plain"], "text/plain"),
        ([], ""),
    ],
)
def test_the_richest_mime_type(mimes, richest):
    assert richest_mime(mimes) == richest


def test_a_listing_gives_the_notebooks_address_once_and_every_output_its_own_and_its_richest_mime_type():
    """A cell's address is the listing's uri plus /cells/{id} (formatted once per result, never per cell); every
    output descriptor carries its own ``notebook://{path}/cells/{cellId}/outputs/{index}`` and its richest
    representation as ``mimeType`` (the product contract), ``mimeTypes`` only where there is more than text/plain."""
    b = make_bridge({"talks/figures.ipynb": "handson-ml2-math-calculus.ipynb"})
    b.open("talks/figures.ipynb")
    listing = b.ok("jupyter_get_cells", {"includeOutputs": True, "endIndex": 200})
    assert listing["uri"] == notebook_uri("talks/figures.ipynb")
    assert all("uri" not in cell for cell in listing["cells"])
    outputs = [(c, o) for c in listing["cells"] for o in c.get("outputs", [])]
    assert outputs
    for cell in listing["cells"]:
        assert parse_uri(f"{listing['uri']}/cells/{cell['id']}").cell_id == cell["id"]
    figures = 0
    for cell, output in outputs:
        assert output["uri"] == f"{listing['uri']}/cells/{cell['id']}/outputs/{output['index']}"
        if "mimeTypes" in output:
            assert output["mimeType"] == richest_mime(output["mimeTypes"]) != "text/plain"
        else:  # text/plain alone
            assert output["mimeType"] == "text/plain"
        if "image/png" in output.get("mimeTypes", []):
            figures += 1
            assert output["mimeType"] == "image/png"
    assert figures  # the notebook's figures carry text/plain beside the PNG
    # the output by its uri is the output by id and index
    cell, output = next((c, o) for c, o in outputs if o.get("mimeType") == "text/html")  # a table beside its text
    by_id = b.ok(
        "jupyter_get_output",
        {"notebookPath": "talks/figures.ipynb", "cellId": cell["id"], "outputIndex": output["index"]},
    )
    by_uri = b.ok("jupyter_get_output", {"uri": output["uri"]})
    assert by_uri == by_id


def test_a_figure_by_uri_comes_back_as_an_image():
    b = make_bridge({"f.ipynb": "handson-ml2-math-calculus.ipynb"})
    listing = b.ok("jupyter_get_cells", {"notebookPath": "f.ipynb", "includeOutputs": True, "endIndex": 200})
    uri = next(
        output_uri("f.ipynb", c["id"], o["index"])
        for c in listing["cells"]
        for o in c.get("outputs", [])
        if o.get("mimeType") == "image/png"
    )
    result = b.call("jupyter_get_output", {"uri": uri})
    assert (
        result["isError"] is False
        and result["content"][1]["type"] == "image"
        and result["content"][1]["mimeType"] == "image/png"
    )


@pytest.mark.parametrize(
    "args, says",
    [
        ({"uri": "notebook://f.ipynb/cells/c1/outputs/0", "cellId": "c1"}, "not both"),
        ({"uri": "notebook://f.ipynb/cells/c1/outputs/0", "notebookPath": "f.ipynb"}, "not both"),
        ({"uri": "notebook://f.ipynb/cells/c1"}, "not an output"),
        ({"uri": "notebook://f.ipynb"}, "not an output"),
        ({"cellId": "c1"}, "cellId and outputIndex, or uri"),
        ({}, "cellId and outputIndex, or uri"),
        ({"uri": "https://example.org/x.ipynb"}, "notebook://"),
    ],
)
def test_get_output_refuses_a_bad_address_and_changes_nothing(args, says):
    b = make_bridge({"f.ipynb": "handson-ml2-math-calculus.ipynb"})
    b.open("f.ipynb")
    payload = b.fails("jupyter_get_output", args, "INVALID_ARGUMENT")
    assert says in payload["message"]


def test_a_hidden_cell_or_notebook_by_uri_is_a_missing_one():
    agent = Agent(planted())
    agent.ok("jupyter_open_notebook", {"path": WORK})
    hidden = agent.error("jupyter_get_output", {"uri": output_uri(WORK, HIDDEN[0], 0)}, "CELL_NOT_FOUND")
    missing = agent.error("jupyter_get_output", {"uri": output_uri(WORK, "ffffffff", 0)}, "CELL_NOT_FOUND")
    assert json.dumps(hidden).replace(HIDDEN[0], "ffffffff") == json.dumps(missing)
    secret = agent.error(
        "jupyter_get_output", {"uri": output_uri("private/hidden-plans.ipynb", "c", 0)}, "NOTEBOOK_NOT_FOUND"
    )
    absent = agent.error(
        "jupyter_get_output", {"uri": output_uri("private/absent-plans.ipynb", "c", 0)}, "NOTEBOOK_NOT_FOUND"
    )
    assert json.dumps(secret).replace("hidden", "absent") == json.dumps(absent)


def test_run_results_list_outputs_as_listings_do():
    b = make_bridge({"r.ipynb": "jupyterlite-empty.ipynb"})
    b.open("r.ipynb")
    cell = b.ok("jupyter_insert_cell", {"source": "print(1)"})["cell"]
    result = b.ok("jupyter_run_cells", {"cellIds": [cell["id"]]})["results"][0]
    listed = b.ok("jupyter_get_cells", {"cellIds": [cell["id"]], "includeOutputs": True})["cells"][0]
    assert (
        result["outputs"]
        == listed["outputs"]
        == [
            {
                "index": 0,
                "uri": f"notebook://r.ipynb/cells/{cell['id']}/outputs/0",
                "outputType": "stream",
                "mimeType": "text/plain",
                "bytes": 2,
                "preview": "1\n",
            }
        ]
    )


def test_raw_outputs_are_described_as_listed():
    from webmcp_bridge.core.limits import DEFAULT_LIMITS
    from webmcp_bridge.core.snapshot import describe_output

    output = RawOutput("display_data", (item("text/plain"), item("image/png", binary=True)))
    described = describe_output(3, output, DEFAULT_LIMITS)
    assert "uri" not in described and described["mimeType"] == "image/png"
