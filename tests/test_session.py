"""The one owner of a session: build_bridge's parts are made once and shared; the page's session stops them all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from helpers import builtin_toolsets, corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.access.guard import GuardedHost
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.lab.session import LabSession
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools.common import CallContext

PATH = "demo/euler.ipynb"


def test_every_part_is_made_once_and_handed_to_the_parts_that_use_it() -> None:
    ws = MemoryWorkspace({PATH: corpus_text("pytudes-euler.ipynb")})
    limits = Limits(result_bytes=30_000)
    bridge = build_bridge(ws, limits=limits)
    ctx = bridge.registry.context
    assert ctx.host is bridge.guard and bridge.guard.raw is ws
    assert ctx.changes is bridge.changes
    assert ctx.proposals is bridge.proposals
    assert ctx.shared is bridge.shared
    assert ctx.pending is bridge.pending is bridge.registry.pending
    assert ctx.dialogs is bridge.dialogs is bridge.registry.dialogs
    assert bridge.limits is limits and ctx.limits is limits
    assert [t.name for t in bridge.registry.toolsets()] == [t.name for t in builtin_toolsets()]
    # the parts are the session's: an agent edit reaches the change log the person's side (the panel) reads
    asyncio.run(bridge.registry.call("jupyter_open_notebook", {"path": PATH}))
    cells = json.loads(
        asyncio.run(bridge.registry.call("jupyter_get_cells", {"startIndex": 0, "endIndex": 1}))["content"][0]["text"]
    )["cells"]
    result = asyncio.run(
        bridge.registry.call(
            "jupyter_update_cell",
            {"cellId": cells[0]["id"], "source": "# changed", "expectedSourceHash": cells[0]["sourceHash"]},
        )
    )
    assert result["isError"] is False, result
    asyncio.run(
        bridge.registry.call("jupyter_get_cell_access", {"cellIds": [cells[0]["id"]]})
    )  # the guard collects the changes
    assert [(e.actor, e.kind) for e in bridge.changes.provenance(PATH, cells[0]["id"], 5)] == [("agent", "edit")]


def test_two_sessions_share_nothing() -> None:
    one, two = build_bridge(MemoryWorkspace({})), build_bridge(MemoryWorkspace({}))
    for name in ("guard", "changes", "proposals", "shared", "pending", "dialogs"):
        assert getattr(one, name) is not getattr(two, name), name
    one.proposals.set_mode("propose")
    assert two.proposals.mode == "direct"


def test_a_handler_context_never_holds_a_raw_host() -> None:
    bridge = build_bridge(MemoryWorkspace({}))
    with pytest.raises(TypeError):
        CallContext(  # type: ignore[arg-type]
            MemoryWorkspace({}),
            bridge.limits,
            bridge.pending,
            bridge.dialogs,
            bridge.shared,
            bridge.reads,
            changes=bridge.changes,
            proposals=bridge.proposals,
        )
    assert isinstance(bridge.registry.context.host, GuardedHost)


class Part:
    def __init__(self, log: list[str], name: str, fail: bool = False) -> None:
        self.log, self.name, self.fail = log, name, fail

    def dispose(self) -> None:
        self.log.append(f"dispose {self.name}")
        if self.fail:
            raise RuntimeError("broken part")

    def unregister(self) -> None:
        self.log.append(f"unregister {self.name}")

    def close(self) -> None:
        self.log.append(f"close {self.name}")


def test_the_page_session_stops_every_part_once_even_when_one_fails(capsys) -> None:
    log: list[str] = []
    session = LabSession(ctx=None)
    session.share, session.view, session.panel = Part(log, "share"), Part(log, "view", fail=True), Part(log, "panel")
    session.settings, session.registration, session.bridge = (
        Part(log, "settings"),
        Part(log, "registration"),
        Part(log, "bridge"),
    )
    session.events = Part(log, "events")
    session.stop()
    assert log == [
        "dispose share",
        "dispose view",
        "dispose settings",
        "dispose panel",
        "dispose events",
        "unregister registration",
        "close bridge",
    ]
    assert "broken part" in capsys.readouterr().err
    assert (
        session.share,
        session.view,
        session.settings,
        session.panel,
        session.events,
        session.registration,
        session.bridge,
    ) == (None,) * 7
    session.stop()  # a second stop does nothing
    assert len(log) == 7


def test_the_snapshot_warm_up_imports_every_module_a_session_start_imports():
    """The worker's memory snapshot holds what :func:`webmcp_bridge.lab.session.warm` imported: every bridge module
    that :class:`~webmcp_bridge.lab.session.LabSession`'s start imports is one of its steps (a module renamed or
    deleted there fails the site's build; one missing here would be imported on each page instead)."""
    import ast
    import importlib.util

    from webmcp_bridge.lab import session

    tree = ast.parse(Path(session.__file__).read_text(encoding="utf-8"))
    started = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("webmcp_bridge.")
    }
    warmed = set(session.STEPS) | set(session.LATER)
    assert started - warmed <= {"webmcp_bridge.lab.ffi"}, sorted(started - warmed)
    for module in warmed:  # each step exists (found, not imported: some need the page's ``js`` module)
        assert importlib.util.find_spec(module) is not None, module
