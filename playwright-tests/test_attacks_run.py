"""Attacks through the kernel runs the agent starts, replayed in the real JupyterLab.

The test is the agent (native WebMCP: ``page.webmcp`` and ``document.modelContext``) and the person
(``window.jupyterapp``, real key presses and clicks). Each test asserts what the person would see: the page
flag a hostile output tries to set stays unset, the run waits for the person's Accept with its code shown, the
page survives a flood of output and the agent's answer stays bounded.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from lite_site import KERNEL_TIMEOUT_MS, choose, open_notebook
from test_propose_browser import box_for, diff_of, finish_call, start_call
from test_safety import open_planted
from test_tools import call, ok

MODEL = "window.jupyterapp.shell.currentWidget.context.model"
PWN = 'from IPython.display import HTML, display\ndisplay(HTML(\'<img class="pwn" src="x" onerror="window.__pwn=1">\'))'


def code_cell(cell_id: str, source: str, **metadata) -> dict:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": metadata,
        "source": source,
        "outputs": [],
        "execution_count": None,
    }


def rendered_img(page: Page, index: int):
    """The <img> the HTML output of cell ``index`` rendered, waited for."""
    img = (
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        .nth(index)
        .locator(".jp-OutputArea-output img.pwn")
    )
    img.wait_for(state="attached", timeout=KERNEL_TIMEOUT_MS)
    return img


def test_html_output_of_an_agent_run_runs_no_script(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    ok(page, "jupyter_update_cell", {"cellId": only["id"], "source": PWN, "expectedSourceHash": only["sourceHash"]})
    run = ok(page, "jupyter_run_cells", {"cellIds": [only["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert run["status"] == "ok", run
    img = rendered_img(page, 0)
    # rendered as untrusted output is: the image is there, its handler was sanitized away, the page flag unset
    assert img.get_attribute("onerror") is None
    assert page.evaluate("() => window.__pwn") is None
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is False
    # the kernel is the agent's now: the person's own run of the same cell renders untrusted too (the kernel model,
    # test_attacks_kernel.py), until the kernel restarts
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").first.locator(".jp-InputArea").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(f"() => {MODEL}.cells.get(0).executionCount === 2", timeout=KERNEL_TIMEOUT_MS)
    rendered_img(page, 0)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwn") is None
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is False
    assert not page_log.own_page_errors()


HIDDEN_SOURCE = "hidden_token = 'CANARY-run-7f3a'\nraise ValueError('boom ' + hidden_token)"
NONE = {"webmcp_bridge": {"access": "none"}}


def plant_hidden(page: Page, site_url: str, path: str) -> None:
    open_planted(page, site_url, path, [code_cell("hid", HIDDEN_SOURCE, **NONE), code_cell("vis", "x = 1")])


def test_a_cell_the_agent_inserts_and_runs_next_to_a_hidden_cell_waits_for_accept_with_its_code(
    page, page_log, site_url
):
    plant_hidden(page, site_url, "attack-run-cells.ipynb")
    assert ok(page, "jupyter_get_context")["mode"] == "direct"
    probe = "import glob\nprint(glob.glob('**/*.ipynb', recursive=True))"
    inserted = ok(page, "jupyter_insert_cell", {"referenceCellId": "vis", "position": "below", "source": probe})["cell"]
    start_call(page, "run", "jupyter_run_cells", {"cellIds": [inserted["id"]]})
    box = box_for(page, tool="jupyter_run_cells")  # shown to the person, in Direct mode
    shown = "\n".join(text for _, text in diff_of(box))
    assert "import glob" in shown and "recursive=True" in shown
    assert page.evaluate(f"() => {MODEL}.cells.get(2).outputs.length") == 0  # nothing ran while it waits
    box.locator(".webmcp-bridge-proposal-deny").click()
    denied, _ = finish_call(page, "run")
    assert denied["status"] == "denied"
    assert page.evaluate(f"() => {MODEL}.cells.get(2).outputs.length") == 0
    # the person turns asking off for this notebook in the Access section: the same run goes ahead at once
    from test_panel import PANEL, open_panel, section

    open_panel(page)
    switch = section(page, "access").locator('select[data-action="run-asking"]')
    assert switch.input_value() == "ask"  # off by default
    choose(switch, "stop")
    expect(section(page, "activity")).to_contain_text("stopped asking")
    ran = ok(page, "jupyter_run_cells", {"cellIds": [inserted["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert ran["status"] == "ok" and page.locator(f"{PANEL}").count() == 1
    choose(switch, "ask")
    assert not page_log.own_page_errors()


def test_a_hidden_cells_traceback_is_not_readable_by_agent_code_after_accept(page, page_log, site_url):
    plant_hidden(page, site_url, "attack-traceback.ipynb")
    # the person runs the hidden cell: it raises, with its secret in the message and in a local
    page.evaluate("""async () => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.activeCellIndex = 0;
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }""")
    page.wait_for_function(f"() => {MODEL}.cells.get(0).outputs.length > 0", timeout=KERNEL_TIMEOUT_MS)
    code = (
        "import sys\nprint(repr(getattr(sys, 'last_value', None)), repr(getattr(sys, 'last_exc', None)))\n"
        "tb = getattr(sys, 'last_traceback', None)\nprint(tb and tb.tb_frame.f_locals.get('hidden_token'))"
    )
    start_call(page, "peek", "jupyter_run_code", {"code": code})
    box = box_for(page, tool="jupyter_run_code")
    assert "last_traceback" in "\n".join(text for _, text in diff_of(box))
    box.locator(".webmcp-bridge-proposal-accept").click()
    answer, _ = finish_call(page, "peek", timeout=KERNEL_TIMEOUT_MS)
    text = "".join(o.get("text", "") for o in answer["outputs"])
    assert answer["status"] == "ok", answer
    assert "CANARY-run-7f3a" not in text and "boom" not in text
    assert text.startswith("None None"), text
    assert not page_log.own_page_errors()


def test_run_code_printing_600_lines_of_a_megabyte_stays_bounded_and_the_page_survives(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    lines, size = 600, 1 << 20  # 629 MB of stdout: more than the longest string the page's JavaScript can hold
    payload, result = call(
        page,
        "jupyter_run_code",
        {"code": f"line = 'x' * {size}\nfor _ in range({lines}):\n    print(line)", "timeout": 600},
        timeout=900_000,
    )
    while payload.get("status") == "pending":
        payload, result = call(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, timeout=900_000)
    assert result["isError"] is False and payload["status"] == "ok", payload
    (stream,) = payload["outputs"]
    assert stream["bytes"] == lines * (size + 1)  # the whole output's size, though the page kept only its start
    assert stream["textTruncated"] is True and payload["truncated"] is True
    assert len(stream["text"]) <= 16 * 1024
    # the page is alive and the bridge still answers
    assert ok(page, "jupyter_run_code", {"code": "print(6 * 7)"})["outputs"][0]["text"] == "42\n"
    assert not page_log.own_page_errors()


def test_arguments_over_the_input_cap_are_refused_before_they_reach_python(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    crossings = "() => JSON.parse(window.webmcpBridge.crossings.loader()).result ?? 0"
    before = page.evaluate(crossings)
    refused, result = call(page, "jupyter_run_code", {"code": "#" + "x" * (2 << 20)})
    assert result["isError"] is True and refused["error"] == "TOO_LARGE" and refused["maxBytes"] == 1 << 20
    assert page.evaluate(crossings) == before  # no answer came from Python: the text never crossed into it
    assert ok(page, "jupyter_get_cells")["cells"]  # the bridge goes on serving
    assert page.evaluate(crossings) == before + 1
    assert not page_log.own_page_errors()
