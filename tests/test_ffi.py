"""The proxy owner of the JupyterLab side (lab/ffi.py), with a recording factory in place of Pyodide's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webmcp_bridge.lab.ffi import Proxies, is_nullish


class FakeProxy:
    """Stands for a Pyodide proxy: callable until destroyed, like the real one."""

    def __init__(self, fn: Callable[..., Any], log: list[str], fail: bool = False) -> None:
        self.fn, self.log, self.fail, self.destroyed = fn, log, fail, False

    def __call__(self, *args: Any) -> Any:
        assert not self.destroyed, "called after destroy"
        return self.fn(*args)

    def destroy(self) -> None:
        if self.destroyed:
            raise RuntimeError("Object has already been destroyed")  # what Pyodide raises
        self.destroyed = True
        self.log.append(f"destroy {self.fn.__name__}")
        if self.fail:
            raise RuntimeError("destroy failed")


def owner(log: list[str], failing: tuple[str, ...] = ()) -> Proxies:
    return Proxies(create=lambda fn: FakeProxy(fn, log, fn.__name__ in failing))


def on_click() -> str:
    return "clicked"


def on_key() -> str:
    return "key"


def test_kept_proxies_live_until_clear_and_a_second_clear_does_nothing() -> None:
    log: list[str] = []
    proxies = owner(log)
    click, key = proxies.keep(on_click), proxies.keep(on_key)
    assert click() == "clicked" and key() == "key" and len(proxies) == 2
    proxies.clear()
    assert click.destroyed and key.destroyed and len(proxies) == 0
    assert log == ["destroy on_key", "destroy on_click"]  # newest first
    proxies.clear()  # nothing left: no second destroy (Pyodide would raise)
    assert log == ["destroy on_key", "destroy on_click"]


def test_remove_destroys_one_and_only_once() -> None:
    log: list[str] = []
    proxies = owner(log)
    click, key = proxies.keep(on_click), proxies.keep(on_key)
    proxies.remove(click)
    assert click.destroyed and not key.destroyed and len(proxies) == 1
    proxies.remove(click)  # already gone: left alone
    proxies.remove(FakeProxy(on_click, log))  # never kept here: left alone
    assert log == ["destroy on_click"]
    proxies.clear()
    assert log == ["destroy on_click", "destroy on_key"]


def test_a_failing_destroy_does_not_stop_the_others(capsys) -> None:
    log: list[str] = []
    proxies = owner(log, failing=("on_key",))
    click, key = proxies.keep(on_click), proxies.keep(on_key)
    proxies.clear()  # never raises
    assert click.destroyed and key.destroyed and len(proxies) == 0
    assert "destroy failed" in capsys.readouterr().err


def test_an_owner_keeps_new_proxies_after_clear() -> None:
    log: list[str] = []
    proxies = owner(log)
    proxies.keep(on_click)
    proxies.clear()
    again = proxies.keep(on_key)
    assert not again.destroyed and len(proxies) == 1


def test_nullish_is_none_only_under_cpython() -> None:
    assert is_nullish(None)
    assert not is_nullish(0) and not is_nullish("") and not is_nullish(False)
