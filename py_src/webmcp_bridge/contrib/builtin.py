"""The bridge's own tool families, offered as contributions like anyone's: one per toolset, named
``webmcp_bridge.<toolset>``, in the order their tools are registered (the ``notebooks`` core first)."""

from __future__ import annotations

from webmcp_bridge.contrib.api import Contribution
from webmcp_bridge.tools import (
    access_toolset,
    batch_toolset,
    calls_toolset,
    code_toolset,
    files_toolset,
    notebooks_toolset,
    review_toolset,
    search_toolset,
    toolsets_toolset,
    variables_toolset,
)

#: the prefix of the bridge's own contributions' names
BUILTIN_PREFIX = "webmcp_bridge."


def builtin_contributions() -> list[Contribution]:
    """The built-in families, ``notebooks`` first and ``toolsets`` (the discovery tool) last."""
    toolsets = (
        notebooks_toolset(),
        calls_toolset(),
        access_toolset(),
        review_toolset(),
        files_toolset(),
        batch_toolset(),
        code_toolset(),
        variables_toolset(),
        search_toolset(),
        toolsets_toolset(),
    )
    return [Contribution(BUILTIN_PREFIX + toolset.name, toolsets=(toolset,)) for toolset in toolsets]
