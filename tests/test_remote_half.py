"""The remote halves of the bridge's worker (``lab/remote_half.py``, through ``lab/ffi.py``) under CPython: a fake
page answers the worker's requests as ``lab/halves.js`` does (load, attach once to its ctx, positional calls,
callbacks as events, a promise refused to a synchronous call), over a loopback transport. The real page's side runs
in ``playwright-tests/test_worker_halves.py``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from webmcp_bridge.lab import ffi, remote_half
from webmcp_bridge.lab.messages import HostFailure, WireError
from webmcp_bridge.lab.remote_half import RemoteHalf


class FakeDialogs:
    """A stand-in half: the shape of dialogs.js (watch with two callbacks, snapshot as JSON text, click) plus an
    attach, a method that throws, one that returns a non-JSON value and a promise-returning one."""

    def __init__(self) -> None:
        self.ctx: Any = None
        self.attached = 0
        self.notify: Callable[..., None] | None = None
        self.open: list[dict[str, Any]] = []

    def attach(self, ctx: Any) -> None:
        self.attached += 1
        self.ctx = ctx

    def watch(self, notify: Callable[..., None], opened: Callable[..., None]) -> bool:
        self.notify, self.opened = notify, opened
        return True

    def snapshot(self, max_chars: int) -> str:
        return json.dumps([{**d, "title": d["title"][:max_chars]} for d in self.open])

    def click(self, ident: str, index: int) -> str:
        return "clicked" if any(d["id"] == ident for d in self.open) else "gone"

    def calls(self) -> int:  # a name a Python object might have
        return 7

    def broken(self) -> None:
        raise TypeError("the node is gone")

    def node(self) -> object:
        return object()

    async def save(self, path: str) -> str:
        await asyncio.sleep(0)
        return f"saved {path}"


class FakePage:
    """Answers the worker's requests as lab/halves.js does; events it would post are queued in ``events``."""

    def __init__(self, ctx: Any = "the loader's ctx") -> None:
        self.ctx = ctx
        self.table: dict[int, tuple[str, Any]] = {}
        self.events: list[str] = []
        self.asked: list[tuple[str, str, bool]] = []
        self.made: list[FakeDialogs] = []

    def _callback(self, ident: int) -> Callable[..., None]:
        return lambda *args: self.events.append(json.dumps({"event": "callback", "id": ident, "args": list(args)}))

    @staticmethod
    def _wire(message: str) -> dict[str, Any]:
        return {"error": {"kind": "wire", "code": "WireError", "message": message, "details": {}}}

    def _prepare(self, call: dict[str, Any]) -> tuple[str, Callable[..., Any], list[Any]] | dict[str, Any]:
        entry = self.table.get(int(call["target"].removeprefix("half:")))
        if entry is None:
            return self._wire(f"no half {call['target']}")
        name, half = entry
        method = getattr(half, call["method"], None)
        if call["method"] == "attach" or call["method"].startswith("_") or not callable(method):
            return self._wire(f"the half {name} has no method {call['method']!r}")
        args = [
            self._callback(a["callback"]) if isinstance(a, dict) and list(a) == ["callback"] else a
            for a in call["args"]
        ]
        return name, method, args

    def _load(self, call: dict[str, Any]) -> dict[str, Any]:
        package, filename, attach = call["args"]
        if filename != "dialogs.js":
            return self._wire(f"{filename}: HTTP 404")
        half = FakeDialogs()
        if attach:
            half.attach(self.ctx)
        self.made.append(half)
        self.table[len(self.table) + 1] = (filename[:-3], half)
        return {"value": len(self.table)}

    @staticmethod
    def _value(value: Any) -> dict[str, Any]:
        if not isinstance(value, (str, int, float, bool, list, dict, type(None))):
            return {"error": {"kind": "wire", "code": "WireError", "message": "not JSON", "details": {}}}
        return {"value": value}

    def answer(self, text: str, is_async: bool) -> Any:
        call = json.loads(text)
        self.asked.append((call["target"], call["method"], is_async))
        if call["target"] == "halves":
            return {"id": call["id"], **self._load(call)}
        prepared = self._prepare(call)
        if isinstance(prepared, dict):
            return {"id": call["id"], **prepared}
        _, method, args = prepared
        try:
            value = method(*args)
        except Exception as exc:
            return {"id": call["id"], "error": {"kind": "host", "code": type(exc).__name__, "message": str(exc)}}
        if inspect.iscoroutine(value):
            if not is_async:
                value.close()
                return {"id": call["id"], **self._wire(f"{call['method']} returned a promise: await it")}
            return value, call["id"]
        return {"id": call["id"], **self._value(value)}


class Loopback:
    """The worker's transport over a :class:`FakePage`."""

    def __init__(self, page: FakePage) -> None:
        self.page = page

    def send(self, message: str) -> str:
        answer = self.page.answer(message, is_async=False)
        return json.dumps(answer)

    async def send_async(self, message: str) -> str:
        answer = self.page.answer(message, is_async=True)
        if isinstance(answer, tuple):
            coroutine, ident = answer
            return json.dumps({"id": ident, "value": await coroutine})
        return json.dumps(answer)


@pytest.fixture
def page() -> Iterator[FakePage]:
    fake = FakePage()
    remote_half.install(Loopback(fake))
    try:
        yield fake
    finally:
        remote_half._current = None  # back to the main thread's behaviour


def deliver(page: FakePage) -> None:
    """The page's events, handed to the worker as lab/wire.py's event dispatch does."""
    halves = remote_half.current()
    assert halves is not None
    for text in page.events:
        assert halves.on_event(text)
    page.events.clear()


