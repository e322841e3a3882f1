"""The host wire, a test harness: every host-protocol call as a JSON message, every answer as one, and back.

Not shipped: the page answers only the JS halves' requests (``lab/halves.js``). This codec is read from the protocol
itself (:mod:`webmcp_bridge.host.protocol`): a method's parameter and return annotations decide how its arguments and
answer are written. :class:`WireServer` answers from any host (the in-memory one); ``host_remote.py`` is the other
side. ``tests/conftest.py`` runs the tool tests a second time over it, which shows that every protocol method crosses
as data and nothing holds an object (docs/WORKER.md, "Tests"). The envelope (an answer, a failure's body, the errors)
is the product's, :mod:`webmcp_bridge.lab.messages`.

Messages (JSON objects; the text is UTF-8 JSON):

* a call: ``{"id": int, "target": "host" | "dialogs" | <handle>, "method": str, "args": {parameter: value}}``;
  ``args`` names every parameter of the protocol method (a missing one takes the method's default);
* a batch: ``{"id": int, "batch": [call, ...]}``, answered ``{"id": int, "batch": [answer, ...]}`` in the same order,
  every call run (one failing does not stop the others): several reads in one crossing;
* an answer: ``{"id": int, "value": ...}`` or ``{"id": int, "error": {"kind": "tool" | "host" | "wire",
  "message": str, "code": str, "details": {...}}}``: ``tool`` is a :class:`~webmcp_bridge.core.errors.ToolError`
  (code, message and details rebuilt as they were), ``host`` any other exception of the host (its type in
  ``code``), ``wire`` a message the other side could not read;
* an event (main thread to worker, never answered): ``{"event": "dialogs"}`` when a watched dialog opened, was
  shown or closed.

Values, by annotation: JSON types as they are (``Any`` and ``dict`` accept JSON only: ``None``, ``bool``, ``int``,
finite ``float``, ``str``, lists or tuples and objects with string keys); a protocol dataclass as an object with
every field; ``tuple`` and ``Sequence`` as arrays; ``bytes`` as base64 text; a notebook (a
:class:`~webmcp_bridge.host.protocol.LiveNotebook`, which must stay on the main thread) as a handle
``{"handle": str, "path": str}``, kept by the server until it is dropped. Anything else is refused where it is
written (:class:`WireError`, naming the method and where in its arguments), never converted on the way.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.host.protocol import DialogSource, LiveNotebook, NotebookHost
from webmcp_bridge.lab.messages import (
    AnswerMessage,
    Message,
    WireError,
    dumps,
    json_value,
    read_message,
)

#: the targets of a call that are not handles: the application and its dialogs
HOST_TARGET = "host"
DIALOGS_TARGET = "dialogs"
#: the prefix of a notebook's handle (``nb-<n>``, never reused by one server)
HANDLE_PREFIX = "nb-"
#: the event sent when a watched dialog opened, was shown or closed (:meth:`DialogSource.watch`)
DIALOGS_EVENT = "dialogs"


# -- message shapes (what a side receives is validated before it is read) ------------------------------------
class CallMessage(Message):
    """One protocol call: the method ``method`` of ``target`` (``host``, ``dialogs`` or a notebook's handle)."""

    id: int
    target: str
    method: str
    args: dict[str, Any]


class BatchMessage(Message):
    """Several calls in one crossing, answered in order."""

    id: int
    batch: list[CallMessage]


class BatchAnswerMessage(Message):
    """The answers to a batch, in the order of its calls."""

    id: int
    batch: list[AnswerMessage]


# -- the protocol's methods ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Method:
    """One protocol method that crosses: its name, its parameters (without ``self``), return annotation, and whether
    it is a coroutine (an async crossing)."""

    name: str
    signature: inspect.Signature
    hints: Mapping[str, Any]
    is_async: bool

    @property
    def returns(self) -> Any:
        """The return annotation (a type)."""
        return self.hints.get("return", type(None))


def _methods(protocol: type, skip: frozenset[str] = frozenset()) -> dict[str, Method]:
    found: dict[str, Method] = {}
    for name, func in inspect.getmembers(protocol, inspect.isfunction):
        if name.startswith("_") or name in skip:
            continue
        signature = inspect.signature(func)
        params = list(signature.parameters.values())[1:]  # without self
        found[name] = Method(
            name,
            signature.replace(parameters=params),
            typing.get_type_hints(func),
            inspect.iscoroutinefunction(func),
        )
    return found


#: the methods of each kind of target; ``watch`` of the dialogs takes a callable, which crosses as events instead
HOST_METHODS = _methods(NotebookHost)
NOTEBOOK_METHODS = _methods(LiveNotebook)
DIALOG_METHODS = _methods(DialogSource, frozenset({"watch"}))
#: the types that cross as a handle (the object stays where it is)
HANDLE_TYPES: tuple[type, ...] = (LiveNotebook,)


def methods_of(target: str) -> dict[str, Method]:
    """The methods a target answers: ``host``, ``dialogs``, or a notebook's handle."""
    if target == HOST_TARGET:
        return HOST_METHODS
    if target == DIALOGS_TARGET:
        return DIALOG_METHODS
    return NOTEBOOK_METHODS


# -- values ------------------------------------------------------------------------------------------------------
HandleOf = Callable[[Any], dict[str, Any]]
Resolve = Callable[[dict[str, Any]], Any]


def _refuse(handle: Any) -> Any:
    raise WireError("no handle can be made or resolved on this side")


_HINTS: dict[type, dict[str, Any]] = {}


def _field_hints(cls: type) -> dict[str, Any]:
    """The field annotations of a dataclass, read once."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def to_json(tp: Any, value: Any, where: str, handle_of: HandleOf = _refuse) -> Any:
    """``value`` written as annotation ``tp`` says (module docstring, "Values"). ``handle_of`` makes the handle of
    an object that stays on this side. Raises WireError naming ``where`` when ``value`` is not of ``tp``."""
    if tp is Any or tp is object:
        return json_value(value, where)
    if tp is type(None) or tp is None:
        if value is not None:
            raise WireError(f"{where}: expected None, got a {type(value).__name__}")
        return None
    if _is_union(tp):
        if value is None and type(None) in typing.get_args(tp):
            return None
        problems = []
        for member in typing.get_args(tp):
            try:
                return to_json(member, value, where, handle_of)
            except WireError as exc:
                problems.append(str(exc))
        raise WireError(f"{where}: {type(value).__name__} is none of {tp} ({'; '.join(problems)})")
    origin = typing.get_origin(tp)
    if origin is Literal:
        if value not in typing.get_args(tp) or isinstance(value, bool):
            raise WireError(f"{where}: {value!r} is not one of {typing.get_args(tp)}")
        return value
    if tp in HANDLE_TYPES:
        if isinstance(value, (str, int, float, bool, list, tuple, dict, bytes)) or value is None:
            raise WireError(f"{where}: a {type(value).__name__} is not a {tp.__name__}")
        return handle_of(value)
    if tp is bool:
        if not isinstance(value, bool):
            raise WireError(f"{where}: expected a bool, got a {type(value).__name__}")
        return value
    if tp is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise WireError(f"{where}: expected an int, got a {type(value).__name__}")
        return value
    if tp is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise WireError(f"{where}: expected a number, got a {type(value).__name__}")
        return json_value(value, where)
    if tp is str:
        if not isinstance(value, str):
            raise WireError(f"{where}: expected a str, got a {type(value).__name__}")
        return value
    if tp is bytes:
        if not isinstance(value, (bytes, bytearray)):
            raise WireError(f"{where}: expected bytes, got a {type(value).__name__}")
        return base64.b64encode(bytes(value)).decode("ascii")
    if tp is dict or origin is dict:
        if not isinstance(value, dict):
            raise WireError(f"{where}: expected a dict, got a {type(value).__name__}")
        item_tp = typing.get_args(tp)[1] if typing.get_args(tp) else Any
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise WireError(f"{where}: the key {key!r} is not a string (JSON object keys are)")
            out[key] = to_json(item_tp, item, f"{where}.{key}", handle_of)
        return out
    if origin in (list, tuple, Sequence) or tp in (list, tuple):
        # a Sequence parameter takes any sequence of items (a range of indices); a list or tuple, one of those
        kinds = Sequence if origin is Sequence else (list, tuple)
        if not isinstance(value, kinds) or isinstance(value, (str, bytes, bytearray)):
            raise WireError(f"{where}: expected a list, got a {type(value).__name__}")
        args = typing.get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise WireError(f"{where}: expected {len(args)} items, got {len(value)}")
            return [to_json(a, v, f"{where}[{i}]", handle_of) for i, (a, v) in enumerate(zip(args, value, strict=True))]
        item_tp = args[0] if args else Any
        return [to_json(item_tp, v, f"{where}[{i}]", handle_of) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if type(value) is not tp:
            raise WireError(f"{where}: expected a {tp.__name__}, got a {type(value).__name__}")
        hints = _field_hints(tp)
        return {
            f.name: to_json(hints[f.name], getattr(value, f.name), f"{where}.{f.name}", handle_of)
            for f in dataclasses.fields(tp)
        }
    raise WireError(f"{where}: the annotation {tp!r} has no wire form")


def from_json(tp: Any, value: Any, where: str, resolve: Resolve = _refuse) -> Any:
    """The value annotation ``tp`` describes, read from JSON ``value`` (the inverse of :func:`to_json`); a handle is
    turned back into its object by ``resolve``. Raises WireError naming ``where`` when ``value`` is not of that
    shape (a dataclass's object must have exactly its fields)."""
    if tp is Any or tp is object:
        return json_value(value, where)
    if tp is type(None) or tp is None:
        if value is not None:
            raise WireError(f"{where}: expected null, got {type(value).__name__}")
        return None
    if _is_union(tp):
        if value is None and type(None) in typing.get_args(tp):
            return None
        for member in typing.get_args(tp):
            try:
                return from_json(member, value, where, resolve)
            except WireError:
                continue
        raise WireError(f"{where}: {json.dumps(value)[:80]} is none of {tp}")
    origin = typing.get_origin(tp)
    if tp in HANDLE_TYPES:
        if not isinstance(value, dict) or set(value) != {"handle", "path"}:
            raise WireError(f"{where}: expected a handle {{handle, path}}")
        return resolve(value)
    if tp is bytes:
        if not isinstance(value, str):
            raise WireError(f"{where}: expected base64 text")
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise WireError(f"{where}: not base64 ({exc})") from None
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if origin is Literal or tp in (bool, int, float, str):
        return to_json(tp, value, where)  # the same check: these are written as they are
    if tp is dict or origin is dict:
        if not isinstance(value, dict):
            raise WireError(f"{where}: expected an object")
        item_tp = typing.get_args(tp)[1] if typing.get_args(tp) else Any
        return {k: from_json(item_tp, v, f"{where}.{k}", resolve) for k, v in value.items()}
    if origin in (list, tuple, Sequence) or tp in (list, tuple):
        if not isinstance(value, list):
            raise WireError(f"{where}: expected an array")
        args = typing.get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise WireError(f"{where}: expected {len(args)} items, got {len(value)}")
            return tuple(
                from_json(a, v, f"{where}[{i}]", resolve) for i, (a, v) in enumerate(zip(args, value, strict=True))
            )
        item_tp = args[0] if args else Any
        items = [from_json(item_tp, v, f"{where}[{i}]", resolve) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple or tp is tuple else items
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        names = [f.name for f in dataclasses.fields(tp)]
        if not isinstance(value, dict) or set(value) != set(names):
            raise WireError(f"{where}: expected a {tp.__name__} object with exactly the fields {names}")
        hints = _field_hints(tp)
        return tp(**{n: from_json(hints[n], value[n], f"{where}.{n}", resolve) for n in names})
    raise WireError(f"{where}: the annotation {tp!r} has no wire form")


# -- calls and answers ---------------------------------------------------------------------------------------------
def encode_args(method: Method, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``args`` object of a call of ``method`` with Python's ``args`` and ``kwargs``: every parameter by name
    (defaults filled in), each written by its annotation. Raises TypeError for arguments the method does not take
    (as a direct call would) and WireError for a value that cannot cross."""
    bound = method.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return {
        name: to_json(method.hints.get(name, Any), value, f"{method.name}({name})")
        for name, value in bound.arguments.items()
    }


def decode_args(method: Method, args: Mapping[str, Any], resolve: Resolve = _refuse) -> dict[str, Any]:
    """The keyword arguments of a call of ``method`` read from its ``args`` object. Raises WireError for an unknown
    or missing parameter, or a value not of the parameter's annotation."""
    params = method.signature.parameters
    unknown = set(args) - set(params)
    if unknown:
        raise WireError(f"{method.name} has no parameter {sorted(unknown)}")
    out: dict[str, Any] = {}
    for name, param in params.items():
        if name in args:
            out[name] = from_json(method.hints.get(name, Any), args[name], f"{method.name}({name})", resolve)
        elif param.default is inspect.Parameter.empty:
            raise WireError(f"{method.name}: the argument {name!r} is missing")
    return out


def failure_of(exc: BaseException) -> dict[str, Any]:
    """The ``error`` body of an answer for ``exc`` (:mod:`webmcp_bridge.lab.messages`), as the page builds it."""
    if isinstance(exc, ToolError):
        details = json_value(exc.details, f"the details of {exc.code.value}")
        return {"kind": "tool", "code": exc.code.value, "message": exc.message, "details": details}
    if isinstance(exc, WireError):
        return {"kind": "wire", "code": "WireError", "message": str(exc), "details": {}}
    return {"kind": "host", "code": type(exc).__name__, "message": str(exc), "details": {}}


# -- the main thread's side -------------------------------------------------------------------------------------
class WireServer:
    """Answers the wire's calls from a real host (the page's main thread; in CPython tests the in-memory host).

    Args:
        host: the application (:class:`~webmcp_bridge.host.protocol.NotebookHost`).
        dialogs: its dialogs, or None (a call to ``dialogs`` then fails as a wire error).
        events: where events go (JSON text, :data:`DIALOGS_EVENT`), or None (no watch is possible).

    A notebook the host hands out gets a handle, the same for the same object (``nb-<n>``); the server keeps the
    object until :meth:`drop` (the page drops it when the panel is disposed).
    """

    def __init__(
        self, host: NotebookHost, dialogs: DialogSource | None = None, events: Callable[[str], None] | None = None
    ) -> None:
        self.host = host
        self.dialogs = dialogs
        self.events = events
        self._handles: dict[str, Any] = {}
        self._by_object: dict[int, str] = {}

    def handle_of(self, notebook: Any) -> dict[str, Any]:
        """The handle of ``notebook`` (made on first sight): ``{"handle": "nb-<n>", "path": its path}``."""
        handle = self._by_object.get(id(notebook))
        if handle is None or self._handles.get(handle) is not notebook:
            handle = f"{HANDLE_PREFIX}{len(self._handles) + 1}"
            self._handles[handle] = notebook
            self._by_object[id(notebook)] = handle
        return {"handle": handle, "path": notebook.path}

    def drop(self, handle: str) -> None:
        """Forget the notebook behind ``handle``; a later call to it fails as NOTEBOOK_NOT_FOUND."""
        notebook = self._handles.pop(handle, None)
        if notebook is not None:
            self._by_object.pop(id(notebook), None)

    def _target(self, target: str) -> Any:
        if target == HOST_TARGET:
            return self.host
        if target == DIALOGS_TARGET:
            if self.dialogs is None:
                raise WireError("this page has no dialog source")
            return self.dialogs
        if target in self._handles:
            return self._handles[target]
        if target.startswith(HANDLE_PREFIX):
            raise ToolError(ErrorCode.NOTEBOOK_NOT_FOUND, "That notebook is no longer open.", handle=target)
        raise WireError(f"unknown target {target!r}")

    def _prepare(self, call: CallMessage) -> tuple[Method | None, Any, dict[str, Any]]:
        obj = self._target(call.target)
        if call.target == DIALOGS_TARGET and call.method == "watch":
            return None, obj, {}
        method = methods_of(call.target).get(call.method)
        if method is None:
            raise WireError(f"{call.target} has no method {call.method!r}")
        return method, obj, decode_args(method, call.args)

    def _watch(self, dialogs: Any) -> None:
        events = self.events
        if events is None:
            raise WireError("this server sends no events: nothing can be watched")
        dialogs.watch(lambda: events(dumps({"event": DIALOGS_EVENT})))

    def _answer(self, call: CallMessage, value: Any, method: Method | None) -> dict[str, Any]:
        if method is None:
            return {"id": call.id, "value": None}
        return {"id": call.id, "value": to_json(method.returns, value, f"{call.method}()", self.handle_of)}

    def _sync_call(self, call: CallMessage) -> dict[str, Any]:
        try:
            method, obj, kwargs = self._prepare(call)
            if method is None:
                self._watch(obj)
                return self._answer(call, None, None)
            if method.is_async:
                raise WireError(f"{call.method} is asynchronous: it cannot be answered by a synchronous crossing")
            return self._answer(call, getattr(obj, call.method)(**kwargs), method)
        except Exception as exc:  # every failure crosses as an answer
            return {"id": call.id, "error": failure_of(exc)}

    async def _async_call(self, call: CallMessage) -> dict[str, Any]:
        try:
            method, obj, kwargs = self._prepare(call)
            if method is None or not method.is_async:
                return self._sync_call(call)
            return self._answer(call, await getattr(obj, call.method)(**kwargs), method)
        except Exception as exc:  # every failure crosses as an answer
            return {"id": call.id, "error": failure_of(exc)}

    @staticmethod
    def _read(text: str) -> CallMessage | BatchMessage | dict[str, Any]:
        try:
            raw = json.loads(text)
        except ValueError as exc:
            return {"id": -1, "error": failure_of(WireError(f"not JSON ({exc})"))}
        model: type[Message] = BatchMessage if isinstance(raw, dict) and "batch" in raw else CallMessage
        try:
            return typing.cast(CallMessage | BatchMessage, read_message(text, model))
        except WireError as exc:
            ident = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), int) else -1
            return {"id": ident, "error": failure_of(exc)}

    def answer(self, text: str) -> str:
        """The answer (JSON text) to a call or batch (JSON text) of synchronous methods: one synchronous crossing.
        Never raises: every failure is an answer's ``error``."""
        message = self._read(text)
        if isinstance(message, BatchMessage):
            return dumps({"id": message.id, "batch": [self._sync_call(c) for c in message.batch]})
        if isinstance(message, CallMessage):
            return dumps(self._sync_call(message))
        return dumps(message)

    async def answer_async(self, text: str) -> str:
        """:meth:`answer` for an asynchronous crossing: coroutine methods are awaited (a batch's calls one after
        the other, in order). Never raises but CancelledError (the caller stopped waiting)."""
        message = self._read(text)
        if isinstance(message, BatchMessage):
            return dumps({"id": message.id, "batch": [await self._async_call(c) for c in message.batch]})
        if isinstance(message, CallMessage):
            return dumps(await self._async_call(message))
        return dumps(message)
