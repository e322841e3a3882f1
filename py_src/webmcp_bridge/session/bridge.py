"""Assembling the bridge: one registry with every contributed toolset, over any host."""

from __future__ import annotations

from typing import Any, cast

from webmcp_bridge.calls.dialogs import DialogTracker
from webmcp_bridge.calls.pending import PendingCalls
from webmcp_bridge.calls.registry import Registry
from webmcp_bridge.core.limits import DEFAULT_LIMITS, Limits
from webmcp_bridge.host.protocol import DialogSource, NotebookHost
from webmcp_bridge.tools import access_toolset, batch_toolset, calls_toolset, code_toolset, files_toolset, notebooks_toolset, review_toolset
from webmcp_bridge.tools.common import CallContext


def build_registry(host: NotebookHost, limits: Limits = DEFAULT_LIMITS, dialogs: DialogSource | None = None) -> Registry[CallContext]:
    """A registry over ``host`` behind the access guard (:class:`~webmcp_bridge.access.guard.GuardedHost`, the one
    checkpoint every tool goes through; ``registry.context.changes`` is its change log) with the built-in
    toolsets, sharing one set of pending calls and one dialog tracker (over ``dialogs``, the application's
    dialogs, watched from now on; None: no dialogs) between the registry and the handlers."""
    pending = PendingCalls(limits.pending_keep_seconds, limits.pending_keep_count)
    tracker = DialogTracker(dialogs, pending, limits)
    tracker.start()
    registry: Registry[CallContext] = Registry(CallContext(host, limits, pending, dialogs=tracker), limits, pending, tracker)
    book = registry.context.proposals
    tracker.waiting_for_person = lambda: {p.task for p in book.waiting()}
    registry.add_toolset(notebooks_toolset())
    registry.add_toolset(calls_toolset())
    registry.add_toolset(access_toolset())
    registry.add_toolset(review_toolset())
    registry.add_toolset(files_toolset())
    registry.add_toolset(batch_toolset())
    registry.add_toolset(code_toolset())
    return registry


def tool_definitions(limits: Limits = DEFAULT_LIMITS) -> list[dict[str, Any]]:
    """The WebMCP definitions of the built-in tools (name, title, description, inputSchema, annotations).

    Static data: the build writes it to the loader's ``tools.json`` so the tools can be registered before
    Python starts in the page. Needs no host (definitions never touch one).
    """
    return build_registry(cast(NotebookHost, None), limits).definitions()
