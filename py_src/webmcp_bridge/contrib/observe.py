"""Attaching the contributions' observers of calls and kernel runs. One that raises, or returns an awaitable
(closed unrun), never reaches the call: its first failure is one diagnostic ``hook`` and a console traceback, the
later ones are silent.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from typing import Any

from webmcp_bridge.access.runs import RunObservers
from webmcp_bridge.calls.registry import Registry
from webmcp_bridge.contrib.assemble import Assembly
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.limits import preview


def _label(contribution: str, observer: Callable[..., Any]) -> str:
    return f"{contribution}: {getattr(observer, '__qualname__', None) or type(observer).__name__}"


def isolated(contribution: str, observer: Callable[[Any], Any], diagnostics: Diagnostics) -> Callable[[Any], None]:
    """``observer`` wrapped so that nothing it does reaches the caller; its first failure is reported once."""
    label = _label(contribution, observer)

    def observe(event: Any) -> None:
        try:
            result = observer(event)
        except Exception as exc:
            if diagnostics.once(
                ("hook", id(observer)),
                label,
                "hook",
                f"raised {type(exc).__name__}: {preview(str(exc), 160)}; the calls went on (reported once)",
            ):
                traceback.print_exc()
            return
        if inspect.isawaitable(result):
            close = getattr(result, "close", None)
            if callable(close):
                close()
            diagnostics.once(
                ("hook", id(observer)),
                label,
                "hook",
                "returned an awaitable; observers are plain functions and it was not run",
            )

    return observe


def attach_observers(
    registry: Registry[Any], runs: RunObservers, assembly: Assembly, diagnostics: Diagnostics
) -> list[Callable[[], None]]:
    """Attach every observer of ``assembly`` (calls to ``registry``, runs to ``runs``); returns their detachers."""
    detach = [registry.on_after(isolated(name, observer, diagnostics)) for name, observer in assembly.on_call]
    detach += [runs.add(isolated(name, observer, diagnostics)) for name, observer in assembly.on_run]
    return detach
