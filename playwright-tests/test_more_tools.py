"""The remaining tools end to end (jupyter_read_file, jupyter_write_file, jupyter_run_code,
jupyter_apply_edits): a real Chromium with native WebMCP, acting as the agent through ``page.webmcp`` on the
built site, with the person's side played in the live JupyterLab (``window.jupyterapp``, the keyboard)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from playwright.sync_api import Page

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_tools import call, ok

CONTENT = Path(__file__).resolve().parents[1] / "lite" / "content"
EULER = "pytudes-euler.ipynb"
E1, E2, E3, H1, H3 = "cell-0091", "cell-0092", "cell-0093", "hdr-0000", "hdr-0002"  # Problems 1-3 of the Euler notebook


def error(page: Page, name: str, args: dict, code: str) -> dict:
    payload, result = call(page, name, args)
    assert result["isError"] is True and payload["error"] == code, payload
    return payload


def file_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def assert_clean(page_log, site_url: str) -> None:
    assert page_log.foreign_requests(site_url) == []
    assert page_log.own_page_errors() == []


def settle(page: Page) -> int:
    """Wait for the current notebook's kernel to be idle and its revision to stop moving (a kernel that
    becomes ready writes language_info into the notebook's metadata); return the revision."""
    deadline = time.monotonic() + KERNEL_TIMEOUT_MS / 1000
    while ok(page, "jupyter_get_context")["kernel"].get("status") != "idle":
        assert time.monotonic() < deadline, "the kernel never became idle"
        page.wait_for_timeout(500)
    last = None
    while True:
        now = ok(page, "jupyter_get_context")["notebook"]["revision"]
        if now == last:
            return now
        last = now
        page.wait_for_timeout(1500)


def cells_state(page: Page, end: int = 14) -> list[tuple]:
    """(id, type, sourceHash, executionCount, outputs listed) of the first cells."""
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": end, "includeOutputs": True})["cells"]
    return [(c["id"], c["type"], c["sourceHash"], c.get("executionCount"), json.dumps(c.get("outputs"))) for c in cells]


def live_ids(page: Page) -> list[str]:
    """The cell ids of the live model, as the person's JupyterLab holds them."""
    return page.evaluate(
        "() => { const c = window.jupyterapp.shell.currentWidget.context.model.cells;"
        " return Array.from({length: c.length}, (_, i) => c.get(i).id); }"
    )


