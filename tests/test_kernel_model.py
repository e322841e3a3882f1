"""The kernel model's parts that need no browser (docs/SECURITY.md, "The kernel"): the demo site's notebooks carry no
trust flag of their own, and the in-memory host says when its kernel is the agent's as the page does (the agent's
code makes it so, the bridge's own programs do not, a restart ends it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from host_memory import MemoryWorkspace
from webmcp_bridge.session.bridge import build_bridge

CONTENT = Path(__file__).resolve().parents[1] / "lite" / "content"


def test_the_demo_notebooks_carry_no_trust_flags():
    """Trust comes from the person's Trust command, never from a file the site ships."""
    notebooks = sorted(CONTENT.rglob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        flagged = [i for i, cell in enumerate(cells) if "trusted" in cell.get("metadata", {})]
        assert flagged == [], f"{path.name}: cells {flagged} carry a trusted flag"


def test_the_agents_code_makes_the_kernel_the_agents_until_it_restarts():
    nb_json = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "code", "id": "a", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None}
        ],
    }
    ws = MemoryWorkspace({"n.ipynb": json.dumps(nb_json)})
    bridge = build_bridge(ws)
    nb = asyncio.run(ws.open_notebook("n.ipynb", True))
    call = lambda name, args: asyncio.run(bridge.registry.call(name, args))  # noqa: E731
    assert call("jupyter_list_variables", {})["isError"] is False
    assert nb.agent_kernel() is None  # the bridge's own inspection program is not the agent's code
    assert call("jupyter_run_code", {"code": "y = 2"})["isError"] is False
    since = nb.agent_kernel()
    assert since is not None
    assert call("jupyter_run_cells", {})["isError"] is False and nb.agent_kernel() == since
    ws.dialogs.confirm_restart = False
    assert call("jupyter_kernel_action", {"action": "restart"})["isError"] is False
    assert nb.agent_kernel() is None
