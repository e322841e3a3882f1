"""A Notebook 7 server with a real kernel: `pip install <the wheel> notebook ipykernel` (jupyter_servers.py), `jupyter
notebook` on 127.0.0.1 with token auth, and a notebook of its root opened at `/notebooks/<path>`. One page: the core
agent scenarios (the person typing between the agent's read and write included), then the Agent panel in
Notebook 7's right side panel with a comment marker and a Propose box accepted there."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agent_scenarios import core_agent_scenario
from jupyter_servers import SLOW_MS, jupyter_server
from lite_site import CONTENT, PageLog, new_recorded_page
from test_notebook7 import comment_then_accept_a_proposal
from test_panel import PANEL
from test_propose_browser import BOX, sources
from test_tools import ok

NAME = "notebook7.ipynb"
#: Notebook 7.6's own page error: its keyboard-shortcuts plugin reads the schema of a plugin the setting registry
#: has not loaded. It is thrown from Notebook's bundle on a plain `pip install notebook` with no other extension
#: (seen on 7.6.5), so it is not counted as a page error of ours; any other page error is.
NOTEBOOK_SHORTCUTS_ERROR = "Cannot read properties of undefined (reading 'schema')"


class Notebook7PageLog(PageLog):
    """A PageLog that leaves out Notebook 7's own shortcuts error, when its stack is in Notebook's bundle."""

    stacks: dict[str, list[str]]

    def own_page_errors(self) -> list[str]:
        return [
            e
            for e in self.page_errors
            if not (
                e == NOTEBOOK_SHORTCUTS_ERROR
                and all("/static/notebook/notebook_core." in stack for stack in self.stacks.get(e, [""]))
            )
        ]


@pytest.fixture(scope="module")
def notebook_server(tmp_path_factory):
    with jupyter_server("notebook", tmp_path_factory.mktemp("notebook7")) as server:
        (server.root / NAME).write_bytes((CONTENT / "jupyterlite-empty.ipynb").read_bytes())
        yield server


def test_core_scenarios_and_the_agent_panel_in_a_notebook7_server(browser, notebook_server):
    server = notebook_server
    log = Notebook7PageLog()
    log.stacks = {}
    context, page = new_recorded_page(browser, log)
    page.on("pageerror", lambda error: log.stacks.setdefault(error.message, []).append(error.stack or ""))
    page.set_default_timeout(SLOW_MS)
    try:
        status = core_agent_scenario(page, log, server.base, name=NAME, url=server.page(NAME))
        assert status["runtime"] == {
            "source": "shipped",
            "url": f"{server.base}/lab/extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs",
        }, status
        assert ok(page, "jupyter_get_context")["kernel"]["name"] == "python3"  # ipykernel
        # Notebook 7's shell (its right stack), not JupyterLab's
        assert page.evaluate(
            "() => [!!document.getElementById('jp-right-stack'), !!document.querySelector('.jp-LabShell')]"
        ) == [True, False]

        # the Agent panel is one of Notebook 7's right side panels; the person opens it there
        assert "webmcp-bridge-panel" in page.evaluate(
            "() => [...window.jupyterapp.shell.widgets('right')].map(w => w.id)"
        )
        page.evaluate("() => window.jupyterapp.shell.activateById('webmcp-bridge-panel')")
        expect(page.locator(f"#jp-right-stack {PANEL}")).to_be_visible()
        page.wait_for_selector(f'{PANEL}[data-state="ready"]', state="attached", timeout=60_000)

        first = ok(page, "jupyter_get_cells")["cells"][0]
        target = ok(
            page, "jupyter_insert_cell", {"referenceCellId": first["id"], "position": "below", "source": "a = 3"}
        )["cell"]
        comment_then_accept_a_proposal(page, NAME, target)
        assert dict(sources(page, NAME))[target["id"]] == "a = 4"
        expect(page.locator(BOX)).to_have_count(0)
        assert log.foreign_requests(server.base) == [] and log.own_page_errors() == []
    finally:
        context.close()
