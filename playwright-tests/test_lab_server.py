"""A JupyterLab server with a real kernel: `pip install <the wheel> jupyterlab ipykernel` (jupyter_servers.py), one
`jupyter lab` on 127.0.0.1 with token auth for the whole module, and notebooks that live on the server (contents
through the server, an ipykernel kernel). Each test works on its own notebook in the server's root, in a fresh
browser context. The bridge runs on the Pyodide runtime its extension ships, served by the server.

- the core agent scenarios (agent_scenarios.py), the person typing between the agent's read and write included;
- interrupting a running cell (a real kernel stops it), restarting through the "Restart Kernel?" dialog answered
  with jupyter_answer_dialog, and saving (read back from the file on disk);
- paths: `..`, absolute paths and symbolic links inside the root that lead outside it are refused (INVALID_PATH);
- review (a comment persists in the file's metadata), Propose (a change waits for Accept) and access (a `none` cell
  and a hidden notebook invisible to every tool: the canary scan of test_access_browser.py);
- the MCP-B option turned on with `jupyter webmcp-bridge mcp-b on` (it writes labconfig/page_config.json), in a
  browser without WebMCP.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import nbformat
import pytest
from playwright.sync_api import Page, expect

from agent_scenarios import core_agent_scenario, open_in
from jupyter_servers import SLOW_MS, Server, jupyter_server
from lite_site import CONTENT, KERNEL_TIMEOUT_MS, PageLog, new_recorded_page
from test_access_browser import CANARY, PERSON, SECRET, WORK, canary_scan, planted_notebooks
from test_mcp_b import McpBPage, McpBTools
from test_propose_browser import BOX, COMMAND, box_for, finish_call, sources, start_call
from test_tools import error, ok

NOTEBOOK = "jupyterlite-empty.ipynb"
#: text written outside the server's root; no tool result may ever hold it
OUTSIDE_TEXT = "OUTSIDE-7f3a-not-in-the-workspace"


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """One `jupyter lab` for the module, its root holding a copy of the empty notebook per test, and a folder
    outside the root with a file, a notebook and a folder that links inside the root point to."""
    work = tmp_path_factory.mktemp("lab")
    with jupyter_server("lab", work) as server:
        for name in ("core.ipynb", "kernel.ipynb", "paths.ipynb", "mcp-b.ipynb", "variables.ipynb"):
            (server.root / name).write_bytes((CONTENT / NOTEBOOK).read_bytes())
        (server.root / "review.ipynb").write_bytes((CONTENT / "jupyterlite-demo-python.ipynb").read_bytes())
        outside = work / "outside"
        (outside / "folder").mkdir(parents=True)
        (outside / "secret.txt").write_text(f"{OUTSIDE_TEXT}\n")
        (outside / "folder" / "inner.txt").write_text(f"{OUTSIDE_TEXT}\n")
        secret_nb = json.loads((CONTENT / NOTEBOOK).read_text())
        secret_nb["cells"][0]["source"] = f"print('{OUTSIDE_TEXT}')"
        (outside / "secret.ipynb").write_text(json.dumps(secret_nb))
        (server.root / "inside.txt").write_text("inside the root\n")
        os.symlink("../outside/secret.txt", server.root / "escape.txt")
        os.symlink(outside / "secret.ipynb", server.root / "escape.ipynb")
        os.symlink("../outside/folder", server.root / "escape-dir")
        os.symlink("inside.txt", server.root / "alias.txt")  # a link that stays inside: allowed
        yield server


def open_page(browser, server: Server, name: str) -> tuple:
    """A fresh context on notebook ``name`` of the server, the bridge ready; returns (context, page, log)."""
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    status = open_in(page, server.base, "lab", name, server.page(name))
    assert status["state"] == "ready", status
    every_toolset_on(page)
    return context, page, log


def every_toolset_on(page: Page) -> None:
    """Turn on every toolset with the discovery tool, as an agent would (the page opened with the default 20
    tools), and wait until the page has registered all 40 of the bridge's tools."""
    listing = ok(page, "jupyter_toolsets")
    ok(page, "jupyter_toolsets", {"enable": [ts["name"] for ts in listing["toolsets"] if not ts["enabled"]]})
    page.wait_for_function("() => window.webmcpBridge.status.tools === 41", timeout=SLOW_MS)


