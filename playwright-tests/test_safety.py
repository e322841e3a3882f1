"""Nothing an agent does loses a person's text, in the real JupyterLab: big cells read in pages (a write built
from a cut read is refused), CRLF cells, cells the notebook's author locked, a person's edit landing between a
write's check and the write in the bridge's worker."""

from __future__ import annotations

from playwright.sync_api import Page

from lite_site import BRIDGE_TIMEOUT_MS, bring_to_front, lab_url, open_notebook, wait_for_bridge
from test_tools import call, error, ok

MODEL = "window.jupyterapp.shell.currentWidget.context.model"


def source_of(page: Page, index: int) -> str:
    return page.evaluate(f"(i) => {MODEL}.cells.get(i).sharedModel.getSource()", index)


def typed(page: Page, index: int, expected: str) -> str:
    """The source of cell ``index`` once the person's keystrokes reached the model (up to 20 s on a loaded
    machine); returns what it then is, so the caller's assertion shows any difference."""
    try:
        page.wait_for_function(
            f"([i, text]) => {MODEL}.cells.get(i).sharedModel.getSource() === text",
            arg=[index, expected],
            timeout=20_000,
        )
    except Exception:  # the assertion that follows reports what the model holds
        pass
    return source_of(page, index)


def editor_text(page: Page, index: int) -> str:
    """What the person's editor shows for cell ``index`` (CodeMirror's document, lines joined by LF)."""
    return page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].editor.model.sharedModel.getSource()", index
    )


def cell_editor(page: Page, index: int):
    """The editor of cell ``index`` of the current notebook (JupyterLab may restore other notebook tabs, hidden)."""
    panel_id = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return page.locator(f"[id='{panel_id}'] .jp-Notebook .jp-Cell").nth(index).locator(".cm-content")


def test_a_250_kb_cell_is_read_in_pages_and_a_cut_write_is_refused(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    # the person's big cell: 16,382 ASCII bytes, then characters of 3 and 4 bytes across the first cut
    text = page.evaluate(f"""() => {{
      let t = "x".repeat(16382) + "日本😀";
      while (new TextEncoder().encode(t).length < 250000) t += "\\n# ドキュメント 🤗 " + t.length;
      {MODEL}.cells.get(0).sharedModel.setSource(t);
      return t;
    }}""")
    first = ok(page, "jupyter_get_cells", {"cellIds": [only["id"]]})["cells"][0]
    assert first["sourceTruncated"] is True and first["nextSourceOffset"] == 16382
    refused, _ = call(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": first["source"] + "\nprint(1)", "expectedSourceHash": first["sourceHash"]},
    )
    assert refused["error"] == "SOURCE_NOT_FULLY_READ" and refused["nextSourceOffset"] == 16382
    assert source_of(page, 0) == text  # nothing changed
    parts, offset = [], 0
    while offset is not None:
        snap = ok(page, "jupyter_get_cells", {"cellIds": [only["id"]], "sourceOffset": offset})["cells"][0]
        parts.append(snap["source"])
        offset = snap["nextSourceOffset"]
    assert "".join(parts) == text
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": only["id"], "source": "".join(parts) + "\nprint(1)", "expectedSourceHash": first["sourceHash"]},
    )
    assert source_of(page, 0) == text + "\nprint(1)"
    # the export continues where it stopped, to the last byte
    doc, offset = [], 0
    while offset is not None:
        part = ok(page, "jupyter_export_notebook", {"offset": offset})
        doc.append(part["document"])
        offset = part["nextOffset"]
    assert len(doc) >= 5 and text + "\nprint(1)" in "".join(doc)
    assert not page_log.own_page_errors()


PLANT = """async ({path, content}) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
}"""
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}


