"""The alarm of core/alarm.py under CPython: it stops a running ``re`` match from inside the engine, only marks
itself due outside ``raising()``, and leaves no handler or timer behind."""

from __future__ import annotations

import re
import signal

import pytest

from webmcp_bridge.core.alarm import SIGNAL, Alarm, Overrun


def _left() -> tuple:
    return signal.getsignal(SIGNAL), signal.getitimer(signal.ITIMER_VIRTUAL)


def test_the_alarm_stops_a_match_that_would_run_for_minutes():
    before = _left()
    alarm = Alarm()
    alarm.start(0.05)
    try:
        with pytest.raises(Overrun), alarm.raising():
            re.search(r"(?:.|..){40}\x00", "x" * 200)  # hours of backtracking without the alarm
    finally:
        alarm.stop()
    assert alarm.due and not alarm.running
    assert _left() == before


def test_outside_raising_the_alarm_only_marks_itself_due():
    alarm = Alarm()
    alarm.start(0.01)
    try:
        spent = 0
        while not alarm.due:  # CPU time passes: the signal comes, and nothing is raised here
            spent += sum(range(10_000))
        with pytest.raises(Overrun), alarm.raising():  # a due alarm raises on entry
            pass
    finally:
        alarm.stop()


def test_a_match_that_ends_in_time_is_left_alone():
    alarm = Alarm()
    alarm.start(1.0)
    try:
        with alarm.raising():
            found = [m.group() for m in re.finditer(r"euler_\d+", "def euler_1(): ... euler_12")]
    finally:
        alarm.stop()
    assert found == ["euler_1", "euler_12"] and not alarm.due
