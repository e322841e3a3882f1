"""The JS halves seen from the bridge's worker (docs/WORKER.md, "The remote half"): in the worker,
:func:`webmcp_bridge.lab.ffi.load_half` returns a :class:`RemoteHalf`, whose method calls cross to the page's main
thread, where ``lab/halves.js`` evaluated the real half and attached it to the loader's ctx.

Messages, over the worker's transport (:mod:`webmcp_bridge.lab.wire`; the envelope is
:mod:`webmcp_bridge.lab.messages`'):

* load: ``{"id", "target": "halves", "method": "load", "args": [package, filename, attach]}`` answered ``{"id",
  "value": <the half's number n>}``: the page fetches the half's source from its own origin, evaluates it under the
  name ``load_half`` gives (``//# sourceURL=webmcp-bridge/<package path>/<filename>``), calls ``attach(ctx)`` once
  with the loader's ctx when ``attach`` is true, and counts its methods under ``<filename without .js>``, as
  ``load_half`` does on the main thread. A synchronous crossing (the page answers once the source is fetched; only
  the worker waits).
* drop: ``{"id", "target": "halves", "method": "drop", "args": [n]}`` answered ``{"id", "value": bool}`` (whether the
  page still had it): the page forgets the half (:meth:`RemoteHalves.drop`, for its owner's dispose).
* a call: ``{"id", "target": "half:<n>", "method": str, "args": [JSON value | {"callback": int}, ...]}`` (positional)
  answered ``{"id", "value": <a JSON value>}`` or ``{"id", "error": {"kind", "code", "message", "details"}}`` (the
  wire's error form: ``host`` is an exception the method threw, raised here as
  :class:`~webmcp_bridge.lab.messages.HostFailure`; ``wire`` an unknown half or method, a value that is not JSON, a
  promise answered to a synchronous call, raised as :class:`~webmcp_bridge.lab.messages.WireError`).
* a callback's call (page to worker, an event, never answered): ``{"event": "callback", "id": int, "args": [...]}``.

Synchronous and asynchronous, explicitly: ``half.method(*args)`` is a synchronous crossing and returns the method's
value; a method that returns a promise is refused that way (the page answers a WireError and drops the promise), and
is called ``await awaiting(half).method(*args)`` (:func:`awaiting`; :func:`webmcp_bridge.lab.ffi.awaiting` is the
same on both threads): an asynchronous crossing, which the page answers once the promise settled.

Callbacks: a Python callable crosses only as a :class:`Callback` (what :class:`~webmcp_bridge.lab.ffi.Proxies` makes
in the worker), written ``{"callback": id}``; the page hands the half a function that sends the callback event with
its arguments (JSON). :meth:`Callback.destroy` (``Proxies.remove`` / ``clear``) drops it from the table: a later event
of that id does nothing. A callback's return value is ignored, as JS ignores a listener's.

Names: a :class:`RemoteHalf` has no public Python attribute, so any method name reaches the page, except names
starting with ``_`` (Python's own) and ``attach`` (made once by the page, with the ctx only it holds): those are
refused with AttributeError / WireError before anything crosses.
"""

from __future__ import annotations

import asyncio
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


class Callback:
    """A Python callable the page may call (by events) while it is in its table: ``{"callback": ident}`` on the
    wire. ``once``: dropped from the table before its first call. :meth:`destroy` drops it (Proxies' contract)."""

    def __init__(self, table: Callbacks, ident: int, fn: Callable[..., Any], once: bool) -> None:
        self.table = table
        self.ident = ident
        self.fn = fn
        self.once = once

    def destroy(self) -> None:
        """Drop this callback: later events for it are ignored. A second destroy does nothing."""
        self.table.drop(self.ident)


