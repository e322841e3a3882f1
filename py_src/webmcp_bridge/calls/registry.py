"""The one tool registry: tools as pydantic input model + handler + annotations, grouped in toolsets (the single
mechanism for contributing tools, :meth:`Registry.add_toolset`).

Everything the agent can call goes through :meth:`Registry.call`, which never raises: it refuses unknown tools and
arguments over ``Limits.input_bytes``, validates them against the model that made the ``inputSchema`` (never echoing
the input), runs the handler (:class:`~webmcp_bridge.core.errors.ToolError` -> error payload,
:class:`~webmcp_bridge.calls.outcome.CallEnded` -> its payload, anything else -> INTERNAL_ERROR), fits the payload
under ``Limits.result_bytes`` in an MCP CallToolResult, tells the hooks, goes pending past the execution timeout or
when a dialog opens, adds the open dialogs, and aborts on the client's abort (docs/TOOLS.md, "The result
envelope", "Pending calls", "Aborting a call").
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import dataclasses
import functools
import json
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from webmcp_bridge.calls.dialogs import DialogTracker, can_own_dialogs
from webmcp_bridge.calls.outcome import CallEnded
from webmcp_bridge.calls.payloads import output_schema, shared_output_schema
from webmcp_bridge.calls.pending import PendingCall, PendingCalls
from webmcp_bridge.calls.schemas import inline_refs
from webmcp_bridge.core.bounds import dumps, fit_payload_text
from webmcp_bridge.core.errors import ErrorCode, ToolError, aborted
from webmcp_bridge.core.limits import (
    ARGUMENT_SUMMARY_BYTES,
    DEFAULT_LIMITS,
    TOOL_NAME_MAX_CHARS,
    UNKNOWN_ARGUMENTS_CHARS,
    VALIDATION_MESSAGE_BYTES,
    VALIDATION_PROBLEMS,
    Limits,
    preview,
)

TOOL_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


class ToolInput(BaseModel):
    """Base of every tool's input model: camelCase names, unknown keys rejected, no coercion, frozen."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, alias_generator=to_camel, populate_by_name=False
    )

    @model_validator(mode="before")
    @classmethod
    def _only_wire_names(cls, data: Any) -> Any:
        """Refuse non-wire names: pydantic would silently drop a Python field name (``start_index``)."""
        if isinstance(data, dict):
            allowed = wire_names(cls)
            unknown = sorted(str(k) for k in data if k not in allowed)
            if unknown:
                raise ValueError(f"unknown argument(s): {', '.join(unknown)[:UNKNOWN_ARGUMENTS_CHARS]}")
        return data


@functools.cache
def wire_names(model: type[BaseModel]) -> frozenset[str]:
    """The argument names of ``model`` as the agent sends them (aliases), made once per model."""
    return frozenset(f.alias or name for name, f in model.model_fields.items())


