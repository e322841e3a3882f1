"""The agent's view, end to end: a real Chromium with native WebMCP, acting as the agent through
``page.webmcp`` on the built site and the real notebooks it ships."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from playwright.sync_api import Page

from lite_site import (
    BRIDGE_TIMEOUT_MS,
    KERNEL_TIMEOUT_MS,
    demo_definitions,
    lab_url,
    open_notebook,
    result_payload,
    wait_for_bridge,
)
from webmcp_bridge.core.limits import UPDATE_CROSSINGS

CONTENT = Path(__file__).resolve().parents[1] / "lite" / "content"

#: every tool named in the product contract (docs/TOOLS.md), and nothing else: the bridge's own tools
FEATURE_TOOLS = {
    "jupyter_get_context",
    "jupyter_get_notebook_map",
    "jupyter_list_workspace",
    "jupyter_open_notebook",
    "jupyter_create_notebook",
    "jupyter_save_notebook",
    "jupyter_read_file",
    "jupyter_write_file",
    "jupyter_edit_file",
    "jupyter_get_cells",
    "jupyter_get_output",
    "jupyter_insert_cell",
    "jupyter_update_cell",
    "jupyter_edit_cell_source",
    "jupyter_delete_cell",
    "jupyter_move_cell",
    "jupyter_clear_outputs",
    "jupyter_apply_edits",
    "jupyter_run_cells",
    "jupyter_run_code",
    "jupyter_focus_cell",
    "jupyter_kernel_action",
    "jupyter_export_notebook",
    "jupyter_get_changes",
    "jupyter_list_comments",
    "jupyter_get_comment",
    "jupyter_create_comment",
    "jupyter_reply_comment",
    "jupyter_resolve_comment",
    "jupyter_reopen_comment",
    "jupyter_focus_comment",
    "jupyter_get_cell_access",
    "jupyter_wait_for_result",
    "jupyter_answer_dialog",
    "jupyter_get_output_selection",
    "jupyter_list_variables",
    "jupyter_inspect_variable",
    "jupyter_rerun_plan",
    "jupyter_search",
    "jupyter_set_cell_type",
    "jupyter_toolsets",
}
#: what a page registers at load when its URL and settings do not choose (the notebooks and calls toolsets and the
#: discovery tool; session/bridge.py DEFAULT_TOOLSETS): at most 20
DEFAULT_TOOLS = {
    "jupyter_get_context",
    "jupyter_list_workspace",
    "jupyter_open_notebook",
    "jupyter_create_notebook",
    "jupyter_save_notebook",
    "jupyter_get_notebook_map",
    "jupyter_get_cells",
    "jupyter_get_output",
    "jupyter_insert_cell",
    "jupyter_update_cell",
    "jupyter_edit_cell_source",
    "jupyter_delete_cell",
    "jupyter_move_cell",
    "jupyter_clear_outputs",
    "jupyter_run_cells",
    "jupyter_focus_cell",
    "jupyter_kernel_action",
    "jupyter_wait_for_result",
    "jupyter_answer_dialog",
    "jupyter_toolsets",
}
#: the demo site's own tools (lite/content/.webmcp/course_tools.py, named in the site's jupyter-lite.json): registered
#: once the bridge's Python has loaded them
SITE_TOOLS = {"check_exercise"}
#: every tool of the demo page once the bridge is up
PAGE_TOOLS = FEATURE_TOOLS | SITE_TOOLS


def call(page: Page, name: str, args: dict | None = None, timeout: float = 60_000) -> tuple[dict, dict]:
    """Call a tool as the agent; return (payload, whole CallToolResult). Checks the envelope's shape."""
    result = page.webmcp.call_tool(name, args or {}, timeout=timeout)
    assert isinstance(result, dict) and isinstance(result.get("content"), list), result
    payload = result_payload(result)
    assert len(result["content"][0]["text"].encode()) <= 50 * 1024
    return payload, result


def ok(page: Page, name: str, args: dict | None = None, collect: bool = True, **kw) -> dict:
    """Call and assert success. A result that went pending (a slow kernel start on a busy machine takes
    more than the 20 s execution timeout) is collected with jupyter_wait_for_result, as an agent would."""
    payload, result = call(page, name, args, **kw)
    while collect and payload.get("status") == "pending":
        payload, result = call(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, **kw)
    assert result["isError"] is False, payload
    return payload


def error(page: Page, name: str, args: dict | None = None) -> dict:
    payload, result = call(page, name, args)
    assert result["isError"] is True, payload
    return payload


