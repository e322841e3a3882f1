"""The one owner of a session: :func:`build_bridge` makes every part a session needs, over any host.

A session is one registry with the toolsets of its contributions (the built-in families and a site's own,
:mod:`webmcp_bridge.contrib`) over one host, and the state its tools and the person's side share: the access guard
(:class:`~webmcp_bridge.access.guard.GuardedHost`, the one checkpoint every tool goes through), the change log, the
proposal book (the mode and the proposals waiting for the person), the output text the person shared, the calls (running
and pending), the dialog tracker and the diagnostics of the site's contributions. Each is created
here, once, and handed to the parts that use it; no part creates its own. The JupyterLab side
(:mod:`webmcp_bridge.lab.session`) builds one :class:`Bridge` over the live application and reaches every
part through it; tests build one over the in-memory host.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from webmcp_bridge.access.guard import GuardedHost
from webmcp_bridge.calls.dialogs import DialogTracker
from webmcp_bridge.calls.pending import PendingCalls
from webmcp_bridge.calls.registry import Registry, Toolset
from webmcp_bridge.calls.toolsets import ToolsetSwitch
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.contrib.api import Contribution
from webmcp_bridge.contrib.assemble import assemble
from webmcp_bridge.contrib.builtin import builtin_contributions
from webmcp_bridge.contrib.observe import attach_observers
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.limits import DEFAULT_LIMITS, Limits
from webmcp_bridge.core.source_reads import SourceReads
from webmcp_bridge.host.protocol import DialogSource, NotebookHost
from webmcp_bridge.propose.hold import hold_site_tool
from webmcp_bridge.propose.proposals import ProposalBook
from webmcp_bridge.sharing.selections import SharedSelections
from webmcp_bridge.tools.common import CallContext
from webmcp_bridge.tools.guidance import guidance_text

#: the toolsets a page serves at load unless its URL or the settings choose (calls/toolsets.py): the core notebook
#: job (read, edit, run: 17 tools) and following calls that outlive the timeout or open a dialog (2); with the
#: always-on discovery tool that is 20 tools, the budget (core.limits.TOOL_BUDGET)
DEFAULT_TOOLSETS = ("notebooks", "calls")
#: always on: the discovery tool, so every other toolset stays one call away
ALWAYS_TOOLSETS = ("toolsets",)


def builtin_toolsets() -> list[Toolset]:
    """The built-in toolsets, in registration order (the order of the registered tools): the toolsets of
    :func:`~webmcp_bridge.contrib.builtin.builtin_contributions`."""
    return [toolset for contribution in builtin_contributions() for toolset in contribution.toolsets]


class Bridge:
    """Every part of one session, created by :func:`build_bridge` (build it there, not by hand).

    Attributes:
        registry: the tool registry; its ``context`` (a :class:`~webmcp_bridge.tools.common.CallContext`) is what
            every handler gets, holding the parts below.
        guard: the host behind the access guard; the only host a tool ever holds (``guard.raw`` is the
            unguarded one, for the person's side).
        changes: who (person or agent) changed which cell, fed by the guard.
        proposals: Propose mode: the mode and the proposals waiting for the person.
        shared: output text the person shared with the agent.
        reads: which pages of big cell sources the agent was given (a whole-source write needs them all).
        pending: the registry's calls, running and pending.
        dialogs: the page's dialogs and the calls that own them.
        toolsets: which toolsets the page serves (every one until the page chooses: ``toolsets.choose()``).
        diagnostics: what went wrong with the site's contributions (the status item, ``jupyter_get_context``).
    """

    def __init__(
        self,
        registry: Registry[CallContext],
        guard: GuardedHost,
        changes: ChangeLog,
        proposals: ProposalBook,
        shared: SharedSelections,
        reads: SourceReads,
        pending: PendingCalls,
        dialogs: DialogTracker,
        toolsets: ToolsetSwitch,
        diagnostics: Diagnostics | None = None,
    ) -> None:
        self.registry = registry
        self.guard = guard
        self.changes = changes
        self.proposals = proposals
        self.shared = shared
        self.reads = reads
        self.pending = pending
        self.dialogs = dialogs
        self.toolsets = toolsets
        self.diagnostics = Diagnostics() if diagnostics is None else diagnostics

    @property
    def limits(self) -> Limits:
        """The bounds in force now (the person's settings may replace them: :mod:`webmcp_bridge.session.settings`)."""
        return self.registry.limits

    def close(self) -> None:
        """Stop watching the application's dialogs. The registry answers no call after the host is gone, so
        the caller unregisters the tools first."""
        self.dialogs.close()


def build_bridge(
    host: NotebookHost,
    *,
    limits: Limits = DEFAULT_LIMITS,
    dialogs: DialogSource | None = None,
    toolsets: Iterable[Toolset] | None = None,
    contributions: Sequence[Contribution] = (),
    diagnostics: Diagnostics | None = None,
    page_secret: Callable[[], bytes | None] | None = None,
) -> Bridge:
    """A session over ``host``: every part created once and handed to the parts that use it.

    Args:
        host: the application (raw; only the guard made here ever holds it for a tool).
        limits: the bounds of inputs, results and waits.
        dialogs: the application's dialogs, watched from now on (None: no dialogs, none is ever reported).
        toolsets: the base toolsets, in order (default: the built-in contributions,
            :func:`~webmcp_bridge.contrib.builtin.builtin_contributions`).
        contributions: the site's contributions, in discovery order, assembled after the base
            (:func:`~webmcp_bridge.contrib.assemble.assemble`: extensions applied, observers attached); one that
            fails a check is left out and reported in ``diagnostics``.
        diagnostics: where problems of the site's contributions go (default: a new list, ``Bridge.diagnostics``).
        page_secret: gives the key of the person's review signatures (``CallContext.page_secret``; in the page,
            ``lab/page_secret.py``); default: a random key of this session's own.

    Raises ValueError when the base itself is inconsistent (two toolsets or tools of one name).
    """
    diagnostics = Diagnostics() if diagnostics is None else diagnostics
    base = builtin_contributions() if toolsets is None else [Contribution("base", toolsets=tuple(toolsets))]
    assembly = assemble([*base, *contributions], diagnostics)
    # a site author's tool that does not declare itself read-only waits for the person in Propose mode
    site = {ts.name for c in contributions if isinstance(c, Contribution) for ts in c.toolsets} - {
        ts.name for c in base for ts in c.toolsets
    }
    assembly.toolsets = [
        dataclasses.replace(ts, tools=tuple(hold_site_tool(t) for t in ts.tools)) if ts.name in site else ts
        for ts in assembly.toolsets
    ]
    for contribution in base:
        if contribution.name in assembly.refused:
            raise ValueError(assembly.refused[contribution.name])
    changes = ChangeLog()
    proposals = ProposalBook()
    shared = SharedSelections()
    reads = SourceReads()
    pending = PendingCalls(limits.pending_keep_seconds, limits.pending_keep_count)
    tracker = DialogTracker(dialogs, pending, limits)
    # a call waiting for the person's decision on a proposal opens no dialog, so never owns one
    tracker.waiting_for_person = lambda: {p.task for p in proposals.waiting()}
    guard = GuardedHost(host, changes.ingest, proposals)
    context = CallContext(
        guard, limits, pending, tracker, shared, reads, diagnostics, changes=changes, proposals=proposals
    )
    if page_secret is not None:
        context.page_secret = page_secret
    registry: Registry[CallContext] = Registry(context, limits, pending, tracker)
    for toolset in assembly.toolsets:
        registry.add_toolset(toolset)
    attach_observers(registry, guard.runs, assembly, diagnostics)
    registry.context.guidance = guidance_text(assembly.guidance, diagnostics)
    switch = ToolsetSwitch(registry, DEFAULT_TOOLSETS, ALWAYS_TOOLSETS)
    registry.context.toolsets = switch
    tracker.start()
    return Bridge(registry, guard, changes, proposals, shared, reads, pending, tracker, switch, diagnostics)


def tool_definitions(limits: Limits = DEFAULT_LIMITS) -> list[dict[str, Any]]:
    """The WebMCP definitions of every built-in tool (name, title, description, inputSchema, outputSchema,
    annotations), every toolset on. Needs no host (definitions never touch one)."""
    return build_bridge(cast(NotebookHost, None), limits=limits).registry.definitions()


def tools_manifest(limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The loader's ``tools.json``: ``{"definitions": [every tool's definition], **ToolsetSwitch.manifest()}``
    (each toolset's tool names, the aliases ``all``/``default``, the always-on toolsets, the query key).

    Static data, written by the build, so the page registers the tools its URL chooses before Python starts
    there (Python then corrects the set if the settings choose otherwise, docs/loader.md 2b).
    """
    bridge = build_bridge(cast(NotebookHost, None), limits=limits)
    return {"definitions": bridge.registry.definitions(), **bridge.toolsets.manifest()}
