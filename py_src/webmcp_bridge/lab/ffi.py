"""The one owner of the Python callables handed to JavaScript, the one loader of the JS halves, and the small FFI
helpers every lab module shares.

A Python function given to JS (an event listener, a signal slot, a command's ``execute``) must be a Pyodide
proxy that lives as long as JS may call it and is destroyed once JS no longer holds it: a proxy destroyed too
early makes the page's next call fail, one never destroyed leaks the function and all it references. Every
part of ``lab/`` that hands a callable to JS gets it from a :class:`Proxies` it owns and clears that on
dispose; nothing calls ``create_proxy`` itself. A callable JS calls exactly once (a promise's executor) is
:meth:`Proxies.once`: it frees itself after the call and is never kept.

A JS half (``notebook.js``, ``dialogs.js``, ``ui/dom.js``) is package data next to its Python half, evaluated by
:func:`load_half` into one object per owner (no module keeps it); the calls Python makes into it are counted by the
bridge's one crossing counter (``lab/crossings.js``, which the loader publishes as ``window.webmcpBridge.countCalls``)
and published as ``window.webmcpBridge.crossings[<half>]`` (JSON text ``{method: count}``; for the crossing test and
bench/).

``pyodide`` is imported only when a proxy is made (and ``js`` only when a JS object is), so :class:`Proxies`
with an injected factory runs under CPython too.

In the bridge's worker (docs/WORKER.md, "The remote half"), once ``lab/wire.py`` started and installed
:mod:`webmcp_bridge.lab.remote_half`, :func:`load_half` returns a :class:`~webmcp_bridge.lab.remote_half.RemoteHalf`
(the real half runs on the page, attached there to the loader's ctx) and :class:`Proxies`' default factories make
callbacks (:class:`~webmcp_bridge.lab.remote_half.Callback`, destroyed by ``remove`` / ``clear`` as proxies are).
:func:`awaiting` is how a caller awaits a half's promise-returning method in either mode. The check is whether that
module was installed, made at each call (a dictionary look-up); on the main thread it is never imported.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import TypeIs

try:  # Pyodide >= 0.27 hands JS null to Python as jsnull, undefined as None
    from pyodide.ffi import jsnull
except ImportError:  # older Pyodide, or CPython
    jsnull = None


def is_nullish(value: object) -> TypeIs[None]:
    """True for JS ``null`` and ``undefined`` as they arrive in Python. Typed as narrowing to None so that after
    ``if not is_nullish(x)`` the checker knows ``x`` is not None (JS null arrives as ``jsnull``, not None, but it
    is no more usable than None)."""
    return value is None or (jsnull is not None and value is jsnull)


def _remote() -> Any:
    """The worker's :class:`~webmcp_bridge.lab.remote_half.RemoteHalves` once ``lab/wire.py`` installed it; else
    None (the page's main thread, CPython)."""
    module = sys.modules.get("webmcp_bridge.lab.remote_half")
    return None if module is None else module.current()


#: the name each evaluated JS half gets in the page (``//# sourceURL=``): ``webmcp-bridge/<package path>/<file>``
HALF_URL_PREFIX = "webmcp-bridge/"


def load_half(package: str, filename: str, ctx: Any = None) -> Any:
    """Evaluate the JS half ``filename`` of ``package`` (package data; its source is one expression whose value is
    the half's object) and return that object. The page names the code ``webmcp-bridge/<package path>/<filename>``
    (:data:`HALF_URL_PREFIX`) in profiles and stack traces. When the loader's ``window.webmcpBridge.countCalls`` is
    there, every method of the half is counted by it and the count published as
    ``window.webmcpBridge.crossings[<filename without .js>]`` (``lab/crossings.js``); without the loader the half is
    not counted.

    ``ctx``: the loader's context (lab/session.py's module docstring). When given, the half's ``attach(ctx)`` is
    called once here (not counted as a crossing): that is the only way a half receives the page's objects (the
    tracker, the application, the modules), so that Python afterwards passes it primitives and JSON text only and
    the same half can be attached on the page's main thread when the bridge's Python runs in a worker
    (docs/WORKER.md, "Handles instead of JS objects").

    In the bridge's worker the half is evaluated, attached (when ``ctx`` is not None: the page attaches it to the
    loader's ctx, which only the page holds) and counted on the page (``lab/halves.js``), and the value is a
    :class:`~webmcp_bridge.lab.remote_half.RemoteHalf` (one synchronous crossing here; WireError or HostFailure when
    the page could not load it)."""
    remote = _remote()
    if remote is not None:
        return remote.load(package, filename, attach=ctx is not None)
    from importlib import resources

    import js
    from pyodide.code import run_js

    source = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    # named for the page's tools (a profiler, long-animation-frame attribution, DevTools' sources), which otherwise
    # see an anonymous eval; a trailing comment leaves the expression's value as it is
    half = run_js(f"{source}\n//# sourceURL={HALF_URL_PREFIX}{package.replace('.', '/')}/{filename}\n")
    if ctx is not None:
        half.attach(ctx)
    status = getattr(js.window, "webmcpBridge", None)
    if not is_nullish(status) and not is_nullish(getattr(status, "countCalls", None)):
        status.countCalls(filename.rsplit(".", 1)[0], half)
    return half


def awaiting(half: Any) -> Any:
    """The form of ``half`` whose methods are awaited: ``await awaiting(half).method(*args)`` for a method that
    returns a promise. On the main thread that is ``half`` itself (the method's promise is awaitable); in the worker
    :func:`webmcp_bridge.lab.remote_half.awaiting` (an asynchronous crossing, answered once the promise settled),
    since ``half.method(*args)`` there is a synchronous crossing that refuses a promise."""
    remote = _remote()
    if remote is None:
        return half
    from webmcp_bridge.lab.remote_half import awaiting as remote_awaiting

    return remote_awaiting(half)


def _create_proxy(fn: Callable[..., Any]) -> Any:
    remote = _remote()
    if remote is not None:  # in the worker: a callback the page calls by events
        return remote.callbacks.keep(fn)
    from pyodide.ffi import create_proxy

    return create_proxy(fn)


def _create_once(fn: Callable[..., Any]) -> Any:
    remote = _remote()
    if remote is not None:
        return remote.callbacks.once(fn)
    from pyodide.ffi import create_once_callable

    return create_once_callable(fn)


class Proxies:
    """The proxies one part handed to JS: made by :meth:`keep`, destroyed by :meth:`remove` or :meth:`clear`.

    Args:
        create: makes a proxy of a Python callable (default: ``pyodide.ffi.create_proxy``); the proxy must
            have ``destroy()``.
        create_once: makes a callable JS may call once, freed after that call (default:
            ``pyodide.ffi.create_once_callable``).

    Destroying never raises: a proxy whose ``destroy()`` fails is printed to the console and the others are
    still destroyed. After :meth:`clear` the owner is empty and may keep new proxies; a second clear does nothing.
    """

    def __init__(
        self,
        create: Callable[[Callable[..., Any]], Any] = _create_proxy,
        create_once: Callable[[Callable[..., Any]], Any] = _create_once,
    ) -> None:
        self._create = create
        self._create_once = create_once
        self._kept: list[Any] = []

    def __len__(self) -> int:
        """How many proxies are alive (kept and not yet destroyed)."""
        return len(self._kept)

    def keep(self, fn: Callable[..., Any]) -> Any:
        """A proxy of ``fn`` for JS to hold, alive until :meth:`remove` or :meth:`clear`."""
        proxy = self._create(fn)
        self._kept.append(proxy)
        return proxy

    def once(self, fn: Callable[..., Any]) -> Any:
        """A callable for JS to call once (it frees itself after that call); not kept here."""
        return self._create_once(fn)

    def remove(self, proxy: Any) -> None:
        """Destroy one kept proxy (JS no longer holds it). A proxy not kept here (or removed already) is left alone."""
        for index, kept in enumerate(self._kept):
            if kept is proxy:
                del self._kept[index]
                _destroy(proxy)
                return

    def clear(self) -> None:
        """Destroy every kept proxy, newest first."""
        kept, self._kept = self._kept, []
        for proxy in reversed(kept):
            _destroy(proxy)


def _destroy(proxy: Any) -> None:
    quietly(proxy.destroy)  # destroying must go on for the others; the page keeps working


def quietly(fn: Callable[[], Any]) -> None:
    """Call ``fn()``; an exception it raises is printed to the page's console, not raised, so one failing step of
    a teardown (or of an update of the page) does not keep the others from running."""
    try:
        fn()
    except Exception:
        traceback.print_exc()


def undo_all(undo: Sequence[Callable[[], Any]], timer: Any = None) -> None:
    """A teardown's first steps: cancel ``timer`` (an asyncio handle, or None), then call each of ``undo`` (the
    unsubscribe callables a part collected), newest first, each :func:`quietly`."""
    if timer is not None:
        timer.cancel()
    for fn in reversed(undo):
        quietly(fn)
