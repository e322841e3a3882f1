"""Pictures of rendered outputs, end to end in the page: jupyter_get_output returns an image of an output as the
person sees it (the output's own rendering copied with its computed styles and drawn by the browser), bounded like
an image's copy, with the MIME type it was rendered from and its size on screen.

Each picture is compared with what the person sees: Playwright's screenshot of the same output node in the page
(the pixels on screen). On real inputs: a pandas table of ``handson-ml2-tools-pandas`` (lite/content), and an HTML
bar chart the agent's own run displays in a copy of the empty notebook (untrusted, so sanitized: its script never
runs, in the page or in the picture); on the chart site (the demo site with Plotly's and Bokeh's renderers beside the
bridge), a saved Plotly figure and a saved Bokeh plot (made by real Bokeh under CPython as the tests start, drawn by
BokehJS once the person trusts the notebook); in JupyterLab servers, the same kinds with a real kernel.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from pathlib import Path

import pytest
from playwright.sync_api import Page

import png_codec
from agent_scenarios import open_in
from jupyter_servers import SLOW_MS, jupyter_server
from lite_site import CONTENT, KERNEL_TIMEOUT_MS, PageLog, new_recorded_page, open_notebook, wait_for_bridge
from sitebuild.package import build_wheel
from sitebuild.serve import make_server
from sitebuild.site import build as build_site
from sitebuild.util import CACHE
from test_images_browser import ImageCalls
from test_lab_server import assert_clean as assert_clean_on_server
from test_lab_server import every_toolset_on
from test_tools import assert_clean, call, ok
from webmcp_bridge.core.images import image_size

#: an HTML chart: bars drawn by styled elements, and a script that would add a bar (it must not run: the output
#: of the agent's run is untrusted)
CHART = """from IPython.display import HTML
bars = "".join(
    f'<div style="display:flex;align-items:center;margin:4px 0"><span style="width:60px">{name}</span>'
    f'<div style="width:{3 * value}px;height:18px;background-color:#1f77b4"></div></div>'
    for name, value in [("apples", 90), ("pears", 30), ("plums", 60)]
)
script = '<script>document.currentScript.parentNode.append("ran")</script>'
HTML('<div class="chart" style="padding:8px">' + bars + script + '</div>')
"""
#: a Bokeh bar chart as a person shows one in JupyterLab: BokehJS inline (INLINE: nothing from a CDN), then the plot
#: (an HTML stub, then an output of application/javascript and application/vnd.bokehjs_exec.v0+json)
BOKEH = """from bokeh.io import output_notebook, show
from bokeh.plotting import figure
from bokeh.resources import INLINE