def test_read_file_refuses_notebooks_and_reads_a_shipped_text_file(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    existing = error(page, "jupyter_read_file", {"path": EULER}, "INVALID_PATH")
    missing = error(page, "jupyter_read_file", {"path": "no-such-notebook.ipynb"}, "INVALID_PATH")
    open_one = error(page, "jupyter_read_file", {"path": "jupyterlite-empty.ipynb"}, "INVALID_PATH")
    assert {json.dumps({k: v for k, v in p.items() if k != "path"}) for p in (existing, missing, open_one)} == {
        json.dumps({k: v for k, v in missing.items() if k != "path"})
    }  # a notebook is never told apart from a missing one
    error(
        page,
        "jupyter_write_file",
        {"path": EULER, "content": "{}", "overwrite": True, "expectedHash": "0" * 16},
        "INVALID_PATH",
    )
    assert ok(page, "jupyter_get_cells", {"notebookPath": EULER, "startIndex": 0, "endIndex": 1})["cellCount"] == 223

    shipped = (CONTENT / "LICENSES.md").read_text(encoding="utf-8")
    pages, offset = [], 0
    while offset is not None:
        page_payload = ok(page, "jupyter_read_file", {"path": "LICENSES.md", "offset": offset, "maxBytes": 700})
        assert page_payload["totalBytes"] == len(shipped.encode()) and page_payload["hash"] == file_hash(shipped)
        pages.append(page_payload["text"])
        offset = page_payload["nextOffset"]
    assert "".join(pages) == shipped and len(pages) > 1
    assert error(page, "jupyter_read_file", {"path": "missing.txt"}, "PATH_NOT_FOUND")["path"] == "missing.txt"
    error(page, "jupyter_read_file", {"path": "./"}, "INVALID_PATH")  # the workspace root is not a file
    assert_clean(page_log, site_url)


def test_write_file_then_read_file_round_trip_and_a_persons_unsaved_edit_wins(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    content = "# Agent notes\n\nCafé ✓ 日本 🙂\n" + "".join(f"line {i}\n" for i in range(3000))
    written = ok(page, "jupyter_write_file", {"path": "agent-notes.md", "content": content})
    assert written == {
        "path": "agent-notes.md",
        "created": True,
        "bytes": len(content.encode()),
        "hash": file_hash(content),
        "totalBytes": len(content.encode()),
        "appended": False,
    }
    pages, offset = [], 0
    while offset is not None:
        page_payload = ok(page, "jupyter_read_file", {"path": "agent-notes.md", "offset": offset})
        pages.append(page_payload["text"])
        offset = page_payload["nextOffset"]
    assert "".join(pages) == content and len(pages) > 1
    assert "agent-notes.md" in {e["name"] for e in ok(page, "jupyter_list_workspace")["entries"]}
    on_disk = page.evaluate(
        "async () => (await window.jupyterapp.serviceManager.contents.get('agent-notes.md', {content: true})).content"
    )
    assert on_disk == content

    error(page, "jupyter_write_file", {"path": "agent-notes.md", "content": "x"}, "PATH_EXISTS")
    error(page, "jupyter_write_file", {"path": "agent-notes.md", "content": "x", "overwrite": True}, "INVALID_ARGUMENT")
    error(page, "jupyter_write_file", {"path": "nowhere/agent-notes.md", "content": "x"}, "PATH_NOT_FOUND")
    error(page, "jupyter_write_file", {"path": "big.txt", "content": "é" * 300_000}, "TOO_LARGE")
    assert error(page, "jupyter_read_file", {"path": "big.txt"}, "PATH_NOT_FOUND")  # refused, not truncated

    # The person opens the file and types without saving: the agent reads the live text, and a write based
    # on the older read is refused while the person's text stays in the editor.
    read = ok(page, "jupyter_read_file", {"path": "agent-notes.md", "maxBytes": 100})
    page.evaluate(
        "async () => { await window.jupyterapp.commands.execute('docmanager:open', {path: 'agent-notes.md'}); }"
    )
    editor = page.locator(".jp-FileEditor .cm-content")
    editor.wait_for()
    editor.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("PERSON ")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.model.dirty === true")
    live = ok(page, "jupyter_read_file", {"path": "agent-notes.md", "maxBytes": 100})
    assert live["text"].startswith("PERSON # Agent notes") and live["hash"] != read["hash"]
    stale = error(
        page,
        "jupyter_write_file",
        {"path": "agent-notes.md", "content": "agent", "overwrite": True, "expectedHash": read["hash"]},
        "STALE_FILE",
    )
    assert stale["currentHash"] == live["hash"] and stale["currentPreview"].startswith("PERSON ")
    assert editor.inner_text().startswith("PERSON # Agent notes")
    # 100 bytes of the person's version were read: replacing all of it is refused until every page was read
    cut = error(
        page,
        "jupyter_write_file",
        {"path": "agent-notes.md", "content": "agent text\n", "overwrite": True, "expectedHash": live["hash"]},
        "FILE_NOT_FULLY_READ",
    )
    assert cut["nextOffset"] == len(live["text"].encode()) and editor.inner_text().startswith("PERSON # Agent notes")
    offset = 0
    while offset is not None:
        offset = ok(page, "jupyter_read_file", {"path": "agent-notes.md", "offset": offset})["nextOffset"]
    replaced = ok(
        page,
        "jupyter_write_file",
        {"path": "agent-notes.md", "content": "agent text\n", "overwrite": True, "expectedHash": live["hash"]},
    )
    assert replaced["created"] is False
    page.wait_for_function(
        "() => document.querySelector('.jp-FileEditor .cm-content').textContent.startsWith('agent text')"
    )
    assert (
        page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty") is False
    )  # written and saved
    assert ok(page, "jupyter_read_file", {"path": "agent-notes.md"})["text"] == "agent text\n"
    assert_clean(page_log, site_url)


def test_run_code_returns_outputs_and_leaves_the_cells_unchanged(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    first = ok(
        page,
        "jupyter_run_code",
        {"code": "x = 6 * 7\nprint('answer', x)\nx + 1", "timeout": 100},
        timeout=KERNEL_TIMEOUT_MS,
    )
    assert first["status"] == "ok", first
    assert [(o["outputType"], o["text"]) for o in first["outputs"]] == [
        ("stream", "answer 42\n"),
        ("execute_result", "43"),
    ]
    revision = settle(page)
    before = cells_state(page)
    cell_count = page.locator(".jp-Notebook .jp-Cell").count()

    failed = ok(page, "jupyter_run_code", {"code": "print('before')\n1 / 0", "timeout": 60})
    assert failed["status"] == "error", failed
    stream, err = failed["outputs"]
    assert stream["text"] == "before\n" and err["outputType"] == "error" and "ZeroDivisionError" in err["ename"]
    assert "ZeroDivisionError: division by zero" in err["text"] and "\x1b" not in json.dumps(failed)

    long = ok(page, "jupyter_run_code", {"code": "for i in range(3000):\n    print(i, 'é✓ 日本')", "timeout": 60})
    expected = "".join(f"{i} é✓ 日本\n" for i in range(3000))
    [out] = long["outputs"]
    assert out["bytes"] == len(expected.encode()) and out["textTruncated"] is True and long["truncated"] is True
    assert expected.startswith(out["text"]) and 8000 < len(out["text"].encode()) <= 16 * 1024

    # Past its timeout a run reports what arrived so far; the code goes on in the kernel.
    slow = ok(
        page,
        "jupyter_run_code",
        {"code": "import time\nprint('started', flush=True)\ntime.sleep(6)\nprint('done')", "timeout": 3},
    )
    assert slow["status"] == "timeout" and "3 s" in slow["reason"]
    assert [o["text"] for o in slow["outputs"]] == ["started\n"]

    settle(page)
    after_wait = ok(page, "jupyter_run_code", {"code": "print(x)", "timeout": 60})
    assert after_wait["outputs"][0]["text"] == "42\n"  # the same namespace, and the kernel is free again
    assert cells_state(page) == before
    assert ok(page, "jupyter_get_context")["notebook"]["revision"] == revision  # the document did not change
    assert page.locator(".jp-Notebook .jp-Cell").count() == cell_count
    assert page.locator(".jp-Notebook .jp-OutputArea-output").count() == 0  # nothing was written into a cell
    assert_clean(page_log, site_url)


def test_apply_edits_is_all_or_nothing_and_one_undo_step(page, page_log, site_url):
    open_notebook(page, site_url, EULER)
    revision = settle(page)
    cells = {c["id"]: c for c in ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 14})["cells"]}
    before, ids_before = cells_state(page), live_ids(page)
    dom_before = page.locator(".jp-Notebook").inner_text()

    bad = error(
        page,
        "jupyter_apply_edits",
        {
            "edits": [
                {
                    "op": "insert",
                    "referenceCellId": H1,
                    "position": "above",
                    "cellType": "markdown",
                    "source": "## Added by the agent",
                },
                {"op": "update", "cellId": E1, "source": "x = 1", "expectedSourceHash": cells[E1]["sourceHash"]},
                {"op": "delete", "cellId": E2, "expectedSourceHash": cells[E3]["sourceHash"]},  # another cell's hash
                {"op": "move", "cellId": E3, "referenceCellId": H1},
            ]
        },
        "STALE_CELL",
    )
    assert bad["editIndex"] == 2 and bad["cellId"] == E2
    page.wait_for_timeout(300)
    assert cells_state(page) == before and live_ids(page) == ids_before
    assert ok(page, "jupyter_get_context")["notebook"]["revision"] == revision
    assert "Added by the agent" not in page.locator(".jp-Notebook").inner_text()
    assert page.locator(".jp-Notebook").inner_text() == dom_before

    good = ok(
        page,
        "jupyter_apply_edits",
        {
            "edits": [
                {
                    "op": "insert",
                    "referenceCellId": H1,
                    "position": "above",
                    "cellType": "markdown",
                    "source": "## Added by the agent",
                },
                {"op": "update", "cellId": E1, "source": "x = 1", "expectedSourceHash": cells[E1]["sourceHash"]},
                {"op": "edit", "cellId": E2, "oldText": "x%2 == 0", "newText": "x % 2 == 0"},
                {"op": "move", "cellId": E3, "referenceCellId": H1, "position": "above"},
                {"op": "delete", "cellId": H3, "expectedSourceHash": cells[H3]["sourceHash"]},
            ]
        },
    )
    assert good["notebook"]["revision"] == revision + 1  # one transaction of the shared model
    added = good["results"][0]["cell"]["id"]
    expected = [i for i in ids_before if i not in (E3, H3)]
    expected[expected.index(H1) : expected.index(H1)] = [added, E3]
    assert live_ids(page) == expected
    page.wait_for_function("() => document.querySelector('.jp-Notebook').textContent.includes('Added by the agent')")
    index = {cell_id: i for i, cell_id in enumerate(expected)}
    assert all(r["cell"]["index"] == index[r["cell"]["id"]] for r in good["results"] if "cell" in r)
    after = cells_state(page)

    # The person undoes the batch with one keystroke (command mode "z"), and redoes it with "Z".
    page.wait_for_timeout(600)  # past Yjs's 500 ms capture window, so no later change joins the step
    page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").first.click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    page.wait_for_function("() => !document.querySelector('.jp-Notebook').textContent.includes('Added by the agent')")
    assert live_ids(page) == ids_before and cells_state(page) == before
    page.keyboard.press("Shift+z")
    page.wait_for_function("() => document.querySelector('.jp-Notebook').textContent.includes('Added by the agent')")
    assert live_ids(page) == expected and cells_state(page) == after
    assert_clean(page_log, site_url)