@dataclass(frozen=True)
class Annotations:
    """A tool's ``annotations``, in two vocabularies. WebMCP's (Chromium's): ``read_only``, ``untrusted_content``
    (the result carries page text the agent must not take as instructions), ``consequential``. The MCP
    specification's ``ToolAnnotations``: ``destructive`` (may delete or overwrite), ``idempotent`` (again changes
    nothing more), ``open_world`` (reaches beyond the workspace); None: left out (MCP's defaults then apply:
    destructive, not idempotent, open world).
    """

    read_only: bool = False
    untrusted_content: bool = False
    consequential: bool = False
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def read(cls, *, untrusted_content: bool = True) -> Annotations:
        """A tool that only reads the workspace: idempotent, not destructive, closed world."""
        return cls(True, untrusted_content, False, False, True, False)

    @classmethod
    def write(
        cls, *, destructive: bool, idempotent: bool, untrusted_content: bool = False, consequential: bool = False
    ) -> Annotations:
        """A tool that changes only the workspace. Every built-in write states both MCP hints, which clients act on
        (docs/TOOLS.md, "Tool annotations"): ``destructive`` when it may delete, overwrite or reset (sources, cells,
        outputs, runs, kernel, files, dialog buttons), not when it only adds or points (insert, move, focus, comment,
        open); ``idempotent`` when the same call again changes nothing more (not inserts, text replacements, runs,
        kernel actions, comments, dialog answers, file writes). ``untrusted_content``: its result or error can carry
        page text (a STALE_CELL previews the source)."""
        return cls(False, untrusted_content, consequential, destructive, idempotent, False)

    def to_webmcp(self) -> dict[str, bool]:
        """The definition's ``annotations``: the WebMCP hints always, the MCP hints that are stated."""
        stated = {
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return {
            "readOnlyHint": self.read_only,
            "untrustedContentHint": self.untrusted_content,
            "consequentialHint": self.consequential,
            **{key: value for key, value in stated.items() if value is not None},
        }


@dataclass
class ToolResult:
    """A handler's result beyond a payload: ``images``, MCP image blocks after the text block; ``text``, the payload's
    :func:`~webmcp_bridge.core.bounds.dumps` text when the handler has it (not serialized again)."""

    payload: dict[str, Any]
    images: list[dict[str, str]] = field(default_factory=list)
    final: dict[str, Any] | None = None  # a finished CallToolResult to return as it is (a collected pending call)
    text: str | None = None


C = TypeVar("C")
Handler = Callable[[Any, Any], Awaitable["dict[str, Any] | ToolResult"]]


@dataclass(frozen=True)
class Tool:
    """One tool: ``name`` matches ``[A-Za-z0-9_.-]{1,128}`` (WebMCP's rule); async ``handler(ctx, args)`` gets the
    validated ``input_model``; ``output_model`` (a model or union) makes the ``outputSchema`` (None: none)."""

    name: str
    title: str
    description: str
    input_model: type[ToolInput]
    handler: Handler
    annotations: Annotations = Annotations()
    output_model: Any = None

    def __post_init__(self) -> None:
        if not (1 <= len(self.name) <= TOOL_NAME_MAX_CHARS and set(self.name) <= TOOL_NAME_CHARS):
            raise ValueError(f"invalid tool name {self.name!r}")
        if not self.description.strip():
            raise ValueError(f"tool {self.name} needs a description")

    def input_schema(self, fresh: bool = True) -> dict[str, Any]:
        """The input's JSON Schema. ``fresh`` False: the shared cached one, for a caller that only reads it (copies
        cost the start-up ≈ 0.3 s a round over the tools)."""
        return input_schema(self.input_model) if fresh else _input_schema(self.input_model)

    def output_schema(self, fresh: bool = True) -> dict[str, Any] | None:
        """The JSON Schema of a success's ``structuredContent``, or None. ``fresh``: as for :meth:`input_schema`."""
        if self.output_model is None:
            return None
        return output_schema(self.output_model) if fresh else shared_output_schema(self.output_model)

    def definition(self, fresh: bool = True) -> dict[str, Any]:
        """The WebMCP tool definition without ``execute``. ``fresh``: as for :meth:`input_schema`."""
        definition: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema(fresh),
        }
        schema = self.output_schema(fresh)
        if schema is not None:
            definition["outputSchema"] = schema
        definition["annotations"] = self.annotations.to_webmcp()
        return definition


@dataclass(frozen=True)
class Toolset:
    """A named group of tools contributed together (for example ``notebooks``)."""

    name: str
    description: str
    tools: tuple[Tool, ...]


@dataclass(frozen=True)
class CallEvent:
    """What hooks see of a call: ``outcome`` "ok" or the error code; ``duration`` seconds (None before it ran);
    ``arguments`` a bounded one-line summary, never the input; ``invocation`` the caller's id for it, or None."""

    call_id: int
    tool: str
    arguments: str
    started: float
    duration: float | None = None
    outcome: str | None = None
    invocation: str | None = None


Hook = Callable[[CallEvent], None]

#: the call whose handler runs in this task and the tasks it starts (so a kernel run can name its call)
current_call: contextvars.ContextVar[CallEvent | None] = contextvars.ContextVar("webmcp_bridge_call", default=None)


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON Schema for ``model`` by alias, ``$defs`` inlined (:func:`webmcp_bridge.calls.schemas.inline_refs`), root
    an object with ``additionalProperties: false``. Made once per model, a fresh copy each call."""
    return copy.deepcopy(_input_schema(model))


@functools.cache
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = inline_refs(model.model_json_schema(by_alias=True, mode="validation"))
    schema.setdefault("properties", {})
    schema["type"] = "object"
    schema["additionalProperties"] = False
    return schema


class Envelope(dict[str, Any]):
    """A CallToolResult dict keeping ``payload_text``, its ``structuredContent``'s JSON, for :func:`result_json`.
    Whoever changes ``structuredContent`` builds a new result."""

    payload_text: str


def envelope(
    payload: dict[str, Any], *, is_error: bool, images: list[dict[str, str]] | None = None, text: str | None = None
) -> dict[str, Any]:
    """An MCP CallToolResult: one JSON text block (plus images), the payload as ``structuredContent``, ``isError``.
    ``text``: the payload's :func:`~webmcp_bridge.core.bounds.dumps` text when the caller has it."""
    text = dumps(payload) if text is None else text
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content.extend(images or [])
    result = Envelope(content=content, structuredContent=payload, isError=is_error)
    result.payload_text = text
    return result