def assert_clean(log: PageLog, server: Server) -> None:
    """No request to another origin but the remote images written in a shipped notebook's markdown (a server sends
    no Content-Security-Policy, so JupyterLab's renderer fetches them: the person's content, not the bridge), no
    page error."""
    assert log.foreign_requests(server.base, allow_content_links=True) == []
    assert log.own_page_errors() == []


def test_labextension_list_shows_the_wheel(lab_server):
    listed = subprocess.run(
        [lab_server.env / "bin" / "jupyter", "labextension", "list"], capture_output=True, text=True
    )
    text = listed.stdout + listed.stderr
    assert "jupyterlab-webmcp-bridge v0.1.0" in text, text
    # the ranges package.json declares fit this JupyterLab (a misfit is "X" and "is not compatible" here)
    line = next(row for row in text.splitlines() if "jupyterlab-webmcp-bridge v" in row)
    assert "OK" in line and "not compatible" not in text, text


def test_core_agent_scenarios_in_a_jupyterlab_server(browser, lab_server):
    log = PageLog()
    context, page = new_recorded_page(browser, log)
    page.set_default_timeout(SLOW_MS)
    try:
        status = core_agent_scenario(page, log, lab_server.base, name="core.ipynb", url=lab_server.page("core.ipynb"))
        runtime_url = f"{lab_server.base}/lab/extensions/jupyterlab-webmcp-bridge/static/pyodide/pyodide.mjs"
        assert status["runtime"] == {"source": "shipped", "url": runtime_url} and status["polyfill"] is None
        assert ok(page, "jupyter_get_context")["kernel"]["name"] == "python3"  # ipykernel, not Pyodide
        # no Pyodide kernel on a server's page: the browser's own Atomics.waitAsync is left as it is
        fix = "() => [window.webmcpBridge.waitAsyncFix, Atomics.waitAsync.webmcpBridge === undefined]"
        assert page.evaluate(fix) == ["not needed", True]
    finally:
        context.close()


def run(page: Page, cell_id: str, **args) -> dict:
    return ok(page, "jupyter_run_cells", {"cellIds": [cell_id], **args}, timeout=KERNEL_TIMEOUT_MS)["results"][0]