output_notebook(INLINE, hide_banner=True)
fruit = ["apples", "pears", "plums"]
p = figure(x_range=fruit, title="Fruit sold", width=500, height=300, toolbar_location=None)
p.vbar(x=fruit, top=[3, 1, 2], width=0.8)
show(p)
"""
OUTPUT_NODE = ".jp-OutputArea-output"
#: the cells of the notebook in front (a notebook open in another tab stays in the page, hidden)
CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
TESTS_NOTEBOOKS = Path(__file__).resolve().parents[1] / "tests" / "notebooks"
PLOTLY = "application/vnd.plotly.v1+json"
BOKEH_LOAD = "application/vnd.bokehjs_load.v0+json"
BOKEH_EXEC = "application/vnd.bokehjs_exec.v0+json"
LABEXTENSIONS = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
#: Plotly's JupyterLab renderer as the plotly wheel (the dev extra) installs it
PLOTLY_EXTENSION = LABEXTENSIONS / "jupyterlab-plotly"
#: Bokeh's JupyterLab renderer as the jupyter_bokeh wheel (the dev extra) installs it, and the widget manager its
#: plugin requires (jupyterlab_widgets, which jupyter_bokeh brings through ipywidgets): what a person installing
#: jupyter_bokeh gets
BOKEH_EXTENSION = LABEXTENSIONS / "@bokeh" / "jupyter_bokeh"
WIDGETS_EXTENSION = LABEXTENSIONS / "@jupyter-widgets" / "jupyterlab-manager"
PLANT = """async ({path, content}) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
}"""


@pytest.fixture(scope="module")
def chart_site_url():
    """The demo site with Plotly's and Bokeh's renderers beside the bridge (its own output folder and build stamp),
    served on a free 127.0.0.1 port."""
    assert (PLOTLY_EXTENSION / "package.json").is_file(), "plotly (the dev extra) installs jupyterlab-plotly"
    assert (BOKEH_EXTENSION / "package.json").is_file(), "jupyter_bokeh (the dev extra) installs its renderer"
    assert (WIDGETS_EXTENSION / "package.json").is_file(), "jupyter_bokeh (the dev extra) brings jupyterlab_widgets"
    renderers = (PLOTLY_EXTENSION, BOKEH_EXTENSION, WIDGETS_EXTENSION)
    folder = build_site(output=CACHE / "site-charts", extensions=(build_wheel(), *renderers))
    server = make_server(folder, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, name="chart-site", daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def rgba(data: bytes) -> tuple[int, int, list[bytearray]]:
    """A PNG's RGBA rows (the browser's PNG copies and screenshots are read with the project's codec)."""
    decoded = png_codec.decode(data)
    assert decoded is not None, "a PNG the small codec reads"
    return decoded


def difference(picture: bytes, screenshot: bytes) -> float:
    """The mean absolute difference (0..255) between a picture and a screenshot of the same node, alpha ignored, over
    the pixels both have (the screenshot's clip snaps a fractional size to whole pixels: one pixel less at most)."""
    w1, h1, a = rgba(picture)
    w2, h2, b = rgba(screenshot)
    assert abs(w1 - w2) <= 1 and abs(h1 - h2) <= 1, ((w1, h1), (w2, h2))
    width, height = min(w1, w2), min(h1, h2)
    total = count = 0
    for row_a, row_b in zip(a[:height], b[:height], strict=True):
        for i in range(0, width * 4, 4):
            total += abs(row_a[i] - row_b[i]) + abs(row_a[i + 1] - row_b[i + 1]) + abs(row_a[i + 2] - row_b[i + 2])
            count += 3
    return total / count


def dark_share(data: bytes) -> float:
    """The share of pixels that are not near-white (how much the picture draws)."""
    _, _, rows = rgba(data)
    dark = total = 0
    for row in rows:
        for i in range(0, len(row), 4):
            total += 1
            dark += min(row[i], row[i + 1], row[i + 2]) < 200
    return dark / total


def rendered(page: Page, args: dict) -> tuple[dict, bytes]:
    """(payload, PNG bytes) of a successful picture."""
    payload, result = call(page, "jupyter_get_output", args)
    assert result["isError"] is False and len(result["content"]) == 2, payload
    block = result["content"][1]
    assert block["type"] == "image" and block["mimeType"] == "image/png", payload
    data = base64.b64decode(block["data"], validate=True)
    assert payload["rendered"] is True and payload["image"]["bytes"] == len(data)
    return payload, data


def seen(page: Page, cell_index: int, output_index: int = 0) -> tuple[dict, bytes]:
    """The output node's size on screen ({width, height}, CSS pixels) and the person's view of it (a screenshot),
    once it has settled: two screenshots 250 ms apart the same (a renderer such as BokehJS paints its canvas a while
    after laying the figure out), at most 40 tries; the last one otherwise."""
    node = page.locator(CELLS).nth(cell_index).locator(OUTPUT_NODE).nth(output_index)
    node.scroll_into_view_if_needed()
    box = node.evaluate("n => { const r = n.getBoundingClientRect(); return [r.width, r.height].map(Math.round); }")
    shot = node.screenshot(animations="disabled", caret="hide")
    for _ in range(40):
        page.wait_for_timeout(250)
        again = node.screenshot(animations="disabled", caret="hide")
        if again == shot:
            break
        shot = again
    return {"width": box[0], "height": box[1]}, shot


