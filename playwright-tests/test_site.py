"""The built site in a real browser: the bridge starts, the kernel runs code, nothing leaves the site's origin."""

from __future__ import annotations

import pytest
from lite_site import (
    KERNEL_TIMEOUT_MS,
    PageLog,
    bridge_status,
    new_recorded_page,
    open_notebook,
)

NOTEBOOK = "jupyterlite-empty.ipynb"


@pytest.fixture(scope="module")
def kernel_run(browser, site_url):
    """Open a notebook with WebMCP on, wait for the bridge, run `print(21*2)` through the UI; record it all."""
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    status = open_notebook(page, site_url, NOTEBOOK)
    status_text = page.locator(".webmcp-bridge-status").text_content()
    page.locator(".jp-Notebook .jp-Cell .cm-content").first.click()
    page.keyboard.type("print(21*2)")
    page.keyboard.press("Shift+Enter")
    output = page.locator(".jp-Notebook .jp-OutputArea-output").first
    output.wait_for(timeout=KERNEL_TIMEOUT_MS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('42'))",
        timeout=KERNEL_TIMEOUT_MS,
    )
    result = {
        "status": status,
        "status_text": status_text,
        "output": output.text_content(),
        "final_status": bridge_status(page),
        "log": log,
    }
    yield result
    context.close()


def test_bridge_ready_and_kernel_runs_a_cell(kernel_run):
    """(a) With WebMCP the status reaches ready, and the Pyodide kernel runs print(21*2) -> 42."""
    status = kernel_run["status"]
    assert status["state"] == "ready", status
    assert kernel_run["status_text"].startswith("WebMCP: ready ("), kernel_run["status_text"]
    assert kernel_run["status_text"] == f"WebMCP: ready ({status['tools']} tools)"
    assert status["timings"]["pyodideReady"] > 0
    assert status["timings"]["bridgeReady"] >= status["timings"]["pyodideReady"]
    assert "42" in kernel_run["output"]


def test_every_request_is_same_origin(kernel_run, site_url):
    """(b) Every request of that run (page, kernel worker, main-thread Pyodide) went to the site itself."""
    log: PageLog = kernel_run["log"]
    assert log.foreign_requests(site_url, allow_content_links=False) == []
    # the record covers both runtimes: the kernel's wheels and the bridge's own wheel were fetched
    assert any("/static/pyodide/ipython-" in url for url in log.requests), "kernel wheel requests not seen"
    assert any("/extensions/webmcp-bridge/static/webmcp_bridge-" in url for url in log.requests)


def test_no_page_errors(kernel_run):
    """(c) No uncaught error in the page, and the loader logged no error."""
    log: PageLog = kernel_run["log"]
    assert log.own_page_errors() == []
    assert not [m for m in log.console_errors if "webmcp-bridge" in m], log.console_errors


def test_without_webmcp_the_status_is_unavailable(page_without_webmcp, page_without_webmcp_log, site_url):
    """(d) Without the WebMCP flag the site still works: a notebook opens and the bridge says unavailable."""
    page = page_without_webmcp
    status = open_notebook(page, site_url, "notebook-running-code.ipynb")
    assert page.evaluate("() => document.modelContext === undefined")
    assert status["state"] == "unavailable", status
    assert page.locator(".webmcp-bridge-status").text_content() == "WebMCP: unavailable"
    # the notebook's 28 cells render (JupyterLab attaches them progressively)
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell').length > 10", timeout=30_000)
    assert page_without_webmcp_log.own_page_errors() == []
    assert page_without_webmcp_log.foreign_requests(site_url, allow_content_links=False) == []


def test_a_loader_failure_shows_in_the_status_item(page, page_log, site_url):
    """If the bridge cannot load, JupyterLab still works and the status item says why; nothing is thrown."""
    page.context.route("**/extensions/webmcp-bridge/static/webmcp_bridge-*.whl", lambda route: route.abort())
    status = open_notebook(page, site_url, NOTEBOOK)
    assert status["state"] == "failed", status
    assert status["reason"]
    text = page.locator(".webmcp-bridge-status").text_content()
    assert text.startswith("WebMCP: failed (") and text.endswith(")"), text
    assert page.locator(".jp-Notebook .jp-Cell").count() >= 1
    # the tools registered early from tools.json answer with a structured error instead of hanging
    result = page.webmcp.call_tool("jupyter_get_context", {})
    assert result["isError"] is True and result["structuredContent"]["error"] == "INTERNAL_ERROR"
    assert "not available" in result["structuredContent"]["message"]
    assert page_log.own_page_errors() == []
