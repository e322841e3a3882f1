"""Attacks on the person's files, replayed in a real Chromium with native WebMCP: the test
is the agent (``page.webmcp`` and ``document.modelContext``) and the person (``window.jupyterapp``: the contents
API for files on disk, the Propose command, real clicks on the proposal boxes). Each asserts what the person
would find: the file intact, nothing written before Accept, a hidden notebook not listed."""

from __future__ import annotations

from playwright.sync_api import Page

from lite_site import open_notebook
from test_propose_browser import COMMAND, finish_call, start_call, turn_propose_on
from test_tools import assert_clean, call, ok

NOTEBOOK = "jupyterlite-empty.ipynb"
CORNER = ".webmcp-bridge-proposal-corner"

SAVE_TEXT = """async ([path, content]) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'file', format: 'text', content});
}"""
# the file as the workspace holds it (null when there is none), read by the person's contents API
READ_TEXT = """async path => {
  try {
    const model = await window.jupyterapp.serviceManager.contents.get(path, {content: true});
    return typeof model.content === 'string' && model.format === 'base64'
      ? new TextDecoder().decode(Uint8Array.from(atob(model.content), c => c.charCodeAt(0))) : model.content;
  } catch (e) { return null; }
}"""
EXISTS = """async path => {
  try { await window.jupyterapp.serviceManager.contents.get(path, {content: false}); return true; } catch (e) {
    return false; }
}"""
SAVE_NOTEBOOK = """async ([path, content]) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
}"""
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}


def big_text() -> str:
    """About 1.3 MB of text with a unique line far past the first page (and multi-byte characters)."""
    return "".join(f"{i:07d} log entry é✓ {'x' * 40}\n" for i in range(20_000))


def plant(page: Page, path: str, text: str) -> None:
    page.evaluate(SAVE_TEXT, [path, text])
    assert page.evaluate(READ_TEXT, path) == text


