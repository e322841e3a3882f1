"""The one owner of a session: :func:`build_bridge` makes every part a session needs (registry, access guard, change
log, proposal book, shared selections, calls, dialog tracker, diagnostics) once, over any host, and hands each to
the parts that use it.
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

#: the toolsets served unless the URL or settings choose: notebooks (17 tools) and calls (2); with the always-on
#: discovery tool that is 20, the budget (core.limits.TOOL_BUDGET)
DEFAULT_TOOLSETS = ("notebooks", "calls")
#: always on: the discovery tool, so every other toolset stays one call away
ALWAYS_TOOLSETS = ("toolsets",)


@dataclasses.dataclass(eq=False)
class Bridge:
    """Every part of one session, made by :func:`build_bridge`. ``registry.context`` (a
    :class:`~webmcp_bridge.tools.common.CallContext`) is what every handler gets; ``guard`` is the only host a tool
    holds (``guard.raw``: the person's side); ``reads``: the pages of big sources the agent was given;
    ``diagnostics``: what went wrong with the site's contributions."""

    registry: Registry[CallContext]
    guard: GuardedHost
    changes: ChangeLog
    proposals: ProposalBook
    shared: SharedSelections
    reads: SourceReads
    pending: PendingCalls
    dialogs: DialogTracker
    toolsets: ToolsetSwitch
    diagnostics: Diagnostics

    @property
    def limits(self) -> Limits:
        """The bounds in force now (the settings may replace them)."""
        return self.registry.limits

    def close(self) -> None:
        """Stop watching the dialogs (the caller unregisters the tools first)."""
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
    """A session over the raw ``host`` (only the guard made here holds it for a tool). ``dialogs``: watched from
    now on (None: none reported). ``toolsets``: the base (default: the built-in contributions). ``contributions``:
    the site's, assembled after the base (:func:`~webmcp_bridge.contrib.assemble.assemble`); one failing a check is
    left out and reported in ``diagnostics``. ``page_secret``: the review signatures' key (default: a random one).
    Raises ValueError when the base has two toolsets or tools of one name."""
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


def tools_manifest(limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The loader's ``tools.json``, ``{"definitions": [...], **ToolsetSwitch.manifest()}``: written by the build, so
    the page registers the tools its URL chooses before Python starts (docs/loader.md 2b)."""
    bridge = build_bridge(cast(NotebookHost, None), limits=limits)
    return {"definitions": bridge.registry.definitions(), **bridge.toolsets.manifest()}