def test_an_html_table_comes_back_as_a_picture_of_what_the_person_sees(page, page_log, site_url, tmp_path: Path):
    open_notebook(page, site_url, "handson-ml2-tools-pandas.ipynb")
    table = ok(page, "jupyter_get_cells", {"startIndex": 101, "endIndex": 102, "includeOutputs": True})["cells"][0]
    assert table["outputs"][0]["mimeType"] == "text/html"
    page.evaluate("i => window.jupyterapp.shell.currentWidget.content.scrollToItem(i)", 101)
    box, screenshot = seen(page, 101)
    payload, data = rendered(page, {"cellId": table["id"], "outputIndex": 0, "render": True})
    assert payload["mimeType"] == "text/html" and payload["original"]["mimeType"] == "text/html"
    width, height = payload["original"]["width"], payload["original"]["height"]
    assert (width, height) == (box["width"], box["height"]), (payload, box)
    assert image_size("image/png", data) == (width, height) and payload["image"]["downscaled"] is False
    (tmp_path / "table.png").write_bytes(data)  # kept for a look when the comparison fails
    (tmp_path / "table-seen.png").write_bytes(screenshot)
    assert dark_share(data) > 0.02  # the table's text and rules, not a blank picture
    off = difference(data, screenshot)
    print(f"[rendered] table {width}x{height}: mean difference from the screenshot {off:.1f} of 255")
    assert off < 8  # the same pixels, within anti-aliasing

    # bounded like any image: a smaller copy on request, the size on screen still reported
    payload, data = rendered(page, {"cellId": table["id"], "outputIndex": 0, "render": True, "maxSide": 400})
    assert image_size("image/png", data) == (400, round(height * 400 / width)) and payload["image"]["downscaled"]
    assert (payload["original"]["width"], payload["original"]["height"]) == (width, height)
    assert_clean(page_log, site_url)