def open_planted(page: Page, site_url: str, path: str, cells: list[dict]) -> None:
    """Write a notebook file (as one on disk would be) and open it in a fresh page load."""
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    page.evaluate(
        PLANT,
        {
            "path": path,
            "content": {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": KERNELSPEC}, "cells": cells},
        },
    )
    open_notebook(page, site_url, path)  # brought to the front once JupyterLab has restored the one opened before


def test_crlf_cell_the_person_types_then_the_agent_edits(page, page_log, site_url):
    open_planted(
        page,
        site_url,
        "crlf.ipynb",
        [
            {
                "cell_type": "code",
                "id": "crlf-1",
                "metadata": {},
                "source": "a = 1\r\nb = 2\r\nc = 3\r\n",
                "outputs": [],
                "execution_count": None,
            },
            {"cell_type": "markdown", "id": "crlf-2", "metadata": {}, "source": ["# Title\r\n", "\r\n", "text\r"]},
        ],
    )
    page.wait_for_function(f"() => !{MODEL}.cells.get(0).sharedModel.getSource().includes('\\r')", timeout=30_000)
    # the person types at the end of the cell: the text lands where the cursor is, in the model too
    cell_editor(page, 0).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("d = 4")
    assert typed(page, 0, "a = 1\nb = 2\nc = 3\nd = 4") == "a = 1\nb = 2\nc = 3\nd = 4" == editor_text(page, 0)
    cells = ok(page, "jupyter_get_cells")["cells"]
    assert [c["source"] for c in cells] == ["a = 1\nb = 2\nc = 3\nd = 4", "# Title\n\ntext\n"]
    # the agent edits with LF text (and with CRLF text): found, applied, shown on screen
    ok(page, "jupyter_edit_cell_source", {"cellId": "crlf-1", "oldText": "b = 2\nc", "newText": "b = 20\nc"})
    ok(page, "jupyter_edit_cell_source", {"cellId": "crlf-1", "oldText": "a = 1\r\n", "newText": "a = 10\r\n"})
    assert source_of(page, 0) == "a = 10\nb = 20\nc = 3\nd = 4"
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[0].node.querySelector('.cm-content')"
        ".textContent.includes('b = 20')"
    )
    assert page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[0].editor.editor.state.doc.toString()"
    ) == source_of(page, 0)
    md = ok(page, "jupyter_get_cells", {"cellIds": ["crlf-2"]})["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": "crlf-2", "source": "# New\r\nline", "expectedSourceHash": md["sourceHash"]},
    )
    assert source_of(page, 1) == "# New\nline"
    # and the person keeps typing in the agent's text: still where the cursor is
    cell_editor(page, 0).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("!")
    assert typed(page, 0, "a = 10\nb = 20\nc = 3\nd = 4!") == "a = 10\nb = 20\nc = 3\nd = 4!"
    # CRs arriving in a cell whose editor is already bound (another extension or a kernel payload setting the source):
    # the editor shows line breaks while the model holds CRs, the state every write of a CRLF cell used to fail in;
    # the bridge makes them LF at once, without touching the editor
    page.evaluate(f"() => {MODEL}.cells.get(0).sharedModel.setSource('p = 1\\r\\nq = 2\\r\\n')")
    editor_view = "() => window.jupyterapp.shell.currentWidget.content.widgets[0].editor.editor.state.doc.toString()"
    page.wait_for_function(f"() => {MODEL}.cells.get(0).sharedModel.getSource() === 'p = 1\\nq = 2\\n'")
    assert page.evaluate(editor_view) == "p = 1\nq = 2\n"
    refused, _ = call(page, "jupyter_edit_cell_source", {"cellId": "crlf-1", "oldText": "absent", "newText": "x"})
    assert refused["error"] == "INVALID_ARGUMENT"  # a failing edit changes nothing
    assert source_of(page, 0) == "p = 1\nq = 2\n" == page.evaluate(editor_view)
    ok(page, "jupyter_edit_cell_source", {"cellId": "crlf-1", "oldText": "q = 2\n", "newText": "q = 20\n"})
    assert source_of(page, 0) == "p = 1\nq = 20\n" == page.evaluate(editor_view)  # written, and the screen agrees
    cell_editor(page, 0).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("r = 3")
    assert typed(page, 0, "p = 1\nq = 20\nr = 3") == "p = 1\nq = 20\nr = 3" == page.evaluate(editor_view)
    assert not page_log.own_page_errors()


