"""A deadline that reaches inside C code: an alarm that raises :class:`Overrun` in whatever the interpreter runs,
the regular expression engine's inner loop included.

CPython's ``re`` checks for signals every 4096 steps of its loop (``Modules/_sre/sre_lib.h``), and a handler that
raises stops the match. The alarm is a ``SIGVTALRM``: under CPython from ``setitimer(ITIMER_VIRTUAL)`` (CPU time,
main thread only); under Pyodide, which has no timers that fire while Python runs, the page's timer
(``lab/deadline.js``, installed by :func:`use_page_timer`) is the interrupt buffer the Emscripten port reads at
every signal check, reading as ``SIGVTALRM`` once the wall clock passed the deadline. Between two checks the engine
runs 4096 steps, each scanning its text at most once: callers give it short texts. A signal outside
:meth:`Alarm.raising` only sets :attr:`Alarm.due`; nothing of the alarm is left in place across an ``await``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: the signal the alarm uses (CPython's virtual timer's; the page's timer reports the same number)
SIGNAL = signal.SIGVTALRM if hasattr(signal, "SIGVTALRM") else 26

#: the page's timer: (start(seconds, signum), stop()), installed by :func:`use_page_timer`
_page_timer: tuple[Callable[[float, int], None], Callable[[], None]] | None = None


class Overrun(Exception):  # noqa: N818 (an event, not an error of the caller's making)
    """The alarm went off inside :meth:`Alarm.raising`: the code there ran past the deadline and was stopped."""


class NoAlarm(RuntimeError):
    """This runtime has no timer that stops a running match (no page timer, no ``setitimer`` on this thread)."""


def use_page_timer(start: Callable[[float, int], None], stop: Callable[[], None]) -> None:
    """Install the page's timer: ``start(seconds, signum)`` makes the interpreter see ``signum`` at its first signal
    check ``seconds`` from now, once; ``stop()`` cancels it."""
    global _page_timer
    _page_timer = (start, stop)


def _timer() -> tuple[Callable[[float, int], None], Callable[[], None]]:
    if _page_timer is not None:
        return _page_timer
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        raise NoAlarm("no timer can stop a running match here (not the main thread, or no setitimer)")

    def start(seconds: float, signum: int) -> None:
        signal.setitimer(signal.ITIMER_VIRTUAL, max(seconds, 1e-6))

    def stop() -> None:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)

    return start, stop


class Alarm:
    """One deadline at a time: inside ``with alarm.raising():`` a due alarm raises :class:`Overrun` at the next
    signal check; outside, it only sets :attr:`due`. :meth:`start` raises :class:`NoAlarm` when there is no timer."""

    def __init__(self) -> None:
        self.due = False
        self._raising = False
        self._stop: Callable[[], None] | None = None
        self._previous: Any = None

    def _went_off(self, signum: int, frame: Any) -> None:
        self.due = True
        if self._raising:
            self._raising = False
            raise Overrun

    def start(self, seconds: float) -> None:
        """Set the deadline ``seconds`` from now (a deadline already set is replaced)."""
        self.stop()
        begin, end = _timer()
        self._previous = signal.signal(SIGNAL, self._went_off)
        self.due = False
        self._stop = end
        begin(seconds, SIGNAL)

    @property
    def running(self) -> bool:
        return self._stop is not None

    def stop(self) -> None:
        """Remove the deadline and put the handler before back; nothing when none is set."""
        end, self._stop = self._stop, None
        if end is None:
            return
        end()
        signal.signal(SIGNAL, self._previous if self._previous is not None else signal.SIG_DFL)
        self._previous = None

    @contextmanager
    def raising(self) -> Iterator[None]:
        """While inside, the alarm going off raises :class:`Overrun` (at once if it is already :attr:`due`)."""
        if self.due:
            raise Overrun
        self._raising = True
        try:
            yield
        finally:
            self._raising = False