def test_interrupt_restart_and_save_on_a_real_kernel(browser, lab_server):
    context, page, log = open_page(browser, lab_server, "kernel.ipynb")
    try:
        first = ok(page, "jupyter_get_cells")["cells"][0]
        ok(
            page,
            "jupyter_update_cell",
            {"cellId": first["id"], "source": "x = 41", "expectedSourceHash": first["sourceHash"]},
        )
        assert run(page, first["id"])["status"] == "ok"
        slow_source = "import time\nprint('started', flush=True)\ntime.sleep(60)\nprint('not reached')"
        slow = ok(page, "jupyter_insert_cell", {"source": slow_source})["cell"]
        probe = ok(page, "jupyter_insert_cell", {"source": "print(x + 1)"})["cell"]

        # interrupt: the run is reported running, the interrupt stops it, the kernel keeps its state
        running = run(page, slow["id"], timeout=3)
        assert running["status"] == "running", running
        interrupt = ok(page, "jupyter_kernel_action", {"action": "interrupt"})
        assert interrupt["interrupted"] is True and interrupt["kernel"]["status"] == "idle", interrupt
        stopped = ok(page, "jupyter_get_cells", {"cellIds": [slow["id"]], "includeOutputs": True})["cells"][0]
        assert stopped["executionCount"] is not None
        assert [o.get("ename") for o in stopped["outputs"]][-1] == "KeyboardInterrupt", stopped["outputs"]
        assert "not reached" not in json.dumps(stopped["outputs"])
        kept = run(page, probe["id"])
        assert kept["status"] == "ok" and kept["outputs"][0]["preview"] == "42\n", kept

        # restart: JupyterLab's own confirmation, answered by the agent; x is gone afterwards
        pending = ok(page, "jupyter_kernel_action", {"action": "restart"}, collect=False)
        assert pending["status"] == "pending" and pending["dialog"]["title"] == "Restart Kernel?", pending
        assert page.locator(".jp-Dialog .jp-Dialog-header").inner_text() == "Restart Kernel?"  # the person sees it
        restarted = ok(
            page,
            "jupyter_answer_dialog",
            {"button": "Restart", "dialogId": pending["dialog"]["id"]},
            timeout=KERNEL_TIMEOUT_MS,
        )
        assert restarted["restarted"] is True and restarted["kernel"]["status"] == "idle", restarted
        page.locator(".jp-Dialog").wait_for(state="detached")
        fresh = run(page, probe["id"])
        assert (
            fresh["status"] == "error" and fresh["outputs"][-1]["ename"] == "NameError" and fresh["executionCount"] == 1
        ), fresh

        # save: the server's file on disk holds the agent's cells
        current = ok(page, "jupyter_get_cells", {"cellIds": [probe["id"]]})["cells"][0]
        ok(
            page,
            "jupyter_update_cell",
            {
                "cellId": probe["id"],
                "source": "print('saved by the agent')",
                "expectedSourceHash": current["sourceHash"],
            },
        )
        saved = ok(page, "jupyter_save_notebook")
        assert saved["saved"] is True, saved
        on_disk = nbformat.read(lab_server.root / "kernel.ipynb", as_version=4)
        assert [(c.id, c.source) for c in on_disk.cells] == [
            (first["id"], "x = 41"),
            (slow["id"], slow_source),
            (probe["id"], "print('saved by the agent')"),
        ]
        assert_clean(log, lab_server)
    finally:
        context.close()


def test_the_kernels_variables_are_listed_and_inspected_silently_on_ipykernel(browser, lab_server):
    """jupyter_list_variables / jupyter_inspect_variable on a real ipykernel: the bridge's program runs as a silent
    request (no execute count, no history entry), the notebook does not change."""
    from test_variables_browser import PROBE, printed

    context, page, log = open_page(browser, lab_server, "variables.ipynb")
    try:
        first = ok(page, "jupyter_get_cells")["cells"][0]
        source = "radius = 2.5\nnames = ['ada', 'grace']\nclass Box:\n    def __init__(self):\n        self.w = 3\n"
        source += "box = Box()"
        ok(
            page,
            "jupyter_update_cell",
            {"cellId": first["id"], "source": source, "expectedSourceHash": first["sourceHash"]},
        )
        probe = ok(page, "jupyter_insert_cell", {"source": PROBE})["cell"]
        assert run(page, first["id"])["status"] == "ok" and run(page, probe["id"])["status"] == "ok"
        count, entries, *_ = printed(page, probe["id"]).split()
        before = ok(page, "jupyter_get_cells", {"includeOutputs": True})
        listed = ok(page, "jupyter_list_variables", timeout=KERNEL_TIMEOUT_MS)
        by_name = {v["name"]: v for v in listed["variables"]}
        assert by_name["radius"]["repr"] == "2.5" and by_name["names"]["length"] == 2, listed
        assert by_name["box"]["type"] == "__main__.Box" and "In" not in by_name and "get_ipython" not in by_name
        box = ok(page, "jupyter_inspect_variable", {"name": "box"})
        assert box["defined"] is True and box["attributes"] == [{"name": "w", "type": "int"}], box
        assert ok(page, "jupyter_inspect_variable", {"name": "_i1"})["defined"] is False
        assert ok(page, "jupyter_get_cells", {"includeOutputs": True}) == before
        assert run(page, probe["id"])["status"] == "ok"  # one run later: the inspections counted nothing
        assert printed(page, probe["id"]).split() == [str(int(count) + 1), str(int(entries) + 1), "False", "False", "0"]
        assert_clean(log, lab_server)
    finally:
        context.close()


