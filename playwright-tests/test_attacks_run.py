"""Attacks through the kernel runs the agent starts, replayed in the real JupyterLab (issue 18, items 1, 2, 7).

The test is the agent (native WebMCP: ``page.webmcp`` and ``document.modelContext``) and the person
(``window.jupyterapp``, real key presses and clicks). Each test asserts what the person would see: the page
flag a hostile output tries to set stays unset, the run waits for the person's Accept with its code shown, the
page survives a flood of output and the agent's answer stays bounded.
"""

from __future__ import annotations

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_tools import ok

MODEL = "window.jupyterapp.shell.currentWidget.context.model"
PWN = "from IPython.display import HTML, display\ndisplay(HTML('<img class=\"pwn\" src=\"x\" onerror=\"window.__pwn=1\">'))"


def code_cell(cell_id: str, source: str, **metadata) -> dict:
    return {"cell_type": "code", "id": cell_id, "metadata": metadata, "source": source, "outputs": [], "execution_count": None}


def rendered_img(page: Page, index: int):
    """The <img> the HTML output of cell ``index`` rendered, waited for."""
    img = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea-output img.pwn")
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
    # the person's own run of the same cell keeps JupyterLab's behaviour: trusted, the handler runs
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").first.locator(".jp-InputArea").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("() => window.__pwn === 1", timeout=KERNEL_TIMEOUT_MS)
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is True
    assert not page_log.own_page_errors()
