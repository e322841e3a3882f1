"""Assembling the bridge: one registry with every contributed toolset, over any host."""

from __future__ import annotations

from typing import Any, cast

from .host import NotebookHost
from .limits import DEFAULT_LIMITS, Limits
from .registry import Registry
from .tools import notebooks_toolset
from .tools.common import CallContext


def build_registry(host: NotebookHost, limits: Limits = DEFAULT_LIMITS) -> Registry[CallContext]:
    """A registry over ``host`` with the built-in toolsets (today: ``notebooks``, 17 tools)."""
    registry: Registry[CallContext] = Registry(CallContext(host, limits), limits)
    registry.add_toolset(notebooks_toolset())
    return registry


def tool_definitions(limits: Limits = DEFAULT_LIMITS) -> list[dict[str, Any]]:
    """The WebMCP definitions of the built-in tools (name, title, description, inputSchema, annotations).

    Static data: the build writes it to the loader's ``tools.json`` so the tools can be registered before
    Python starts in the page. Needs no host (definitions never touch one).
    """
    return build_registry(cast(NotebookHost, None), limits).definitions()
