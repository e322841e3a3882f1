"""What jupyter_save_notebook reports (what reached the file, by outcome of JupyterLab's "File Changed" dialog) and
how the agent is told the notebook is open in another tab, on the in-memory host (the browser's two real tabs
are in playwright-tests/test_two_tabs.py)."""

from __future__ import annotations

import json

from test_dialogs import NB, Agent, opened, run


def changed_on_disk(agent: Agent, marker: str) -> str:
    """Another tab saves the file: its text changes under this one (its cell x = 41 becomes ``marker``)."""
    text = json.loads(agent.ws.files[NB])
    text["cells"] = [
        {"cell_type": "code", "id": "other", "metadata": {}, "source": marker, "outputs": [], "execution_count": None}
    ]
    agent.ws.files[NB] = json.dumps(text)
    agent.ws.open[NB].saved_elsewhere = True
    return agent.ws.files[NB]


def test_a_plain_save_reports_the_revision_it_wrote():
    async def scenario():
        agent = Agent()
        await opened(agent)
        revision = (await agent.ok("jupyter_get_context"))["notebook"]["revision"]
        saved = await agent.ok("jupyter_save_notebook", {})
        assert (saved["saved"], saved["outcome"], saved["savedRevision"]) == (True, "saved", revision), saved
        assert "unsavedChanges" not in saved and saved["notebook"]["dirty"] is False
        assert "x = 41" in agent.ws.files[NB]

    run(scenario)


def test_revert_in_file_changed_writes_nothing_and_says_so():
    """Before, Revert came back as saved: true although nothing was written."""

    async def scenario():
        agent = Agent()
        await opened(agent)
        on_disk = changed_on_disk(agent, "y = 'from the other tab'")
        assert (await agent.ok("jupyter_get_context"))["notebook"]["savedElsewhere"] is True
        pending = await agent.ok("jupyter_save_notebook", {})
        assert pending["status"] == "pending" and pending["dialog"]["title"] == "File Changed", pending
        reverted = await agent.ok("jupyter_answer_dialog", {"button": "Revert"})
        assert (reverted["saved"], reverted["outcome"]) == (False, "reverted"), reverted
        assert "Revert" in reverted["message"] and "savedRevision" not in reverted
        assert agent.ws.files[NB] == on_disk  # nothing written
        cells = (await agent.ok("jupyter_get_cells", {}))["cells"]
        assert [c["source"] for c in cells] == ["y = 'from the other tab'"]  # this tab shows the file now
        assert reverted["notebook"]["savedElsewhere"] is False

    run(scenario)


def test_overwrite_in_file_changed_is_reported_as_such():
    async def scenario():
        agent = Agent()
        await opened(agent)
        changed_on_disk(agent, "y = 'from the other tab'")
        revision = (await agent.ok("jupyter_get_context"))["notebook"]["revision"]
        pending = await agent.ok("jupyter_save_notebook", {})
        done = await agent.ok("jupyter_answer_dialog", {"button": "Overwrite", "dialogId": pending["dialog"]["id"]})
        assert (done["saved"], done["outcome"], done["savedRevision"]) == (True, "overwritten", revision), done
        assert "Overwrite replaced" in done["message"] and "x = 41" in agent.ws.files[NB]
        assert done["notebook"]["savedElsewhere"] is False

    run(scenario)


def test_the_agent_is_told_the_notebook_is_open_in_another_tab():
    async def scenario():
        agent = Agent()
        cell = await opened(agent)
        context = await agent.ok("jupyter_get_context")
        assert (context["notebook"]["otherTabs"], context["notebook"]["savedElsewhere"]) == (0, False)
        source = (await agent.ok("jupyter_get_cells", {"cellIds": [cell]}))["cells"][0]
        alone = await agent.ok(
            "jupyter_update_cell", {"cellId": cell, "source": "x = 42", "expectedSourceHash": source["sourceHash"]}
        )
        assert "otherTabs" not in alone["notebook"]  # nothing to say: write results stay as they were
        agent.ws.open[NB].other_tabs = 1  # the person opens the notebook in a second tab
        assert (await agent.ok("jupyter_get_context"))["notebook"]["otherTabs"] == 1
        edited = await agent.ok("jupyter_edit_cell_source", {"cellId": cell, "oldText": "42", "newText": "43"})
        assert (edited["notebook"]["otherTabs"], edited["notebook"]["savedElsewhere"]) == (1, False), edited
        batch = await agent.ok("jupyter_apply_edits", {"edits": [{"op": "insert", "source": "z = 1"}]})
        assert batch["notebook"]["otherTabs"] == 1
        saved = await agent.ok("jupyter_save_notebook", {})
        assert saved["saved"] is True and saved["notebook"]["otherTabs"] == 1

    run(scenario)