def test_paths_outside_the_server_root_are_refused(browser, lab_server):
    context, page, log = open_page(browser, lab_server, "paths.ipynb")
    outside = str(lab_server.root.parent / "outside" / "secret.txt")
    try:
        refusals = {
            "..": error(page, "jupyter_read_file", {"path": "../outside/secret.txt"}),
            "absolute": error(page, "jupyter_read_file", {"path": outside}),
            "link to a file": error(page, "jupyter_read_file", {"path": "escape.txt"}),
            "through a linked folder": error(page, "jupyter_read_file", {"path": "escape-dir/inner.txt"}),
            "linked notebook": error(page, "jupyter_open_notebook", {"path": "escape.ipynb"}),
            "linked folder": error(page, "jupyter_list_workspace", {"path": "escape-dir"}),
            "write through a link": error(page, "jupyter_write_file", {"path": "escape.txt", "content": "overwritten"}),
            "create through a linked folder": error(
                page, "jupyter_write_file", {"path": "escape-dir/new.txt", "content": "new"}
            ),
            "new notebook through a linked folder": error(
                page, "jupyter_create_notebook", {"directory": "escape-dir", "name": "new.ipynb"}
            ),
        }
        for what, refused in refusals.items():
            assert refused["error"] == "INVALID_PATH", (what, refused)
            assert OUTSIDE_TEXT not in json.dumps(refused), (what, refused)
        assert "outside the workspace" in refusals["link to a file"]["message"], refusals["link to a file"]
        # nothing changed outside the root
        assert (lab_server.root.parent / "outside" / "secret.txt").read_text() == f"{OUTSIDE_TEXT}\n"
        assert sorted(p.name for p in (lab_server.root.parent / "outside" / "folder").iterdir()) == ["inner.txt"]

        # the listing leaves the escaping links out; a link that stays inside the root works like its target
        listed = {e["path"] for e in ok(page, "jupyter_list_workspace", {"path": ""})["entries"]}
        assert {"alias.txt", "inside.txt", "paths.ipynb"} <= listed and not listed & {
            "escape.txt",
            "escape.ipynb",
            "escape-dir",
        }, listed
        assert ok(page, "jupyter_read_file", {"path": "alias.txt"})["text"] == "inside the root\n"
        assert_clean(log, lab_server)
    finally:
        context.close()


def test_review_and_propose_on_the_server(browser, lab_server):
    context, page, log = open_page(browser, lab_server, "review.ipynb")
    try:
        cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 6})["cells"]
        target = next(c for c in cells if c["source"] == "a = 3")
        # review: the agent's comment persists in the file's metadata once saved
        thread = ok(page, "jupyter_create_comment", {"cellId": target["id"], "body": "Why 3?"})["thread"]
        ok(page, "jupyter_save_notebook")
        stored = nbformat.read(lab_server.root / "review.ipynb", as_version=4).metadata["webmcp_bridge"]["threads"]
        assert [(t["id"], t["anchor"]["cellId"], [m["body"] for m in t["messages"]]) for t in stored] == [
            (thread["id"], target["id"], ["Why 3?"])
        ], stored

        # Propose: the person turns it on (the command), the agent's update waits under its cell until Accept
        page.evaluate("c => window.jupyterapp.commands.execute(c)", COMMAND)
        expect(page.locator("#webmcp-bridge-status")).to_contain_text("· Propose")  # the status bar item (by id: the
        # panel's thread states carry the class webmcp-bridge-status too)
        start_call(
            page,
            "update",
            "jupyter_update_cell",
            {"cellId": target["id"], "source": "a = 4", "expectedSourceHash": target["sourceHash"]},
        )
        box = box_for(page, tool="jupyter_update_cell")
        assert box.get_attribute("data-cell-id") == target["id"]
        assert dict(sources(page, "review.ipynb"))[target["id"]] == "a = 3"
        box.locator(".webmcp-bridge-proposal-accept").click()
        payload, result = finish_call(page, "update")
        assert result["isError"] is False and payload["cell"]["id"] == target["id"], payload
        assert dict(sources(page, "review.ipynb"))[target["id"]] == "a = 4"
        expect(page.locator(BOX)).to_have_count(0)
        assert_clean(log, lab_server)
    finally:
        context.close()