def test_cells_the_author_locked_stay_locked_for_the_agent(page, page_log, site_url):
    open_planted(
        page,
        site_url,
        "locked.ipynb",
        [
            {
                "cell_type": "code",
                "id": "frozen",
                "metadata": {"editable": False},
                "source": "answer = 42",
                "outputs": [],
                "execution_count": None,
            },
            {"cell_type": "markdown", "id": "kept", "metadata": {"deletable": False}, "source": "# Keep me"},
            {
                "cell_type": "code",
                "id": "free",
                "metadata": {},
                "source": "x = 1",
                "outputs": [],
                "execution_count": None,
            },
        ],
    )
    cells = {c["id"]: c for c in ok(page, "jupyter_get_cells")["cells"]}
    refused, _ = call(
        page,
        "jupyter_update_cell",
        {"cellId": "frozen", "source": "answer = 0", "expectedSourceHash": cells["frozen"]["sourceHash"]},
    )
    assert refused["error"] == "CELL_LOCKED" and refused["lock"] == "editable"
    refused, _ = call(page, "jupyter_edit_cell_source", {"cellId": "frozen", "oldText": "42", "newText": "0"})
    assert refused["error"] == "CELL_LOCKED"
    refused, _ = call(
        page, "jupyter_delete_cell", {"cellId": "kept", "expectedSourceHash": cells["kept"]["sourceHash"]}
    )
    assert refused["error"] == "CELL_LOCKED" and refused["lock"] == "deletable"
    refused, _ = call(
        page,
        "jupyter_apply_edits",
        {
            "edits": [
                {
                    "op": "update",
                    "cellId": "free",
                    "source": "x = 2",
                    "expectedSourceHash": cells["free"]["sourceHash"],
                },
                {"op": "delete", "cellId": "kept", "expectedSourceHash": cells["kept"]["sourceHash"]},
            ]
        },
    )
    assert refused["error"] == "CELL_LOCKED" and refused["editIndex"] == 1
    assert [source_of(page, i) for i in range(3)] == ["answer = 42", "# Keep me", "x = 1"]
    rows = {r["id"]: r for r in ok(page, "jupyter_get_cell_access")["cells"]}
    assert [(rows[i]["editable"], rows[i]["deletable"]) for i in ("frozen", "kept", "free")] == [
        (False, True),
        (True, False),
        (True, True),
    ]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": "kept", "source": "# Kept, edited", "expectedSourceHash": cells["kept"]["sourceHash"]},
    )
    assert source_of(page, 1) == "# Kept, edited"
    assert not page_log.own_page_errors()


CANARY = "CANARY-hidden-7f3a"
PRINT_HISTORY = (
    "import linecache\n"
    "ip = get_ipython(); hist = ip.history_manager; dh = ip.displayhook\n"
    "print(repr(In), repr(_ih), repr(Out), repr(_oh), _i, _ii, _iii, repr(_), repr(__), repr(___))\n"
    "print(repr(dh._), repr(dh.__), repr(dh.___), ip.user_ns_hidden)\n"
    "print([v for k, v in globals().items() if k.startswith('_i') and isinstance(v, str)])\n"
    "print(hist.input_hist_raw, hist.input_hist_parsed, hist.output_hist)\n"
    "print(list(hist.get_range(output=True)))\n"
    "try:\n"
    "    print(list(hist.search('*')), list(hist.get_tail(100, include_latest=True)))\n"
    "except Exception as exc:\n"
    "    print('no history database:', type(exc).__name__)\n"
    "print([e[2] for e in linecache.cache.values() if len(e) > 2 and e[1] is None])"
)