def test_an_html_chart_of_the_agents_run_is_pictured_sanitized_as_the_person_sees_it(
    page, page_log, site_url, tmp_path: Path
):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    cell = ok(page, "jupyter_get_cells")["cells"][0]
    ok(page, "jupyter_update_cell", {"cellId": cell["id"], "source": CHART, "expectedSourceHash": cell["sourceHash"]})
    run = ok(page, "jupyter_run_cells", {"cellIds": [cell["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert run["status"] == "ok" and run["outputs"][0]["mimeType"] == "text/html", run
    page.locator(CELLS).first.locator(".chart").wait_for()
    assert "ran" not in page.locator(CELLS).first.locator(OUTPUT_NODE).inner_text()  # untrusted
    default = ok(page, "jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0})
    assert default["mimeType"] == "text/plain" and "rendered" not in default  # HTML is read as text unless asked
    box, screenshot = seen(page, 0)
    payload, data = rendered(page, {"cellId": cell["id"], "outputIndex": 0, "render": True})
    assert payload["mimeType"] == "text/html" and (payload["original"]["width"], payload["original"]["height"]) == (
        box["width"],
        box["height"],
    )
    (tmp_path / "chart.png").write_bytes(data)
    (tmp_path / "chart-seen.png").write_bytes(screenshot)
    off = difference(data, screenshot)
    print(f"[rendered] HTML chart {box['width']}x{box['height']}: mean difference from the screenshot {off:.1f} of 255")
    assert off < 8 and dark_share(data) > 0.01  # the bars, as on screen
    assert "ran" not in page.locator(CELLS).first.locator(OUTPUT_NODE).inner_text()
    assert_clean(page_log, site_url)


def test_a_plotly_figure_comes_back_as_a_picture_of_what_its_renderer_draws(page, page_log, chart_site_url, tmp_path):
    open_notebook(page, chart_site_url, "jupyterlite-empty.ipynb")
    content = json.loads((TESTS_NOTEBOOKS / "plotly-fruit.ipynb").read_text(encoding="utf-8"))
    page.evaluate(PLANT, {"path": "plotly-fruit.ipynb", "content": content})
    ok(page, "jupyter_open_notebook", {"path": "plotly-fruit.ipynb"})
    wait_for_bridge(page)
    page.locator(CELLS).nth(1).locator(".js-plotly-plot .main-svg").first.wait_for()
    cell = ok(page, "jupyter_get_cells", {"includeOutputs": True})["cells"][1]
    assert cell["outputs"][0]["mimeType"] == PLOTLY
    box, screenshot = seen(page, 1)
    payload, data = rendered(page, {"uri": cell["outputs"][0]["uri"]})  # the default for a chart only a renderer draws
    assert payload["mimeType"] == PLOTLY and payload["original"] == {"mimeType": PLOTLY, **box}
    assert image_size("image/png", data) == (box["width"], box["height"])
    calls = ImageCalls(page)  # the page's long tasks while pictures are made (printed: figures, not assertions)
    calls.image("Plotly 848x400, default", {"uri": cell["outputs"][0]["uri"]})
    calls.image("Plotly 848x400, maxSide 300", {"uri": cell["outputs"][0]["uri"], "maxSide": 300})
    calls.report()
    (tmp_path / "plotly.png").write_bytes(data)
    (tmp_path / "plotly-seen.png").write_bytes(screenshot)
    off = difference(data, screenshot)
    print(f"[rendered] Plotly {box['width']}x{box['height']}: mean difference from the screenshot {off:.1f} of 255")
    assert off < 8 and dark_share(data) > 0.02  # the bars, axes and title, as on screen
    stored = ok(page, "jupyter_get_output", {"uri": cell["outputs"][0]["uri"], "render": False})
    assert stored["mimeType"] == PLOTLY and '"type":"bar"' in stored["text"].replace(" ", "")
    assert_clean(page_log, chart_site_url)


@pytest.fixture(scope="module")
def bokeh_notebook(tmp_path_factory) -> dict:
    """The notebook a person saves after showing a Bokeh plot: ``BOKEH`` run by real Bokeh under CPython (a kernel of
    this environment, through nbclient, as ``jupyter nbconvert --execute`` runs it) with its outputs kept: BokehJS
    inline (application/vnd.bokehjs_load.v0+json), the plot's HTML stub, then its script
    (application/vnd.bokehjs_exec.v0+json)."""
    import nbformat
    from nbclient import NotebookClient

    work = tmp_path_factory.mktemp("bokeh-notebook")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BOKEH)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("IPYTHONDIR", str(work / "ipython"))  # nothing of the machine's IPython profile
        env.setenv("JUPYTER_DATA_DIR", str(work / "jupyter"))  # nor a user's kernelspec: this environment's python3
        client = NotebookClient(
            notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}
        )
        client.execute()
    nbformat.validate(notebook)
    outputs = notebook.cells[0].outputs
    assert [sorted(o.get("data", {})) for o in outputs] == [
        ["application/javascript", BOKEH_LOAD],
        ["text/html"],
        ["application/javascript", BOKEH_EXEC],
    ], outputs
    assert "data-root-id" in outputs[1]["data"]["text/html"]
    return json.loads(json.dumps(notebook))  # as JupyterLab's model saves it: each text one string, not split in lines


def trust_as_the_person(page: Page) -> None:
    """JupyterLab's own Trust command on the notebook in front, given as a person gives it: the command palette
    (Ctrl+Shift+C), "Trust Notebook" typed and its entry clicked, then the dialog's Trust button (real keys and clicks:
    the page sees the person's input)."""
    page.locator(CELLS).first.click()  # the notebook in front has the focus, as after a person's click in it
    page.keyboard.press("Control+Shift+C")
    page.locator(".lm-CommandPalette-input").wait_for()
    page.keyboard.type("Trust Notebook")
    page.locator(".lm-CommandPalette-item[data-command='notebook:trust']", has_text="Trust Notebook").click()
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text("Trust this notebook?").wait_for()
    dialog.locator("button.jp-mod-accept", has_text="Trust").click()
    dialog.wait_for(state="detached")


def test_a_saved_bokeh_plot_the_person_trusts_is_pictured_as_bokehjs_draws_it(
    page, page_log, chart_site_url, bokeh_notebook, tmp_path: Path
):
    """A saved notebook with a Bokeh plot on the JupyterLite site: untrusted as it opens (BokehJS is a script: nothing
    drawn), drawn once the person trusts it with JupyterLab's Trust command, and then pictured as the person sees it:
    the HTML stub's output is the plot (BokehJS's canvases in shadow roots), compared with a screenshot of it."""
    open_notebook(page, chart_site_url, "jupyterlite-empty.ipynb")
    # the file says its cell is trusted, as any file can: the bridge believes only the person's Trust command
    content = json.loads(json.dumps(bokeh_notebook))
    content["cells"][0]["metadata"]["trusted"] = True
    page.evaluate(PLANT, {"path": "bokeh-fruit.ipynb", "content": content})
    ok(page, "jupyter_open_notebook", {"path": "bokeh-fruit.ipynb"})
    wait_for_bridge(page)
    cells = page.locator(CELLS)
    # untrusted, only the stub shows (sanitized HTML: an empty div); BokehJS's outputs are scripts, shown by nothing
    cells.first.locator(f"{OUTPUT_NODE}[data-mime-type='text/html']").wait_for(state="attached")
    assert cells.first.locator(OUTPUT_NODE).count() == 1
    drawn = cells.first.locator(f"{OUTPUT_NODE} .bk-Figure, {OUTPUT_NODE} .bk-Canvas")
    assert drawn.count() == 0  # a saved script output is untrusted: BokehJS neither loads nor draws
    cell = ok(page, "jupyter_get_cells", {"includeOutputs": True})["cells"][0]
    stub = next(o for o in cell["outputs"] if "data-root-id" in o.get("preview", ""))
    script = next(o for o in cell["outputs"] if BOKEH_EXEC in o.get("mimeTypes", []))
    # a round trip to the worker later, still nothing of BokehJS in the page
    assert drawn.count() == 0 and page.evaluate("() => typeof window.Bokeh") == "undefined"

    trust_as_the_person(page)
    drawn.first.wait_for(timeout=KERNEL_TIMEOUT_MS)
    nothing = ok(page, "jupyter_get_output", {"uri": script["uri"]})  # the default for Bokeh's type: a picture
    assert nothing["rendered"] is True and nothing["empty"] is True and "image" not in nothing, nothing
    box, screenshot = seen(page, 0, stub["index"])
    payload, data = rendered(page, {"uri": stub["uri"], "render": True})
    assert payload["mimeType"] == "text/html" and payload["original"] == {"mimeType": "text/html", **box}, payload
    width, height = box["width"], box["height"]
    assert image_size("image/png", data) == (width, height) and payload["image"]["downscaled"] is False
    (tmp_path / "bokeh-lite.png").write_bytes(data)
    (tmp_path / "bokeh-lite-seen.png").write_bytes(screenshot)
    off = difference(data, screenshot)
    print(f"[rendered] Lite Bokeh {width}x{height}: mean difference from the screenshot {off:.1f} of 255")
    assert off < 8 and dark_share(data) > 0.02  # the bars, axes and title drawn on BokehJS's canvas

    # bounded like any image: a smaller copy on request, the size on screen still reported
    payload, data = rendered(page, {"uri": stub["uri"], "render": True, "maxSide": 300})
    assert image_size("image/png", data) == (300, round(height * 300 / width)) and payload["image"]["downscaled"]
    assert (payload["original"]["width"], payload["original"]["height"]) == (width, height)
    assert_clean(page_log, chart_site_url)  # nothing from a CDN: BokehJS came inline, its renderer from the site


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """One `jupyter lab` (the wheel installed as a user installs it, an ipykernel kernel) whose root holds the pandas
    notebook and an empty notebook for the agent's chart."""
    with jupyter_server("lab", tmp_path_factory.mktemp("rendered-lab")) as server:
        for name in ("handson-ml2-tools-pandas.ipynb", "jupyterlite-empty.ipynb"):
            (server.root / name).write_bytes((CONTENT / name).read_bytes())
        yield server


def test_a_table_and_an_html_chart_are_pictured_as_the_person_sees_them_in_a_jupyterlab_server(
    browser, lab_server, tmp_path: Path
):
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    try:
        name = "handson-ml2-tools-pandas.ipynb"
        assert open_in(page, lab_server.base, "lab", name, lab_server.page(name))["state"] == "ready"
        every_toolset_on(page)
        table = ok(page, "jupyter_get_cells", {"startIndex": 101, "endIndex": 102, "includeOutputs": True})["cells"][0]
        page.evaluate("i => window.jupyterapp.shell.currentWidget.content.scrollToItem(i)", 101)
        box, screenshot = seen(page, 101)
        payload, data = rendered(page, {"cellId": table["id"], "outputIndex": 0, "render": True})
        assert payload["mimeType"] == "text/html" and (payload["original"]["width"], payload["original"]["height"]) == (
            box["width"],
            box["height"],
        )
        (tmp_path / "table.png").write_bytes(data)
        (tmp_path / "table-seen.png").write_bytes(screenshot)
        off = difference(data, screenshot)
        print(f"[rendered] server table {box['width']}x{box['height']}: mean difference {off:.1f} of 255")
        assert off < 8 and dark_share(data) > 0.02

        name = "jupyterlite-empty.ipynb"
        assert open_in(page, lab_server.base, "lab", name, lab_server.page(name))["state"] == "ready"
        every_toolset_on(page)
        cell = ok(page, "jupyter_get_cells")["cells"][0]
        ok(
            page,
            "jupyter_update_cell",
            {"cellId": cell["id"], "source": CHART, "expectedSourceHash": cell["sourceHash"]},
        )
        run = ok(page, "jupyter_run_cells", {"cellIds": [cell["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
        assert run["status"] == "ok" and run["outputs"][0]["mimeType"] == "text/html", run
        page.locator(CELLS).first.locator(".chart").wait_for()
        box, screenshot = seen(page, 0)
        payload, data = rendered(page, {"cellId": cell["id"], "outputIndex": 0, "render": True})
        assert payload["original"] == {"mimeType": "text/html", **box}
        (tmp_path / "chart.png").write_bytes(data)
        (tmp_path / "chart-seen.png").write_bytes(screenshot)
        off = difference(data, screenshot)
        print(f"[rendered] server HTML chart {box['width']}x{box['height']}: mean difference {off:.1f} of 255")
        assert off < 8 and dark_share(data) > 0.01
        assert "ran" not in page.locator(CELLS).first.locator(OUTPUT_NODE).inner_text()  # untrusted: no script ran
        assert_clean_on_server(log, lab_server)
    finally:
        context.close()


@pytest.fixture(scope="module")
def charts_server(tmp_path_factory):
    """One `jupyter lab` with Bokeh and its renderer (jupyter_bokeh) and Plotly (with its renderer) installed beside
    the wheel; its root holds a notebook whose one cell shows a Bokeh plot, and the saved Plotly figure."""
    with jupyter_server("lab", tmp_path_factory.mktemp("charts-lab"), charts=True) as server:
        notebook = json.loads((CONTENT / "jupyterlite-empty.ipynb").read_text(encoding="utf-8"))
        notebook["cells"][0]["source"] = BOKEH
        notebook["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        (server.root / "bokeh.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        (server.root / "plotly-fruit.ipynb").write_bytes((TESTS_NOTEBOOKS / "plotly-fruit.ipynb").read_bytes())
        yield server


def test_a_bokeh_plot_the_person_shows_is_pictured_as_drawn(browser, charts_server, tmp_path: Path):
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    try:
        assert open_in(page, charts_server.base, "lab", "bokeh.ipynb", charts_server.page("bokeh.ipynb"))["state"] == (
            "ready"
        )
        # the person runs the cell (their run is trusted: BokehJS loads and draws)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.locator(CELLS).first.locator(f"{OUTPUT_NODE} .bk-Figure, {OUTPUT_NODE} .bk-Canvas").first.wait_for(
            timeout=KERNEL_TIMEOUT_MS
        )
        cell = ok(page, "jupyter_get_cells", {"includeOutputs": True})["cells"][0]
        # BokehJS draws the plot into the HTML stub that show() displays first (a div with data-root-id); the output
        # of application/vnd.bokehjs_exec.v0+json after it only runs the script, and shows nothing itself
        stub = next(o for o in cell["outputs"] if "data-root-id" in o.get("preview", ""))
        script = next(o for o in cell["outputs"] if BOKEH_EXEC in o.get("mimeTypes", []))
        nothing = ok(page, "jupyter_get_output", {"uri": script["uri"]})  # the default for Bokeh's type: a picture
        assert nothing["rendered"] is True and nothing["empty"] is True and "image" not in nothing, nothing
        box, screenshot = seen(page, 0, stub["index"])
        payload, data = rendered(page, {"uri": stub["uri"], "render": True})
        assert payload["mimeType"] == "text/html", payload
        assert (payload["original"]["width"], payload["original"]["height"]) == (box["width"], box["height"])
        (tmp_path / "bokeh.png").write_bytes(data)
        (tmp_path / "bokeh-seen.png").write_bytes(screenshot)
        off = difference(data, screenshot)
        print(f"[rendered] Bokeh {box['width']}x{box['height']}: mean difference {off:.1f} of 255")
        assert off < 8 and dark_share(data) > 0.02  # the bars, axes and title drawn on BokehJS's canvas
        assert log.foreign_requests(charts_server.base) == [] and log.own_page_errors() == []
    finally:
        context.close()


def test_a_plotly_figure_is_pictured_as_its_renderer_draws_it_in_a_jupyterlab_server(
    browser, charts_server, tmp_path: Path
):
    """The saved Plotly figure opened in a JupyterLab server with Plotly's renderer installed (as a user installs
    plotly): the default read of its output is a picture of what the renderer draws, like the screenshot of it."""
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    try:
        name = "plotly-fruit.ipynb"
        assert open_in(page, charts_server.base, "lab", name, charts_server.page(name))["state"] == "ready"
        page.locator(CELLS).nth(1).locator(".js-plotly-plot .main-svg").first.wait_for()
        cell = ok(page, "jupyter_get_cells", {"includeOutputs": True})["cells"][1]
        assert cell["outputs"][0]["mimeType"] == PLOTLY
        box, screenshot = seen(page, 1)
        payload, data = rendered(page, {"uri": cell["outputs"][0]["uri"]})
        assert payload["mimeType"] == PLOTLY and payload["original"] == {"mimeType": PLOTLY, **box}
        (tmp_path / "plotly-server.png").write_bytes(data)
        (tmp_path / "plotly-server-seen.png").write_bytes(screenshot)
        off = difference(data, screenshot)
        print(f"[rendered] server Plotly {box['width']}x{box['height']}: mean difference {off:.1f} of 255")
        assert off < 8 and dark_share(data) > 0.02  # the bars, axes and title, as on screen
        assert log.foreign_requests(charts_server.base) == [] and log.own_page_errors() == []
    finally:
        context.close()
