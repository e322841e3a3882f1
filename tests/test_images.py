"""Images an agent can use (``jupyter_get_output``): a bounded copy by default, the original on request, sizes
reported, an SVG's markup instead of its "<IPython.core.display.SVG object>" placeholder.

On real notebook figures, over the in-memory host, whose copies come from the small pure-Python PNG codec
(``png_codec.py``: nearest-pixel resampling, PNG only). What the tests check is what an agent receives: the image
block's real pixel size (read back from the PNG it got), its bytes against the bounds, and the reported original.
The browser's own copies (every format, resampled smoothly, made off the main thread) are checked end to end in
``playwright-tests/test_images_browser.py``.
"""

from __future__ import annotations

import base64

import pytest

import png_codec
from helpers import Bridge, corpus_json, make_bridge, text_of
from webmcp_bridge.core.images import MAX_ATTEMPTS, ImageInfo, ImageRequest, first_request, image_size, next_request
from webmcp_bridge.core.limits import DEFAULT_LIMITS, KIB, Limits

FIGURES = {  # notebook -> cell indices whose first output is a PNG figure
    "ipython-beyond-plain-python.ipynb": [79],
    "handson-ml2-math-calculus.ipynb": [5, 9, 44, 46, 54, 72],
    "mlbook-ch13-lightning.ipynb": [21, 23, 25],
    "handson-ml2-tools-pandas.ipynb": [48, 55, 61, 70, 93, 183, 185],
}


def stored(name: str, cell: int, mime: str, output: int = 0) -> bytes:
    return base64.b64decode("".join(text_of(corpus_json(name)["cells"][cell]["outputs"][output]["data"][mime]).split()))


def open_bridge(name: str, limits: Limits = DEFAULT_LIMITS) -> tuple[Bridge, list[dict]]:
    b = make_bridge({name: name}, limits=limits)
    b.open(name)
    cells = b.ok("jupyter_get_cells", {"includeSource": False, "endIndex": 200})["cells"]
    cells += b.ok("jupyter_get_cells", {"includeSource": False, "startIndex": 200, "endIndex": 400})["cells"]
    return b, cells


def image_block(result: dict) -> tuple[dict, bytes]:
    """The payload and the decoded bytes of the one image block of a successful result."""
    assert result["isError"] is False, result["structuredContent"]
    text, image = result["content"]
    assert image["type"] == "image" and set(image) == {"type", "data", "mimeType"}
    assert image["data"][:64] not in text["text"]  # never inlined in the JSON text
    payload = result["structuredContent"]
    assert payload["image"]["mimeType"] == image["mimeType"]
    return payload, base64.b64decode(image["data"], validate=True)


