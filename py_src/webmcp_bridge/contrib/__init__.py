"""The public API for a site's own tools: everything a contribution module imports comes from here.

A contribution module (a ``.py`` file or pure-Python wheel the site names, :mod:`webmcp_bridge.contrib.config`)
defines ``CONTRIBUTIONS``, a list of :class:`Contribution` (an example: README, "Add your own tool"). Handlers reach
notebooks only through ``ctx`` (``await ctx.notebook(path)``: behind the access guard; ``await ctx.propose(...)``:
asks in Propose mode), so a site's tool gets the access control, Propose mode, validation, bounds and observers of
the bridge's own. The output model (:class:`Payload` subclasses; :class:`DeniedPayload` when it proposes;
:func:`sometimes` keys) makes the ``outputSchema``. Its toolset is switched like the bridge's own, never a default.
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