def test_hidden_cells_and_notebooks_are_invisible_to_every_tool_on_the_server(browser, lab_server):
    """The notebooks of test_access_browser.py written to the server's disk (for its ipykernel kernel): every tool,
    with argument combinations from its schema, never shows the `none` cells or the hidden notebook."""
    (lab_server.root / "planted").mkdir(exist_ok=True)
    for path, notebook in planted_notebooks().items():
        notebook["metadata"]["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        (lab_server.root / path).write_text(json.dumps(notebook))
    context, page, log = open_page(browser, lab_server, WORK)
    try:
        listing = ok(page, "jupyter_get_cells")
        assert [c["id"] for c in listing["cells"]] == ["v-title", "v-code", "ro-md", "v-print", "v-last"] and listing[
            "hiddenCellCount"
        ] == 2
        assert [e["path"] for e in ok(page, "jupyter_list_workspace", {"path": "planted"})["entries"]] == [WORK]
        assert error(page, "jupyter_open_notebook", {"path": SECRET})["error"] == "NOTEBOOK_NOT_FOUND"
        page.evaluate(PERSON, {"canary": CANARY, "hidden": "hid-md"})  # the person types in a hidden cell
        tools, calls = canary_scan(page, 4)
        assert tools == 41 and calls >= 3 * tools
        assert log.own_page_errors() == []
    finally:
        context.close()
        # the server is shared by the module's tests: a hidden notebook left on its disk would make every later
        # agent run wait for the person's Accept (the run rule, access/run_consent.py)
        shutil.rmtree(lab_server.root / "planted")


def mcp_b_command(server: Server, action: str) -> subprocess.CompletedProcess:
    """``jupyter webmcp-bridge mcp-b <action>`` from the server's environment, with the server's own config folders."""
    environ = {**os.environ, "JUPYTER_CONFIG_DIR": str(server.root.parent / "jupyter" / "config")}
    environ.pop("PYTHONPATH", None)  # the installed wheel's command, never this checkout's sources
    return subprocess.run(
        [server.env / "bin" / "jupyter", "webmcp-bridge", "mcp-b", action], capture_output=True, text=True, env=environ
    )


def test_mcp_b_turned_on_in_a_jupyterlab_server(browser_without_webmcp, lab_server):
    """The option turned on as the README says, `jupyter webmcp-bridge mcp-b on` (the environment's
    labconfig/page_config.json, read on each page load), in Chromium without the WebMCP flag: the core scenarios
    through @mcp-b/global; `off` turns it off again for the next page."""
    done = mcp_b_command(lab_server, "on")
    assert done.returncode == 0, done.stdout + done.stderr
    assert mcp_b_command(lab_server, "status").stdout.startswith("MCP-B: on (set by ")
    log = PageLog()
    context, page = new_recorded_page(browser_without_webmcp, log)
    page.set_default_timeout(SLOW_MS)
    try:
        status = core_agent_scenario(
            McpBPage(page), log, lab_server.base, name="mcp-b.ipynb", url=lab_server.page("mcp-b.ipynb")
        )
        assert status["polyfill"] == "mcp-b", status
        assert any(
            u.endswith("/lab/extensions/jupyterlab-webmcp-bridge/static/mcp-b/global.iife.js") for u in log.requests
        )
        assert len(McpBTools(page).tools()) == status["tools"] == 41
    finally:
        context.close()
        done = mcp_b_command(lab_server, "off")
    assert done.returncode == 0, done.stdout + done.stderr
    log = PageLog()
    context, page = new_recorded_page(browser_without_webmcp, log)
    page.set_default_timeout(SLOW_MS)
    try:
        status = open_in(page, lab_server.base, "lab", "mcp-b.ipynb", lab_server.page("mcp-b.ipynb"))
        assert status["state"] == "unavailable" and status["polyfill"] is None, status
        assert not any("/mcp-b/" in u for u in log.requests)
    finally:
        context.close()
