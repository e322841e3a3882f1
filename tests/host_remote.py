"""The other side of the host wire (a test harness, ``host_wire.py``): the host protocol implemented by messages.

:class:`RemoteHost` is a :class:`~webmcp_bridge.host.protocol.NotebookHost` whose every method call is one crossing:
the call encoded (its arguments by the protocol's annotations), sent through a :class:`Transport`, the answer decoded
(a :class:`~webmcp_bridge.core.errors.ToolError` raised again with its code, message and details, so a tool's
structured error is the one it would be in-process). A notebook it hands out is a :class:`RemoteNotebook` over a
handle, one object per handle; dialogs are :class:`RemoteDialogs`. :class:`Loopback` joins it to a
:class:`~host_wire.WireServer` in one process through JSON text; :class:`RemoteHost` also runs over the worker's
transport, ``lab/wire.py`` (``tests/test_worker_transport.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, cast

from host_wire import (
    DIALOG_METHODS,
    DIALOGS_EVENT,
    DIALOGS_TARGET,
    HOST_METHODS,
    HOST_TARGET,
    NOTEBOOK_METHODS,
    BatchAnswerMessage,
    Method,
    WireServer,
    encode_args,
    from_json,
    methods_of,
)
from webmcp_bridge.host.protocol import LiveNotebook, NotebookHost
from webmcp_bridge.lab.messages import AnswerMessage, Transport, WireError, dumps, raise_failure, read_message


class Loopback:
    """A :class:`Transport` to a :class:`WireServer` in the same process: every message is JSON text both ways, so
    nothing passes by reference. Events of the server are handed to ``events`` (set by :class:`RemoteHost`)."""

    def __init__(self, server: WireServer) -> None:
        self.server = server
        self.events: Callable[[str], None] | None = None
        server.events = self._event

    def _event(self, text: str) -> None:
        if self.events is not None:
            self.events(text)

    def send(self, message: str) -> str:
        """The server's synchronous answer."""
        return self.server.answer(message)

    async def send_async(self, message: str) -> str:
        """The server's answer, its coroutine methods awaited."""
        return await self.server.answer_async(message)


