"""Notebook 7 in JupyterLite (`notebooks/index.html?path=…`): the same bridge in Notebook's one-document shell.
The core agent scenarios, the Agent panel in Notebook 7's right side panel, the cell markers and a Propose box."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from agent_scenarios import core_agent_scenario, open_in
from lite_site import EVERY_TOOLSET, choose
from test_panel import PANEL, cell, section
from test_propose_browser import BOX, box_for, finish_call, sources, start_call
from test_tools import assert_clean, ok

DEMO = "jupyterlite-demo-python.ipynb"


def test_core_agent_scenarios_in_notebook7(page, page_log, site_url):
    core_agent_scenario(page, page_log, site_url, app="notebooks")
    # Notebook 7's shell (its right stack), not JupyterLab's
    assert page.evaluate(
        "() => [!!document.getElementById('jp-right-stack'), !!document.querySelector('.jp-LabShell')]"
    ) == [True, False]


def test_panel_markers_and_a_propose_box_in_notebook7(page, page_log, site_url):
    status = open_in(page, site_url, "notebooks", DEMO, toolsets=EVERY_TOOLSET)
    assert status["state"] == "ready", status
    # the Agent panel is one of Notebook 7's right side panels; the person opens it there
    assert "webmcp-bridge-panel" in page.evaluate("() => [...window.jupyterapp.shell.widgets('right')].map(w => w.id)")
    page.evaluate("() => window.jupyterapp.shell.activateById('webmcp-bridge-panel')")
    expect(page.locator(f"#jp-right-stack {PANEL}")).to_be_visible()
    page.wait_for_selector(f'{PANEL}[data-state="ready"]', state="attached", timeout=60_000)

    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 6})["cells"]
    target = next(c for c in cells if c["source"] == "a = 3")
    comment_then_accept_a_proposal(page, DEMO, target)
    expect(page.locator(BOX)).to_have_count(0)
    assert_clean(page_log, site_url)


def comment_then_accept_a_proposal(page: Page, path: str, target: dict) -> None:
    """In Notebook 7's notebook view of ``path``: the agent comments on cell ``target`` (its badge and its thread in
    the Agent panel show), then, in Propose mode turned on from the panel's switch, its update of that cell waits
    in a box under the cell until the person accepts it."""
    # an agent's comment: a marker on its cell and a thread in the panel
    ok(page, "jupyter_create_comment", {"cellId": target["id"], "body": "Why 3?"})
    expect(cell(page, target["index"]).locator(".webmcp-bridge-badge-comments")).to_have_text("1")
    thread = section(page, "comments").locator(".webmcp-bridge-thread")
    expect(thread).to_have_count(1)
    expect(thread).to_contain_text("Why 3?")

    # Propose mode from the panel's switch: the agent's update waits in a box under its cell until Accept
    choose(page.locator(f'{PANEL} select[data-action="mode"]'), "propose")
    page.wait_for_function("() => window.webmcpBridge.status.mode === 'propose'")
    start_call(
        page,
        "update",
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "a = 4", "expectedSourceHash": target["sourceHash"]},
    )
    box = box_for(page, tool="jupyter_update_cell")
    assert box.get_attribute("data-cell-id") == target["id"]
    expect(cell(page, target["index"]).locator(BOX)).to_have_count(1)
    assert dict(sources(page, path))[target["id"]] == "a = 3"
    box.locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "update")
    assert result["isError"] is False and payload["cell"]["id"] == target["id"]
    assert dict(sources(page, path))[target["id"]] == "a = 4"
