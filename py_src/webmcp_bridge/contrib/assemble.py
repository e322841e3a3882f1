"""Contributions in, the toolsets the registry serves out (docs/ARCHITECTURE.md, "Contributing tools"): each
contribution checked whole, in order (one that fails contributes nothing: diagnostic ``build``); then the extensions,
sorted by (``order``, contribution name, position), each to the tool as the previous left it (one that does not fit
is skipped: diagnostic ``extension``); observers and guidance collected by contribution. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError, create_model

from webmcp_bridge.calls.registry import Handler, Tool, ToolInput, ToolResult, Toolset, validation_problems, wire_names
from webmcp_bridge.contrib.api import Around, CallObserver, Contribution, Extension, RunObserver
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import preview


@dataclass
class Assembly:
    """What :func:`assemble` made: toolsets in order, extensions applied; observers and guidance paragraphs as
    ``(contribution name, value)``; the contributions kept and refused (name -> reason)."""

    toolsets: list[Toolset] = field(default_factory=list)
    on_call: list[tuple[str, CallObserver]] = field(default_factory=list)
    on_run: list[tuple[str, RunObserver]] = field(default_factory=list)
    guidance: list[tuple[str, str]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def _check(contribution: Contribution, toolsets: set[str], tools: set[str]) -> str | None:
    """Why ``contribution`` cannot be kept beside the toolsets and tools already kept, or None."""
    new_toolsets: set[str] = set()
    new_tools: set[str] = set()
    for toolset in contribution.toolsets:
        if toolset.name in toolsets or toolset.name in new_toolsets:
            return f"the toolset {toolset.name!r} is already in the page"
        new_toolsets.add(toolset.name)
        for tool in toolset.tools:
            if not isinstance(tool, Tool):
                return f"toolset {toolset.name!r} holds {type(tool).__name__}, not a Tool"
            if tool.name in tools or tool.name in new_tools:
                return f"the tool {tool.name!r} is already in the page"
            new_tools.add(tool.name)
            if not (isinstance(tool.input_model, type) and issubclass(tool.input_model, ToolInput)):
                return f"the input model of {tool.name} must subclass ToolInput"
            if not callable(tool.handler):
                return f"the handler of {tool.name} is not callable"
            try:
                json.dumps(tool.definition(fresh=False))
            except Exception as exc:
                return (
                    f"the definition of {tool.name} does not generate ({type(exc).__name__}: {preview(str(exc), 160)})"
                )
    return None


def narrowed_model(model: type[ToolInput], fixed: Mapping[str, Any]) -> type[ToolInput]:
    """``model`` without the arguments ``fixed`` names (the agent's schema); its validators run when the arguments
    are handed to the tool."""
    fields: dict[str, Any] = {
        name: (f.annotation, f) for name, f in model.model_fields.items() if (f.alias or name) not in fixed
    }
    narrowed: type[ToolInput] = create_model(
        f"{model.__name__}Narrowed", __base__=ToolInput, __doc__=model.__doc__, **fields
    )
    return narrowed


def _converting(handler: Handler, inner: type[ToolInput], fixed: Mapping[str, Any]) -> Handler:
    """``handler`` fed the agent's arguments (and non-null defaults) plus ``fixed``, validated as ``inner``."""

    async def handle(ctx: Any, args: Any) -> Any:
        if isinstance(args, inner) and not fixed:
            return await handler(ctx, args)
        full = args.model_dump(by_alias=True, mode="json")
        given = {type(args).model_fields[name].alias or name for name in args.model_fields_set}
        data = {key: value for key, value in full.items() if key in given or value is not None}
        data.update(fixed)
        try:
            converted = inner.model_validate_json(json.dumps(data))
        except ValidationError as exc:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                "The arguments do not fit the tool this one narrows.",
                problems=validation_problems(exc),
            ) from None
        return await handler(ctx, converted)

    return handle