def cell_text(page: Page, index: int) -> str:
    """What the person sees in cell ``index``'s editor (CodeMirror lines joined)."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content").inner_text()


def notebook_state(page: Page) -> list[tuple]:
    """Every cell's id, type, sourceHash, execution count and outputs (as listed), paging through the notebook."""
    state, start = [], 0
    while start is not None:
        listing = ok(page, "jupyter_get_cells", {"startIndex": start, "includeSource": False, "includeOutputs": True})
        state += [
            (c["id"], c["type"], c["sourceHash"], c.get("executionCount"), json.dumps(c.get("outputs")))
            for c in listing["cells"]
        ]
        start = listing.get("nextStartIndex")
    return state


def assert_clean(page_log, site_url: str) -> None:
    assert page_log.foreign_requests(site_url) == []
    assert page_log.own_page_errors() == []


#: each getTools() entry read field by field; an inputSchema given as JSON text is parsed
GET_TOOLS_FIELDS = """async () => (await document.modelContext.getTools()).map(t => ({
    name: t.name, title: t.title, description: t.description,
    inputSchema: typeof t.inputSchema === 'string' ? JSON.parse(t.inputSchema) : t.inputSchema,
    annotations: {readOnlyHint: t.annotations?.readOnlyHint, untrustedContentHint: t.annotations?.untrustedContentHint,
                  consequentialHint: t.annotations?.consequentialHint},
}))"""


def test_all_tools_register_with_well_formed_schemas(page, page_log, site_url):
    status = open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    assert status["state"] == "ready" and status["tools"] == len(PAGE_TOOLS) == 42
    tools = {t["name"]: t for t in page.webmcp.tools()}
    assert set(tools) == PAGE_TOOLS
    for tool in tools.values():
        assert tool["description"].strip()
        schema = tool["inputSchema"]
        if isinstance(schema, str):
            schema = json.loads(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert "$ref" not in json.dumps(schema)
    # what the browser itself reports, field by field (getTools() entries are browser objects whose shape
    # changes between versions: each field is read on its own), against the Python registry's definitions
    reported = {t["name"]: t for t in page.evaluate(GET_TOOLS_FIELDS)}
    expected = {d["name"]: d for d in demo_definitions()}  # the bridge's tools and the site's, as Python makes them
    assert set(reported) == set(expected) == PAGE_TOOLS
    for name, want in expected.items():
        got = reported[name]
        assert (got["title"], got["description"]) == (want["title"], want["description"]), name
        assert got["inputSchema"] == want["inputSchema"], name
        for hint in ("readOnlyHint", "untrustedContentHint", "consequentialHint"):
            assert got["annotations"][hint] is want["annotations"][hint], (name, hint, got["annotations"])
    assert page.locator(".webmcp-bridge-status").inner_text() == "WebMCP: ready (42 tools)"
    ok(page, "jupyter_get_context")
    error(page, "jupyter_get_cells", {"cellIds": ["nope"]})
    page.wait_for_function(
        "() => document.querySelector('.webmcp-bridge-status').title.includes('jupyter_get_cells CELL_NOT_FOUND')"
    )
    recent = page.locator(".webmcp-bridge-status").get_attribute("title").splitlines()
    assert recent[1].startswith("jupyter_get_cells CELL_NOT_FOUND") and recent[2].startswith("jupyter_get_context ok")
    assert_clean(page_log, site_url)


def test_tools_are_registered_before_python_is_up_and_early_calls_wait(page, page_log, site_url):
    """The build's tools.json lets the loader register the page's tools (the default toolsets: the URL chooses
    none) as soon as JupyterLab activates it; a call made while the bridge's Python is still loading waits for it
    and then answers normally, and Python, once up, keeps exactly that set (no tool registered again)."""
    held = []
    page.context.route(
        "**/extensions/jupyterlab-webmcp-bridge/static/webmcp_bridge-*.whl", lambda route: held.append(route)
    )
    page.goto(lab_url(site_url, "jupyterlite-empty.ipynb", toolsets=None))
    page.wait_for_function(
        "() => window.webmcpBridge && window.webmcpBridge.status.timings.toolsRegistered", timeout=BRIDGE_TIMEOUT_MS
    )
    assert {t["name"] for t in page.webmcp.tools()} == DEFAULT_TOOLS
    page.evaluate(
        "() => { window.toolChanges = 0; document.modelContext.addEventListener('toolchange', () => "
        "window.toolChanges++); }"
    )
    for _ in range(1200):  # the wheel is requested once Pyodide and pydantic are loaded
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the bridge wheel was never requested"
    assert page.evaluate("() => window.webmcpBridge.status.state") == "loading"
    page.evaluate("""async () => {
        const tool = (await document.modelContext.getTools()).find(t => t.name === 'jupyter_get_context');
        window.earlyCall = document.modelContext.executeTool(tool, {});
    }""")
    held[0].continue_()
    early = page.evaluate(
        "async () => { const r = await window.earlyCall; return typeof r === 'string' ? JSON.parse(r) : r; }"
    )
    payload = result_payload(early)
    if payload.get("status") == "pending":  # a start slower than the loader's bound: collected as an agent does
        assert payload["pendingId"].startswith("s-"), payload
        payload = ok(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]})
    assert early["isError"] is False and payload["notebook"]["path"] == "jupyterlite-empty.ipynb"
    assert wait_for_bridge(page)["tools"] == len(DEFAULT_TOOLS) <= 20
    assert page.evaluate("() => window.toolChanges") == 0  # Python's set is the loader's: nothing re-registered
    status = page.evaluate("() => window.webmcpBridge.status")
    assert status["state"] == "ready" and status["timings"]["toolsRegistered"] < status["timings"]["bridgeReady"]
    assert_clean(page_log, site_url)