def test_the_size_of_every_figure_is_read_from_its_header_as_a_full_decode_finds_it():
    """image_size reads 24 bytes of a PNG; the decoder reads every pixel: they agree on every figure of the corpus
    that the small decoder takes (and every one of these real figures is one it takes)."""
    for name, cells in FIGURES.items():
        for cell in cells:
            data = stored(name, cell, "image/png")
            decoded = png_codec.decode(data)
            assert decoded is not None, (name, cell)
            assert image_size("image/png", data[:64]) == decoded[:2], (name, cell)
    jpeg = stored("ipython-rich-output.ipynb", 23, "image/jpeg")
    size = image_size("image/jpeg", jpeg[: 64 * KIB])
    assert size is not None and min(size) > 0
    assert (
        image_size("image/png", jpeg[:64]) is None
        and image_size("image/jpeg", stored("ipython-rich-output.ipynb", 12, "image/png")) is None
    )
    assert image_size("image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 32) is None  # a signature and no header is no image


def test_a_large_figure_comes_back_as_a_bounded_copy_and_reports_the_original():
    """The 1199x784 figure of the IPython tour: by default a copy 1024 pixels wide (aspect kept) under 96 KiB; the
    original's type, size in pixels and bytes are in the payload."""
    name = "ipython-beyond-plain-python.ipynb"
    b, cells = open_bridge(name)
    original = stored(name, 79, "image/png")
    cell_id = cells[79]["id"]
    payload, data = image_block(b.call("jupyter_get_output", {"cellId": cell_id, "outputIndex": 0}))
    assert payload["mimeType"] == "image/png" and (payload["cellId"], payload["outputIndex"]) == (cell_id, 0)
    assert payload["original"] == {"mimeType": "image/png", "width": 1199, "height": 784, "bytes": len(original)}
    assert (
        image_size("image/png", data)
        == (1024, round(784 * 1024 / 1199))
        == (payload["image"]["width"], payload["image"]["height"])
    )
    assert (
        payload["image"]["downscaled"] is True
        and payload["image"]["bytes"] == len(data) <= DEFAULT_LIMITS.image_copy_bytes
    )
    assert png_codec.decode(data) is not None  # a PNG the agent can open, not just a header

    small, data = image_block(b.call("jupyter_get_output", {"cellId": cell_id, "outputIndex": 0, "maxSide": 300}))
    assert image_size("image/png", data) == (300, 196) and small["image"]["downscaled"] is True

    whole, data = image_block(b.call("jupyter_get_output", {"cellId": cell_id, "outputIndex": 0, "original": True}))
    assert data == original and whole["image"] == {
        "mimeType": "image/png",
        "width": 1199,
        "height": 784,
        "bytes": len(original),
        "downscaled": False,
    }


def test_a_figure_within_both_bounds_is_returned_as_stored():
    name = "handson-ml2-math-calculus.ipynb"
    b, cells = open_bridge(name)
    payload, data = image_block(b.call("jupyter_get_output", {"cellId": cells[5]["id"], "outputIndex": 0}))
    assert data == stored(name, 5, "image/png")
    assert payload["image"]["downscaled"] is False and (payload["image"]["width"], payload["image"]["height"]) == (
        371,
        283,
    )


def test_a_copy_over_the_byte_bound_is_made_smaller_until_it_fits():
    """The 460x286 figure (94 KB) asked for at most 6 KiB: smaller copies are made until one fits, never more than
    MAX_ATTEMPTS; a bound no copy can meet is TOO_LARGE, saying how small the smallest copy was."""
    name = "handson-ml2-math-calculus.ipynb"
    b, cells = open_bridge(name)
    payload, data = image_block(
        b.call("jupyter_get_output", {"cellId": cells[54]["id"], "outputIndex": 0, "maxImageBytes": 6 * KIB})
    )
    assert len(data) <= 6 * KIB and payload["image"]["bytes"] == len(data)
    width, height = image_size("image/png", data) or (0, 0)
    assert width < 460 and abs(width / height - 460 / 286) < 0.05, (width, height)
    tiny, cells = open_bridge(name, limits=Limits(image_bytes=300))  # no copy of 32+ pixels fits 300 bytes
    refused = tiny.fails("jupyter_get_output", {"cellId": cells[54]["id"], "outputIndex": 0}, "TOO_LARGE")
    assert (
        refused["maxImageBytes"] == 300
        and refused["original"]["width"] == 460
        and "smallest made" in refused["message"]
    )


def test_the_image_cap_bounds_the_copy_and_refuses_an_original_over_it():
    name = "ipython-beyond-plain-python.ipynb"
    b, cells = open_bridge(name, limits=Limits(image_bytes=4000))
    payload, data = image_block(
        b.call("jupyter_get_output", {"cellId": cells[79]["id"], "outputIndex": 0, "maxImageBytes": 100_000})
    )
    assert len(data) <= 4000 and payload["image"]["downscaled"] is True  # maxImageBytes is capped by the image cap
    p = b.fails("jupyter_get_output", {"cellId": cells[79]["id"], "outputIndex": 0, "original": True}, "TOO_LARGE")
    assert p["maxBytes"] == 4000 and p["bytes"] == len(stored(name, 79, "image/png")) and p["original"]["width"] == 1199


def test_an_svg_output_answers_with_its_markup_not_its_placeholder():
    """IPython's SVG display object: text/plain is "<IPython.core.display.SVG object>", the image is the markup.
    The default answer is the markup, as text, paged like any text; text/plain is still there when asked for."""
    name = "ipython-rich-output.ipynb"
    b, cells = open_bridge(name)
    markup = text_of(corpus_json(name)["cells"][18]["outputs"][0]["data"]["image/svg+xml"])
    listed = b.ok("jupyter_get_cells", {"cellIds": [cells[18]["id"]], "includeOutputs": True})["cells"][0]["outputs"][0]
    assert listed["mimeTypes"] == ["image/svg+xml", "text/plain"]
    whole = b.ok("jupyter_get_output", {"cellId": cells[18]["id"], "outputIndex": 0})
    assert (
        whole["mimeType"] == "image/svg+xml" and whole["text"] == markup and whole["nextOffset"] is None
    )  # 13.7 KB: one page
    svg = b.ok("jupyter_get_output", {"cellId": cells[18]["id"], "outputIndex": 0, "maxBytes": 4096})
    pages, offset = [svg["text"]], svg["nextOffset"]
    assert offset is not None and svg["totalBytes"] == len(markup.encode())
    while offset is not None:
        page = b.ok(
            "jupyter_get_output", {"cellId": cells[18]["id"], "outputIndex": 0, "offset": offset, "maxBytes": 4096}
        )
        pages.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pages) == markup and markup.lstrip().startswith("<svg")
    plain = b.ok(
        "jupyter_get_output", {"cellId": cells[18]["id"], "outputIndex": 0, "mimeType": "text/plain", "maxBytes": 100}
    )
    assert plain["text"] == "<IPython.core.display.SVG object>"


