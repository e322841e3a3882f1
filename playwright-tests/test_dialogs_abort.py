"""Dialogs and aborted calls, end to end: a real Chromium with native WebMCP, the agent acting through
``page.webmcp`` (and the DevTools protocol's ``WebMCP`` domain to abort an invocation), the person acting on the
live JupyterLab with real clicks."""

from __future__ import annotations

import time

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, open_notebook, result_payload

RESULT_CAP = 50 * 1024


def call(page: Page, name: str, args: dict | None = None, timeout: float = 60_000) -> tuple[dict, bool]:
    """Call a tool as the agent; return (payload, isError), checking the envelope."""
    result = page.webmcp.call_tool(name, args or {}, timeout=timeout)
    text = result["content"][0]["text"]
    assert len(text.encode()) <= RESULT_CAP
    return result_payload(result), result["isError"]


def ok(page: Page, name: str, args: dict | None = None, **kw) -> dict:
    payload, is_error = call(page, name, args, **kw)
    assert is_error is False, payload
    return payload


def collected(page: Page, payload: dict) -> dict:
    """Follow a pending payload that waits on no dialog to its final result, as an agent would."""
    while payload.get("status") == "pending" and "dialog" not in payload:
        payload = ok(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, timeout=KERNEL_TIMEOUT_MS)
    return payload


def refused(page: Page, args: dict) -> str:
    """jupyter_answer_dialog refused with INVALID_ARGUMENT; returns the message."""
    payload, is_error = call(page, "jupyter_answer_dialog", args)
    assert is_error is True and payload["error"] == "INVALID_ARGUMENT", payload
    return payload["message"]


def run_cell(page: Page, cell_id: str) -> dict:
    result = collected(page, ok(page, "jupyter_run_cells", {"cellIds": [cell_id]}, timeout=KERNEL_TIMEOUT_MS))[
        "results"
    ][0]
    assert result["status"] in ("ok", "error"), result
    return result


def dialog_on_screen(page: Page) -> str | None:
    """The title of the dialog the person sees, or None."""
    headers = page.locator(".jp-Dialog .jp-Dialog-header")
    return headers.first.inner_text().strip() if headers.count() else None


def assert_clean(page_log, site_url: str) -> None:
    assert page_log.foreign_requests(site_url) == []
    assert page_log.own_page_errors() == []


