"""Two tabs of one site on one notebook, in the real JupyterLite: two pages of one browser context (same origin, same
storage), each with its own copy of the notebook and its own bridge.

Rounds of races: the agent saves in both pages at about the same moment (the second started 0 to 40 ms after the
first), and the agent saves in one page while the person saves in the other; every round edits the same cell in
both pages. Checked each round: no report says ``saved: true`` for work that did not reach the file, exactly one
side's save wrote when both had edited, the file (read back through the contents service) is what the reports
say, and the side that lost gets JupyterLab's "File Changed" dialog, whose Cancel is a normal result. Also: each
page is told the notebook is open in the other, and no longer once it closes.
"""

from __future__ import annotations

import json

from playwright.sync_api import Page

from lite_site import bring_to_front, wait_for_bridge
from test_propose_browser import PANEL_JS, start_call
from test_safety import open_planted
from test_tools import call, ok

PATH = "two-tabs.ipynb"
CELL = "race"
ROUNDS = 6


def live_source(page: Page) -> str:
    """The race cell's source in this page's copy of the notebook (read as the agent reads it)."""
    return ok(page, "jupyter_get_cells", {"notebookPath": PATH, "cellIds": [CELL]})["cells"][0]["source"]


def file_source(page: Page) -> str:
    """The race cell's source in the file, read through the contents service (what a reload would show)."""
    return page.evaluate(
        f"""async path => {{
        const model = await window.jupyterapp.serviceManager.contents.get(path, {{content: true}});
        const cell = model.content.cells.find(c => c.id === '{CELL}');
        return typeof cell.source === 'string' ? cell.source : cell.source.join('');
    }}""",
        PATH,
    )


def agent_edits(page: Page, text: str) -> dict:
    """The agent replaces the race cell's source in this page (read first, for the hash)."""
    cell = ok(page, "jupyter_get_cells", {"notebookPath": PATH, "cellIds": [CELL]})["cells"][0]
    return ok(
        page,
        "jupyter_update_cell",
        {"notebookPath": PATH, "cellId": CELL, "source": text, "expectedSourceHash": cell["sourceHash"]},
    )


def collect(page: Page, key: str) -> dict:
    """The payload of a call started with start_call: its final result, or its pending payload when it is waiting
    on a dialog it owns (never collected blindly: a dialog must be answered)."""
    result = page.evaluate(
        "async key => { const r = await window.__calls[key]; return typeof r === 'string' ? JSON.parse(r) : r; }", key
    )
    payload = json.loads(result["content"][0]["text"])
    while payload.get("status") == "pending" and "dialog" not in payload:
        payload, result = call(page, "jupyter_wait_for_result", {"pendingId": payload["pendingId"], "timeout": 5})
    assert result["isError"] is False, payload
    return payload


def answer(page: Page, dialog: dict, button: str) -> dict:
    """The agent answers the "File Changed" dialog its save owns; returns the save's own final result."""
    assert dialog["title"] == "File Changed" and [b["label"] for b in dialog["buttons"]] == [
        "Cancel",
        "Revert",
        "Overwrite",
    ], dialog
    done = ok(page, "jupyter_answer_dialog", {"button": button, "dialogId": dialog["id"]})
    assert done["answered"]["button"] == button
    return done


def other_tabs(page: Page) -> int | None:
    """notebook.otherTabs of jupyter_get_context, with the notebook brought to the front (the current notebook
    follows the page's focus, which two headless pages trade)."""
    ok(page, "jupyter_open_notebook", {"path": PATH})
    context = ok(page, "jupyter_get_context")
    assert context["notebook"]["path"] == PATH, context["notebook"]
    return context["notebook"]["otherTabs"]


def wait_other_tabs(page: Page, expected: int) -> None:
    for _ in range(40):
        if other_tabs(page) == expected:
            return
        page.wait_for_timeout(250)
    assert other_tabs(page) == expected


def person_save_dialog(page: Page) -> bool:
    """Whether the person's page shows JupyterLab's "File Changed" dialog (waits a moment for it)."""
    try:
        page.locator(".jp-Dialog .jp-Dialog-header", has_text="File Changed").wait_for(timeout=3_000)
        return True
    except Exception:
        return False


def person_clicks(page: Page, button: str) -> None:
    page.locator(".jp-Dialog button", has_text=button).click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def open_second_tab(page: Page, site_url: str) -> None:
    """Open the notebook in another tab of the same site (it restores the first tab's layout too: the notebook is
    brought to the front by JupyterLab's own open command)."""
    page.goto(f"{site_url}/lab/index.html?path={PATH}")
    assert wait_for_bridge(page)["state"] == "ready"
    bring_to_front(page, PATH)