class RemoteHost:
    """The host protocol over a :class:`Transport` (every method of
    :class:`~webmcp_bridge.host.protocol.NotebookHost`; see the module docstring).

    Attributes:
        crossings: the crossings made, by method name (a batch counts once, as ``batch``). This is the worker's
            own count, kept in Python on this side of the wire; the page's side counts the same requests with the
            bridge's one JS crossing counter (``lab/crossings.js``, in ``lab/worker.js``), and both report the same
            form, JSON text ``{method: count}`` (:meth:`crossings_json`), the form of
            ``window.webmcpBridge.crossings[name]()``.
        dialogs: the application's dialogs over the same transport.
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.crossings: Counter[str] = Counter()
        self.dialogs = RemoteDialogs(self)
        self._notebooks: dict[str, RemoteNotebook] = {}
        self._next = 0
        if isinstance(transport, Loopback):
            transport.events = self.on_event

    # -- crossings --------------------------------------------------------------------------------------------
    def crossings_json(self) -> str:
        """The crossings as JSON text ``{method: count}``, the form of ``window.webmcpBridge.crossings[name]()``
        (``lab/crossings.js`` ``json()``)."""
        return json.dumps(dict(self.crossings), sort_keys=True)

    def new_id(self) -> int:
        """A new message id (ids of one host never repeat)."""
        self._next += 1
        return self._next

    def _call_message(self, target: str, method: Method, args: Sequence[Any], kwargs: dict[str, Any]) -> dict:
        return {"id": self.new_id(), "target": target, "method": method.name, "args": encode_args(method, args, kwargs)}

    def _value(self, method: Method, answer: AnswerMessage) -> Any:
        if answer.error is not None:
            raise_failure(answer.error)
        return from_json(method.returns, answer.value, f"the answer of {method.name}", self._notebook)

    def _answer(self, text: str, ident: int) -> AnswerMessage:
        answer = cast(AnswerMessage, read_message(text, AnswerMessage))
        if answer.id != ident:
            if answer.error is not None:
                raise_failure(answer.error)
            raise WireError(f"the answer {answer.id} is not the one to the call {ident}")
        return answer

    def call(self, target: str, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the synchronous method ``name`` of ``target`` (``host``, ``dialogs`` or a handle): one crossing."""
        method = methods_of(target)[name]
        message = self._call_message(target, method, args, kwargs)
        self.crossings[name] += 1
        return self._value(method, self._answer(self.transport.send(dumps(message)), message["id"]))

    async def call_async(self, target: str, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the coroutine method ``name`` of ``target``: one asynchronous crossing, awaited."""
        method = methods_of(target)[name]
        message = self._call_message(target, method, args, kwargs)
        self.crossings[name] += 1
        text = await self.transport.send_async(dumps(message))
        return self._value(method, self._answer(text, message["id"]))

    def batch(self, calls: Sequence[tuple[Any, str, dict[str, Any]]]) -> list[Any]:
        """Several synchronous calls in one crossing: ``(target, method name, keyword arguments)`` each, ``target``
        ``"host"``, ``"dialogs"`` or a :class:`RemoteNotebook`. Returns their values in order. Every call runs on the
        other side; when some failed, the first failure is raised here (after all ran)."""
        messages, methods = [], []
        for target, name, kwargs in calls:
            key = target.handle if isinstance(target, RemoteNotebook) else target
            method = methods_of(key)[name]
            if method.is_async:
                raise WireError(f"{name} is asynchronous: it cannot be part of a batch")
            messages.append(self._call_message(key, method, (), kwargs))
            methods.append(method)
        ident = self.new_id()
        self.crossings["batch"] += 1
        text = self.transport.send(dumps({"id": ident, "batch": messages}))
        try:
            answers = cast(BatchAnswerMessage, read_message(text, BatchAnswerMessage))
        except WireError:
            self._answer(text, ident)  # a failure of the whole batch (an unreadable message) is raised as it was
            raise
        if answers.id != ident or [a.id for a in answers.batch] != [m["id"] for m in messages]:
            raise WireError("the batch's answers are not in the order of its calls")
        return [self._value(m, a) for m, a in zip(methods, answers.batch, strict=True)]

    def _notebook(self, handle: dict[str, Any]) -> RemoteNotebook:
        """The one :class:`RemoteNotebook` of ``handle`` (its path as the answer gave it)."""
        key = handle["handle"]
        if not isinstance(key, str) or not isinstance(handle["path"], str):
            raise WireError("a handle is {handle: str, path: str}")
        notebook = self._notebooks.get(key)
        if notebook is None:
            notebook = self._notebooks[key] = RemoteNotebook(self, key, handle["path"])
        notebook._path = handle["path"]
        return notebook

    def on_event(self, text: str) -> None:
        """Dispatch an event of the main thread (JSON text ``{"event": name}``)."""
        try:
            event = json.loads(text).get("event")
        except (ValueError, AttributeError):
            raise WireError("an event is a JSON object {event: name}") from None
        if event == DIALOGS_EVENT:
            self.dialogs.fire()
        else:
            raise WireError(f"unknown event {event!r}")

    def as_host(self) -> NotebookHost:
        """This object typed as the protocol it implements (its methods are made from the protocol, below)."""
        return cast(NotebookHost, self)


class RemoteNotebook:
    """A notebook on the other side, by its handle: every :class:`~webmcp_bridge.host.protocol.LiveNotebook` method
    is one crossing (``path`` is the one the last answer naming the handle gave)."""

    def __init__(self, host: RemoteHost, handle: str, path: str) -> None:
        self.host = host
        self.handle = handle
        self._path = path

    @property
    def path(self) -> str:
        """The notebook's workspace path."""
        return self._path

    def __repr__(self) -> str:
        return f"RemoteNotebook({self.handle!r}, {self._path!r})"


class RemoteDialogs:
    """The application's dialogs on the other side (a :class:`~webmcp_bridge.host.protocol.DialogSource`):
    ``snapshot``, ``click`` and ``close`` cross; ``watch`` crosses once and its callback is called on each
    :data:`~host_wire.DIALOGS_EVENT` event."""

    def __init__(self, host: RemoteHost) -> None:
        self.host = host
        self._callback: Callable[[], None] | None = None

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` on every dialogs event from now on (one crossing asks the other side to send them)."""
        self._callback = callback
        ident = self.host.new_id()
        self.host.crossings["watch"] += 1
        text = self.host.transport.send(dumps({"id": ident, "target": DIALOGS_TARGET, "method": "watch", "args": {}}))
        answer = self.host._answer(text, ident)
        if answer.error is not None:
            raise_failure(answer.error)

    def fire(self) -> None:
        """A dialogs event arrived: call the watcher, if any."""
        if self._callback is not None:
            self._callback()


def _crossing(method: Method, target_of: Callable[[Any], tuple[RemoteHost, str]]) -> Callable[..., Any]:
    """The method of a remote object that makes one crossing for ``method`` (async for a coroutine method)."""
    if method.is_async:

        async def call_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            host, target = target_of(self)
            return await host.call_async(target, method.name, *args, **kwargs)

        call: Callable[..., Any] = call_async
    else:

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            host, target = target_of(self)
            return host.call(target, method.name, *args, **kwargs)

    call.__name__ = call.__qualname__ = method.name
    call.__doc__ = f"One crossing: :meth:`{method.name}` of the other side."
    call.__signature__ = method.signature  # type: ignore[attr-defined]
    return call


for _m in HOST_METHODS.values():
    setattr(RemoteHost, _m.name, _crossing(_m, lambda self: (self, HOST_TARGET)))
for _m in NOTEBOOK_METHODS.values():
    setattr(RemoteNotebook, _m.name, _crossing(_m, lambda self: (self.host, self.handle)))
for _m in DIALOG_METHODS.values():
    setattr(RemoteDialogs, _m.name, _crossing(_m, lambda self: (self.host, DIALOGS_TARGET)))
del _m


def remote_notebook(notebook: RemoteNotebook) -> LiveNotebook:
    """``notebook`` typed as the protocol it implements."""
    return cast(LiveNotebook, notebook)


def loopback_host(server: WireServer) -> RemoteHost:
    """A :class:`RemoteHost` over a :class:`Loopback` to ``server``."""
    return RemoteHost(Loopback(server))
