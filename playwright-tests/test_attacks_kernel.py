"""The kernel model, replayed as the attacks that found it (docs/SECURITY.md, "The kernel").

The agent shares the kernel with the person, and code it ran once keeps acting later: in the person's runs, on
the files other notebooks saved, through a notebook file's own trust flag. Each test here is one such attack, as
the agent would make it (native WebMCP tools, ``jupyter_run_code`` putting code in the kernel) and as the person
would meet it (real key presses and clicks), and asserts what the person would see: the page flag a hostile
output tries to set stays unset, the run waits for the person's Accept, what is hidden stays out of the agent's
answers. Each failed on the code before the kernel model (the hook's handler ran, the planted file's script ran,
the other notebook's hidden cell was printed, the hook's log held the hidden text, the update re-rendered as
trusted, the hidden notebook saved by another tab was read without Accept).
"""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_panel import PANEL, open_panel, section
from test_propose_browser import box_for, diff_of, finish_call, start_call
from test_safety import KERNELSPEC, PLANT, open_planted
from test_tools import ok

MODEL = "window.jupyterapp.shell.currentWidget.context.model"
CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
#: an output whose handler sets the page flag window.__pwn when it renders trusted
PWN_HTML = '<img class="pwn" src="x" onerror="window.__pwn=1">'
NONE = {"webmcp_bridge": {"access": "none"}}
SECRET = "CANARY-kernel-4b1d"


def code_cell(cell_id: str, source: str, outputs: list | None = None, **metadata) -> dict:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": metadata,
        "source": source,
        "outputs": outputs or [],
        "execution_count": None,
    }


def run_as_person(page: Page, index: int) -> None:
    """Run cell ``index`` of the notebook in front as the person does: click it, command mode, Shift+Enter; wait until
    its run ended (an execution count)."""
    page.locator(CELLS).nth(index).locator(".jp-InputArea").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(f"i => {MODEL}.cells.get(i).executionCount != null", arg=index, timeout=KERNEL_TIMEOUT_MS)


