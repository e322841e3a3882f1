"""Declared compatibility in the browser: the loader takes JupyterLab's packages from the page only in a version
within the range its package.json declares (copied into bridge.json's "shared"). Here bridge.json is served with
a range for @jupyterlab/notebook that no JupyterLab 4 meets, as a JupyterLab newer than the bridge would look:
the person sees why in the status bar, the notebook works on, nothing is thrown. (Every other browser test runs
with the real ranges, which the site's JupyterLab meets; tests/test_loader_share_scope.py covers the rule.)"""

from __future__ import annotations

from lite_site import open_notebook

NOTEBOOK = "jupyterlite-empty.ipynb"


def test_a_jupyterlab_out_of_range_shows_why_in_the_status_bar(page, page_log, site_url):
    def narrowed(route):
        response = route.fetch()
        manifest = response.json()
        manifest.setdefault("shared", {})["@jupyterlab/notebook"] = "^5.0.0"
        route.fulfill(response=response, json=manifest)

    page.context.route("**/extensions/jupyterlab-webmcp-bridge/static/bridge.json", narrowed)
    status = open_notebook(page, site_url, NOTEBOOK)
    assert status["state"] == "failed", status
    assert status["reason"].startswith("@jupyterlab/notebook ^5.0.0 is needed; this JupyterLab offers 4."), status
    text = page.locator(".webmcp-bridge-status").text_content()
    assert text.startswith("WebMCP: failed (@jupyterlab/notebook ^5.0.0 is needed; this JupyterLab offers 4."), text
    assert page.locator(".jp-Notebook .jp-Cell").count() >= 1
    assert not any(
        "/webmcp_bridge-" in url and url.endswith(".whl") for url in page_log.requests
    )  # Python never started
    assert page_log.own_page_errors() == []
