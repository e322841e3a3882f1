"""The JS halves seen from the bridge's worker (docs/WORKER.md, "The remote half", which lists the messages): there
:func:`webmcp_bridge.lab.ffi.load_half` returns a :class:`RemoteHalf`, whose method calls cross to the page's main
thread, where ``lab/halves.js`` evaluated the real half and attached it to the loader's ctx.

``half.method(*args)`` is a synchronous crossing; a method that returns a promise is called ``await
awaiting(half).method(*args)``, an asynchronous one. A Python callable crosses only as a :class:`Callback` (what
:class:`~webmcp_bridge.lab.ffi.Proxies` makes in the worker), whose calls come back as events; once destroyed, its
events do nothing. Method names starting with ``_`` and ``attach`` (made once by the page) are refused before
anything crosses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import re
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from webmcp_bridge.lab.messages import Transport, WireError, answer_value, dumps, json_value

#: the target of the halves' table on the page (``load``)
HALVES_TARGET = "halves"
#: the prefix of a loaded half's target: ``half:<n>``
HALF_PREFIX = "half:"
#: the event a callback's call is
CALLBACK_EVENT = "callback"
#: a method name the page may be asked for: a JS identifier not starting with ``_``
_METHOD = re.compile(r"[A-Za-z$][A-Za-z0-9_$]*")
#: the method a remote half refuses: the page makes it, once, at load
_ATTACH = "attach"


@dataclasses.dataclass(eq=False)
class Callback:
    """A Python callable the page may call (by events) while it is in its table: ``{"callback": ident}`` on the
    wire."""

    table: Callbacks
    ident: int
    fn: Callable[..., Any]

    def destroy(self) -> None:
        """Drop this callback (Proxies' contract): later events for it are ignored."""
        self.table.drop(self.ident)


class Callbacks:
    """The worker's table of callbacks: id (an int, never reused) -> :class:`Callback`."""

    def __init__(self) -> None:
        self._table: dict[int, Callback] = {}
        self._next = 0

    def __len__(self) -> int:
        return len(self._table)

    def keep(self, fn: Callable[..., Any]) -> Callback:
        self._next += 1
        callback = self._table[self._next] = Callback(self, self._next, fn)
        return callback

    def drop(self, ident: int) -> None:
        self._table.pop(ident, None)

    def dispatch(self, ident: int, args: Sequence[Any]) -> None:
        """Call the callback ``ident`` if it is in the table. An exception it raises is printed; a coroutine it
        returns is run as a task."""
        callback = self._table.get(ident)
        if callback is None:
            return
        try:
            result = callback.fn(*args)
            if inspect.iscoroutine(result):
                asyncio.ensure_future(result)
        except Exception:
            traceback.print_exc()


class RemoteHalves:
    """The worker's side of ``lab/halves.js`` over ``transport``: loads halves, calls their methods, keeps the
    ``callbacks``; ``crossings``: per half name, the crossings made, by method."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.callbacks = Callbacks()
        self.crossings: dict[str, Counter[str]] = {}
        self._next = 0

    def _message(self, name: str, target: str, method: str, args: list[Any]) -> dict[str, Any]:
        """A new message, counted under the half ``name``."""
        self._next += 1
        self.crossings.setdefault(name, Counter())[method] += 1
        return {"id": self._next, "target": target, "method": method, "args": args}

    def load(self, package: str, filename: str, attach: bool) -> RemoteHalf:
        """Have the page evaluate the half (attached to the loader's ctx when ``attach``): one synchronous crossing.
        Raises WireError (not a half's name, a failed fetch, no ctx) or HostFailure (evaluating or attaching threw)."""
        if not re.fullmatch(r"[a-z_]+(\.[a-z_]+)*", package) or not re.fullmatch(r"[a-z_]+\.js", filename):
            raise WireError(f"{package}/{filename} is not a half's name")
        name = filename.rsplit(".", 1)[0]
        message = self._message(name, HALVES_TARGET, "load", [package, filename, bool(attach)])
        number = answer_value(self.transport.send(dumps(message)), message["id"])
        if not isinstance(number, int) or isinstance(number, bool):
            raise WireError(f"the page answered {number!r} for a half's number")
        return RemoteHalf(self, number, name)

    def encode_args(self, method: str, args: Sequence[Any]) -> list[Any]:
        """``args`` as the wire writes them: a :class:`Callback` as ``{"callback": id}``, JSON values as they are.
        Raises WireError for a callable that is not a Callback (it must come from ``Proxies``, which destroys it), a
        value that is not JSON, or an object that reads as a callback."""
        out: list[Any] = []
        for index, arg in enumerate(args):
            where = f"argument {index} of {method}()"
            if isinstance(arg, Callback):
                if arg.table is not self.callbacks:
                    raise WireError(f"{where} is a callback of another table")
                out.append({"callback": arg.ident})
            elif callable(arg):
                raise WireError(f"{where} is a callable: hand it through Proxies.keep")
            else:
                value = json_value(arg, where)
                if isinstance(value, dict) and "callback" in value and len(value) == 1:
                    raise WireError(f"{where} is an object {{callback}}, which the page would read as a callback")
                out.append(value)
        return out

    def call(self, half: RemoteHalf, method: str, *args: Any) -> Any:
        """``half.method(*args)`` on the page: one synchronous crossing; its value (a JSON value)."""
        message = self._message(half._name, f"{HALF_PREFIX}{half._number}", method, self.encode_args(method, args))
        return answer_value(self.transport.send(dumps(message)), message["id"])

    async def call_async(self, half: RemoteHalf, method: str, *args: Any) -> Any:
        """``await half.method(*args)`` on the page: one asynchronous crossing, answered once the promise settled."""
        message = self._message(half._name, f"{HALF_PREFIX}{half._number}", method, self.encode_args(method, args))
        return answer_value(await self.transport.send_async(dumps(message)), message["id"])

    def on_event(self, text: str) -> bool:
        """Dispatch ``text`` when it is a callback's event: True then (also for a dropped callback's), False for any
        other event. Raises WireError for a callback event of another shape."""
        try:
            event = json.loads(text)
        except ValueError:
            return False
        if not isinstance(event, dict) or event.get("event") != CALLBACK_EVENT:
            return False
        ident, args = event.get("id"), event.get("args", [])
        if not isinstance(ident, int) or isinstance(ident, bool) or not isinstance(args, list):
            raise WireError("a callback event is {event: 'callback', id: int, args: [...]}")
        self.callbacks.dispatch(ident, args)
        return True


def _method_name(half_name: str, name: str) -> str:
    if name.startswith("_"):
        raise AttributeError(name)
    if name == _ATTACH:
        raise WireError(f"{half_name}.attach is made by the page, once, when the half is loaded (load_half's ctx)")
    if not _METHOD.fullmatch(name):
        raise WireError(f"{name!r} is not a method name of a JS half")
    return name


class RemoteHalf:
    """A JS half evaluated on the page: ``half.method(*args)`` is one synchronous crossing, and one asynchronous
    crossing in the form :func:`awaiting` gives. No public attribute of its own hides a method name of the half."""

    __slots__ = ("_awaited", "_halves", "_name", "_number")

    def __init__(self, halves: RemoteHalves, number: int, name: str, awaited: bool = False) -> None:
        self._halves = halves
        self._number = number
        self._name = name
        self._awaited = awaited

    def __getattr__(self, name: str) -> Callable[..., Any]:
        crossing = self._halves.call_async if self._awaited else self._halves.call
        return functools.partial(crossing, self, _method_name(self._name, name))

    def __repr__(self) -> str:
        return f"<RemoteHalf {self._name} #{self._number}>"


def awaiting(half: RemoteHalf) -> RemoteHalf:
    """The asynchronous form of ``half`` (``await awaiting(half).save(...)``). Raises TypeError for another object."""
    if not isinstance(half, RemoteHalf):
        raise TypeError(f"a {type(half).__name__} is not a remote half")
    return RemoteHalf(half._halves, half._number, half._name, awaited=True)


_current: RemoteHalves | None = None


def install(transport: Transport) -> RemoteHalves:
    """Make the worker's :class:`RemoteHalves` (``lab/wire.py`` ``start``), which ``load_half`` and ``Proxies`` use."""
    global _current
    _current = RemoteHalves(transport)
    return _current


def current() -> RemoteHalves | None:
    """The :class:`RemoteHalves` :func:`install` made, or None (not in the worker)."""
    return _current