class Callbacks:
    """The worker's table of callbacks: id (an int, never reused) -> :class:`Callback`."""

    def __init__(self) -> None:
        self._table: dict[int, Callback] = {}
        self._next = 0

    def __len__(self) -> int:
        """How many callbacks are alive."""
        return len(self._table)

    def _add(self, fn: Callable[..., Any], once: bool) -> Callback:
        self._next += 1
        callback = self._table[self._next] = Callback(self, self._next, fn, once)
        return callback

    def keep(self, fn: Callable[..., Any]) -> Callback:
        """A callback of ``fn``, alive until destroyed."""
        return self._add(fn, once=False)

    def once(self, fn: Callable[..., Any]) -> Callback:
        """A callback of ``fn`` the page may call once: dropped before that call runs."""
        return self._add(fn, once=True)

    def drop(self, ident: int) -> None:
        """Forget the callback ``ident`` (an unknown id is left alone)."""
        self._table.pop(ident, None)

    def dispatch(self, ident: int, args: Sequence[Any]) -> bool:
        """Call the callback ``ident`` with ``args``; False (nothing called) when it is not in the table. An exception
        it raises is printed, not raised (as the page's listener call would report it); a coroutine it returns is run
        as a task on the running loop."""
        callback = self._table.get(ident)
        if callback is None:
            return False
        if callback.once:
            self.drop(ident)
        try:
            result = callback.fn(*args)
            if inspect.iscoroutine(result):
                asyncio.ensure_future(result)
        except Exception:
            traceback.print_exc()
        return True


