"""The public API for a site's own tools: everything a contribution module imports comes from here.

A contribution module (a ``.py`` file or a pure-Python wheel the site serves and names in its configuration,
see :mod:`webmcp_bridge.contrib.config`) defines ``CONTRIBUTIONS``, a list of :class:`Contribution`::

    from typing import Annotated
    from pydantic import Field
    from webmcp_bridge.contrib import Annotations, CallContext, Contribution, Payload, Tool, ToolInput, Toolset

    class HelloInput(ToolInput):
        name: Annotated[str, Field(description="Who to greet.", max_length=100)]

    class HelloOutput(Payload):
        greeting: str

    async def hello(ctx: CallContext, args: HelloInput) -> dict:
        return {"greeting": f"Hello, {args.name}"}

    CONTRIBUTIONS = [Contribution("hello", toolsets=(Toolset("hello", "Greetings.", (
        Tool("site_hello", "Say hello", "Greets someone by name.", HelloInput, hello, Annotations(read_only=True),
             HelloOutput),
    )),))]

Handlers reach notebooks only through ``ctx`` (:class:`CallContext`: ``await ctx.notebook(path)`` gives the
notebook behind the access guard, ``await ctx.propose(...)`` asks the person in Propose mode), so a site's tool
gets the same access control, Propose mode, validation, bounds, envelope and observers as the bridge's own.

A tool's last argument, its output model (a :class:`Payload` subclass, or a union of them; :class:`DeniedPayload`
when the tool proposes in Propose mode; :func:`sometimes` for a key that is sometimes absent), makes the
definition's ``outputSchema`` (:mod:`webmcp_bridge.calls.payloads`); without one the tool has none. Its
toolset is one the page can turn on and off like the bridge's own (:mod:`webmcp_bridge.calls.toolsets`: the
agent's ``jupyter_toolsets``, the page URL's ``?toolsets=``, the ``toolsets`` setting); a site's toolsets are not
among the default ones a page registers at load.
"""

from __future__ import annotations

from webmcp_bridge.access.runs import KernelRun
from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, CallEvent, Tool, ToolInput, ToolResult, Toolset
from webmcp_bridge.contrib.api import Around, CallNext, CallObserver, Contribution, Extension, RunObserver
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.paths import normalize_path
from webmcp_bridge.propose.proposals import DeniedPayload
from webmcp_bridge.tools.common import CallContext, CellIdField, NotebookInput, NotebookPathField, summary

__all__ = [
    "Annotations",
    "Around",
    "CallContext",
    "CallEvent",
    "CallNext",
    "CallObserver",
    "CellIdField",
    "Contribution",
    "DeniedPayload",
    "ErrorCode",
    "Extension",
    "KernelRun",
    "NotebookInput",
    "NotebookPathField",
    "Payload",
    "RunObserver",
    "Tool",
    "ToolError",
    "ToolInput",
    "ToolResult",
    "Toolset",
    "Wire",
    "normalize_path",
    "sometimes",
    "summary",
]