class DevToolsWebMCP:
    """The DevTools protocol's WebMCP domain: invoke a tool and cancel the invocation (aborting its signal)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.cdp = page.context.new_cdp_session(page)
        self.responses: dict[str, dict] = {}
        self.cdp.on("WebMCP.toolResponded", lambda event: self.responses.__setitem__(event["invocationId"], event))
        self.cdp.send("WebMCP.enable")
        self.frame = self.cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]

    def invoke(self, tool: str, arguments: dict) -> str:
        return self.cdp.send("WebMCP.invokeTool", {"frameId": self.frame, "toolName": tool, "input": arguments})[
            "invocationId"
        ]

    def cancel(self, invocation: str) -> None:
        self.cdp.send("WebMCP.cancelInvocation", {"invocationId": invocation})

    def response(self, invocation: str, timeout_ms: int = 10_000) -> dict:
        for _ in range(timeout_ms // 100):
            if invocation in self.responses:
                return self.responses[invocation]
            self.page.wait_for_timeout(100)
        raise AssertionError(f"no response for invocation {invocation}")


def test_a_restart_confirmation_is_reported_and_answered(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    cell = ok(page, "jupyter_get_cells")["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": cell["id"], "source": "x = 41", "expectedSourceHash": cell["sourceHash"]},
    )
    assert run_cell(page, cell["id"])["status"] == "ok"
    probe = ok(page, "jupyter_insert_cell", {"source": "print(x + 1)"})["cell"]

    # The agent asks for a restart: JupyterLab's own "Restart Kernel?" shows, and the call returns at once with it.
    began = time.monotonic()
    pending = ok(page, "jupyter_kernel_action", {"action": "restart"})
    assert time.monotonic() - began < 10  # not after the 20 s execution timeout
    assert pending["status"] == "pending" and pending["tool"] == "jupyter_kernel_action"
    dialog = pending["dialog"]
    assert dialog["title"] == "Restart Kernel?" and "All variables will be lost" in dialog["body"]
    assert [(b["label"], b["kind"]) for b in dialog["buttons"]] == [("Cancel", "reject"), ("Restart", "accept")]
    assert dialog["state"] == "shown" and dialog["answerable"] is True
    assert dialog["owner"] == {"tool": "jupyter_kernel_action", "pendingId": pending["pendingId"]}
    assert dialog_on_screen(page) == "Restart Kernel?"  # the person sees what the agent asks
    context = ok(page, "jupyter_get_context")
    assert [d["id"] for d in context["dialogs"]] == [dialog["id"]]
    assert [p["pendingId"] for p in context["pending"] if p["status"] == "running"] == [
        pending["pendingId"]
    ]  # (a slow kernel start can leave the first run settled there)

    # Cancel: a normal result, the kernel keeps its state.
    declined = ok(page, "jupyter_answer_dialog", {"button": "Cancel"})
    assert declined["restarted"] is False and declined["answered"] == {
        "dialogId": dialog["id"],
        "button": "Cancel",
        "buttonIndex": 0,
    }
    page.locator(".jp-Dialog").wait_for(state="detached")
    kept = run_cell(page, probe["id"])
    assert kept["outputs"][0]["preview"] == "42\n"

    # Restart: answered by the agent, the kernel restarts and counts from 1 again; x is gone.
    dialog = ok(page, "jupyter_kernel_action", {"action": "restart"})["dialog"]
    restarted = collected(
        page,
        ok(page, "jupyter_answer_dialog", {"button": "Restart", "dialogId": dialog["id"]}, timeout=KERNEL_TIMEOUT_MS),
    )
    assert restarted["restarted"] is True and restarted["kernel"]["status"] == "idle"
    assert "dialogs" not in restarted and dialog_on_screen(page) is None
    fresh = run_cell(page, probe["id"])
    assert "NameError" in fresh["outputs"][-1]["ename"]  # x is gone
    assert fresh["status"] == "error" and fresh["executionCount"] == 1
    assert ok(page, "jupyter_get_context")["dialogs"] == []
    assert_clean(page_log, site_url)


def test_an_aborted_run_stops_and_leaves_the_rest_undone(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    collected(page, ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS))  # the kernel is up
    slow = ok(
        page, "jupyter_insert_cell", {"source": "import time\nprint('start', flush=True)\ntime.sleep(10)\nprint('end')"}
    )["cell"]
    after = ok(page, "jupyter_insert_cell", {"source": "print('after')"})["cell"]
    page.evaluate("""() => {  // count the interrupts the bridge asks for
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const interrupt = kernel.interrupt.bind(kernel);
        window.interrupts = 0;
        kernel.interrupt = () => { window.interrupts += 1; return interrupt(); };
    }""")
    devtools = DevToolsWebMCP(page)
    before = {p["pendingId"] for p in ok(page, "jupyter_get_context")["pending"]}  # a slow first run may be there
    invocation = devtools.invoke("jupyter_run_cells", {"cellIds": [slow["id"], after["id"]]})
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(n => n.textContent.includes('start'))",
        timeout=KERNEL_TIMEOUT_MS,
    )
    devtools.cancel(invocation)
    assert devtools.response(invocation)["status"] == "Canceled"  # the agent's client is answered at once
    page.wait_for_function(
        "() => window.webmcpBridge.status.recent.some(l => l.startsWith('jupyter_run_cells ABORTED'))", timeout=20_000
    )
    assert page.evaluate("() => window.interrupts") == 1  # the bridge interrupted the kernel

    # JupyterLite's Pyodide kernel cannot stop code that is already running (its interrupt only drops queued
    # requests), so the sleeping cell ends on its own; the cell after it must never run.
    for _ in range(60):
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
    assert "start" in "".join(outputs) and "after" not in outputs  # what the person sees
    left = {p["pendingId"] for p in ok(page, "jupyter_get_context")["pending"]}
    assert left <= before, left  # it never went pending: nothing left to collect
    assert_clean(page_log, site_url)


def test_a_dialog_the_person_opened_is_never_closed_by_the_bridge(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    cell = ok(page, "jupyter_get_cells")["cells"][0]
    ok(page, "jupyter_update_cell", {"cellId": cell["id"], "source": "y = 7", "expectedSourceHash": cell["sourceHash"]})
    run_cell(page, cell["id"])

    # The person clicks the toolbar's restart button: their dialog.
    page.locator('.jp-NotebookPanel-toolbar [data-command="notebook:restart-kernel"]').click()
    page.locator(".jp-Dialog").wait_for()
    context = ok(page, "jupyter_get_context")
    (theirs,) = context["dialogs"]
    assert theirs["title"] == "Restart Kernel?" and theirs["owner"] is None and theirs["answerable"] is False
    assert "only the person answers it" in refused(page, {"button": "Restart"})
    assert "only the person answers it" in refused(page, {"button": 1, "dialogId": theirs["id"]})
    listing = ok(page, "jupyter_get_cells")
    assert [d["id"] for d in listing["dialogs"]] == [theirs["id"]]  # attached to every successful result

    # The agent asks for a restart too: its dialog waits in JupyterLab's queue behind the person's.
    page.wait_for_timeout(1600)  # (a dialog opening just after the person's click or key press counts as theirs)
    pending = ok(page, "jupyter_kernel_action", {"action": "restart"})
    mine = pending["dialog"]
    assert (
        mine["state"] == "queued" and mine["owner"]["pendingId"] == pending["pendingId"] and mine["answerable"] is False
    )
    assert "2 dialogs are open" in refused(page, {"button": "Cancel"})
    assert "queued behind the dialog on screen" in refused(page, {"button": "Cancel", "dialogId": mine["id"]})
    page.wait_for_timeout(500)
    assert dialog_on_screen(page) == "Restart Kernel?" and page.locator(".jp-Dialog").count() == 1
    assert [d["id"] for d in ok(page, "jupyter_get_context")["dialogs"]] == [theirs["id"], mine["id"]]

    # Only the person closes theirs; then the agent's is shown and the agent declines its own request.
    page.locator(".jp-Dialog button.jp-mod-reject").click()
    for _ in range(50):
        states = {d["id"]: d["state"] for d in ok(page, "jupyter_get_context")["dialogs"]}
        if states == {mine["id"]: "shown"}:
            break
        page.wait_for_timeout(100)
    assert states == {mine["id"]: "shown"}
    declined = ok(page, "jupyter_answer_dialog", {"button": "Cancel"})
    assert declined["restarted"] is False and declined["answered"]["dialogId"] == mine["id"]
    page.locator(".jp-Dialog").wait_for(state="detached")
    probe = ok(page, "jupyter_insert_cell", {"source": "print(y * 6)"})["cell"]
    assert run_cell(page, probe["id"])["outputs"][0]["preview"] == "42\n"  # never restarted
    assert_clean(page_log, site_url)