def test_a_cut_read_of_a_big_file_then_an_overwrite_is_refused_and_the_file_stays(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    text = big_text()
    assert 1_250_000 < len(text.encode()) < 1_350_000
    plant(page, "big-log.txt", text)
    first = ok(page, "jupyter_read_file", {"path": "big-log.txt"})
    assert (
        first["truncated"] is True
        and first["totalBytes"] == len(text.encode())
        and len(first["text"].encode()) <= 16384
    )
    # the attack: what was read plus a line, with the whole file's hash
    refused, result = call(
        page,
        "jupyter_write_file",
        {
            "path": "big-log.txt",
            "content": first["text"] + "one more line\n",
            "overwrite": True,
            "expectedHash": first["hash"],
        },
    )
    assert result["isError"] is True and refused["error"] == "FILE_NOT_FULLY_READ", refused
    assert refused["nextOffset"] == first["nextOffset"] and "jupyter_edit_file" in refused["message"]
    assert page.evaluate(READ_TEXT, "big-log.txt") == text  # intact, to the last byte
    assert_clean(page_log, site_url)


def test_edit_file_changes_a_big_file_without_reading_it_whole(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    text = big_text()
    plant(page, "big-edit.txt", text)
    first = ok(page, "jupyter_read_file", {"path": "big-edit.txt"})  # one page: for the hash only
    line = f"0019000 log entry é✓ {'x' * 40}\n"
    assert text.count(line) == 1 and text.index(line) > 1_000_000
    edited = ok(
        page,
        "jupyter_edit_file",
        {
            "path": "big-edit.txt",
            "oldText": line,
            "newText": "0019000 fixed by the agent\n",
            "expectedHash": first["hash"],
        },
    )
    expected = text.replace(line, "0019000 fixed by the agent\n")
    assert edited["replacements"] == 1 and edited["totalBytes"] == len(expected.encode())
    assert page.evaluate(READ_TEXT, "big-edit.txt") == expected  # every other byte kept
    appended = ok(
        page,
        "jupyter_write_file",
        {"path": "big-edit.txt", "content": "tail\n", "append": True, "expectedHash": edited["hash"]},
    )
    assert appended["appended"] is True and page.evaluate(READ_TEXT, "big-edit.txt") == expected + "tail\n"
    assert_clean(page_log, site_url)


def corner_box(page: Page, tool: str):
    locator = page.locator(f'{CORNER} .webmcp-bridge-proposal[data-scope="workspace"][data-tool="{tool}"]')
    locator.wait_for(timeout=15_000)
    assert locator.count() == 1
    return locator


def test_propose_mode_holds_write_file_and_create_notebook_until_accept(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    turn_propose_on(page)

    start_call(
        page, "write", "jupyter_write_file", {"path": "proposed-notes.md", "content": "# Notes\nwritten after Accept\n"}
    )
    box = corner_box(page, "jupyter_write_file")
    assert "proposed-notes.md" in box.inner_text() and "written after Accept" in box.inner_text()
    page.wait_for_timeout(1000)  # the call is held: a moment later still nothing is on disk
    assert page.evaluate(EXISTS, "proposed-notes.md") is False
    box.locator(".webmcp-bridge-proposal-accept").click()
    written, _ = finish_call(page, "write")
    assert (
        written["created"] is True
        and page.evaluate(READ_TEXT, "proposed-notes.md") == "# Notes\nwritten after Accept\n"
    )

    start_call(page, "create", "jupyter_create_notebook", {"name": "proposed-notebook"})
    box = corner_box(page, "jupyter_create_notebook")
    page.wait_for_timeout(1000)
    assert page.evaluate(EXISTS, "proposed-notebook.ipynb") is False
    box.locator(".webmcp-bridge-proposal-accept").click()
    created, _ = finish_call(page, "create")
    assert created["path"] == "proposed-notebook.ipynb" and page.evaluate(EXISTS, "proposed-notebook.ipynb") is True

    # Deny: the agent hears it, nothing is written
    start_call(page, "deny", "jupyter_write_file", {"path": "denied.txt", "content": "no\n"})
    box = corner_box(page, "jupyter_write_file")
    box.locator(".webmcp-bridge-proposal-reason").fill("not this file")
    box.locator(".webmcp-bridge-proposal-deny").click()
    denied, _ = finish_call(page, "deny")
    assert denied["status"] == "denied" and denied["reason"] == "not this file"
    assert page.evaluate(EXISTS, "denied.txt") is False
    page.locator(CORNER).wait_for(state="detached")  # the corner box goes with the last proposal
    page.evaluate("c => window.jupyterapp.commands.execute(c)", COMMAND)  # back to Direct
    assert_clean(page_log, site_url)


def test_a_hidden_notebook_named_in_capitals_is_not_listed(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    page.evaluate("async () => { await window.jupyterapp.serviceManager.contents.save('caps', {type: 'directory'}); }")
    cell = {
        "cell_type": "code",
        "id": "c1",
        "metadata": {},
        "source": "print('the person’s secret')",
        "outputs": [],
        "execution_count": None,
    }
    hidden = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "cells": [cell],
        "metadata": {"kernelspec": KERNELSPEC, "webmcp_bridge": {"schemaVersion": 1, "access": "none"}},
    }
    visible = {"nbformat": 4, "nbformat_minor": 5, "cells": [cell], "metadata": {"kernelspec": KERNELSPEC}}
    page.evaluate(SAVE_NOTEBOOK, ["caps/X.IPYNB", hidden])
    page.evaluate(SAVE_NOTEBOOK, ["caps/hidden.ipynb", hidden])
    page.evaluate(SAVE_NOTEBOOK, ["caps/Shown.IPYNB", visible])
    listed = [e["path"] for e in ok(page, "jupyter_list_workspace", {"path": "caps"})["entries"]]
    assert listed == ["caps/Shown.IPYNB"]
    payload, result = call(page, "jupyter_open_notebook", {"path": "caps/X.IPYNB"})
    assert result["isError"] is True and payload["error"] == "NOTEBOOK_NOT_FOUND"
    assert_clean(page_log, site_url)


def test_the_comment_dialog_title_does_not_tell_a_hidden_cells_place(page, page_log, site_url):
    from test_panel import DEMO, context_menu, open_panel

    open_notebook(page, site_url, DEMO)
    open_panel(page)
    # the person hides the first cell; the agent sees the others renumbered from 0
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.context.model.sharedModel.cells[0]"
        ".setMetadata('webmcp_bridge', {access: 'none'})"
    )
    assert ok(page, "jupyter_get_context")["notebook"]["hiddenCellCount"] == 1
    context_menu(page, 3, "Comment on cell")  # the person's real fourth cell: the agent's third
    page.locator(".jp-Dialog").wait_for()
    titles = [d["title"] for d in ok(page, "jupyter_get_context")["dialogs"]]
    assert titles == ["Comment on this cell"], titles  # not "Comment on cell 4": that would place the hidden cell
    page.locator(".jp-Dialog .jp-mod-reject").click()
    page.locator(".jp-Dialog").wait_for(state="detached")
    assert_clean(page_log, site_url)
