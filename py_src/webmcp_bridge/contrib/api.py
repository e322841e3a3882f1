"""What a contribution is: toolsets of tools, extensions of other contributions' tools by name, and observers.

Every tool the bridge serves arrives as a :class:`Contribution`, the bridge's own families included
(:mod:`webmcp_bridge.contrib.builtin`); a site author's module offers its own the same way
(:mod:`webmcp_bridge.contrib.loading`). :func:`webmcp_bridge.contrib.assemble.assemble` turns the contributions
into the toolsets the registry serves; the registry knows nothing of contributions.

A tool is a :class:`~webmcp_bridge.calls.registry.Tool`: a pydantic input model (a subclass of
:class:`~webmcp_bridge.calls.registry.ToolInput`), an async handler ``handler(ctx, args)`` receiving the
guarded :class:`~webmcp_bridge.tools.common.CallContext` and the validated arguments, its annotations, and
the :class:`~webmcp_bridge.calls.registry.Toolset` it belongs to.

An :class:`Extension` changes a tool another contribution offers, by name, and the result is still one tool:

- ``title`` / ``description`` / ``annotations`` replace the tool's;
- ``input_model`` narrows its arguments: the agent's arguments are validated against it (its schema is the
  one the page registers), then handed to the tool as the tool's own model reads them; ``fixed`` forces
  values (wire names, e.g. ``{"stopOnError": True}``) and, without an ``input_model``, removes those
  arguments from the tool's schema;
- ``around(ctx, args, call_next)`` wraps the handler: it may check or change the arguments, call
  ``await call_next(ctx, args)`` (the tool as it was before this extension; ``args`` as this extension's
  ``input_model`` reads them, converted to the tool's own) or not, and change the result.

Extensions of one tool apply in ascending ``order``, then by contribution name, then as declared, whatever
the order in which their modules loaded; an extension of a tool that is not there does nothing but leave a
diagnostic.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webmcp_bridge.access.runs import KernelRun
from webmcp_bridge.calls.registry import Annotations, CallEvent, ToolInput, ToolResult, Toolset

#: ``await call_next(ctx, args)``: the tool's handler as it was before the extension (arguments of its model)
CallNext = Callable[[Any, Any], Awaitable["dict[str, Any] | ToolResult"]]
#: ``around(ctx, args, call_next)``: wraps a tool's handler (see the module docstring)
Around = Callable[[Any, Any, CallNext], Awaitable["dict[str, Any] | ToolResult"]]
#: told of every call once it ended (tool, argument summary, outcome, duration in seconds)
CallObserver = Callable[[CallEvent], None]
#: told of every kernel run a tool started (see :class:`~webmcp_bridge.access.runs.KernelRun`)
RunObserver = Callable[[KernelRun], None]


@dataclass(frozen=True)
class Extension:
    """A change to the tool named ``tool``, applied in ``order`` (lowest first; see the module docstring).

    Raises ValueError when it changes nothing or names no valid tool.
    """

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
    """What one contributor offers.

    Attributes:
        name: unique among the page's contributions ("webmcp_bridge.notebooks", "course"...): diagnostics and
            the order of extensions use it.
        toolsets: new toolsets (their names and their tools' names must be new to the page).
        extensions: changes to tools offered by any contribution (this one's included).
        on_call: observers told after every call of every tool.
        on_run: observers told after every kernel run a tool started.
        guidance: one paragraph added to the guidance for agents (:mod:`webmcp_bridge.tools.guidance`: after the
            bridge's own text, in the contributions' order, while the whole stays within 2,000 UTF-8 bytes; one
            that does not fit is left out with a diagnostic). "" adds nothing.

    Observers run on the page's main thread inside the call path: keep them short (no waiting). One that raises
    never fails the call; it is reported once in the diagnostics.
    """

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
