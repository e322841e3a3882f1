"""Kernel runs started through the access guard, told to whoever observes them (a site author's hooks).

The guard is the one way a tool reaches a kernel (:meth:`GuardedNotebook.run_cell
<webmcp_bridge.access.guard.GuardedNotebook.run_cell>` and ``run_code``), so every kernel run a tool starts, the
bridge's own and a site author's, passes here once it ends. A run the guard refused (access, Propose mode)
never started and is not told. The code that ran is never part of the event (it may be a site's hidden tests).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from webmcp_bridge.calls.registry import current_call

RunKind = Literal["cell", "code"]


@dataclass(frozen=True)
class KernelRun:
    """One kernel run a tool started.

    Attributes:
        path: the notebook whose kernel ran it.
        kind: "cell" (a cell of the notebook ran) or "code" (code without a cell: ``jupyter_run_code``, a site
            author's check).
        cell_id: the cell that ran ("cell" runs), else None.
        status: the host's status of the run ("ok", "error", "timeout", "running"...), "failed" when the host
            raised, "aborted" when the agent aborted the call meanwhile.
        duration: seconds from the start of the run to its end (or to the end of the wait).
        execution_count: the kernel's count, when it gave one.
        tool: the tool whose call started the run (None outside a call).
        call_id: the id of that call, as in the call observers' :class:`~webmcp_bridge.calls.registry.CallEvent`.
    """

    path: str
    kind: RunKind
    cell_id: str | None
    status: str
    duration: float
    execution_count: int | None
    tool: str | None
    call_id: int | None

    def to_json(self) -> dict[str, object]:
        """Plain data (camelCase keys), as the page's ``webmcp-bridge:run`` event carries it."""
        return {
            "path": self.path,
            "kind": self.kind,
            "cellId": self.cell_id,
            "status": self.status,
            "duration": round(self.duration, 6),
            "executionCount": self.execution_count,
            "tool": self.tool,
            "callId": self.call_id,
        }


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
        """Tell every observer of one run (the tool and call are the current call's). An observer that raises
        is printed and the others are still told; nothing reaches the run."""
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
