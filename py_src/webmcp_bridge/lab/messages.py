"""The envelope of the messages between the bridge's worker and the page (docs/WORKER.md, "The crossing protocol"):
an answer is ``{"id": int, "value": ...}`` or ``{"id": int, "error": {"kind", "message", "code", "details"}}``, kind
``tool`` (a :class:`~webmcp_bridge.core.errors.ToolError`, rebuilt as it was), ``host`` (another exception of the
answering side, its type's name in ``code``) or ``wire`` (a message the other side could not read).
"""

from __future__ import annotations

import json
import math
import typing
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from webmcp_bridge.core.errors import ErrorCode, ToolError


class WireError(Exception):
    """A value or message that cannot cross: not JSON, or not the shape the receiver expects (the caller's bug, never
    a person's input)."""


class HostFailure(RuntimeError):
    """An unexpected exception of the other side (not a :class:`ToolError`), raised again in the caller: ``kind`` is
    its type's name there."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class Transport(Protocol):
    """Carries one message (JSON text) to the page and brings its answer (JSON text) back."""

    def send(self, message: str) -> str:
        """A synchronous crossing: the caller is blocked until the answer is there."""

    async def send_async(self, message: str) -> str:
        """An asynchronous crossing: awaited while the page answers."""


class Message(BaseModel):
    """A message as received: validated before it is read (strict, closed, frozen)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FailureBody(Message):
    """Why a call failed (module docstring)."""

    kind: Literal["tool", "host", "wire"]
    message: str
    code: str = ""
    details: dict[str, Any] = {}


class AnswerMessage(Message):
    """The answer to one call: ``value`` or ``error``."""

    id: int
    value: Any = None
    error: FailureBody | None = None


def json_value(value: Any, where: str) -> Any:
    """``value`` checked to be JSON (tuples become lists), as a fresh copy. Raises WireError naming ``where`` and the
    first part that is not."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise WireError(f"{where}: {value!r} is not a JSON number")
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise WireError(f"{where}: the key {key!r} is not a string (JSON object keys are)")
            out[key] = json_value(item, f"{where}.{key}")
        return out
    raise WireError(f"{where}: a {type(value).__name__} is not JSON (only None, bool, int, float, str, list, dict)")


def raise_failure(body: FailureBody) -> typing.NoReturn:
    """Raise the exception an ``error`` body stands for: the ToolError as it was raised, a :class:`HostFailure` or a
    :class:`WireError`."""
    if body.kind == "tool":
        try:
            code = ErrorCode(body.code)
        except ValueError:
            raise WireError(f"the error code {body.code!r} is not one of the bridge's") from None
        raise ToolError(code, body.message, **body.details)
    if body.kind == "host":
        raise HostFailure(body.code, body.message)
    raise WireError(body.message)


def read_message(text: str, model: type[Message]) -> Any:
    """``text`` (JSON) read as ``model``. Raises WireError when it is not JSON or not of that shape."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        # the text's size and whether it is all NUL say how a crossing lost it; none of its content (it may hold what
        # the agent must not read)
        shape = f"{len(text)} characters{', all NUL' if text and not text.strip(chr(0)) else ''}"
        first = exc.errors()[0]
        raise WireError(f"not a {model.__name__}: {first['msg']} at {first['loc']} ({shape})") from None


def answer_value(text: str, ident: int) -> Any:
    """The value of the answer ``text`` to the message ``ident``, or its failure raised whatever its id (the page
    answers a message it could not read with id -1). Raises WireError for an unreadable answer or a value answered to
    another message."""
    answer = read_message(text, AnswerMessage)
    if answer.error is not None:
        raise_failure(answer.error)
    if answer.id != ident:
        raise WireError(f"the answer {answer.id} is not the one to the call {ident}")
    return answer.value


def dumps(message: Mapping[str, Any]) -> str:
    """A message as JSON text (NaN and infinities refused). Raises WireError when it is not JSON."""
    try:
        return json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise WireError(f"the message is not JSON ({exc})") from None