def agent_code(page: Page, code: str) -> dict:
    """The agent's jupyter_run_code, followed to its end; asserts it ran without being held."""
    payload = ok(page, "jupyter_run_code", {"code": code}, timeout=KERNEL_TIMEOUT_MS)
    while payload.get("status") == "pending":
        payload = ok(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"]}, timeout=KERNEL_TIMEOUT_MS)
    assert payload["status"] == "ok", payload
    return payload


def images(page: Page, index: int):
    return page.locator(CELLS).nth(index).locator(".jp-OutputArea-output img.pwn")


def cycle_access(page: Page, index: int, change: str) -> None:
    """The person's "Cycle agent access" on cell ``index`` from its context menu, once the menu offers ``change``
    ("write → read"): the menu's label and state follow each right-click."""
    page.locator(CELLS).nth(index).click(button="right")
    page.locator(".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel", has_text=change).click()


def restart_from_the_panel(page: Page) -> None:
    """The person's "Restart the agent's kernels" in the Agent panel's Access section, confirmed in the dialog."""
    open_panel(page)
    section(page, "access").locator('[data-action="restart-agent-kernels"]').click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator("button.jp-mod-warn").click()
    expect(dialog).to_have_count(0)
    expect(section(page, "access").locator('[data-action="restart-agent-kernels"]')).to_have_count(0, timeout=30_000)


# -- 1: a hook the agent left scripts the page through the person's run ------------------------------------------
def test_a_hook_the_agent_left_renders_untrusted_in_the_persons_run_until_the_kernel_restarts(page, page_log, site_url):
    open_planted(page, site_url, "hook.ipynb", [code_cell("a", "x = 1"), code_cell("b", "y = 2")])
    hook = (
        "from IPython.display import HTML, display\n"
        f"get_ipython().events.register('post_run_cell', lambda *_: display(HTML({PWN_HTML!r})))"
    )
    agent_code(page, hook)  # nothing is hidden: it runs at once
    run_as_person(page, 0)
    expect(images(page, 0)).to_have_count(1, timeout=KERNEL_TIMEOUT_MS)  # the hook's output, in the person's cell
    assert images(page, 0).first.get_attribute("onerror") is None  # sanitized: no handler
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwn") is None
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is False
    # the person is told why, and offered the restart
    open_panel(page)
    expect(section(page, "access").locator('[data-role="agent-kernel"]')).to_be_visible()
    restart_from_the_panel(page)
    # after the restart the person's runs are theirs again: their own HTML output renders trusted
    ok(page, "jupyter_get_cells")  # the bridge still answers
    mine = f"from IPython.display import HTML\nHTML({PWN_HTML!r})"
    page.evaluate(f"source => {MODEL}.cells.get(1).sharedModel.setSource(source)", mine)
    run_as_person(page, 1)
    page.wait_for_function("() => window.__pwn === 1", timeout=KERNEL_TIMEOUT_MS)
    assert not page_log.own_page_errors()


# -- 1b: the agent writes a cell and the person runs it -----------------------------------------------------------
def test_a_cell_the_agent_wrote_renders_untrusted_when_the_person_moves_and_runs_it(page, page_log, site_url):
    open_planted(page, site_url, "written.ipynb", [code_cell("a", "x = 1")])
    source = f"from IPython.display import HTML, display\ndisplay(HTML({PWN_HTML!r}))"
    inserted = ok(page, "jupyter_insert_cell", {"referenceCellId": "a", "position": "below", "source": source})["cell"]
    assert inserted["index"] == 1
    # the person moves it to the top first (JupyterLab makes a new cell model for a moved cell)
    page.locator(CELLS).nth(1).locator(".jp-InputArea").click()
    page.keyboard.press("Escape")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:move-cell-up')")
    page.wait_for_function(f"id => {MODEL}.cells.get(0).id === id", arg=inserted["id"])
    run_as_person(page, 0)  # the agent's code, run by the person: the kernel is the agent's from before the request
    expect(images(page, 0)).to_have_count(1, timeout=KERNEL_TIMEOUT_MS)
    assert images(page, 0).first.get_attribute("onerror") is None
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwn") is None
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is False
    open_panel(page)
    expect(section(page, "access").locator('[data-role="agent-kernel"]')).to_be_visible()
    assert not page_log.own_page_errors()


# -- 2: a notebook file's own "trusted": true runs its script on open --------------------------------------------
def test_a_planted_notebooks_trust_flags_are_ignored_when_it_opens(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    planted = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": KERNELSPEC},
        "cells": [
            code_cell(
                "t",
                "print('hello')",
                [{"output_type": "display_data", "data": {"text/html": PWN_HTML}, "metadata": {}}],
                trusted=True,
            )
        ],
    }
    # the agent's kernel code writes the file to the drive, then the agent opens it (never held)
    agent_code(page, f"import json\nopen('planted.ipynb', 'w').write(json.dumps({planted!r}))")
    ok(page, "jupyter_open_notebook", {"path": "planted.ipynb"})
    page.wait_for_function(
        f"() => {MODEL}.cells.length === 1 && window.jupyterapp.shell.currentWidget.context.path === 'planted.ipynb'"
    )
    expect(images(page, 0)).to_have_count(1, timeout=30_000)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwn") is None
    assert images(page, 0).first.get_attribute("onerror") is None
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is False
    # a notebook a person uploads is read the same way: only the person's Trust command trusts it
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:trust'); }")  # its dialog waits for a click
    page.locator(".jp-Dialog button.jp-mod-warn").click()
    page.wait_for_function("() => window.__pwn === 1", timeout=30_000)
    assert not page_log.own_page_errors()


# -- 3: agent code in a new notebook reads another notebook's hidden cell from its saved file ----------------------
def test_another_notebooks_hidden_cell_holds_every_run_of_the_agent_anywhere(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    content = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": KERNELSPEC},
        "cells": [code_cell("open", "x = 1"), code_cell("secret", f"token = {SECRET!r}", **NONE)],
    }
    page.evaluate(PLANT, {"path": "private.ipynb", "content": content})  # saved, never opened in this page
    ok(page, "jupyter_create_notebook", {"name": "scratch.ipynb"})  # created and opened
    start_call(
        page,
        "read",
        "jupyter_run_code",
        {"notebookPath": "scratch.ipynb", "code": "print(open('private.ipynb').read())"},
    )
    box = box_for(page, tool="jupyter_run_code")  # shown to the person first, in Direct mode
    assert "private.ipynb" in "\n".join(text for _, text in diff_of(box))
    box.locator(".webmcp-bridge-proposal-deny").click()
    denied, result = finish_call(page, "read")
    assert denied["status"] == "denied" and SECRET not in json.dumps(result)
    assert not page_log.own_page_errors()


# -- 4: a hook left before anything was hidden records what is hidden later ---------------------------------------
def test_hiding_restarts_the_kernel_the_agent_left_a_hook_in_before_the_hidden_cell_runs(page, page_log, site_url):
    open_planted(page, site_url, "diary.ipynb", [code_cell("a", "x = 1"), code_cell("b", f"token = {SECRET!r}")])
    recorder = (
        "def _record(info):\n"
        "    with open('diary.txt', 'a') as f:\n"
        "        f.write(info.raw_cell + '\\n')\n"
        "get_ipython().events.register('pre_run_cell', _record)"
    )
    agent_code(page, recorder)  # nothing hidden yet: it runs at once
    # the person hides cell b from the Access section's cell menu (cycle: write -> read -> none)
    open_panel(page)
    cycle_access(page, 1, "write → read")
    page.wait_for_function(f"() => {MODEL}.cells.get(1).sharedModel.getMetadata('webmcp_bridge')?.access === 'read'")
    cycle_access(page, 1, "read → none")
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Restart")  # told before anything is hidden
    dialog.locator("button.jp-mod-warn").click()
    page.wait_for_function(
        f"() => {MODEL}.cells.get(1).sharedModel.getMetadata('webmcp_bridge')?.access === 'none'", timeout=30_000
    )
    run_as_person(page, 1)  # the person runs the hidden cell, then saves
    page.keyboard.press("Control+s")
    text = page.evaluate(
        """async () => {
        try { return (await window.jupyterapp.serviceManager.contents.get('diary.txt', {content: true})).content; }
        catch { return ''; }
    }"""
    )
    assert SECRET not in text  # the hook went with the restart
    found = ok(page, "jupyter_search", {"query": SECRET})
    assert SECRET not in json.dumps(found)
    assert not page_log.own_page_errors()


def test_declining_the_restart_hides_nothing(page, page_log, site_url):
    open_planted(page, site_url, "keep.ipynb", [code_cell("a", "x = 1")])
    agent_code(page, "z = 3")
    open_panel(page)
    cycle_access(page, 0, "write → read")  # no restart needed
    page.wait_for_function(f"() => {MODEL}.cells.get(0).sharedModel.getMetadata('webmcp_bridge')?.access === 'read'")
    cycle_access(page, 0, "read → none")  # asks
    page.locator(".jp-Dialog button.jp-mod-reject").click()
    expect(page.locator(f"{PANEL} [role=status]")).to_contain_text("Nothing was hidden")
    assert page.evaluate(f"() => {MODEL}.cells.get(0).sharedModel.getMetadata('webmcp_bridge')?.access") == "read"
    assert agent_code(page, "print(z)")["outputs"][0]["text"] == "3\n"  # the kernel kept its state
    assert not page_log.own_page_errors()


# -- 5: update_display re-renders the person's trusted output with the agent's HTML --------------------------------
def test_update_display_from_the_agents_code_renders_untrusted_in_the_persons_output(page, page_log, site_url):
    shown = "from IPython.display import HTML, display\ndisplay(HTML('<b>mine</b>'), display_id='d1')"
    open_planted(page, site_url, "display.ipynb", [code_cell("a", shown), code_cell("b", "y = 2")])
    run_as_person(page, 0)  # the person's own output: trusted
    expect(page.locator(CELLS).nth(0).locator(".jp-OutputArea-output b")).to_have_text(
        "mine", timeout=KERNEL_TIMEOUT_MS
    )
    assert page.evaluate(f"() => {MODEL}.cells.get(0).trusted") is True
    agent_code(
        page, f"from IPython.display import HTML, update_display\nupdate_display(HTML({PWN_HTML!r}), display_id='d1')"
    )
    expect(images(page, 0)).to_have_count(1, timeout=KERNEL_TIMEOUT_MS)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwn") is None
    assert images(page, 0).first.get_attribute("onerror") is None
    # the same from a cell the agent runs
    cell = ok(page, "jupyter_get_cells")["cells"][1]
    again = PWN_HTML.replace("pwn", "pwn two")
    update = f"from IPython.display import HTML, update_display\nupdate_display(HTML({again!r}), display_id='d1')"
    ok(page, "jupyter_update_cell", {"cellId": cell["id"], "source": update, "expectedSourceHash": cell["sourceHash"]})
    ok(page, "jupyter_run_cells", {"cellIds": [cell["id"]]}, timeout=KERNEL_TIMEOUT_MS)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__pwn") is None
    assert not page_log.own_page_errors()


# -- 8: a notebook saved as hidden by another tab is read without Accept (the reused walk) -----------------------
def test_a_notebook_saved_hidden_elsewhere_holds_the_very_next_run(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    agent_code(page, "print(1)")  # nothing hidden: the workspace was walked
    content = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": KERNELSPEC, **NONE},
        "cells": [code_cell("s", f"token = {SECRET!r}")],
    }
    page.evaluate(PLANT, {"path": "uploaded.ipynb", "content": content})  # another tab's save, an upload
    start_call(page, "next", "jupyter_run_code", {"code": "print(open('uploaded.ipynb').read())"})
    box = box_for(page, tool="jupyter_run_code")  # at once, not after a reuse window
    box.locator(".webmcp-bridge-proposal-deny").click()
    denied, result = finish_call(page, "next")
    assert denied["status"] == "denied" and SECRET not in json.dumps(result)
    assert not page_log.own_page_errors()
