"""Real-time collaboration: a JupyterLab server with ``jupyter-collaboration`` installed (jupyter_servers.py, its RTC
environment), the most common multi-user setup. There a notebook is one Yjs document the server holds; every
browser session that opens it is a peer of that document, and the server writes the file from it.

- the core agent scenarios (agent_scenarios.py: read, insert, edit with hashes, the person typing between the
  agent's read and write, run on a real kernel) on a collaborative notebook;
- the person and the agent on one notebook from two browser sessions (two contexts, as two people's browsers):
  the person types in one cell while the agent inserts and edits others; both sessions end with the same cells,
  nothing of either lost, and the agent's hash check still sees the person's typing (STALE_CELL, nothing changed);
- saves: the agent's ``jupyter_save_notebook`` through the collaborative drive puts both sessions' work in the file
  on disk, and the bridge's own save guard stays out of the way (the server saves the shared document itself).
"""

from __future__ import annotations

import json

import nbformat
import pytest
from playwright.sync_api import Page

from agent_scenarios import core_agent_scenario, open_in
from jupyter_servers import SLOW_MS, Server, jupyter_server
from lite_site import CONTENT, PageLog, new_recorded_page
from test_tools import error, ok

NOTEBOOK = "jupyterlite-empty.ipynb"


@pytest.fixture(scope="module")
def rtc_server(tmp_path_factory):
    """One collaborative `jupyter lab` for the module, with a copy of the one-cell notebook per test."""
    work = tmp_path_factory.mktemp("rtc")
    with jupyter_server("lab", work, rtc=True) as server:
        for name in ("core.ipynb", "shared.ipynb"):
            (server.root / name).write_bytes((CONTENT / NOTEBOOK).read_bytes())
        yield server


def collaborative(page: Page) -> bool:
    """Whether the notebook in front is a collaborative one (its model is bound to the server's shared document)."""
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.collaborative === true")


def open_session(browser, server: Server, name: str) -> tuple:
    """A fresh browser context (another person's browser) on notebook ``name``, the bridge ready; (context, page,
    log)."""
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    status = open_in(page, server.base, "lab", name, server.page(name, reset=True))
    assert status["state"] == "ready", status
    assert collaborative(page)
    return context, page, log


def sources(page: Page) -> list[tuple[str, str]]:
    """(id, source) of every cell, as the agent reads them in this session."""
    return [(c["id"], c["source"]) for c in ok(page, "jupyter_get_cells")["cells"]]


def wait_for_cells(page: Page, wanted: list[tuple[str, str]]) -> None:
    """Wait until this session's notebook model holds exactly ``wanted`` ((id, source) per cell, in order)."""
    page.wait_for_function(
        """wanted => {
        const cells = window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells;
        return JSON.stringify(cells.map(c => [c.id, c.getSource()])) === JSON.stringify(wanted);
    }""",
        arg=[list(w) for w in wanted],
        timeout=SLOW_MS,
    )


def test_core_agent_scenarios_on_a_collaborative_notebook(browser, rtc_server):
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    try:
        status = core_agent_scenario(page, log, rtc_server.base, name="core.ipynb", url=rtc_server.page("core.ipynb"))
        assert status["state"] == "ready"
        assert collaborative(page)
        assert ok(page, "jupyter_get_context")["kernel"]["name"] == "python3"
    finally:
        context.close()


def test_the_person_and_the_agent_edit_one_notebook_from_two_sessions_and_the_save_keeps_both(browser, rtc_server):
    person_context, person, person_log = open_session(browser, rtc_server, "shared.ipynb")
    agent_context, agent, agent_log = open_session(browser, rtc_server, "shared.ipynb")
    try:
        first = ok(agent, "jupyter_get_cells")["cells"][0]
        assert sources(person) == sources(agent) == [(first["id"], first["source"])]

        # the agent inserts two cells and edits one; the person's session shows them
        one = ok(agent, "jupyter_insert_cell", {"source": "a = 1"})["cell"]
        two = ok(agent, "jupyter_insert_cell", {"source": "b = 2"})["cell"]
        two = ok(
            agent,
            "jupyter_update_cell",
            {"cellId": two["id"], "source": "b = a + 1", "expectedSourceHash": two["sourceHash"]},
        )["cell"]
        wait_for_cells(person, [(first["id"], first["source"]), (one["id"], "a = 1"), (two["id"], "b = a + 1")])

        # the person types in the agent's first cell (the real keyboard in the person's browser) while the agent
        # edits its second one: both edits land in both sessions
        person.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content").click()
        person.keyboard.press("Control+End")
        person.keyboard.type("  # the person's note")
        edited = ok(
            agent,
            "jupyter_update_cell",
            {"cellId": two["id"], "source": "b = a + 41\nprint(b)", "expectedSourceHash": two["sourceHash"]},
        )["cell"]
        both = [
            (first["id"], first["source"]),
            (one["id"], "a = 1  # the person's note"),
            (two["id"], "b = a + 41\nprint(b)"),
        ]
        wait_for_cells(person, both)
        wait_for_cells(agent, both)
        assert sources(agent) == sources(person) == both

        # the agent's write on a cell it read before the person typed is refused, and changes nothing anywhere
        stale = error(
            agent,
            "jupyter_update_cell",
            {"cellId": one["id"], "source": "lost", "expectedSourceHash": one["sourceHash"]},
        )
        assert stale["error"] == "STALE_CELL" and "the person's note" in stale["currentSourcePreview"], stale
        assert sources(agent) == sources(person) == both

        # the agent runs its cells on the one kernel of the notebook; the person sees the output
        for cell in (one, edited):
            assert ok(agent, "jupyter_run_cells", {"cellIds": [cell["id"]]})["results"][0]["status"] == "ok"
        person.wait_for_function(
            "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('42'))",
            timeout=SLOW_MS,
        )

        # the agent saves: the file on disk holds both sessions' work
        saved = ok(agent, "jupyter_save_notebook")
        assert saved["saved"] is True, saved
        on_disk = nbformat.read(rtc_server.root / "shared.ipynb", as_version=4)
        assert [(c.id, c.source) for c in on_disk.cells] == both
        assert "42" in json.dumps(on_disk.cells[2].outputs)
        for log in (person_log, agent_log):
            assert log.foreign_requests(rtc_server.base, allow_content_links=True) == []
            assert log.own_page_errors() == []
    finally:
        agent_context.close()
        person_context.close()
