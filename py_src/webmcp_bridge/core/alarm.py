"""A deadline that reaches inside C code: an alarm that raises :class:`Overrun` in whatever the interpreter runs,
the regular expression engine's inner loop included. Pure (standard library only); the page's timer is installed
by the browser layer (:func:`use_page_timer`).

**How it reaches a running match.** CPython's ``re`` engine checks for pending signals every 4096 steps of its
matching loop (``MAYBE_CHECK_SIGNALS`` in ``Modules/_sre/sre_lib.h``: ``PyErr_CheckSignals()``), and a Python
signal handler that raises makes the match stop with that exception. The alarm is a ``SIGVTALRM`` whose handler
raises :class:`Overrun` while :meth:`Alarm.raising` is entered:

- under CPython (the tests, bench/) the signal comes from ``signal.setitimer(ITIMER_VIRTUAL, ...)``: the
  process's CPU time, so a busy machine does not make a match late (main thread only, as every signal handler);
- under Pyodide (the page, the worker) there are no timers that fire while Python runs; CPython's Emscripten port
  reads the runtime's interrupt buffer at every signal check instead (``Module.Py_EmscriptenSignalBuffer``, set by
  Pyodide's public ``setInterruptBuffer``), and the page's timer (``lab/deadline.js``) is a buffer whose first
  element reads as ``SIGVTALRM`` once ``performance.now()`` passed the deadline: wall-clock time, the only clock a
  page has.

What one check costs the match is one JS read (the page) or nothing (CPython). Between two checks the engine runs
at most 4096 steps, each of which may scan the text it was given once: a caller that wants the deadline kept
closely gives it short texts (:mod:`webmcp_bridge.core.search` matches windows of a line).

A signal that arrives while the alarm is not raising (the caller's own code between two matches) only marks it
:attr:`Alarm.due`; the caller looks at that before the next match. The handler and the timer are set by
:meth:`Alarm.start` and put back by :meth:`Alarm.stop`: nothing of the alarm is left in place across an ``await``.
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
    """This runtime has no way to stop a running match: neither the page's timer (:func:`use_page_timer`) nor
    CPython's ``setitimer`` on the main thread."""


def use_page_timer(start: Callable[[float, int], None], stop: Callable[[], None]) -> None:
    """Install the page's timer (the browser layer, once at start-up): ``start(seconds, signum)`` makes the
    interpreter see ``signum`` at its first signal check ``seconds`` from now, once; ``stop()`` cancels it."""
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
    """One deadline at a time, for the main thread's code.

    :meth:`start` ``(seconds)`` sets it (installing the handler), :meth:`stop` removes it (the handler before goes
    back); inside ``with alarm.raising():`` a due alarm raises :class:`Overrun` there, at the interpreter's next
    signal check (the ``re`` engine's included); outside, it only sets :attr:`due`. Raises :class:`NoAlarm` from
    :meth:`start` when the runtime has no timer (module docstring).
    """

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
        """Whether a deadline is set (between :meth:`start` and :meth:`stop`)."""
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