def test_agent_reads_cells_and_pages_a_long_stream(page, page_log, site_url):
    open_notebook(page, site_url, "notebook-running-code.ipynb")
    context = ok(page, "jupyter_get_context")
    assert context["notebook"]["path"] == "notebook-running-code.ipynb"
    on_disk = json.loads((CONTENT / "notebook-running-code.ipynb").read_text())
    assert context["notebook"]["cellCount"] == len(on_disk["cells"])

    listing = ok(page, "jupyter_get_cells", {"includeOutputs": True})
    assert [c["type"] for c in listing["cells"]] == [c["cell_type"] for c in on_disk["cells"]]
    assert [c["source"] for c in listing["cells"]] == ["".join(c["source"]) for c in on_disk["cells"]]
    streams = [o for c in listing["cells"] for o in c.get("outputs", []) if o["outputType"] == "stream"]
    assert max(o["bytes"] for o in streams) > 30_000  # the notebook's 500-line stream, listed, not inlined
    assert len(json.dumps(listing).encode()) < 50 * 1024

    # A long stream the kernel produces now, with multibyte text: paged by UTF-8 offset, it joins back exactly.
    code = "for i in range(3000):\n    print(i, 'é✓ 日本')"
    expected = "".join(f"{i} é✓ 日本\n" for i in range(3000))
    cell = ok(page, "jupyter_insert_cell", {"source": code})["cell"]
    run = ok(page, "jupyter_run_cells", {"cellIds": [cell["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert run["status"] == "ok", run
    stream = run["outputs"][0]
    assert stream["outputType"] == "stream" and stream["bytes"] == len(expected.encode())
    pages, offset = [], 0
    while offset is not None:
        page_payload = ok(
            page, "jupyter_get_output", {"cellId": cell["id"], "outputIndex": 0, "offset": offset, "maxBytes": 8000}
        )
        assert len(page_payload["text"].encode()) <= 8000 and page_payload["totalBytes"] == len(expected.encode())
        pages.append(page_payload["text"])
        offset = page_payload["nextOffset"]
    assert "".join(pages) == expected and len(pages) >= 5
    assert_clean(page_log, site_url)


def test_agent_fetches_an_image_as_mcp_image_content(page, page_log, site_url):
    name = "handson-ml2-tools-pandas.ipynb"
    open_notebook(page, site_url, name)
    on_disk = json.loads((CONTENT / name).read_text())
    listing = ok(page, "jupyter_get_cells", {"includeOutputs": True, "includeSource": False})
    images = [(c, o) for c in listing["cells"] for o in c.get("outputs", []) if "image/png" in o.get("mimeTypes", [])]
    assert images, "the pandas notebook has PNG figures"
    cell, output = images[0]
    stored_plain = "".join(on_disk["cells"][cell["index"]]["outputs"][output["index"]]["data"]["text/plain"])
    assert output["preview"] == stored_plain  # the text fallback, never the image bytes
    payload, result = call(
        page, "jupyter_get_output", {"cellId": cell["id"], "outputIndex": output["index"], "mimeType": "image/png"}
    )
    assert result["isError"] is False
    image = result["content"][1]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    data = base64.b64decode(image["data"])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    stored = "".join(on_disk["cells"][cell["index"]]["outputs"][output["index"]]["data"]["image/png"])
    assert data == base64.b64decode(stored)
    assert image["data"][:200] not in result["content"][0]["text"]  # binary never inlined in the text block
    assert payload["bytes"] == len(data)
    assert_clean(page_log, site_url)


def test_agent_inserts_updates_edits_moves_and_deletes(page, page_log, site_url):
    open_notebook(page, site_url, "pytudes-euler.ipynb")
    before = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 3})["cells"]
    first = before[0]

    inserted = ok(
        page,
        "jupyter_insert_cell",
        {"referenceCellId": first["id"], "position": "below", "cellType": "code", "source": "x = 6 * 7"},
    )["cell"]
    assert inserted["index"] == 1
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[1].textContent.includes('x = 6 * 7')"
    )

    revision = ok(page, "jupyter_get_context")["notebook"]["revision"]
    update = ok(
        page,
        "jupyter_update_cell",
        {"cellId": inserted["id"], "source": "x = 6 * 9", "expectedSourceHash": inserted["sourceHash"]},
    )
    updated = update["cell"]
    assert update["notebook"]["revision"] > revision  # every agent write moves the revision
    edited = ok(
        page,
        "jupyter_edit_cell_source",
        {"cellId": inserted["id"], "oldText": "6 * 9", "newText": "7 * 6", "expectedSourceHash": updated["sourceHash"]},
    )["cell"]
    assert edited["sourceHash"] != updated["sourceHash"]
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[1].textContent.includes('x = 7 * 6')"
    )

    moved = ok(
        page, "jupyter_move_cell", {"cellId": inserted["id"], "referenceCellId": before[2]["id"], "position": "below"}
    )["cell"]
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 4})["cells"]
    assert [c["id"] for c in cells] == [first["id"], before[1]["id"], before[2]["id"], inserted["id"]]
    assert moved["index"] == 3 and cells[3]["source"] == "x = 7 * 6"
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[3].textContent.includes('x = 7 * 6')"
    )

    deleted = ok(page, "jupyter_delete_cell", {"cellId": inserted["id"], "expectedSourceHash": edited["sourceHash"]})
    assert deleted["deleted"]["id"] == inserted["id"]
    after = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 3})["cells"]
    assert [(c["id"], c["sourceHash"]) for c in after] == [(c["id"], c["sourceHash"]) for c in before]
    assert_clean(page_log, site_url)