def test_a_host_that_cannot_copy_a_format_returns_the_original_only_within_the_bound():
    """The in-memory host decodes PNG only; for the tour's 640x480 JPEG (88 KB) it makes no copy. Within both bounds
    the original is returned as it is anyway; asked for fewer pixels, the original comes back with a note saying no
    smaller copy could be made; asked for fewer bytes than it has, it is TOO_LARGE. (In the browser the same calls
    return JPEG copies: test_images_browser.)"""
    name = "ipython-rich-output.ipynb"
    b, cells = open_bridge(name)
    jpeg = stored(name, 23, "image/jpeg")
    payload, data = image_block(b.call("jupyter_get_output", {"cellId": cells[23]["id"], "outputIndex": 0}))
    assert data == jpeg and payload["original"] == {
        "mimeType": "image/jpeg",
        "width": 640,
        "height": 480,
        "bytes": len(jpeg),
    }
    assert payload["image"]["downscaled"] is False and "note" not in payload
    payload, data = image_block(
        b.call("jupyter_get_output", {"cellId": cells[23]["id"], "outputIndex": 0, "maxSide": 320})
    )
    assert data == jpeg and payload["image"]["downscaled"] is False and "cannot make a smaller copy" in payload["note"]
    refused = b.fails(
        "jupyter_get_output", {"cellId": cells[23]["id"], "outputIndex": 0, "maxImageBytes": 32 * KIB}, "TOO_LARGE"
    )
    assert refused["bytes"] == len(jpeg) and refused["maxBytes"] == 32 * KIB and "original: true" in refused["message"]


@pytest.mark.parametrize(
    "width,height,size", [(1199, 784, 56_450), (957, 950, 112_169), (4000, 30, 900_000), (20, 5000, 40_000)]
)
def test_the_plan_bounds_the_side_keeps_the_aspect_and_stops(width, height, size):
    info = ImageInfo("image/png", width, height, size)
    request = first_request(info, 1024, 96 * KIB)
    assert request is not None and max(request.width, request.height) <= 1024
    assert abs(request.width * height - request.height * width) <= max(width, height)  # each side rounded to the pixel
    made: list[tuple[ImageRequest, int]] = []
    while request is not None:  # pretend every copy is twice over the bound: each next one is smaller, and it stops
        made.append((request, 2 * 96 * KIB))
        following = next_request(info, made, 96 * KIB)
        if following is not None and request.mime == "image/png":  # a PNG copy is tried as lossy WebP first, same size
            assert following == ImageRequest(request.width, request.height, "image/webp", 0.85)
        elif following is not None:
            assert (
                max(following.width, following.height) < max(request.width, request.height)
                and following.mime == request.mime
            )
            assert abs(following.width * height - following.height * width) <= max(width, height)
        request = following
    assert 1 <= len(made) <= MAX_ATTEMPTS
    assert first_request(ImageInfo("image/png", 300, 200, 10_000), 1024, 96 * KIB) is None  # fits: no copy
    assert first_request(ImageInfo("image/gif", 2000, 1000, 10_000), 1024, 96 * KIB) == ImageRequest(
        1024, 512, "image/png"
    )
    assert first_request(ImageInfo("image/jpeg", 2000, 1000, 10_000), 1024, 96 * KIB) == ImageRequest(
        1024, 512, "image/jpeg", 0.85
    )
