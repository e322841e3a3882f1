"""Images an agent can use, end to end in the page: jupyter_get_output returns a copy the browser made (decoded,
resampled and encoded by createImageBitmap and OffscreenCanvas.convertToBlob), bounded in pixels and bytes, with
the original's size reported; the original on request; an SVG as its markup.

On real notebook figures: the IPython tour's 1199x784 PNG (lite/content), and copies of two notebooks of
tests/notebooks planted in the page's storage (IPython's rich-output tour: an SVG and a 640x480 JPEG; the
machine-learning book's 957x950 PNG of 112 KB). Every image block is read back (its real format and pixel size
from its own header). The page's long tasks during the image calls are printed (figures, not assertions).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from playwright.sync_api import Page

import png_codec
from lite_site import CONTENT, open_notebook
from test_tools import assert_clean, call, ok
from webmcp_bridge.core.images import image_size

TESTS_NOTEBOOKS = Path(__file__).resolve().parents[1] / "tests" / "notebooks"
PLANT = """async ({path, content}) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
}"""
#: long tasks, and the scripts of long animation frames (which say whose code ran: the source URL and function)
LONG_TASKS = """() => {
  window.__longtasks = [];
  window.__scripts = [];
  new PerformanceObserver(list => { for (const e of list.getEntries()) window.__longtasks.push([e.startTime,
    e.duration]); })
    .observe({type: 'longtask', buffered: false});
  new PerformanceObserver(list => {
    for (const frame of list.getEntries()) for (const s of frame.scripts || []) {
      const url = String(s.sourceURL || '').split('/').pop() || '(inline)';
      window.__scripts.push([s.startTime, s.duration,
        `${s.invoker || '?'} ${url} ${s.sourceFunctionName || ''}`.trim()]);
    }
  }).observe({type: 'long-animation-frame', buffered: false});
}"""


def stored(notebook: dict, cell: int, mime: str) -> bytes:
    data = notebook["cells"][cell]["outputs"][0]["data"][mime]
    return base64.b64decode("".join("".join(data).split()))


class ImageCalls:
    """jupyter_get_output calls timed in the page's clock, to find the long tasks that overlap them."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.windows: list[tuple[str, float, float]] = []
        page.evaluate(LONG_TASKS)

    def image(self, label: str, args: dict) -> tuple[dict, str, bytes]:
        """(payload, MIME type, decoded bytes) of a successful call's one image block."""
        start = self.page.evaluate("performance.now()")
        payload, result = call(self.page, "jupyter_get_output", args)
        self.windows.append((label, start, self.page.evaluate("performance.now()")))
        assert result["isError"] is False and len(result["content"]) == 2, payload
        block = result["content"][1]
        assert block["type"] == "image" and block["data"][:64] not in result["content"][0]["text"]
        data = base64.b64decode(block["data"], validate=True)
        assert payload["image"]["mimeType"] == block["mimeType"] and payload["image"]["bytes"] == len(data), payload
        return payload, block["mimeType"], data

    def text(self, label: str, args: dict) -> dict:
        """A text read, timed the same way: the baseline of what the page does during any call."""
        start = self.page.evaluate("performance.now()")
        payload = ok(self.page, "jupyter_get_output", args)
        self.windows.append((label, start, self.page.evaluate("performance.now()")))
        return payload

    def report(self) -> None:
        """Print, per call, its time, the page's long tasks meanwhile, and the longest scripts that ran in them (whose
        code: a busy machine makes JupyterLab's own rendering long too, so the scripts say what was the bridge's)."""
        self.page.wait_for_timeout(300)
        tasks = self.page.evaluate("window.__longtasks")
        scripts = self.page.evaluate("window.__scripts")
        for label, start, end in self.windows:
            overlapping = [round(d) for s, d in tasks if s < end and s + d > start]
            longest = sorted(((round(d), what) for s, d, what in scripts if s < end and s + d > start), reverse=True)[
                :4
            ]
            print(
                f"[images] {label}: {round(end - start)} ms; long tasks meanwhile: {overlapping or 'none'}; longest "
                f"scripts: {longest or 'none'}"
            )