class RemoteHalves:
    """The worker's side of ``lab/halves.js``: loads halves, calls their methods, keeps the callbacks.

    Args:
        transport: the worker's transport (:class:`~webmcp_bridge.lab.messages.Transport`: ``send`` synchronous,
            ``send_async`` awaited).

    Attributes:
        callbacks: the :class:`Callbacks` handed to the page.
        crossings: per half name (the file's name without ``.js``), the crossings made, by method (``load``
            counted under the half's name as ``load``); the page's ``lab/halves.js`` counts the calls, not the load,
            in the same form.
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.callbacks = Callbacks()
        self.crossings: dict[str, Counter[str]] = {}
        self._next = 0

    def _message(self, target: str, method: str, args: list[Any]) -> dict[str, Any]:
        self._next += 1
        return {"id": self._next, "target": target, "method": method, "args": args}

    def _count(self, name: str, method: str) -> None:
        self.crossings.setdefault(name, Counter())[method] += 1

    def load(self, package: str, filename: str, attach: bool) -> RemoteHalf:
        """Have the page evaluate the half ``filename`` of ``package`` (attached to the loader's ctx when ``attach``):
        one synchronous crossing. Raises WireError (a name that is not a package path or a ``.js`` file name, a
        failed fetch, a half without ``attach``, no ctx on the page) or HostFailure (its evaluation or ``attach``
        threw)."""
        if not re.fullmatch(r"[a-z_]+(\.[a-z_]+)*", package) or not re.fullmatch(r"[a-z_]+\.js", filename):
            raise WireError(f"{package}/{filename} is not a half's name")
        message = self._message(HALVES_TARGET, "load", [package, filename, bool(attach)])
        name = filename.rsplit(".", 1)[0]
        self._count(name, "load")
        number = answer_value(self.transport.send(dumps(message)), message["id"])
        if not isinstance(number, int) or isinstance(number, bool):
            raise WireError(f"the page answered {number!r} for a half's number")
        return RemoteHalf(self, number, name)

    def drop(self, half: RemoteHalf) -> bool:
        """Have the page forget ``half`` (its owner is done with it; a listener the half holds should be unwatched
        first): one synchronous crossing. True when the page still had it; later calls of it are WireErrors."""
        message = self._message(HALVES_TARGET, "drop", [half._number])
        self._count(half._name, "drop")
        return bool(answer_value(self.transport.send(dumps(message)), message["id"]))

    def encode_args(self, method: str, args: Sequence[Any]) -> list[Any]:
        """``args`` as the wire writes them: a :class:`Callback` as ``{"callback": id}``, JSON values as they are.
        Raises WireError for a callable that is not a Callback (it must come from ``Proxies.keep`` / ``once``, which
        destroy it), a value that is not JSON, or an object that reads as a callback."""
        out: list[Any] = []
        for index, arg in enumerate(args):
            where = f"argument {index} of {method}()"
            if isinstance(arg, Callback):
                if arg.table is not self.callbacks:
                    raise WireError(f"{where} is a callback of another table")
                out.append({"callback": arg.ident})
            elif callable(arg):
                raise WireError(f"{where} is a callable: hand it through Proxies.keep or Proxies.once")
            else:
                value = json_value(arg, where)
                if isinstance(value, dict) and "callback" in value and len(value) == 1:
                    raise WireError(f"{where} is an object {{callback}}, which the page would read as a callback")
                out.append(value)
        return out

    def call(self, half: RemoteHalf, method: str, args: Sequence[Any]) -> Any:
        """``half.method(*args)`` on the page: one synchronous crossing; its value (a JSON value)."""
        message = self._message(f"{HALF_PREFIX}{half._number}", method, self.encode_args(method, args))
        text = dumps(message)
        self._count(half._name, method)
        return answer_value(self.transport.send(text), message["id"])

    async def call_async(self, half: RemoteHalf, method: str, args: Sequence[Any]) -> Any:
        """``await half.method(*args)`` on the page (a method returning a promise): one asynchronous crossing,
        answered once the promise settled; its value (a JSON value)."""
        message = self._message(f"{HALF_PREFIX}{half._number}", method, self.encode_args(method, args))
        text = dumps(message)
        self._count(half._name, method)
        return answer_value(await self.transport.send_async(text), message["id"])

    def on_event(self, text: str) -> bool:
        """Dispatch ``text`` when it is a callback's event (``{"event": "callback", "id": int, "args": [...]}``):
        True then (also for a dropped callback's), False for any other event. Raises WireError for a callback event
        of another shape."""
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
    """A JS half evaluated on the page (module docstring): ``half.method(*args)`` is one synchronous crossing;
    :func:`awaiting` gives the asynchronous form. It has no public attribute of its own, so no method name of a
    half is hidden by one; ``_``-names and ``attach`` are refused."""

    __slots__ = ("_halves", "_name", "_number")

    def __init__(self, halves: RemoteHalves, number: int, name: str) -> None:
        self._halves = halves
        self._number = number
        self._name = name

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = _method_name(self._name, name)
        halves = self._halves

        def cross(*args: Any) -> Any:
            return halves.call(self, method, args)

        cross.__name__ = method
        return cross

    def __repr__(self) -> str:
        return f"<RemoteHalf {self._name} #{self._number}>"


class AwaitingHalf:
    """The asynchronous form of a :class:`RemoteHalf`: ``await view.method(*args)`` is one asynchronous crossing
    (the method returns a promise on the page)."""

    __slots__ = ("_half",)

    def __init__(self, half: RemoteHalf) -> None:
        self._half = half

    def __getattr__(self, name: str) -> Callable[..., Any]:
        half = self._half
        method = _method_name(half._name, name)

        async def cross(*args: Any) -> Any:
            return await half._halves.call_async(half, method, args)

        cross.__name__ = method
        return cross


def awaiting(half: RemoteHalf) -> AwaitingHalf:
    """The asynchronous form of ``half`` (``await awaiting(half).save(...)``). Raises TypeError for another object."""
    if not isinstance(half, RemoteHalf):
        raise TypeError(f"a {type(half).__name__} is not a remote half")
    return AwaitingHalf(half)


_current: RemoteHalves | None = None


def install(transport: Transport) -> RemoteHalves:
    """Make the worker's :class:`RemoteHalves` over ``transport`` (``lab/wire.py`` ``start``, once): from then on
    :func:`webmcp_bridge.lab.ffi.load_half` and ``Proxies`` work through it."""
    global _current
    _current = RemoteHalves(transport)
    return _current


def current() -> RemoteHalves | None:
    """The :class:`RemoteHalves` :func:`install` made, or None (not in the worker)."""
    return _current


def uninstall() -> None:
    """Forget the installed :class:`RemoteHalves` (for tests: back to main-thread behaviour)."""
    global _current
    _current = None
