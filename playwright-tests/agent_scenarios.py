"""The core agent scenarios, written once and run in each install mode (a freshly built site, a host without
COOP/COEP, Notebook 7): tools register with their schemas; the agent reads cells, inserts, updates and deletes
with hashes, runs a cell and reads its output; a stale hash and bad input get structured errors and change
nothing; no request leaves the site's origin; no page error."""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, PageLog, wait_for_bridge
from test_tools import FEATURE_TOOLS, SITE_TOOLS, error, ok


def open_in(page: Page, site_url: str, app: str, name: str, url: str | None = None) -> dict:
    """Open notebook ``name`` in JupyterLite's ``app`` ("lab" or "notebooks"), or at ``url`` (a server's page);
    wait for a cell and the bridge; return the bridge status."""
    page.goto(url or f"{site_url}/{app}/index.html?path={quote(name)}")
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=KERNEL_TIMEOUT_MS)
    return wait_for_bridge(page)


def core_agent_scenario(page: Page, log: PageLog, site_url: str, app: str = "lab", name: str = "jupyterlite-empty.ipynb",
                        url: str | None = None) -> dict:
    """Run the core scenarios on notebook ``name`` (a one-cell notebook) as the agent; return the bridge status.
    ``url``: the page to open instead of JupyterLite's (a JupyterLab server's ``/lab/tree/<name>?token=…``)."""
    status = open_in(page, site_url, app, name, url)
    assert status["state"] == "ready", status
    tools = {t["name"]: t for t in page.webmcp.tools()}
    assert FEATURE_TOOLS <= set(tools) and set(tools) - FEATURE_TOOLS <= SITE_TOOLS, sorted(tools)  # the demo site adds its own
    assert all(t.get("inputSchema", {}).get("type") == "object" for t in tools.values())

    context = ok(page, "jupyter_get_context")
    assert context["notebook"]["path"] == name
    before = ok(page, "jupyter_get_cells")["cells"]
    first = before[0]
    inserted = ok(page, "jupyter_insert_cell", {"referenceCellId": first["id"], "position": "below", "cellType": "code",
                                                "source": "x = 6"})["cell"]
    updated = ok(page, "jupyter_update_cell", {"cellId": inserted["id"], "source": "x = 6\nprint(x * 7)",
                                               "expectedSourceHash": inserted["sourceHash"]})["cell"]
    page.wait_for_function("() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].some(c => c.textContent.includes('print(x * 7)'))")

    stale = error(page, "jupyter_update_cell", {"cellId": inserted["id"], "source": "lost", "expectedSourceHash": inserted["sourceHash"]})
    assert stale["error"] == "STALE_CELL"
    bad = error(page, "jupyter_update_cell", {"cellId": inserted["id"], "source": 5, "expectedSourceHash": updated["sourceHash"]})
    assert bad["error"] == "INVALID_ARGUMENT"
    unchanged = ok(page, "jupyter_get_cells", {"cellIds": [inserted["id"]]})["cells"][0]
    assert unchanged["source"] == "x = 6\nprint(x * 7)" and unchanged["sourceHash"] == updated["sourceHash"]

    run = ok(page, "jupyter_run_cells", {"cellIds": [inserted["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert run["status"] == "ok" and run["outputs"][0]["preview"] == "42\n", run
    page.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('42'))")
    output = ok(page, "jupyter_get_output", {"cellId": inserted["id"], "outputIndex": 0})
    assert "42" in str(output)

    ok(page, "jupyter_delete_cell", {"cellId": inserted["id"], "expectedSourceHash": updated["sourceHash"]})
    after = ok(page, "jupyter_get_cells")["cells"]
    assert [(c["id"], c["sourceHash"]) for c in after] == [(c["id"], c["sourceHash"]) for c in before]

    assert log.foreign_requests(site_url, allow_content_links=False) == []
    assert log.own_page_errors() == []
    return status