def test_load_half_in_the_worker_is_a_remote_half_attached_on_the_page(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js", ctx=object())
    assert isinstance(half, RemoteHalf)
    assert page.asked == [("halves", "load", False)]
    assert page.made[0].attached == 1 and page.made[0].ctx == "the loader's ctx"  # the page's ctx, not the worker's
    plain = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    assert page.made[1].attached == 0  # no ctx: not attached, as on the main thread
    assert plain._number != half._number


def test_calls_cross_synchronously_with_positional_json_arguments(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    page.made[0].open = [{"id": "d-1", "title": "Rename file"}]
    assert json.loads(half.snapshot(6)) == [{"id": "d-1", "title": "Rename"}]
    assert half.click("d-1", 0) == "clicked"
    assert half.click("d-9", 0) == "gone"
    assert half.calls() == 7  # a half's method named as a Python attribute might be still reaches the page
    counts = remote_half.current().crossings["dialogs"]  # type: ignore[union-attr]
    assert dict(counts) == {"load": 1, "snapshot": 1, "click": 2, "calls": 1}


def test_errors_of_the_page_are_raised_in_the_worker(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    with pytest.raises(HostFailure, match="the node is gone") as failure:
        half.broken()
    assert failure.value.kind == "TypeError"
    with pytest.raises(WireError, match="no method 'missing'"):
        half.missing()
    with pytest.raises(WireError, match="not JSON"):
        half.node()
    with pytest.raises(WireError, match="HTTP 404"):
        ffi.load_half("webmcp_bridge.lab", "nothing.js")


def test_names_python_keeps_and_attach_are_refused_before_crossing(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    asked = len(page.asked)
    with pytest.raises(WireError, match="attach is made by the page"):
        half.attach({})
    with pytest.raises(AttributeError):
        half._private()
    with pytest.raises(WireError, match="not a method name"):
        getattr(half, "snap-shot")
    with pytest.raises(WireError, match="not a half's name"):
        ffi.load_half("webmcp_bridge.lab", "../secret.js")
    assert len(page.asked) == asked  # nothing crossed


def test_arguments_that_are_not_json_or_stray_callables_are_refused(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    asked = len(page.asked)
    with pytest.raises(WireError, match="Proxies.keep"):
        half.watch(print, print)
    with pytest.raises(WireError, match="argument 0"):
        half.snapshot(float("nan"))
    with pytest.raises(WireError, match="read as a callback"):
        half.snapshot({"callback": 1})
    assert len(page.asked) == asked


def test_a_promise_method_is_refused_synchronously_and_awaited_explicitly(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    with pytest.raises(WireError, match="returned a promise"):
        half.save("a.ipynb")
    assert asyncio.run(ffi.awaiting(half).save("a.ipynb")) == "saved a.ipynb"
    assert asyncio.run(ffi.awaiting(half).click("d-1", 0)) == "gone"  # a plain value answers an async call too
    assert page.asked[-2:] == [("half:1", "save", True), ("half:1", "click", True)]
    with pytest.raises(WireError, match="attach is made by the page"):
        ffi.awaiting(half).attach("ctx")


def test_callbacks_are_events_until_proxies_destroy_them(page: FakePage) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    proxies = ffi.Proxies()
    seen: list[tuple[str, tuple[Any, ...]]] = []
    notify = proxies.keep(lambda *args: seen.append(("notify", args)))
    opened = proxies.keep(lambda *args: seen.append(("opened", args)))
    assert half.watch(notify, opened) is True
    assert page.asked[-1] == ("half:1", "watch", False)
    fake = page.made[0]
    assert fake.notify is not None
    fake.notify()
    fake.opened("d-1", 3)
    assert seen == []  # events run on the worker's loop, not inside the page's call
    deliver(page)
    assert seen == [("notify", ()), ("opened", ("d-1", 3))]
    assert len(proxies) == 2 and len(remote_half.current().callbacks) == 2  # type: ignore[union-attr]
    proxies.remove(notify)
    fake.notify()
    deliver(page)  # a dropped callback's event does nothing
    assert seen == [("notify", ()), ("opened", ("d-1", 3))]
    proxies.clear()
    fake.opened("d-2", 0)
    deliver(page)
    assert len(seen) == 2 and len(remote_half.current().callbacks) == 0  # type: ignore[union-attr]


def test_a_failing_callback_is_printed_and_the_others_still_run(page: FakePage, capsys: Any) -> None:
    half = ffi.load_half("webmcp_bridge.lab", "dialogs.js")
    proxies = ffi.Proxies()
    calls: list[int] = []
    half.watch(proxies.keep(lambda: calls.append(1)), proxies.keep(lambda: 1 / 0))
    fake = page.made[0]
    fake.opened()
    fake.notify()  # type: ignore[misc]
    deliver(page)
    assert calls == [1]
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_other_events_are_left_to_the_host_and_bad_callback_events_refused(page: FakePage) -> None:
    halves = remote_half.current()
    assert halves is not None
    assert halves.on_event(json.dumps({"event": "dialogs"})) is False
    with pytest.raises(WireError, match="a callback event is"):
        halves.on_event(json.dumps({"event": "callback", "id": "1", "args": []}))


def test_main_thread_mode_is_unchanged_without_the_worker() -> None:
    remote_half._current = None  # back to the main thread's behaviour
    made: list[Any] = []
    proxies = ffi.Proxies(create=lambda fn: made.append(fn) or fn)
    assert proxies.keep(print) is print and made == [print]
    half = object()
    assert ffi.awaiting(half) is half
    with pytest.raises(TypeError):
        remote_half.awaiting(half)  # type: ignore[arg-type]