def test_hidden_cells_sources_do_not_leak_through_the_kernels_history(page, page_log, site_url):
    from lite_site import KERNEL_TIMEOUT_MS
    from test_propose_browser import box_for, finish_call, start_call

    open_planted(
        page,
        site_url,
        "hidden-kernel.ipynb",
        [
            {
                "cell_type": "code",
                "id": "hid",
                "metadata": {"webmcp_bridge": {"access": "none"}},
                "source": f"# {CANARY}\nhidden_total = 41 + 1\n'result-' + {CANARY!r}",
                "outputs": [],
                "execution_count": None,
            },
            {
                "cell_type": "code",
                "id": "vis",
                "metadata": {},
                "source": "print('visible')",
                "outputs": [],
                "execution_count": None,
            },
        ],
    )
    # the person runs the hidden cell (its source and result enter the kernel's history)
    page.evaluate(
        "() => { const p = window.jupyterapp.shell.currentWidget; p.content.activeCellIndex = 0; "
        "window.jupyterapp.commands.execute('notebook:run-cell'); }"
    )
    page.wait_for_function(f"() => {MODEL}.cells.get(0).executionCount != null", timeout=KERNEL_TIMEOUT_MS)
    # the agent's code in a notebook with hidden cells is shown to the person first, in Direct mode too
    start_call(page, "code", "jupyter_run_code", {"code": PRINT_HISTORY})
    box_for(page, tool="jupyter_run_code").locator(".webmcp-bridge-proposal-accept").click()
    payload, result = finish_call(page, "code", timeout=KERNEL_TIMEOUT_MS)
    assert result["isError"] is False and payload["status"] == "ok", payload
    printed = "".join(o.get("text", "") for o in payload["outputs"])
    assert "hidden_total" not in printed and CANARY not in printed, (
        printed
    )  # (the agent's own code may show: the Pyodide kernel keeps it)
    # a visible cell the agent writes and runs sees no more
    ok(
        page,
        "jupyter_update_cell",
        {
            "cellId": "vis",
            "source": PRINT_HISTORY,
            "expectedSourceHash": ok(page, "jupyter_get_cells")["cells"][0]["sourceHash"],
        },
    )
    # (a kernel run the agent starts while a cell is hidden waits for the person's Accept: access/run_consent.py)
    start_call(page, "cells", "jupyter_run_cells", {"cellIds": ["vis"]})
    box_for(page, tool="jupyter_run_cells").locator(".webmcp-bridge-proposal-accept").click()
    ran, _ = finish_call(page, "cells", timeout=KERNEL_TIMEOUT_MS)
    assert ran["results"][0]["status"] == "ok", ran
    text = page.evaluate(f"() => JSON.stringify({MODEL}.cells.get(1).outputs.toJSON())")
    assert "print(repr(In)" in text and CANARY not in text and "hidden_total" not in text, text
    # what hidden cells defined stays reachable (said in TOOLS.md and the panel): the kernel is shared
    assert page.evaluate(f"() => {MODEL}.cells.get(0).sharedModel.getSource()").startswith(
        f"# {CANARY}"
    )  # the person's cell is intact
    assert not page_log.own_page_errors()