#: Every call Python has made into JS so far, by JS half and method ("notebook.setSource"): lab/ffi.py counts the
#: calls into each JS half's methods (notebook.js, tabs.js, dialogs.js, ui/dom.js), the loader counts the calls of its
#: own functions Python holds (reportCall, setStatus, setMode, connect, disconnect) and ``loader.result``, the answers
#: of the dispatcher handed back to it (docs/ARCHITECTURE.md, "Crossings of one call"); and the direct reads
#: WATCH_PANEL_READS counts ("read:panel.context").
CROSSINGS = """() => Object.fromEntries([
  ...Object.entries(window.webmcpBridge.crossings).flatMap(
    ([half, calls]) => Object.entries(JSON.parse(calls())).map(([method, n]) => [`${half}.${method}`, n])),
  ...Object.entries(window.__pythonReads ?? {}).map(([name, n]) => [`read:${name}`, n])])"""

#: The reads the counters above cannot see: Python reading a property of the notebook panel, its context or its
#: model through the FFI itself instead of through a JS half. Each property is wrapped on the live objects and
#: counts a read whose direct caller is Pyodide's own code (a JS half is code Pyodide evaluated: "eval at").
WATCH_PANEL_READS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const reads = window.__pythonReads = {};
  const fromPython = () => {
    const caller = (new Error().stack || '').split('\\n')[3] || '';
    return caller.includes('pyodide.asm') && !caller.includes('eval at');
  };
  const wrap = (label, target, names) => {
    for (const name of names) {
      let owner = target, found;
      while (owner && !(found = Object.getOwnPropertyDescriptor(owner, name))) owner = Object.getPrototypeOf(owner);
      if (!found) continue;
      let value = found.value;
      Object.defineProperty(target, name, {
        configurable: true,
        get() {
          if (fromPython()) reads[`${label}.${name}`] = (reads[`${label}.${name}`] ?? 0) + 1;
          return found.get ? found.get.call(this) : value;
        },
        set(v) { if (found.set) found.set.call(this, v); else value = v; },
      });
    }
  };
  wrap('panel', panel, ['context', 'content', 'sessionContext', 'id', 'node']);
  wrap('context', panel.context, ['path', 'model', 'ready']);
  wrap('model', panel.context.model, ['cells', 'dirty', 'sharedModel', 'defaultKernelLanguage']);
}"""


#: The methods only the person's side calls (lab/ui: the open notebooks it follows, the markers, the panel), on its
#: own timers after a notebook changed: a tool call never does. On a
#: slow machine a call outlasts the 0.2 s after its write at which the person's side takes that change, so they can
#: fall inside the call's window.
PERSON_SIDE = (
    "notebook.takeChangesWithStamp",
    "notebook.cellInfos",
    "notebook.watch",
    "notebook.panels",
    "dom.",
)


def crossings(page: Page) -> dict[str, int]:
    """How many times Python has called into JS so far, by ``half.method``, plus its direct reads of the
    notebook panel (``read:panel.context``...) once WATCH_PANEL_READS is in place (read together, in one turn of
    the page, so no Python work can fall between them)."""
    return page.evaluate(CROSSINGS)


def test_an_update_crosses_into_js_within_the_bound(page, page_log, site_url):
    """Every crossing from Python into JS during one jupyter_update_cell: the calls into each JS half and into
    the loader, the answer handed back, and any direct read of the notebook panel (none). The revision in the
    result comes with the write's own answer (no ``notebook.revision`` crossing); the access state comes with the
    handle unless a change waits in the notebook's log (the previous update's, here): then ``accessState`` takes
    it. The person's side
    works on its own timers after a change (it takes the change into the change log; the cell markers look
    again): its own methods (PERSON_SIDE) are counted apart, and its other reads can land in some windows, never
    take away from one, so the fewest over a few updates is the call's own count."""
    open_notebook(page, site_url, "pytudes-euler.ipynb")
    cell = ok(page, "jupyter_get_cells", {"startIndex": 1, "endIndex": 2})["cells"][0]
    page.evaluate(WATCH_PANEL_READS)
    counts = []
    for n in range(4):
        before = crossings(page)
        done = ok(
            page,
            "jupyter_update_cell",
            {"cellId": cell["id"], "source": f"x = {n}\n", "expectedSourceHash": cell["sourceHash"]},
        )
        after = crossings(page)
        counts.append({name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)})
        cell = done["cell"]
    person_side = [{name: n for name, n in window.items() if name.startswith(PERSON_SIDE)} for window in counts]
    counts = [{name: n for name, n in window.items() if not name.startswith(PERSON_SIDE)} for window in counts]
    fewest = min(counts, key=lambda c: sum(c.values()))
    print(
        f"jupyter_update_cell crossings into JS: {sum(fewest.values())} {fewest} (all windows: {counts}; "
        f"the person's side's own methods in them: {person_side})"
    )
    assert sum(fewest.values()) <= UPDATE_CROSSINGS, counts
    assert fewest.get("notebook.setSource") == 1 and fewest.get("notebook.currentViewed") == 1, counts
    assert "notebook.revision" not in fewest, counts
    assert fewest.get("loader.result") == 1, counts  # the answer is counted: the window holds the whole call
    assert not [name for name in fewest if name.startswith("read:")], counts
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell')[1].textContent.includes('x = 3')")
    assert_clean(page_log, site_url)


