"""Kernel runs a tool started through the access guard (the one way to a kernel), told to observers (a site
author's hooks) once each ends. A run the guard refused is not told; the code is never part of the event (it may be
a site's hidden tests).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Literal

from pydantic.alias_generators import to_camel

from webmcp_bridge.calls.registry import current_call

RunKind = Literal["cell", "code"]


@dataclass(frozen=True)
class KernelRun:
    """One kernel run a tool started: ``kind`` "cell" (``cell_id``) or "code" (no cell); ``status`` the host's
    ("ok", "error", "timeout"...), "failed" when the host raised, "aborted" when the call was; ``duration`` seconds
    to its end or the wait's; ``tool`` / ``call_id`` of the call that started it
    (:class:`~webmcp_bridge.calls.registry.CallEvent`), None outside one."""

    path: str
    kind: RunKind
    cell_id: str | None
    status: str
    duration: float
    execution_count: int | None
    tool: str | None
    call_id: int | None

    def to_json(self) -> dict[str, object]:
        """Plain data (camelCase keys), as the page's ``webmcp-bridge:run`` event carries it: every field, so a field
        added to this class reaches the page's listeners."""
        data = {to_camel(f.name): getattr(self, f.name) for f in fields(self)}
        return {**data, "duration": round(self.duration, 6)}


RunObserver = Callable[[KernelRun], None]


class RunObservers:
    """The observers of kernel runs (a list; :meth:`add` returns the function that removes one)."""

    def __init__(self) -> None:
        self._observers: list[RunObserver] = []

    def add(self, observer: RunObserver) -> Callable[[], None]:
        """Call ``observer(run)`` after every kernel run a tool starts."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def tell(
        self, path: str, kind: RunKind, cell_id: str | None, status: str, duration: float, execution_count: int | None
    ) -> None:
        """Tell every observer (one that raises is printed, the others still told; nothing reaches the run)."""
        if not self._observers:
            return
        call = current_call.get()
        run = KernelRun(
            path,
            kind,
            cell_id,
            status,
            duration,
            execution_count,
            None if call is None else call.tool,
            None if call is None else call.call_id,
        )
        for observer in list(self._observers):
            try:
                observer(run)
            except Exception:
                traceback.print_exc()