#: installed before the page's scripts: when ``window.__personTypes = {cellId, text}`` is set, the page's side of the
#: bridge's worker, on receiving the worker's synchronous request that writes or deletes that cell (alone or in a
#: batch), first makes the
#: person's edit (as typing would: the cell's shared model, not the agent's write), once, and counts it in
#: ``window.__personTyped``; the request then runs as it came. This is the moment between the tool's check (an
#: earlier crossing) and its write that a keystroke can hit in the worker, where the two are two tasks of the page.
PERSON_BETWEEN = """
(() => {
  window.__personTyped = 0;
  const Original = window.Worker;
  window.Worker = class extends Original {
    constructor(...args) {
      super(...args);
      // added before worker.js sets onmessage, so it runs before the page answers the request
      this.addEventListener('message', event => {
        const plan = window.__personTypes;
        if (!plan || event.data?.type !== 'sync') return;
        let request;
        try { request = JSON.parse(event.data.text); } catch { return; }
        const args = request.args ?? [];
        const single = ['setSource', 'deleteCell'].includes(request.method) && args[1] === plan.cellId;
        const batch = request.method === 'applyEdits' && String(args[1]).includes(plan.cellId);
        if (!single && !batch) return;
        const cells = window.jupyterapp.shell.currentWidget.context.model.cells;
        for (let i = 0; i < cells.length; i++) {
          if (cells.get(i).id === plan.cellId) cells.get(i).sharedModel.setSource(plan.text);
        }
        window.__personTypes = null;
        window.__personTyped++;
      });
    }
  };
})();
"""


def test_a_person_typing_between_the_check_and_the_write_keeps_their_text_in_the_worker(page, page_log, site_url):
    page.add_init_script(PERSON_BETWEEN)
    page.goto(lab_url(site_url, "jupyterlite-empty.ipynb", thread="worker"))
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=BRIDGE_TIMEOUT_MS)
    bring_to_front(page, "jupyterlite-empty.ipynb")
    assert wait_for_bridge(page)["thread"] == "worker"
    inserted = ok(page, "jupyter_insert_cell", {"position": "above", "source": "x = 1"})["cell"]
    cell_id, read_hash = inserted["id"], inserted["sourceHash"]
    ok(page, "jupyter_get_cells", {"cellIds": [cell_id]})  # the agent reads the cell (its source as it checks it)

    page.evaluate("id => { window.__personTypes = {cellId: id, text: 'x = 1  # the person typed this'}; }", cell_id)
    stale = error(page, "jupyter_update_cell", {"cellId": cell_id, "source": "x = 2", "expectedSourceHash": read_hash})
    assert page.evaluate("() => window.__personTyped") == 1  # the edit landed between the check and the write
    assert stale["error"] == "STALE_CELL" and stale["currentSourceHash"] != read_hash, stale
    assert "the person typed this" in stale["currentSourcePreview"]
    assert source_of(page, 0) == "x = 1  # the person typed this"

    current = ok(page, "jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    page.evaluate("id => { window.__personTypes = {cellId: id, text: 'x = 1  # and this'}; }", cell_id)
    stale = error(page, "jupyter_delete_cell", {"cellId": cell_id, "expectedSourceHash": current["sourceHash"]})
    assert page.evaluate("() => window.__personTyped") == 2
    assert stale["error"] == "STALE_CELL" and source_of(page, 0) == "x = 1  # and this"

    current = ok(page, "jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]
    page.evaluate("id => { window.__personTypes = {cellId: id, text: 'x = 1  # and in a batch'}; }", cell_id)
    edit = {"op": "update", "cellId": cell_id, "source": "x = 4", "expectedSourceHash": current["sourceHash"]}
    stale = error(page, "jupyter_apply_edits", {"edits": [edit]})
    assert page.evaluate("() => window.__personTyped") == 3
    assert stale["error"] == "STALE_CELL" and source_of(page, 0) == "x = 1  # and in a batch"

    current = ok(page, "jupyter_get_cells", {"cellIds": [cell_id]})["cells"][0]  # read again: the write goes ahead
    updated = ok(
        page, "jupyter_update_cell", {"cellId": cell_id, "source": "x = 3", "expectedSourceHash": current["sourceHash"]}
    )
    assert source_of(page, 0) == "x = 3"
    # the revision the write answered (no second crossing for it) is the notebook's, as a read then says
    assert updated["notebook"]["revision"] == ok(page, "jupyter_get_context")["notebook"]["revision"]