def test_a_read_of_cells_crosses_into_js_three_times_with_no_direct_read(page, page_log, site_url):
    """Every crossing from Python into JS during one jupyter_get_cells of the notebook in front: the notebook's
    handle with its access state (the levels, the cell count), the cells, and the answer; no read of the panel, its
    context or its model through the FFI (the panel is a handle; docs/WORKER.md, "Handles instead of JS objects")."""
    open_notebook(page, site_url, "pytudes-euler.ipynb")
    ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 2})
    page.evaluate(WATCH_PANEL_READS)
    counts = []
    for _ in range(3):
        before = crossings(page)
        ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 2})
        after = crossings(page)
        window = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
        counts.append({name: n for name, n in window.items() if not name.startswith(PERSON_SIDE)})
    fewest = min(counts, key=lambda c: sum(c.values()))
    print(f"jupyter_get_cells crossings into JS: {sum(fewest.values())} {fewest} (all windows: {counts})")
    assert fewest == {"notebook.currentViewed": 1, "notebook.cells": 1, "loader.result": 1}, counts
    assert_clean(page_log, site_url)


def test_agent_runs_a_cell_and_sees_its_output(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": "print(6 * 7)\n1 / 0", "expectedSourceHash": only["sourceHash"]},
    )
    below = ok(page, "jupyter_insert_cell", {"referenceCellId": only["id"], "source": "print('never')"})["cell"]

    run = ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS)
    first, second = run["results"]
    assert first["cellId"] == only["id"]
    assert first["status"] == "error" and first["executionCount"] == 1, first
    kinds = [o["outputType"] for o in first["outputs"]]
    assert kinds == ["stream", "error"] and first["outputs"][0]["preview"] == "42\n"
    assert "ZeroDivisionError" in first["outputs"][1]["ename"]
    assert "\x1b" not in json.dumps(first)
    assert second == {"cellId": below["id"], "status": "skipped", "reason": "an earlier cell failed"}
    page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-OutputArea-output").first.wait_for()
    assert "42" in page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-OutputArea").inner_text()

    again = ok(page, "jupyter_run_cells", {"cellIds": [below["id"]]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert again["status"] == "ok" and again["outputs"][0]["preview"] == "never\n", again
    assert_clean(page_log, site_url)


def test_a_persons_edit_between_read_and_write_wins(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-demo-python.ipynb")
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 10})["cells"]
    target = next(c for c in cells if c["type"] == "code")
    editor = page.locator(".jp-Notebook .jp-Cell").nth(target["index"]).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    page.keyboard.type("  # the person's note")
    page.wait_for_function(
        "i => document.querySelectorAll('.jp-Notebook .jp-Cell')[i].textContent.includes(\"the person's note\")",
        arg=target["index"],
    )

    refused = error(
        page,
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "agent text", "expectedSourceHash": target["sourceHash"]},
    )
    assert refused["error"] == "STALE_CELL" and refused["currentSourceHash"] != target["sourceHash"]
    assert "the person's note" in refused["currentSourcePreview"]
    assert "the person's note" in cell_text(page, target["index"])
    now = ok(page, "jupyter_get_cells", {"cellIds": [target["id"]]})["cells"][0]
    assert "the person's note" in now["source"] and now["sourceHash"] == refused["currentSourceHash"]
    assert_clean(page_log, site_url)


