"""Changing a cell's type and cancelling a wait, in the real JupyterLab with native WebMCP: the agent acts through
``page.webmcp`` and the DevTools protocol's ``WebMCP`` domain (which cancels an invocation as an agent's client
does: the call's AbortSignal aborts); what the person sees is read from the page."""

from __future__ import annotations

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_dialogs_abort import DevToolsWebMCP, assert_clean, call, collected, ok
from test_propose_browser import set_setting

NOTEBOOK = "jupyterlite-empty.ipynb"

CELL_JS = """(index) => {  // the cell at index as the person's notebook holds and shows it
    const panel = window.jupyterapp.shell.currentWidget;
    const widget = panel.content.widgets[index];
    const model = widget.model;
    return {
        id: model.id,
        type: model.type,
        source: model.sharedModel.getSource(),
        bridge: model.sharedModel.getMetadata('webmcp_bridge') ?? null,
        markdownCell: widget.node.classList.contains('jp-MarkdownCell'),
        outputsShown: widget.node.querySelectorAll('.jp-OutputArea-output').length,
    };
}"""


def test_the_agent_changes_a_cells_type_keeping_its_text_id_and_threads(page: Page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    first = ok(page, "jupyter_get_cells")["cells"][0]
    text = "print('kept')\n# the person's note: *not* code"
    cell = ok(
        page, "jupyter_update_cell", {"cellId": first["id"], "source": text, "expectedSourceHash": first["sourceHash"]}
    )["cell"]
    collected(page, ok(page, "jupyter_run_cells", {"cellIds": [cell["id"]]}, timeout=KERNEL_TIMEOUT_MS))
    thread = ok(page, "jupyter_create_comment", {"cellId": cell["id"], "body": "Should this be prose?"})["thread"]
    page.evaluate(  # an access block on the cell, as a notebook saved with levels holds it
        "() => window.jupyterapp.shell.currentWidget.content.widgets[0].model.sharedModel"
        ".setMetadata('webmcp_bridge', {access: 'write'})"
    )
    before = page.evaluate(CELL_JS, 0)
    assert before["type"] == "code" and before["outputsShown"] == 1 and before["bridge"] is not None
    since = ok(page, "jupyter_get_changes")["seq"]

    changed = ok(
        page,
        "jupyter_set_cell_type",
        {"cellId": cell["id"], "cellType": "markdown", "expectedSourceHash": cell["sourceHash"]},
    )
    assert changed["changed"] is True and changed["previousType"] == "code" and changed["droppedOutputs"] == 1
    assert changed["cell"]["id"] == cell["id"] and changed["cell"]["sourceHash"] == cell["sourceHash"]
    page.wait_for_function("() => !!document.querySelector('.jp-Notebook .jp-MarkdownCell')")
    after = page.evaluate(CELL_JS, 0)
    assert after["type"] == "markdown" and after["markdownCell"] is True and after["outputsShown"] == 0
    assert after["id"] == before["id"] and after["source"] == text  # the same cell, the person's text exactly
    assert after["bridge"] == before["bridge"] == {"access": "write"}  # the bridge's access block came along
    assert [t["id"] for t in ok(page, "jupyter_list_comments", {"status": "all"})["threads"]] == [thread["id"]]
    changes = ok(page, "jupyter_get_changes", {"since": since})["changes"]
    assert [(c["actor"], c["kind"], c["cellId"]) for c in changes] == [("agent", "type", cell["id"])]

    # the notebook's author locks a cell (editable: false): its type stays
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[0].model.sharedModel"
        ".setMetadata('editable', false)"
    )
    locked, is_error = call(page, "jupyter_set_cell_type", {"cellId": cell["id"], "cellType": "raw"})
    assert is_error is True and locked["error"] == "CELL_LOCKED" and page.evaluate(CELL_JS, 0)["type"] == "markdown"
    assert_clean(page_log, site_url)


def test_an_aborted_wait_stops_the_pending_run_it_waited_for(page: Page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    collected(page, ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS))  # the kernel is up
    set_setting(page, "executionTimeout", 2)  # the run goes pending after 2 s instead of 20
    slow = ok(
        page, "jupyter_insert_cell", {"source": "import time\nprint('start', flush=True)\ntime.sleep(8)\nprint('end')"}
    )["cell"]
    after = ok(page, "jupyter_insert_cell", {"source": "print('after')"})["cell"]
    page.evaluate("""() => {  // count the interrupts the bridge asks for
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const interrupt = kernel.interrupt.bind(kernel);
        window.interrupts = 0;
        kernel.interrupt = () => { window.interrupts += 1; return interrupt(); };
    }""")
    pending = ok(page, "jupyter_run_cells", {"cellIds": [slow["id"], after["id"]]})
    assert pending["status"] == "pending" and pending["tool"] == "jupyter_run_cells"

    devtools = DevToolsWebMCP(page)
    invocation = devtools.invoke("jupyter_wait_for_result", {"pendingId": pending["pendingId"]})
    page.wait_for_timeout(500)  # the wait is under way in the page
    devtools.cancel(invocation)
    assert devtools.response(invocation)["status"] == "Canceled"  # the agent's client is answered at once
    page.wait_for_function(
        "() => window.webmcpBridge.status.recent.some(l => l.startsWith('jupyter_wait_for_result ABORTED'))",
        timeout=20_000,
    )
    assert page.evaluate("() => window.interrupts") == 1  # the run was stopped too: the kernel interrupted

    # collected again, the run says it was stopped; the cell after the running one never ran
    final, is_error = call(
        page, "jupyter_wait_for_result", {"pendingId": pending["pendingId"]}, timeout=KERNEL_TIMEOUT_MS
    )
    while final.get("status") == "pending":  # the interrupted run is given a few seconds to end first
        final, is_error = call(
            page, "jupyter_wait_for_result", {"pendingId": pending["pendingId"]}, timeout=KERNEL_TIMEOUT_MS
        )
    assert is_error is True and final["error"] == "ABORTED" and final["tool"] == "jupyter_run_cells", final
    for _ in range(60):  # JupyterLite's kernel cannot stop the sleeping cell: it ends on its own
        if ok(page, "jupyter_get_context")["kernel"]["status"] == "idle":
            break
        page.wait_for_timeout(500)
    cells = {
        c["id"]: c
        for c in ok(page, "jupyter_get_cells", {"cellIds": [slow["id"], after["id"]], "includeOutputs": True})["cells"]
    }
    assert cells[after["id"]]["executionCount"] is None and "outputs" not in cells[after["id"]]
    outputs = page.evaluate(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].map(n => n.textContent.trim())"
    )
    assert "after" not in outputs  # what the person sees
    assert_clean(page_log, site_url)
