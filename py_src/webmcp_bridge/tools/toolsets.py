"""jupyter_toolsets: the discovery tool. Lists the page's toolsets and turns them on or off (its tools registered at
once, the page's WebMCP ``toolchange`` firing), for this page only (:mod:`webmcp_bridge.calls.toolsets`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, ToolInput
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import AGENT_DROP_THRESHOLD, MAX_TOOLSET_WORDS, TOOL_NAME_MAX_CHARS
from webmcp_bridge.tools.common import CallContext, tool

ToolsetNames = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=TOOL_NAME_MAX_CHARS)]], Field(max_length=MAX_TOOLSET_WORDS)
]


class ToolsetsInput(ToolInput):
    enable: ToolsetNames | None = Field(
        None, description="Toolsets to turn on (names from the listing); their tools are registered at once."
    )
    disable: ToolsetNames | None = Field(None, description="Toolsets to turn off (an always-on toolset cannot be).")


class ToolsetOut(Wire):
    name: str
    description: str
    tools: list[str]
    enabled: bool
    alwaysOn: bool


class ToolsetsOutput(Payload):
    toolsets: list[ToolsetOut]
    changed: list[str] = Field(description="Toolsets turned on or off by this call.")
    registeredToolCount: int
    warning: str = sometimes()


async def toolsets(ctx: CallContext, args: ToolsetsInput) -> dict[str, Any]:
    switch = ctx.toolsets
    if switch is None:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "This session has no toolset switch: every toolset is on.")
    listed = {t["name"] for t in switch.listing()}
    for name in [*(args.enable or []), *(args.disable or [])]:
        if name not in listed:  # a toolset whose every tool the person disabled does not exist for the agent
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"There is no toolset named {name[:TOOL_NAME_MAX_CHARS]!r}.",
                known=sorted(listed),
            )
    try:
        changed = switch.switch(args.enable or (), args.disable or ())
    except ValueError as exc:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, f"{str(exc)[:300]}.") from None
    count = len(switch.registry.definitions(fresh=False))
    payload: dict[str, Any] = {"toolsets": switch.listing(), "changed": changed, "registeredToolCount": count}
    if count > AGENT_DROP_THRESHOLD:
        payload["warning"] = (
            f"{count} tools are registered; some in-browser agents drop every tool of a page with more than "
            f"{AGENT_DROP_THRESHOLD}. Turn off toolsets you do not need."
        )
    return payload


TOOLS = (
    tool(
        "jupyter_toolsets",
        "List this page's toolsets (name, description, tool names, enabled) and turn toolsets on (enable) or off "
        "(disable). Only some toolsets are registered when the page loads; turning one on registers its tools at "
        "once.",
        toolsets,
        Annotations.write(destructive=False, idempotent=True),
        ToolsetsOutput,
    ),
)