def _around(around: Around, call_next: Handler) -> Handler:
    async def handle(ctx: Any, args: Any) -> Any:
        result = await around(ctx, args, call_next)
        if isinstance(result, ToolResult) and result.text is not None:
            # the JSON text a built-in measured is of its own payload: an extension may have changed the payload
            return dataclasses.replace(result, text=None)
        return result

    return handle


def extend(tool: Tool, extension: Extension) -> Tool:
    """``tool`` changed by ``extension``, the same name. Raises ValueError when it does not fit (an argument the tool
    does not take, a fixed unknown argument, a definition that does not generate)."""
    inner = tool.input_model
    known = wire_names(inner)
    unknown_fixed = sorted(set(extension.fixed) - known)
    if unknown_fixed:
        raise ValueError(f"it fixes {', '.join(unknown_fixed)}, which {tool.name} does not take")
    model = extension.input_model or (narrowed_model(inner, extension.fixed) if extension.fixed else inner)
    added = sorted(wire_names(model) - known)
    if added:
        raise ValueError(f"its input model adds {', '.join(added)}, which {tool.name} does not take")
    clash = sorted(set(extension.fixed) & wire_names(model))
    if clash and extension.input_model is not None:
        raise ValueError(f"its input model still offers {', '.join(clash)}, which it also fixes")
    handler: Handler = tool.handler
    if model is not inner or extension.fixed:
        handler = _converting(handler, inner, dict(extension.fixed))
    if extension.around is not None:
        handler = _around(extension.around, handler)
    extended = dataclasses.replace(
        tool,
        title=tool.title if extension.title is None else extension.title,
        description=tool.description if extension.description is None else extension.description,
        annotations=tool.annotations if extension.annotations is None else extension.annotations,
        input_model=model,
        handler=handler,
    )
    json.dumps(extended.definition(fresh=False))
    return extended


def assemble(contributions: Iterable[Contribution], diagnostics: Diagnostics) -> Assembly:
    """The assembly of ``contributions``; every problem goes to ``diagnostics``, never raised."""
    result = Assembly()
    kept: list[Contribution] = []
    names: set[str] = set()
    toolset_names: set[str] = set()
    tool_names: set[str] = set()
    for contribution in contributions:
        if not isinstance(contribution, Contribution):
            reason = f"{type(contribution).__name__} is not a Contribution"
            diagnostics.add(str(getattr(contribution, "name", "?")), "build", reason)
            continue
        reason = (
            f"another contribution is already named {contribution.name!r}"
            if contribution.name in names
            else _check(contribution, toolset_names, tool_names)
        )
        if reason is not None:
            result.refused[contribution.name] = reason
            diagnostics.add(contribution.name, "build", f"{reason}; it contributed nothing")
            continue
        kept.append(contribution)
        names.add(contribution.name)
        for toolset in contribution.toolsets:
            toolset_names.add(toolset.name)
            tool_names.update(tool.name for tool in toolset.tools)
    tools: dict[str, Tool] = {tool.name: tool for c in kept for ts in c.toolsets for tool in ts.tools}
    ordered = sorted(
        ((ext.order, c.name, i, ext) for c in kept for i, ext in enumerate(c.extensions)), key=lambda t: t[:3]
    )
    for _order, name, _index, ext in ordered:
        target = tools.get(ext.tool)
        if target is None:
            diagnostics.add(name, "extension", f"extends {ext.tool}, which is not in the page: nothing was changed")
            continue
        try:
            tools[ext.tool] = extend(target, ext)
        except Exception as exc:
            diagnostics.add(name, "extension", f"its extension of {ext.tool} was not applied: {preview(str(exc), 200)}")
    for contribution in kept:
        for toolset in contribution.toolsets:
            result.toolsets.append(dataclasses.replace(toolset, tools=tuple(tools[t.name] for t in toolset.tools)))
        result.on_call.extend((contribution.name, observer) for observer in contribution.on_call)
        result.on_run.extend((contribution.name, observer) for observer in contribution.on_run)
        if contribution.guidance.strip():
            result.guidance.append((contribution.name, contribution.guidance))
        result.kept.append(contribution.name)
    return result