def test_bad_input_gets_structured_errors_and_changes_nothing(page, page_log, site_url):
    open_notebook(page, site_url, "pytudes-euler.ipynb")
    baseline = notebook_state(page)
    first = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    cases = [
        (
            "jupyter_update_cell",
            {"cellId": first["id"], "source": "x", "expectedSourceHash": first["sourceHash"], "extra": 1},
            "INVALID_ARGUMENT",
        ),
        (
            "jupyter_update_cell",
            {"cellId": first["id"], "source": 5, "expectedSourceHash": first["sourceHash"]},
            "INVALID_ARGUMENT",
        ),
        (
            "jupyter_update_cell",
            {"cellId": "no-such-cell", "source": "x", "expectedSourceHash": first["sourceHash"]},
            "CELL_NOT_FOUND",
        ),
        (
            "jupyter_update_cell",
            {"cellId": first["id"], "source": "x", "expectedSourceHash": "0000000000000000"},
            "STALE_CELL",
        ),
        (
            "jupyter_update_cell",
            {"cellId": first["id"], "source": "é" * 200_000, "expectedSourceHash": first["sourceHash"]},
            "TOO_LARGE",
        ),
        ("jupyter_delete_cell", {"cellId": first["id"]}, "INVALID_ARGUMENT"),
        ("jupyter_get_cells", {"notebookPath": "../outside.ipynb"}, "INVALID_PATH"),
        ("jupyter_get_cells", {"notebookPath": "/etc/passwd.ipynb"}, "INVALID_PATH"),
        ("jupyter_open_notebook", {"path": "missing.ipynb"}, "NOTEBOOK_NOT_FOUND"),
        ("jupyter_create_notebook", {"name": "pytudes-euler.ipynb"}, "PATH_EXISTS"),
        (
            "jupyter_edit_cell_source",
            {"cellId": first["id"], "oldText": "text that is not there", "newText": "y"},
            "INVALID_ARGUMENT",
        ),
        ("jupyter_get_output", {"cellId": first["id"], "outputIndex": 99}, "OUTPUT_NOT_FOUND"),
        ("jupyter_move_cell", {"cellId": first["id"], "referenceCellId": first["id"]}, "INVALID_ARGUMENT"),
        ("jupyter_kernel_action", {"action": "explode"}, "INVALID_ARGUMENT"),
    ]
    for name, args, code in cases:
        assert error(page, name, args)["error"] == code, (name, args)
    assert notebook_state(page) == baseline
    assert_clean(page_log, site_url)


def test_ids_of_a_notebook_without_ids_survive_save_and_reload(page, page_log, site_url):
    name = "notebook-running-code.ipynb"
    assert json.loads((CONTENT / name).read_text())["nbformat_minor"] == 4
    open_notebook(page, site_url, name)
    ids = [c["id"] for c in ok(page, "jupyter_get_cells", {"includeSource": False})["cells"]]
    assert len(set(ids)) == len(ids)
    saved = ok(page, "jupyter_save_notebook")
    assert saved["saved"] is True and saved["path"] == name
    page.reload()
    open_notebook(page, site_url, name)
    assert [c["id"] for c in ok(page, "jupyter_get_cells", {"includeSource": False})["cells"]] == ids
    assert_clean(page_log, site_url)


