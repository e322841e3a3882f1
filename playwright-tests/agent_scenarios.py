"""The core agent scenarios, written once and run in each install mode (a freshly built site, a host without
COOP/COEP, Notebook 7, a JupyterLab server, the MCP-B runtime): the default page registers the core toolsets
(at most 20 tools) with their schemas; the agent reads cells, inserts, updates and deletes with hashes, runs a
cell and reads its output; a stale hash and bad input get structured errors and change nothing; the discovery
tool brings every other toolset (the page's toolchange fires); no request leaves the site's origin; no page
error."""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import Page

from lite_site import BRIDGE_TIMEOUT_MS, KERNEL_TIMEOUT_MS, PageLog, bridge_status, wait_for_bridge
from test_tools import DEFAULT_TOOLS, FEATURE_TOOLS, SITE_TOOLS, cell_text, error, ok


def open_in(
    page: Page, site_url: str, app: str, name: str, url: str | None = None, toolsets: str | None = None
) -> dict:
    """Open notebook ``name`` in JupyterLite's ``app`` ("lab" or "notebooks"), or at ``url`` (a server's page),
    with ``?toolsets=`` (None: the page's default toolsets); wait for a cell and the bridge; return the status."""
    query = f"path={quote(name)}" + ("" if toolsets is None else f"&toolsets={quote(toolsets)}")
    page.goto(url or f"{site_url}/{app}/index.html?{query}", timeout=BRIDGE_TIMEOUT_MS)
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=KERNEL_TIMEOUT_MS)
    return wait_for_bridge(page)


def type_as_person(page: Page, index: int, cell_id: str, text: str) -> str:
    """Click into the editor of cell ``index`` (id ``cell_id``), go to the end of its text and type ``text`` with the
    keyboard; wait until the notebook's model has it; return the cell's whole new source."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)
    source = ""
    for _ in range(100):
        source = ok(page, "jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]["source"]
        if source.endswith(text):
            return source
        page.wait_for_timeout(100)
    raise AssertionError(f"the typed text never reached the notebook's model: {source!r}")


def core_agent_scenario(
    page: Page,
    log: PageLog,
    site_url: str,
    app: str = "lab",
    name: str = "jupyterlite-empty.ipynb",
    url: str | None = None,
) -> dict:
    """Run the core scenarios on notebook ``name`` (a one-cell notebook, opened with the page's default toolsets)
    as the agent; return the bridge status at the end (every toolset on). ``url``: the page to open instead of
    JupyterLite's (a JupyterLab server's ``/lab/tree/<name>?token=…``)."""
    status = open_in(page, site_url, app, name, url)
    assert status["state"] == "ready" and status["tools"] == len(DEFAULT_TOOLS) <= 20, status
    tools = {t["name"]: t for t in page.webmcp.tools()}
    assert set(tools) == DEFAULT_TOOLS  # a site's own toolsets (the demo's course) are not among the default ones
    assert all(t.get("inputSchema", {}).get("type") == "object" for t in tools.values())

    context = ok(page, "jupyter_get_context")
    assert context["notebook"]["path"] == name
    before = ok(page, "jupyter_get_cells")["cells"]
    first = before[0]
    inserted = ok(
        page,
        "jupyter_insert_cell",
        {"referenceCellId": first["id"], "position": "below", "cellType": "code", "source": "x = 6"},
    )["cell"]
    updated = ok(
        page,
        "jupyter_update_cell",
        {"cellId": inserted["id"], "source": "x = 6\nprint(x * 7)", "expectedSourceHash": inserted["sourceHash"]},
    )["cell"]
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].some(c => c.textContent.includes('print(x * "
        "7)'))"
    )

    # the person types in that cell (the real keyboard, in its editor) between the agent's read and its write
    typed = type_as_person(page, inserted["index"], inserted["id"], "  # the person's note")
    stale = error(
        page,
        "jupyter_update_cell",
        {"cellId": inserted["id"], "source": "lost", "expectedSourceHash": updated["sourceHash"]},
    )
    assert stale["error"] == "STALE_CELL" and stale["currentSourceHash"] != updated["sourceHash"], stale
    assert "the person's note" in stale["currentSourcePreview"], stale
    bad = error(
        page,
        "jupyter_update_cell",
        {"cellId": inserted["id"], "source": 5, "expectedSourceHash": stale["currentSourceHash"]},
    )
    assert bad["error"] == "INVALID_ARGUMENT"
    unchanged = ok(page, "jupyter_get_cells", {"cellIds": [inserted["id"]]})["cells"][0]
    assert unchanged["source"] == typed and unchanged["sourceHash"] == stale["currentSourceHash"], unchanged
    assert cell_text(page, inserted["index"]) == typed  # what the person sees: the text survived both refusals

    run = ok(page, "jupyter_run_cells", {"cellIds": [inserted["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    shown = "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('42'))"
    if run["status"] == "running":
        # the kernel's first start outlasted the call (a fresh site on a loaded machine): the run goes on in the
        # kernel, and the agent reads its outputs once they are there, as the result's reason tells it to
        page.wait_for_function(shown, timeout=2 * KERNEL_TIMEOUT_MS)
        run = ok(page, "jupyter_get_cells", {"cellIds": [inserted["id"]], "includeOutputs": True})["cells"][0]
    else:
        assert run["status"] == "ok", run
    assert run["outputs"][0]["preview"] == "42\n", run
    page.wait_for_function(shown)
    output = ok(page, "jupyter_get_output", {"cellId": inserted["id"], "outputIndex": 0})
    assert "42" in str(output)

    ok(page, "jupyter_delete_cell", {"cellId": inserted["id"], "expectedSourceHash": unchanged["sourceHash"]})
    after = ok(page, "jupyter_get_cells")["cells"]
    assert [(c["id"], c["sourceHash"]) for c in after] == [(c["id"], c["sourceHash"]) for c in before]

    # every other toolset is one discovery call away; registering them fires the page's toolchange
    page.evaluate(
        "() => { window.toolChanges = 0; document.modelContext.addEventListener('toolchange', () => "
        "window.toolChanges++); }"
    )
    listing = ok(page, "jupyter_toolsets")
    listed = {t for ts in listing["toolsets"] for t in ts["tools"]}
    assert FEATURE_TOOLS <= listed and listed - FEATURE_TOOLS <= SITE_TOOLS, sorted(
        listed
    )  # the demo site adds its own
    turned = ok(page, "jupyter_toolsets", {"enable": [ts["name"] for ts in listing["toolsets"] if not ts["enabled"]]})
    assert turned["registeredToolCount"] == len(listed) and turned["changed"]
    page.wait_for_function("n => window.webmcpBridge.status.tools === n && window.toolChanges > 0", arg=len(listed))
    assert {t["name"] for t in page.webmcp.tools()} == listed
    ok(page, "jupyter_list_comments", {})  # a tool of a toolset turned on serves at once

    assert log.foreign_requests(site_url, allow_content_links=False) == []
    assert log.own_page_errors() == []
    return bridge_status(page)
