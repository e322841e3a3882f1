"""The one owner of the Python callables handed to JavaScript (:class:`Proxies`), the one loader of the JS halves
(:func:`load_half`), and the small FFI helpers every lab module shares.

A proxy must live as long as JS may call it and be destroyed once JS no longer holds it (too early: the page's next
call fails; never: it leaks the function and all it references), so every part of ``lab/`` gets them from a
:class:`Proxies` it owns and clears on dispose. In the worker (docs/WORKER.md, "The remote half") halves and
callbacks go through :mod:`webmcp_bridge.lab.remote_half`. ``pyodide`` and ``js`` are imported only when used.
"""

from __future__ import annotations

import json
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
    """True for JS ``null`` and ``undefined`` as they arrive in Python (typed as narrowing to None: JS null arrives
    as ``jsnull``, no more usable than None)."""
    return value is None or (jsnull is not None and value is jsnull)


def json_of(raw: Any) -> Any:
    """A JS half's JSON text answer decoded; None for JS null or undefined."""
    return None if is_nullish(raw) else json.loads(str(raw))


def _remote() -> Any:
    """The worker's :class:`~webmcp_bridge.lab.remote_half.RemoteHalves` once installed; else None."""
    module = sys.modules.get("webmcp_bridge.lab.remote_half")
    return None if module is None else module.current()


#: the name each evaluated JS half gets in the page (``//# sourceURL=``): ``webmcp-bridge/<package path>/<file>``
HALF_URL_PREFIX = "webmcp-bridge/"


def load_half(package: str, filename: str, ctx: Any = None) -> Any:
    """Evaluate the JS half ``filename`` of ``package`` (one expression whose value is the half's object) and return
    that object, its methods counted by the loader's ``window.webmcpBridge.countCalls`` when there (published as
    ``window.webmcpBridge.crossings[<filename without .js>]``). With ``ctx`` (the loader's context) the half's
    ``attach(ctx)`` is called once: the only way a half receives the page's objects (docs/WORKER.md, "Handles instead
    of JS objects"). In the worker the page loads it (``lab/halves.js``) and the value is a
    :class:`~webmcp_bridge.lab.remote_half.RemoteHalf` (WireError or HostFailure when the page could not)."""
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
    """The form of ``half`` whose methods are awaited (``await awaiting(half).method(*args)`` for a method that returns
    a promise): ``half`` itself on the main thread, :func:`webmcp_bridge.lab.remote_half.awaiting` in the worker."""
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


class Proxies:
    """The proxies one part handed to JS: made by :meth:`keep`, destroyed by :meth:`remove` or :meth:`clear`.

    Args:
        create: makes a proxy with ``destroy()`` of a Python callable (default: ``pyodide.ffi.create_proxy``).

    Destroying never raises: a proxy whose ``destroy()`` fails is printed and the others are still destroyed.
    """

    def __init__(
        self,
        create: Callable[[Callable[..., Any]], Any] = _create_proxy,
    ) -> None:
        self._create = create
        self._kept: list[Any] = []

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, fn: Callable[..., Any]) -> Any:
        """A proxy of ``fn`` for JS to hold, alive until :meth:`remove` or :meth:`clear`."""
        proxy = self._create(fn)
        self._kept.append(proxy)
        return proxy

    def remove(self, proxy: Any) -> None:
        """Destroy one kept proxy (JS no longer holds it); one not kept here is left alone."""
        for index, kept in enumerate(self._kept):
            if kept is proxy:
                del self._kept[index]
                quietly(proxy.destroy)
                return

    def clear(self) -> None:
        """Destroy every kept proxy, newest first."""
        kept, self._kept = self._kept, []
        for proxy in reversed(kept):
            quietly(proxy.destroy)


def quietly(fn: Callable[[], Any]) -> None:
    """Call ``fn()``; an exception it raises is printed, not raised, so one failing step of a teardown (or of an
    update of the page) does not keep the others from running."""
    try:
        fn()
    except Exception:
        traceback.print_exc()


def undo_all(undo: Sequence[Callable[[], Any]], timer: Any = None) -> None:
    """A teardown's first steps: cancel ``timer`` (an asyncio handle, or None), then call each of ``undo``, newest
    first, each :func:`quietly`."""
    if timer is not None:
        timer.cancel()
    for fn in reversed(undo):
        quietly(fn)
