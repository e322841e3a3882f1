"""Pictures of rendered outputs (``jupyter_get_output``): a chart that only a renderer of the page draws comes back
as an image of what the person sees, bounded like an image's copy, with the MIME type it was rendered from and its
size on screen; any output on request (``render: true``: an HTML table); an output that renders nothing says so; an
output the page does not show falls back to its stored data (or, asked for, a clear error); hidden cells stay hidden.

Over the in-memory host, whose "renderer" draws a picture of one colour at a fixed size per MIME type
(``host_memory_render.py``); the page's pictures of real renderings are checked in
``playwright-tests/test_rendered_browser.py``. Inputs: a Plotly chart made by plotly itself
(``tests/notebooks/plotly-fruit.ipynb``) and the pandas tables of ``handson-ml2-tools-pandas``.
"""

from __future__ import annotations

import asyncio
import base64

import pytest

import png_codec
from helpers import make_bridge
from host_memory_render import PICTURE_RGBA, RENDERED_SIZES
from webmcp_bridge.core.images import OutputCapture, image_size
from webmcp_bridge.core.limits import CAPTURE_NODES
from webmcp_bridge.session.resources import read_resource

PLOTLY = "application/vnd.plotly.v1+json"


def picture(result: dict) -> tuple[dict, bytes]:
    """The payload and the decoded PNG of a rendered output's one image block."""
    assert result["isError"] is False, result["structuredContent"]
    text, image = result["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert image["data"][:64] not in text["text"]
    return result["structuredContent"], base64.b64decode(image["data"], validate=True)


def plotly_bridge():
    b = make_bridge({"plotly.ipynb": "plotly-fruit.ipynb"})
    b.open("plotly.ipynb")
    cell = b.ok("jupyter_get_cells", {"includeOutputs": True})["cells"][1]
    return b, cell


def test_a_plotly_chart_comes_back_as_a_bounded_picture_of_its_rendering():
    b, cell = plotly_bridge()
    listed = cell["outputs"][0]
    assert listed["mimeType"] == PLOTLY  # the listing names the type it is rendered from
    payload, data = picture(b.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0}))
    width, height = RENDERED_SIZES[PLOTLY]
    assert payload["rendered"] is True and payload["mimeType"] == PLOTLY
    assert payload["original"] == {"mimeType": PLOTLY, "width": width, "height": height}
    assert image_size("image/png", data) == (width, height) == (payload["image"]["width"], payload["image"]["height"])
    decoded = png_codec.decode(data)
    assert decoded is not None and bytes(decoded[2][0][:4]) == PICTURE_RGBA  # the rendering's pixels
    assert payload["image"]["downscaled"] is False and payload["image"]["bytes"] == len(data)

    # bounded like any image: maxSide scales it (aspect kept)
    payload, data = picture(b.call("jupyter_get_output", {"uri": listed["uri"], "maxSide": 350}))
    assert image_size("image/png", data) == (350, 225) and payload["image"]["downscaled"] is True
    assert payload["original"]["width"] == width  # the size on screen, still


def test_the_stored_data_of_a_rendered_chart_is_still_read_on_request():
    b, cell = plotly_bridge()
    args = {"cellId": cell["id"], "outputIndex": 0}
    for asked in ({"render": False}, {"mimeType": PLOTLY}):
        payload = b.ok("jupyter_get_output", {**args, **asked})
        assert payload["mimeType"] == PLOTLY and '"type":"bar"' in payload["text"].replace(" ", "")
        assert "rendered" not in payload and "note" not in payload


def test_an_html_table_is_text_by_default_and_a_picture_on_request():
    b = make_bridge({"pandas.ipynb": "handson-ml2-tools-pandas.ipynb"})
    b.open("pandas.ipynb")
    table = b.ok("jupyter_get_cells", {"includeOutputs": True, "startIndex": 101, "endIndex": 102})["cells"][0]
    assert table["outputs"][0]["mimeType"] == "text/html" and "<table" not in table["source"]
    args = {"cellId": table["id"], "outputIndex": 0}
    text = b.ok("jupyter_get_output", args)
    assert text["mimeType"] == "text/plain" and "text" in text  # a table an agent reads as text, as before
    payload, data = picture(b.call("jupyter_get_output", {**args, "render": True}))
    assert payload["mimeType"] == "text/html" and payload["original"]["mimeType"] == "text/html"
    assert image_size("image/png", data) == RENDERED_SIZES["text/html"]


def test_an_output_that_renders_nothing_says_so_with_no_image():
    b, cell = plotly_bridge()
    nb = b.nb("plotly.ipynb")
    nb.nb["cells"][1]["outputs"].append({"output_type": "display_data", "data": {"text/html": "  "}, "metadata": {}})
    result = b.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 1, "render": True})
    assert result["isError"] is False and len(result["content"]) == 1
    payload = result["structuredContent"]
    assert payload["empty"] is True and payload["mimeType"] == "text/html" and "image" not in payload
    assert "renders nothing" in payload["message"]


def test_an_output_the_page_does_not_show_falls_back_to_its_data_or_is_refused_when_asked_for():
    b, cell = plotly_bridge()
    b.nb("plotly.ipynb").not_shown.add(cell["id"])
    args = {"cellId": cell["id"], "outputIndex": 0}
    payload = b.ok("jupyter_get_output", args)
    assert payload["mimeType"] == PLOTLY and payload["text"].startswith("{")
    assert "does not show it now" in payload["note"]
    before = b.state()
    result = b.call("jupyter_get_output", {**args, "render": True})
    assert result["isError"] is True
    error = result["structuredContent"]
    assert error["error"] == "OUTPUT_NOT_FOUND" and error["reason"] == "not-shown"
    assert "render: false" in error["message"]
    assert b.state() == before