def result_json(result: dict[str, Any], *, structured: bool = True) -> str:
    """A CallToolResult as JSON text (``json.loads`` gives ``result``), an :class:`Envelope`'s payload serialized
    once. ``structured`` False leaves ``structuredContent`` out (docs/TOOLS.md "The result envelope")."""
    if not structured:
        result = {key: value for key, value in result.items() if key != "structuredContent"}
        return json.dumps(result, ensure_ascii=False)
    text = getattr(result, "payload_text", None)
    if not isinstance(text, str) or set(result) != {"content", "structuredContent", "isError"}:
        return json.dumps(result, ensure_ascii=False)
    return "".join(
        (
            '{"content":',
            json.dumps(result["content"], ensure_ascii=False),
            ',"structuredContent":',
            text,
            ',"isError":',
            "true" if result["isError"] else "false",
            "}",
        )
    )


def validation_problems(exc: ValidationError) -> list[dict[str, str]]:
    """pydantic's errors as ``[{loc, msg, type}]`` (bounded; never the input)."""
    return [
        {
            "loc": ".".join(str(p) for p in e["loc"]),
            "msg": preview(e["msg"], VALIDATION_MESSAGE_BYTES),
            "type": e["type"],
        }
        for e in exc.errors(include_url=False, include_input=False, include_context=False)[:VALIDATION_PROBLEMS]
    ]


def summarize_arguments(raw: str, max_bytes: int = ARGUMENT_SUMMARY_BYTES) -> str:
    """A bounded one-line summary of a call's argument JSON, for activity and diagnostics."""
    return preview(" ".join(raw[: max_bytes * 2].split()), max_bytes)