def agents_race(a: Page, b: Page, r: int, on_disk, live) -> None:
    """Round ``r``: the agent edits the race cell in both tabs, then saves in both at about the same moment (the
    second 0 to 40 ms after the first). Exactly one save writes; the other gets "File Changed", answered Cancel (then
    Revert), Revert or Overwrite by turns. ``on_disk()``: the race cell's source in the file; ``live(page)``: in a
    tab."""
    marks = {"a": f"a = {r}", "b": f"b = {r}"}
    edited = agent_edits(a, marks["a"])
    assert edited["notebook"]["otherTabs"] == 1  # the write result says so too
    agent_edits(b, marks["b"])
    first, second = (a, b) if r % 2 == 0 else (b, a)
    start_call(first, f"save{r}", "jupyter_save_notebook", {"notebookPath": PATH})
    second.wait_for_timeout(r * 4 % 41)
    start_call(second, f"save{r}", "jupyter_save_notebook", {"notebookPath": PATH})
    reports = {"a": collect(a, f"save{r}"), "b": collect(b, f"save{r}")}
    wrote = [side for side, rep in reports.items() if rep.get("saved") is True]
    waiting = [side for side, rep in reports.items() if rep.get("status") == "pending"]
    # both edited the same cell from the same version: exactly one save can have written
    assert len(wrote) == 1 and len(waiting) == 1, (r, reports)
    winner, loser = wrote[0], waiting[0]
    assert reports[winner]["outcome"] == "saved" and on_disk() == marks[winner], (r, reports, on_disk())
    pages = {"a": a, "b": b}
    button = ("Cancel", "Revert", "Overwrite")[r % 3]
    done = answer(pages[loser], reports[loser]["dialog"], button)
    if button == "Cancel":  # a normal result, nothing written; the loser keeps its edit
        assert (done["saved"], done["outcome"]) == (False, "cancelled") and "Cancel" in done["message"], done
        assert on_disk() == marks[winner] and live(pages[loser]) == marks[loser]
        again = ok(
            pages[loser], "jupyter_save_notebook", {"notebookPath": PATH}, collect=False
        )  # still conflicting: asked again
        done = answer(pages[loser], again["dialog"], "Revert")
    if button == "Overwrite":
        assert (done["saved"], done["outcome"]) == (True, "overwritten") and on_disk() == marks[loser], (r, done)
        # the winner's copy is now older than the file: its next save is asked about, and reverts to the file
        winner_save = ok(pages[winner], "jupyter_save_notebook", {"notebookPath": PATH}, collect=False)
        assert winner_save.get("status") == "pending", winner_save
        assert answer(pages[winner], winner_save["dialog"], "Revert")["outcome"] == "reverted"
    else:
        assert (done["saved"], done["outcome"]) == (False, "reverted") and on_disk() == marks[winner], (r, done)
    # both tabs now hold the file's version
    assert live(a) == live(b) == on_disk(), r


def test_two_tabs_racing_saves_never_lose_work_silently(page, page_log, site_url):
    a = page
    # two tabs of one site: autosave off, so every save of the rounds is one the test started
    open_planted(
        a,
        site_url,
        PATH,
        [
            {
                "cell_type": "code",
                "id": CELL,
                "metadata": {},
                "source": "start = 0",
                "outputs": [],
                "execution_count": None,
            },
            {"cell_type": "markdown", "id": "note", "metadata": {}, "source": "# Two tabs"},
        ],
    )
    a.evaluate(
        "() => window.jupyterapp.serviceManager.settings.save('@jupyterlab/docmanager-extension:plugin', "
        "JSON.stringify({autosave: false}))"
    )
    b = a.context.new_page()
    b.on("pageerror", lambda error: page_log.page_errors.append(f"page b: {error}"))
    open_second_tab(b, site_url)
    # each is told the notebook is open in the other tab
    wait_other_tabs(a, 1)
    wait_other_tabs(b, 1)

    # -- the agent in both tabs saves at about the same moment -------------------------------------------------------
    for r in range(ROUNDS):
        agents_race(a, b, r, lambda: file_source(a), live_source)

    # -- the agent in one tab, the person saving in the other ---------------------------------------------------------
    for r in range(ROUNDS // 2):
        marks = {"agent": f"agent = {r}", "person": f"person = {r}"}
        agent_edits(a, marks["agent"])
        b.evaluate(
            f"([path, text]) => [...({PANEL_JS})(path).content.model.sharedModel.cells]"
            f".find(c => c.id === '{CELL}').setSource(text)",
            [PATH, marks["person"]],
        )
        if r % 2 == 0:
            start_call(a, f"p{r}", "jupyter_save_notebook", {"notebookPath": PATH})
            b.evaluate(
                "() => { window.__personSave = window.jupyterapp.commands.execute('docmanager:save').catch(String); }"
            )
        else:
            b.evaluate(
                "() => { window.__personSave = window.jupyterapp.commands.execute('docmanager:save').catch(String); }"
            )
            start_call(a, f"p{r}", "jupyter_save_notebook", {"notebookPath": PATH})
        agent_report = collect(a, f"p{r}")
        person_asked = person_save_dialog(b)
        if agent_report.get("saved") is True:
            # the agent's save wrote first: the person's save must not overwrite it silently
            assert person_asked, (r, agent_report, file_source(a))
            assert file_source(a) == marks["agent"]
            person_clicks(b, "Revert")
        else:
            # the person's save wrote first: the agent is asked, and Cancel is a normal result
            assert agent_report.get("status") == "pending" and not person_asked, (r, agent_report)
            b.evaluate("() => window.__personSave")
            assert file_source(a) == marks["person"]
            done = answer(a, agent_report["dialog"], "Cancel")
            assert (done["saved"], done["outcome"]) == (False, "cancelled"), done
            assert file_source(a) == marks["person"] and live_source(a) == marks["agent"]  # the agent's edit kept
            again = ok(a, "jupyter_save_notebook", {"notebookPath": PATH}, collect=False)
            assert answer(a, again["dialog"], "Revert")["outcome"] == "reverted"
        assert live_source(a) == live_source(b) == file_source(a), r

    # the other tab closes: no longer counted
    b.close()
    wait_other_tabs(a, 0)
    assert not page_log.own_page_errors()