def test_images_come_back_bounded_made_by_the_browser_and_whole_on_request(page, page_log, site_url):
    beyond_json = json.loads((CONTENT / "ipython-beyond-plain-python.ipynb").read_text(encoding="utf-8"))
    rich_json = json.loads((TESTS_NOTEBOOKS / "ipython-rich-output.ipynb").read_text(encoding="utf-8"))
    book_json = json.loads((TESTS_NOTEBOOKS / "mlbook-ch13-lightning.ipynb").read_text(encoding="utf-8"))
    open_notebook(page, site_url, "ipython-beyond-plain-python.ipynb")
    page.evaluate(PLANT, {"path": "rich-output.ipynb", "content": rich_json})
    page.evaluate(PLANT, {"path": "lightning.ipynb", "content": book_json})
    calls = ImageCalls(page)

    # the 1199x784 figure: a 1024-wide PNG copy by default, 300 wide when asked, the stored bytes on request
    figure = ok(page, "jupyter_get_cells", {"startIndex": 79, "endIndex": 80, "includeOutputs": True})["cells"][0]
    original = stored(beyond_json, 79, "image/png")
    args = {"cellId": figure["id"], "outputIndex": 0}
    payload, mime, data = calls.image("1199x784 PNG, default", args)
    assert payload["original"] == {"mimeType": "image/png", "width": 1199, "height": 784, "bytes": len(original)}
    # a PNG copy, or lossy WebP when the browser's PNG of the resampled figure is over the bound
    assert mime in ("image/png", "image/webp") and image_size(mime, data) == (1024, 670), (
        mime,
        image_size(mime, data),
        len(data),
    )
    assert payload["image"]["downscaled"] is True and len(data) <= 96 * 1024
    assert mime != "image/png" or png_codec.decode(data) is not None  # a whole PNG, not just a header
    payload, mime, data = calls.image("1199x784 PNG, maxSide 300", {**args, "maxSide": 300})
    assert mime == "image/png" and image_size(mime, data) == (300, 196) == (
        payload["image"]["width"],
        payload["image"]["height"],
    )
    payload, mime, data = calls.image("1199x784 PNG, original", {**args, "original": True})
    assert data == original and payload["image"]["downscaled"] is False
    assert calls.text("the same figure's text/plain (baseline)", {**args, "mimeType": "text/plain"})["text"].startswith(
        "<"
    )

    # a 957x950 PNG of 112 KB: within maxSide but over maxImageBytes, so a smaller copy
    ok(page, "jupyter_open_notebook", {"path": "lightning.ipynb"})
    cell = ok(page, "jupyter_get_cells", {"startIndex": 25, "endIndex": 26})["cells"][0]
    payload, mime, data = calls.image("957x950 PNG of 112 KB, default", {"cellId": cell["id"], "outputIndex": 0})
    assert payload["original"]["bytes"] == len(stored(book_json, 25, "image/png")) > 96 * 1024
    width, height = image_size(mime, data) or (0, 0)
    assert (
        mime in ("image/png", "image/webp") and len(data) <= 96 * 1024 and width <= 957 and abs(width - height) <= 10
    ), (mime, width, height, len(data))

    # the rich-output tour: the SVG's markup (not "<IPython.core.display.SVG object>"), the JPEG as JPEG copies
    ok(page, "jupyter_open_notebook", {"path": "rich-output.ipynb"})
    cells = ok(page, "jupyter_get_cells", {"startIndex": 18, "endIndex": 24, "includeSource": False})["cells"]
    svg = ok(page, "jupyter_get_output", {"cellId": cells[0]["id"], "outputIndex": 0})
    assert svg["mimeType"] == "image/svg+xml" and svg["text"] == "".join(
        rich_json["cells"][18]["outputs"][0]["data"]["image/svg+xml"]
    ), svg.get("text", svg)[:200]
    jpeg = {"cellId": cells[5]["id"], "outputIndex": 0}
    payload, mime, data = calls.image("640x480 JPEG, maxSide 320", {**jpeg, "maxSide": 320})
    assert payload["original"] == {
        "mimeType": "image/jpeg",
        "width": 640,
        "height": 480,
        "bytes": len(stored(rich_json, 23, "image/jpeg")),
    }
    assert mime == "image/jpeg" and image_size(mime, data) == (320, 240), payload
    payload, mime, data = calls.image("640x480 JPEG, maxImageBytes 8 KiB", {**jpeg, "maxImageBytes": 8192})
    assert mime == "image/jpeg" and len(data) <= 8192 and (image_size(mime, data) or (999, 0))[0] < 640, payload
    calls.report()
    assert_clean(page_log, site_url)