class Registry(Generic[C]):
    """All tools, one call path. ``context``: every handler's ``ctx``
    (:class:`webmcp_bridge.tools.common.CallContext`); ``limits``: bounds of inputs and results."""

    def __init__(
        self,
        context: C,
        limits: Limits = DEFAULT_LIMITS,
        pending: PendingCalls | None = None,
        dialogs: DialogTracker | None = None,
    ) -> None:
        self.context = context
        self.limits = limits
        self.pending = pending or PendingCalls(limits.pending_keep_seconds, limits.pending_keep_count)
        self.dialogs = dialogs or DialogTracker(None, self.pending, limits)  # no source: no dialog is ever reported
        self._tools: dict[str, Tool] = {}
        self._toolsets: dict[str, Toolset] = {}
        self._before: list[Hook] = []
        self._after: list[Hook] = []
        self._next_call = 1
        self.disabled: frozenset[str] = frozenset()  # turned off by the person (settings: disabledTools)
        self.toolsets_off: frozenset[str] = frozenset()  # toolsets this page does not serve (calls.toolsets)

    def add_toolset(self, toolset: Toolset) -> None:
        """Add every tool of ``toolset``. Raises ValueError on a duplicate toolset or tool name."""
        if toolset.name in self._toolsets:
            raise ValueError(f"toolset {toolset.name!r} is already registered")
        for tool in toolset.tools:
            if tool.name in self._tools:
                raise ValueError(f"tool {tool.name!r} is already registered")
        self._toolsets[toolset.name] = toolset
        for tool in toolset.tools:
            self._tools[tool.name] = tool

    def toolsets(self) -> list[Toolset]:
        """The toolsets, in the order they were added."""
        return list(self._toolsets.values())

    def tools(self) -> list[Tool]:
        """Every registered tool, in registration order."""
        return list(self._tools.values())

    def definitions(self, toolset: str | None = None, *, fresh: bool = True) -> list[dict[str, Any]]:
        """Definitions of the tools served (:meth:`serves`), in order; of one ``toolset`` only when named (KeyError:
        unknown). ``fresh``: as :meth:`Tool.definition`."""
        tools = self._toolsets[toolset].tools if toolset is not None else self._tools.values()
        return [t.definition(fresh) for t in tools if self.serves(t.name)]

    def toolset_of(self, name: str) -> str | None:
        """The toolset tool ``name`` came in, or None."""
        return next((ts.name for ts in self._toolsets.values() if any(t.name == name for t in ts.tools)), None)

    def serves(self, name: str) -> bool:
        """True when tool ``name`` exists, the person did not disable it and its toolset is on."""
        return name in self._tools and name not in self.disabled and self.toolset_of(name) not in self.toolsets_off

    def set_toolsets_off(self, names: frozenset[str]) -> None:
        """Stop serving these toolsets' tools: a call is UNKNOWN_TOOL with ``toolset``, ``toolsetEnabled: false``."""
        self.toolsets_off = frozenset(names)

    def set_disabled(self, names: frozenset[str] | set[str]) -> None:
        """Turn tools off (``disabledTools``): a call is UNKNOWN_TOOL with ``disabled: true``."""
        self.disabled = frozenset(names)

    def on_before(self, hook: Hook) -> Callable[[], None]:
        """Call ``hook(event)`` before every call; returns the hook's remover."""
        return self._subscribe(self._before, hook)

    def on_after(self, hook: Hook) -> Callable[[], None]:
        """Call ``hook(event)`` after every call, with outcome and duration; returns the hook's remover."""
        return self._subscribe(self._after, hook)

    @staticmethod
    def _subscribe(hooks: list[Hook], hook: Hook) -> Callable[[], None]:
        hooks.append(hook)

        def unsubscribe() -> None:
            if hook in hooks:
                hooks.remove(hook)

        return unsubscribe

    def _notify(self, hooks: list[Hook], event: CallEvent) -> None:
        for hook in hooks:
            try:
                hook(event)
            except Exception:  # a broken listener must not break the call
                traceback.print_exc()

    async def call(
        self,
        name: str,
        arguments: str | dict[str, Any] | None = None,
        *,
        invocation: str | None = None,
        any_toolset: bool = False,
        pending_id: str | None = None,
        wait_seconds: float | None = None,
    ) -> dict[str, Any]:
        """Run tool ``name`` with ``arguments`` (JSON object text, a dict, or None); a CallToolResult, never raises.

        ``invocation``: the loader's id, for :meth:`cancel` until the call returns. ``any_toolset``: serve it even
        when its toolset is off (an MCP resource read; disabled tools still refused). ``pending_id``: the loader
        already answered it pending under this id while Python started (its result is collected by
        ``jupyter_wait_for_result``). ``wait_seconds``: what is left of the loader's bound then, if sooner than the
        execution timeout.
        """
        started = time.monotonic()
        tool = self._tools.get(name) if isinstance(name, str) else None
        call = self.pending.begin(
            str(name)[:TOOL_NAME_MAX_CHARS],
            None,
            started,
            invocation=invocation,
            can_own_dialogs=tool is not None and can_own_dialogs(tool.name, tool.annotations.read_only),
        )
        if pending_id is not None:
            self.pending.promote(call, pending_id)
        # Started eagerly: a call that never really waits is answered within this step (no event-loop turn).
        task = self.pending.run(call, self._call(name, arguments, call, any_toolset))
        if call.abort_requested and call.started_running and not task.done():  # aborted while its first step ran
            task.cancel()
        if pending_id is not None:  # answered pending already: its result is collected by its id
            await asyncio.wait([task])
            if task.cancelled():
                return envelope(ToolError(ErrorCode.ABORTED, f"{name} was stopped.").payload(), is_error=True)
            return task.result()
        timeout = self.limits.execution_timeout_seconds
        if wait_seconds is not None:
            timeout = max(0.0, min(timeout, wait_seconds))
        if not task.done() and not call.woken_while_starting:
            await call.wait(timeout)
        call.woken_while_starting = False
        if task.done():
            return task.result()
        self.pending.promote(call)
        payload = self.dialogs.attach(self.dialogs.pending_payload(call), self.limits.result_bytes)
        return envelope(payload, is_error=False)

    def cancel(self, invocation: str) -> bool:
        """Abort the call of WebMCP invocation ``invocation``: its handler gets ``asyncio.CancelledError`` at its next
        await and the call returns ABORTED (an unstarted one without running; an abort before its call is
        remembered, bounded). A call already answered pending is not touched. True when a running call was aborted.
        """
        call = self.pending.by_invocation(invocation)
        if call is None:
            self.pending.note_early_abort(invocation)
            return False
        if call.pending_id:
            return False
        call.abort_requested = True
        if call.started_running:  # else _call sees abort_requested (never throw into an unstarted coroutine)
            call.task.cancel()
        return True

    def _with_dialogs(self, result: dict[str, Any]) -> dict[str, Any]:
        """A stored success (a collected pending call) in a new envelope with the dialogs open now."""
        if result.get("isError") or not isinstance(result.get("structuredContent"), dict):
            return result
        stored = result["structuredContent"]
        if "dialogs" not in stored and not self.dialogs.sync():
            return result
        payload = self.dialogs.attach(copy.deepcopy(stored), self.limits.result_bytes, stored=True)
        return {
            **result,
            "content": [{"type": "text", "text": dumps(payload)}, *result["content"][1:]],
            "structuredContent": payload,
        }

    async def _call(
        self, name: str, arguments: str | dict[str, Any] | None, record: PendingCall, any_toolset: bool = False
    ) -> dict[str, Any]:
        record.started_running = True
        try:
            raw = arguments if isinstance(arguments, str) else json.dumps({} if arguments is None else arguments)
        except (TypeError, ValueError):
            raw = None
        event = CallEvent(
            self._next_call,
            str(name)[:TOOL_NAME_MAX_CHARS],
            summarize_arguments(raw or ""),
            time.monotonic(),
            invocation=record.invocation,
        )
        self._next_call += 1
        current_call.set(event)
        self._notify(self._before, event)
        images: list[dict[str, str]] = []
        text: str | None = None  # the payload's JSON text, when the handler made it
        try:
            if record.abort_requested:
                raise asyncio.CancelledError  # aborted before it started: the same path as an abort while it runs
            if raw is None:
                raise ToolError(ErrorCode.INVALID_ARGUMENT, "The arguments are not JSON.")
            payload, images, final, text = await self._run(name, raw, any_toolset)
            if final is not None:
                outcome = final["structuredContent"].get("error", "ok") if final["isError"] else "ok"
                self._done(event, outcome)
                return self._with_dialogs(final)
            outcome, is_error = "ok", False
        except asyncio.CancelledError:  # Registry.cancel: the handler stopped at an await; nothing more is done
            err = aborted(event.tool)
            payload, images, outcome, is_error = err.payload(), [], err.code.value, True
        except ToolError as err:
            payload, outcome, is_error = err.payload(), err.code.value, True
        except CallEnded as ended:  # a feature's normal end of the call (Propose mode's denial), not a failure
            payload, outcome, is_error = ended.payload(), ended.outcome, False
        except Exception as exc:  # the registry's promise: nothing escapes
            traceback.print_exc()
            internal = ToolError(ErrorCode.INTERNAL_ERROR, f"The tool failed unexpectedly ({type(exc).__name__}).")
            payload, outcome, is_error = internal.payload(), internal.code.value, True
        if is_error:
            text = None
        else:
            payload = self.dialogs.attach(payload, self.limits.result_bytes)
            if "dialogs" in payload:  # the open dialogs were added: the handler's text is no longer the payload's
                text = None
        payload, text = fit_payload_text(payload, self.limits.result_bytes, text)
        self._done(event, outcome)
        return envelope(payload, is_error=is_error, images=images, text=text)

    def _done(self, event: CallEvent, outcome: str) -> None:
        self._notify(
            self._after, dataclasses.replace(event, duration=time.monotonic() - event.started, outcome=outcome)
        )

    async def _run(
        self, name: str, raw: str, any_toolset: bool = False
    ) -> tuple[dict[str, Any], list[dict[str, str]], dict[str, Any] | None, str | None]:
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise ToolError(ErrorCode.UNKNOWN_TOOL, f"There is no tool named {str(name)[:TOOL_NAME_MAX_CHARS]!r}.")
        if tool.name in self.disabled:
            raise ToolError(
                ErrorCode.UNKNOWN_TOOL,
                f"The tool {tool.name} is turned off in this page's settings (disabledTools).",
                disabled=True,
            )
        toolset = self.toolset_of(tool.name)
        if toolset in self.toolsets_off and not any_toolset:
            raise ToolError(
                ErrorCode.UNKNOWN_TOOL,
                f"The tool {tool.name} belongs to the toolset {toolset!r}, which is off in this page; "
                "turn it on with jupyter_toolsets.",
                toolset=toolset,
                toolsetEnabled=False,
            )
        size = len(raw.encode("utf-8", "surrogatepass"))
        if size > self.limits.input_bytes:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"The arguments are {size} bytes; the limit is {self.limits.input_bytes}.",
                bytes=size,
                maxBytes=self.limits.input_bytes,
            )
        try:
            args = tool.input_model.model_validate_json(raw or "{}")
        except ValidationError as exc:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                f"The arguments do not match {tool.name}'s inputSchema.",
                problems=validation_problems(exc),
            ) from None
        result = await tool.handler(self.context, args)
        if isinstance(result, ToolResult):
            return result.payload, result.images, result.final, result.text
        return result, [], None, None
