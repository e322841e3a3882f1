"""What a contribution is: toolsets of tools, extensions of other contributions' tools by name, and observers
(docs/ARCHITECTURE.md, "Contributing tools").

An :class:`Extension` changes a tool by name, still one tool: ``title`` / ``description`` / ``annotations``
replace; ``input_model`` narrows the arguments (handed on as the tool's own model reads them); ``fixed`` forces
values (wire names), removed from the schema without an ``input_model``; ``around(ctx, args, call_next)`` wraps the
handler. Extensions of one tool apply by ``order``, contribution name, then as declared, whatever the load order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webmcp_bridge.access.runs import KernelRun
from webmcp_bridge.calls.registry import Annotations, CallEvent, ToolInput, ToolResult, Toolset

#: ``await call_next(ctx, args)``: the tool's handler as it was before the extension (arguments of its model)
CallNext = Callable[[Any, Any], Awaitable["dict[str, Any] | ToolResult"]]
#: ``around(ctx, args, call_next)``: wraps a tool's handler
Around = Callable[[Any, Any, CallNext], Awaitable["dict[str, Any] | ToolResult"]]
#: told of every call once it ended (tool, argument summary, outcome, duration in seconds)
CallObserver = Callable[[CallEvent], None]
#: told of every kernel run a tool started (see :class:`~webmcp_bridge.access.runs.KernelRun`)
RunObserver = Callable[[KernelRun], None]


@dataclass(frozen=True)
class Extension:
    """A change to the tool named ``tool``, applied in ``order`` (lowest first). Raises ValueError when it changes
    nothing or names no valid tool."""

    tool: str
    order: int = 0
    title: str | None = None
    description: str | None = None
    annotations: Annotations | None = None
    input_model: type[ToolInput] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    around: Around | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str) or not self.tool:
            raise ValueError("an extension names the tool it extends")
        if isinstance(self.order, bool) or not isinstance(self.order, int):
            raise ValueError(f"the order of an extension of {self.tool} is an integer")
        if (
            self.title is None
            and self.description is None
            and self.annotations is None
            and self.input_model is None
            and not self.fixed
            and self.around is None
        ):
            raise ValueError(f"the extension of {self.tool} changes nothing")
        if self.description is not None and not self.description.strip():
            raise ValueError(f"the extension of {self.tool} gives an empty description")
        if self.input_model is not None and not (
            isinstance(self.input_model, type) and issubclass(self.input_model, ToolInput)
        ):
            raise ValueError(f"the input_model of the extension of {self.tool} must subclass ToolInput")
        if self.around is not None and not callable(self.around):
            raise ValueError(f"the around of the extension of {self.tool} must be an async function")


@dataclass(frozen=True)
class Contribution:
    """What one contributor offers: ``name`` unique in the page; ``toolsets`` with new names; ``extensions`` of any
    contribution's tools; ``on_call`` / ``on_run`` observers after every call / kernel run (on the page's main
    thread: keep them short; one that raises is reported once, never fails the call); ``guidance``: a paragraph
    for agents, kept while the whole stays within 2,000 UTF-8 bytes."""

    name: str
    toolsets: tuple[Toolset, ...] = ()
    extensions: tuple[Extension, ...] = ()
    on_call: tuple[CallObserver, ...] = ()
    on_run: tuple[RunObserver, ...] = ()
    guidance: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or len(self.name) > 128:
            raise ValueError("a contribution has a name of 1 to 128 characters")
        for label in ("toolsets", "extensions", "on_call", "on_run"):
            value = getattr(self, label)
            if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
                raise ValueError(f"{label} of contribution {self.name} is a tuple")
            object.__setattr__(self, label, tuple(value))
        if not isinstance(self.guidance, str):
            raise ValueError(f"the guidance of contribution {self.name} is a string")
        for toolset in self.toolsets:
            if not isinstance(toolset, Toolset):
                raise ValueError(f"contribution {self.name}: toolsets holds {type(toolset).__name__}, not a Toolset")
        for extension in self.extensions:
            if not isinstance(extension, Extension):
                raise ValueError(
                    f"contribution {self.name}: extensions holds {type(extension).__name__}, not an Extension"
                )
        for observer in (*self.on_call, *self.on_run):
            if not callable(observer):
                raise ValueError(f"contribution {self.name}: an observer is not callable")