def test_render_with_a_stored_representation_is_refused_and_changes_nothing():
    b, cell = plotly_bridge()
    before = b.state()
    for extra in ({"mimeType": PLOTLY}, {"original": True}):
        result = b.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "render": True, **extra})
        assert result["isError"] is True and result["structuredContent"]["error"] == "INVALID_ARGUMENT"
    assert b.state() == before
    assert b.nb("plotly.ipynb").captures == {}


def test_a_hidden_cell_is_not_rendered_and_answers_as_a_missing_one():
    b, cell = plotly_bridge()
    nb = b.nb("plotly.ipynb")
    missing = b.call("jupyter_get_output", {"cellId": "no-such-cell", "outputIndex": 0, "render": True})
    nb.nb["cells"][1]["metadata"]["webmcp_bridge"] = {"access": "none"}
    hidden = b.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "render": True})
    assert hidden["isError"] is True and hidden["structuredContent"]["error"] == "CELL_NOT_FOUND"
    assert hidden["structuredContent"]["message"].replace(cell["id"], "X") == missing["structuredContent"][
        "message"
    ].replace("no-such-cell", "X")
    assert nb.captures == {}


def test_a_cell_hidden_while_its_picture_is_made_returns_nothing_of_it():
    b, cell = plotly_bridge()
    nb = b.nb("plotly.ipynb")
    capture = nb.capture_output

    async def hide_meanwhile(cell_id: str, output_index: int, max_side: int):
        taken = await capture(cell_id, output_index, max_side)
        nb.nb["cells"][1]["metadata"]["webmcp_bridge"] = {"access": "none"}
        nb.workspace.clock += 1
        return taken

    nb.capture_output = hide_meanwhile
    result = b.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0})
    assert result["isError"] is True and result["structuredContent"]["error"] == "CELL_NOT_FOUND"
    assert len(result["content"]) == 1 and nb.captures == {}  # no image, and the picture was dropped


@pytest.mark.parametrize("step", ["capture_output", "encode_capture"])
def test_a_notebook_hidden_while_its_picture_is_made_or_copied_returns_nothing_of_it(step):
    """The page copies an output in short steps over many tasks: the person sets the whole notebook to "none"
    meanwhile (while the picture is taken, or while its copy is encoded); the call answers as for a notebook that is
    not there, with no image, and the picture is dropped."""
    b, cell = plotly_bridge()
    nb = b.nb("plotly.ipynb")
    original = getattr(nb, step)

    async def hide_the_notebook_meanwhile(*args, **kwargs):
        done = await original(*args, **kwargs)
        nb.nb["metadata"]["webmcp_bridge"] = {"schemaVersion": 1, "access": "none"}
        nb.workspace.clock += 1
        return done

    setattr(nb, step, hide_the_notebook_meanwhile)
    result = b.call("jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0})
    assert result["isError"] is True and result["structuredContent"]["error"] == "NOTEBOOK_NOT_FOUND", result
    assert len(result["content"]) == 1 and nb.captures == {}


def test_an_outputs_resource_is_the_picture_of_a_rendered_chart_and_says_when_it_renders_nothing():
    b, cell = plotly_bridge()
    uri = cell["outputs"][0]["uri"]
    (item,) = asyncio.run(read_resource(b.reg, uri))["contents"]
    assert item["mimeType"] == "image/png" and "text" not in item
    assert image_size("image/png", base64.b64decode(item["blob"])) == RENDERED_SIZES[PLOTLY]
    # a site's type beside an HTML stub that draws nothing: pictured by default, and empty
    data = {"text/html": " ", "application/vnd.example+json": {}}
    b.nb("plotly.ipynb").nb["cells"][1]["outputs"].append({"output_type": "display_data", "data": data, "metadata": {}})
    (item,) = asyncio.run(read_resource(b.reg, uri[:-1] + "1"))["contents"]
    assert item["mimeType"] == "text/html" and "renders nothing" in item["text"]


def test_an_output_too_large_to_copy_is_refused_by_name_when_asked_for():
    b, cell = plotly_bridge()
    nb = b.nb("plotly.ipynb")

    async def too_large(cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        return OutputCapture("unavailable", reason="too-large")

    nb.capture_output = too_large
    args = {"cellId": cell["id"], "outputIndex": 0}
    error = b.call("jupyter_get_output", {**args, "render": True})["structuredContent"]
    assert error["error"] == "OUTPUT_NOT_FOUND" and error["reason"] == "too-large"
    assert f"more than {CAPTURE_NODES} elements" in error["message"]
    assert "more than" in b.ok("jupyter_get_output", args)["note"]  # by default: its stored data, and why


def test_a_widget_the_page_shows_as_its_text_comes_back_as_that_text():
    """A widget output with no widget renderer in the page is shown as its text/plain: by default that text (with a
    note), a picture of it only when asked for."""
    b = make_bridge({"widgets.ipynb": "nbconvert-widget-list.ipynb"})
    b.open("widgets.ipynb")
    cell = b.ok("jupyter_get_cells", {"startIndex": 5, "endIndex": 6, "includeOutputs": True})["cells"][0]
    assert cell["outputs"][0]["mimeType"] == "application/vnd.jupyter.widget-view+json"
    args = {"cellId": cell["id"], "outputIndex": 0}
    payload = b.ok("jupyter_get_output", args)
    assert payload["mimeType"] == "text/plain" and payload["text"] and "shows it as its text/plain" in payload["note"]
    assert b.nb("widgets.ipynb").captures == {}
    payload, data = picture(b.call("jupyter_get_output", {**args, "render": True}))
    assert payload["mimeType"] == "text/plain" and image_size("image/png", data) == RENDERED_SIZES["text/plain"]