def test_workspace_listing_create_and_open(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    listing = ok(page, "jupyter_list_workspace")
    names = {e["name"] for e in listing["entries"]}
    assert {"pytudes-euler.ipynb", "notebook-running-code.ipynb"} <= names
    assert all(e["type"] in ("notebook", "file", "directory") for e in listing["entries"])
    created = ok(page, "jupyter_create_notebook", {"name": "agent-scratch"})
    assert (
        created["path"] == "agent-scratch.ipynb" and created["notebook"]["cellCount"] == 1
    )  # JupyterLab's one empty cell
    assert ok(page, "jupyter_get_context")["notebook"]["path"] == "agent-scratch.ipynb"
    opened = ok(page, "jupyter_open_notebook", {"path": "pytudes-euler.ipynb"})
    assert opened["notebook"]["path"] == "pytudes-euler.ipynb"
    # reopening a notebook that is already open brings it back to the front: it becomes current again
    ok(page, "jupyter_open_notebook", {"path": "agent-scratch.ipynb"})
    assert ok(page, "jupyter_get_context")["notebook"]["path"] == "agent-scratch.ipynb"
    ok(page, "jupyter_open_notebook", {"path": "pytudes-euler.ipynb"})
    assert ok(page, "jupyter_get_context")["notebook"]["path"] == "pytudes-euler.ipynb"
    cells = ok(page, "jupyter_get_cells", {"startIndex": 2, "endIndex": 3})["cells"]
    focus = ok(page, "jupyter_focus_cell", {"cellId": cells[0]["id"], "cursor": {"line": 0, "column": 1}})["focus"]
    assert focus["cellId"] == cells[0]["id"]
    assert ok(page, "jupyter_get_context")["focus"]["cellId"] == cells[0]["id"]
    assert_clean(page_log, site_url)


def test_a_long_run_returns_pending_and_is_collected(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS)  # the kernel is up before the timed run
    cell = ok(page, "jupyter_insert_cell", {"source": "import time\ntime.sleep(24)\nprint('slept')"})["cell"]
    first = ok(page, "jupyter_run_cells", {"cellIds": [cell["id"]]}, collect=False, timeout=60_000)
    assert first["status"] == "pending" and first["tool"] == "jupyter_run_cells"
    assert [p["pendingId"] for p in ok(page, "jupyter_get_context")["pending"] if p["status"] == "running"] == [
        first["pendingId"]
    ]
    final = ok(page, "jupyter_wait_for_result", {"pendingId": first["pendingId"]}, timeout=60_000)
    result = final["results"][0]
    assert result["cellId"] == cell["id"] and result["status"] == "ok" and result["outputs"][0]["preview"] == "slept\n"
    assert_clean(page_log, site_url)


#: before the page's own scripts: a tool of the bridge's name registered first (the browser refuses the
#: bridge's duplicate), and registerTool wrapped to reject one more as a browser may (a schema it refuses)
REFUSE_TWO = """(() => {
    const mc = document.modelContext;
    mc.registerTool({name: 'jupyter_get_context', description: 'a page tool of the same name',
      inputSchema: {type: 'object'},
                     execute: async () => ({content: [{type: 'text', text: 'not the bridge'}]})});
    const original = mc.registerTool.bind(mc);
    mc.registerTool = (tool, options) => tool.name === 'jupyter_export_notebook'
        ? Promise.reject(new TypeError('refused by the test')) : original(tool, options);
})()"""


def test_a_failed_registration_is_counted_and_reported(page, page_log, site_url):
    page.add_init_script(REFUSE_TWO)
    status = open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    assert status["state"] == "ready" and status["tools"] == len(PAGE_TOOLS) - 2, status
    failures = {f["name"]: f["reason"] for f in status["failures"]}
    assert set(failures) == {"jupyter_get_context", "jupyter_export_notebook"}, status
    assert "refused by the test" in failures["jupyter_export_notebook"] and failures["jupyter_get_context"]
    item = page.locator(".webmcp-bridge-status")
    assert item.inner_text() == f"WebMCP: ready ({len(PAGE_TOOLS) - 2} of {len(PAGE_TOOLS)} tools)"
    title = item.get_attribute("title")
    assert "jupyter_export_notebook not registered: TypeError: refused by the test" in title, title
    assert "jupyter_get_context not registered" in title, title
    names = [t["name"] for t in page.webmcp.tools()]
    assert sorted(names) == sorted(PAGE_TOOLS - {"jupyter_export_notebook"}) and names.count("jupyter_get_context") == 1
    ok(page, "jupyter_get_cells")  # the tools that did register work


def test_a_long_cell_is_reported_running_and_interrupt_says_pyodide_cannot_stop_it(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    ok(page, "jupyter_update_cell", {"cellId": only["id"], "source": "x = 1", "expectedSourceHash": only["sourceHash"]})
    ok(page, "jupyter_run_cells", {}, timeout=KERNEL_TIMEOUT_MS)  # the kernel is up
    slow = ok(
        page,
        "jupyter_insert_cell",
        {"source": "import time\nprint('started', flush=True)\ntime.sleep(8)\nprint('done')"},
    )["cell"]
    after = ok(page, "jupyter_insert_cell", {"source": "print('after')"})["cell"]
    seq = ok(page, "jupyter_get_changes")["seq"]
    results = ok(
        page, "jupyter_run_cells", {"cellIds": [slow["id"], after["id"]], "timeout": 3}, timeout=KERNEL_TIMEOUT_MS
    )["results"]
    assert results[0]["status"] == "running" and "3 s" in results[0]["reason"], results
    assert results[1] == {"cellId": after["id"], "status": "skipped", "reason": "an earlier cell is still running"}
    interrupt = ok(page, "jupyter_kernel_action", {"action": "interrupt"})
    assert interrupt["interrupted"] is False and "Pyodide" in interrupt["reason"], interrupt
    for _ in range(60):  # the cell ends on its own; its later output is there to read
        cell = ok(page, "jupyter_get_cells", {"cellIds": [slow["id"]], "includeOutputs": True})["cells"][0]
        if cell["executionCount"] is not None:
            break
        page.wait_for_timeout(500)
    text = "".join(
        ok(page, "jupyter_get_output", {"cellId": slow["id"], "outputIndex": i})["text"]
        for i in range(len(cell.get("outputs", [])))
    )
    assert text == "started\ndone\n", cell
    # its later output and execution count are still the agent's run (the call stopped waiting, the run did not)
    changes = [
        (c["actor"], c["kind"])
        for c in ok(page, "jupyter_get_changes", {"since": seq})["changes"]
        if c["cellId"] == slow["id"]
    ]
    assert changes and changes[-1] == ("agent", "run") and all(actor == "agent" for actor, _ in changes), changes
    activity = page.evaluate(
        "() => [...document.querySelectorAll('.webmcp-bridge-activity-row')].map(r => r.textContent)"
    )
    assert not [row for row in activity if "you" in row and "cell 2" in row], activity
    idle = ok(page, "jupyter_kernel_action", {"action": "interrupt"})
    assert idle["interrupted"] is False and "nothing was running" in idle["reason"], idle
    assert_clean(page_log, site_url)


def test_a_search_of_closed_notebooks_crosses_once_per_notebook(page, page_log, site_url):
    """Every crossing from Python into JS during a jupyter_search over the site's closed notebooks, once their
    listing's access blocks are known (a second search): per notebook one, the saved cells (notebook.js asks the
    file's size, loads it, and answers nothing if the notebook is open); the listing says which notebooks are open
    and when each changed, so nothing is asked again per notebook for it (a folder's listing: its entries, and its
    open notebooks twice)."""
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    query = {"query": "zzqq-not-in-any-notebook", "glob": "*.ipynb"}
    first = ok(page, "jupyter_search", query)
    closed = first["searched"]["notebooks"] - 1  # the open one is read live
    assert closed >= 5, first
    counts = []
    for _ in range(2):
        before = crossings(page)
        ok(page, "jupyter_search", query)
        after = crossings(page)
        window = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
        counts.append({name: n for name, n in window.items() if not name.startswith(PERSON_SIDE)})
    fewest = min(counts, key=lambda c: sum(c.values()))
    print(f"jupyter_search crossings into JS over {closed} closed notebooks: {sum(fewest.values())} {fewest}")
    assert fewest.get("notebook.savedNotebook") == closed, counts
    assert fewest.get("notebook.findViewed", 0) <= 2, counts  # the open one's, in its listing and its live read
    assert "host.notebookMetadata" not in fewest and "host.stat" not in fewest, counts
    # besides: each folder's listing and its open notebooks (read for the listing, and again once its entries are
    # judged: one opened meanwhile is judged live), the open one's cells, the answer (49 in all here when the listing
    # did not say which notebooks were open: 4 "is it open?" and 2 stats per closed notebook)
    assert sum(fewest.values()) <= closed + 11, counts
    assert_clean(page_log, site_url)
