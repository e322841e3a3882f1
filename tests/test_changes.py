"""jupyter_get_changes and the change log (webmcp_bridge.changes.log): what an agent following the person
is told. ``missed`` means entries were dropped from the bounded log, nothing else: changes merged into one
entry (keystrokes coalescing) are all still there."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from helpers import check_envelope, corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.changes.log import ChangeLog
from webmcp_bridge.core.limits import CHANGE_LOG_SIZE, DEFAULT_LIMITS
from webmcp_bridge.host.protocol import CellChange
from webmcp_bridge.session.bridge import build_bridge


class Agent:
    """Every toolset over a MemoryWorkspace of one real notebook, opened; ``ok`` checks the envelope."""

    def __init__(self, name: str) -> None:
        self.ws = MemoryWorkspace({name: corpus_text(name)})
        self.reg = build_bridge(self.ws).registry
        self.ok("jupyter_open_notebook", {"path": name})

    def ok(self, tool: str, arguments: Any = None) -> dict[str, Any]:
        result = asyncio.run(self.reg.call(tool, arguments))
        check_envelope(result, DEFAULT_LIMITS)
        assert result["isError"] is False, result["structuredContent"]
        return result["structuredContent"]


def test_coalesced_keystrokes_are_not_reported_as_missed():
    b = Agent("jupyterlite-demo-python.ipynb")
    cell = b.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    nb = b.ws.current_notebook()
    for typed in ("a", "ab", "abc"):  # three keystrokes, one coalesced entry
        nb.person_set_source(cell["id"], cell["source"] + typed)
    changes = b.ok("jupyter_get_changes", {"since": 0})
    assert [(c["actor"], c["kind"], c["cellId"], c["count"]) for c in changes["changes"]] == [
        ("person", "edit", cell["id"], 3)
    ]
    assert "missed" not in changes, changes
    later = b.ok("jupyter_get_changes", {"since": changes["seq"]})
    assert later["changes"] == [] and "missed" not in later


def test_missed_is_reported_once_entries_were_dropped():
    log = ChangeLog(max_entries=3)
    now = time.time()
    log.ingest("n.ipynb", [CellChange("person", "edit", f"c{i}", now) for i in range(5)])  # five cells: two dropped
    assert [e.cell_id for e in log.entries()] == ["c2", "c3", "c4"]
    assert log.missed_since(0) and log.missed_since(1)  # c0 (seq 1) and c1 (seq 2) are gone
    assert not log.missed_since(2) and not log.missed_since(5)
    b = Agent("jupyterlite-empty.ipynb")
    assert "missed" not in b.ok("jupyter_get_changes", {"since": 0})  # nothing ever dropped


def test_changes_the_host_dropped_before_the_log_saw_them_are_reported_missed():
    """A person's replace-all over a 223-cell notebook changes every cell three times before the bridge reads the
    notebook again: 669 changes, more than the host buffers (CHANGE_LOG_SIZE). The oldest are dropped before they
    reach the log, and an agent that read the log before is told it missed some; one that read after is not, and
    a smaller burst misses nothing."""
    b = Agent("pytudes-euler.ipynb")
    nb = b.ws.current_notebook()
    cells = b.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 200, "includeSource": False})["cells"]
    cells += b.ok("jupyter_get_cells", {"startIndex": 200, "endIndex": 300, "includeSource": False})["cells"]
    assert len(cells) == 223
    before = b.ok("jupyter_get_changes", {"since": 0})
    sources = {c["id"]: c["id"] for c in cells}
    for round_ in range(3):
        for cell in cells:
            sources[cell["id"]] += f" r{round_}"
            nb.person_set_source(cell["id"], sources[cell["id"]])
    assert 3 * len(cells) > CHANGE_LOG_SIZE
    after = b.ok("jupyter_get_changes", {"since": before["seq"], "limit": 200})
    assert after.get("missed") is True, {k: v for k, v in after.items() if k != "changes"}
    # what was kept are the newest changes: the last round's edits of the last cells
    assert after["changes"][-1]["cellId"] == cells[-1]["id"] and after["changes"][-1]["actor"] == "person"
    assert "missed" not in b.ok("jupyter_get_changes", {"since": after["seq"]})
    # a burst the host can hold (two rounds over 200 cells: 400 changes) is not a miss
    for round_ in range(2):
        for cell in cells[:200]:
            sources[cell["id"]] += f" s{round_}"
            nb.person_set_source(cell["id"], sources[cell["id"]])
    held = b.ok("jupyter_get_changes", {"since": after["seq"], "limit": 200})
    assert "missed" not in held and held["changes"], {k: v for k, v in held.items() if k != "changes"}


def test_a_stream_of_outputs_reported_as_one_change_with_repeats_leaves_the_log_as_one_by_one():
    """A print loop changes a cell's outputs once per message; the live host reports such a run of equal changes as
    one change with ``repeats`` (notebook.js). The log must end as it would with every change reported: the same
    entries, kinds, counts, times, revisions and sequence numbers, a run after the outputs still one "run" entry,
    and a pause longer than the coalescing window still a new entry."""
    now = 1_000_000.0
    window = 10.0
    one_by_one = (
        [CellChange("person", "clear", "a", now, revision=1)]
        + [CellChange("person", "output", "a", now + 0.01 * i, revision=2 + i) for i in range(1, 301)]
        + [CellChange("person", "run", "a", now + 3.5, revision=303)]
        + [CellChange("person", "output", "a", now + 20 + 0.5 * i, revision=310 + i) for i in range(40)]
        + [CellChange("agent", "output", "b", now + 41, revision=400)]
    )
    grouped = [
        one_by_one[0],
        CellChange("person", "output", "a", now + 0.01, revision=301, repeats=299, last_time=now + 3.0),
        one_by_one[301],
        CellChange("person", "output", "a", now + 20, revision=349, repeats=39, last_time=now + 39.5),
        one_by_one[-1],
    ]
    logs = []
    for changes in (one_by_one, grouped):
        log = ChangeLog(coalesce_seconds=window)
        log.ingest("n.ipynb", changes[:3])  # two takes, as the panel's bursts take them
        log.ingest("n.ipynb", changes[3:])
        logs.append(log)
    expected = [
        ("person", "run", "a", 302, now, now + 3.5, 303),
        ("person", "output", "a", 40, now + 20, now + 39.5, 349),
        ("agent", "output", "b", 1, now + 41, now + 41, 400),
    ]
    for log in logs:
        assert [(e.actor, e.kind, e.cell_id, e.count, e.first, e.time, e.revision) for e in log.entries()] == expected
    assert [e.seq for e in logs[0].entries()] == [e.seq for e in logs[1].entries()] == [302, 342, 343]
    assert logs[0].latest_seq() == logs[1].latest_seq() == 343
    assert not logs[1].missed_since(0)


# -- the feed that follows typing (changes/feed.py), with a fake clock ----------------------------------------

START = 1_000_000.0  # seconds since the epoch; typing times below are multiples of 1/8 s (exact in binary)


class FakeTime:
    """A clock and a sleep that only the waiting advances (no real time passes)."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        assert len(self.sleeps) < 100_000, "the wait never ended"
        self.now += seconds


def follow(
    events: list[CellChange], until: float, wait: float = 15.0
) -> list[tuple[float, list[tuple[str, str, str, int]]]]:
    """An agent following notebook n.ipynb with jupyter_get_changes' wait, from START until ``until``: each
    announcement as (when, [(actor, kind, cellId, count)]). ``events`` reach the log when the reader looks, as
    the host's take_changes brings them."""
    from webmcp_bridge.changes.feed import wait_for_announcement

    log, fake = ChangeLog(), FakeTime(START)
    queue = sorted(events, key=lambda e: e.time)
    told: list[tuple[float, list[tuple[str, str, str, int]]]] = []
    since = 0

    def read():
        due = [e for e in queue if e.time <= fake.now]
        del queue[: len(due)]
        log.ingest("n.ipynb", due)
        return log.entries("n.ipynb", since)

    while fake.now < until:
        result = asyncio.run(wait_for_announcement(read, since, wait, log.typing, fake.clock, fake.sleep))
        if result.ready:
            told.append((fake.now, [(e.actor, e.kind, e.cell_id, e.count) for e in result.ready]))
        since = log.latest_seq() if result.seq is None else result.seq
    return told


def keystrokes(cell: str, first: float, last: float, step: float = 0.125, actor: str = "person") -> list[CellChange]:
    count = round((last - first) / step) + 1
    return [CellChange(actor, "edit", cell, START + first + i * step) for i in range(count)]  # type: ignore[arg-type]


def test_a_burst_of_typing_is_one_change_a_quarter_second_after_the_pause():
    told = follow(keystrokes("a", 0.5, 1.25), until=START + 5)  # 7 keystrokes, then nothing
    assert told == [(START + 1.5, [("person", "edit", "a", 7)])]


def test_continuous_typing_is_told_every_two_seconds_and_once_it_pauses():
    told = follow(keystrokes("a", 0.0, 5.0), until=START + 8)  # 41 keystrokes, 8 a second, never 0.25 s apart
    assert [when - START for when, _ in told] == [2.0, 4.0, 5.25]
    assert [changes for _, changes in told] == [
        [("person", "edit", "a", 17)],
        [("person", "edit", "a", 33)],
        [("person", "edit", "a", 41)],
    ]  # one change each (count: the entry's total)


def test_a_reader_that_looks_late_is_told_of_a_finished_burst_at_once():
    """The reader comes back after a burst ended by the 2 s rule while the typing goes on: it is told at once."""
    from webmcp_bridge.changes.feed import announce

    log = ChangeLog()
    log.ingest("n.ipynb", keystrokes("a", 0.0, 2.5))  # the burst of 0..1.875 s is over, 2.0..2.5 s is under way
    (entry,) = log.entries("n.ipynb")
    assert entry.burst == START + 2.0 and entry.burst_seq > 0
    told = announce(log.entries("n.ipynb", 0), 0, START + 2.5, log.typing)
    assert told.ready == [entry] and told.seq is None
    later = announce(log.entries("n.ipynb", 0), entry.seq, START + 2.5, log.typing)
    assert later.ready == [] and later.wake == START + 2.75  # the reader told of it waits for the current burst


def test_the_agents_edits_are_told_at_once_as_the_agents_and_the_persons_burst_stays_one():
    events = keystrokes("a", 0.0, 1.0) + [CellChange("agent", "edit", "b", START + 0.5)]
    told = follow(events, until=START + 3)
    # the agent's edit at 0.5 s is told at the reader's next look (a look at most every 0.25 s), while the person
    # still types; the person's burst, the agent's edit in between, is one change told 0.25 s after the pause
    assert told == [(START + 0.75, [("agent", "edit", "b", 1)]), (START + 1.25, [("person", "edit", "a", 9)])]


def test_other_changes_of_the_person_are_told_at_once():
    events = [CellChange("person", "insert", "c", START + 0.5), CellChange("person", "delete", "d", START + 1.0)]
    told = follow(events, until=START + 2)
    assert told == [(START + 0.5, [("person", "insert", "c", 1)]), (START + 1.0, [("person", "delete", "d", 1)])]


def test_a_wait_that_ends_during_a_burst_tells_nothing_and_keeps_the_burst_for_next_time():
    from webmcp_bridge.changes.feed import wait_for_announcement

    log, fake = ChangeLog(), FakeTime(START + 1.0)
    log.ingest("n.ipynb", keystrokes("a", 0.0, 0.875))
    result = asyncio.run(
        wait_for_announcement(lambda: log.entries("n.ipynb", 0), 0, 0.0625, log.typing, fake.clock, fake.sleep)
    )
    assert result.ready == [] and result.seq == log.latest_seq() - 1 and fake.now == START + 1.0625
    assert max(fake.sleeps) <= 0.25  # the page's event loop runs between looks


def test_the_tool_waits_for_the_burst_to_end_in_real_time():
    """jupyter_get_changes with a wait on the in-memory host, the person typing while the call waits."""
    b = Agent("jupyterlite-demo-python.ipynb")
    cell = b.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    nb = b.ws.current_notebook()
    mark = b.ok("jupyter_get_changes", {})["seq"]
    typed_at: list[float] = []

    async def scenario():
        async def person():
            for typed in "abcd":
                await asyncio.sleep(0.05)
                nb.person_set_source(cell["id"], cell["source"] + typed)
                typed_at.append(time.monotonic())

        typing = asyncio.ensure_future(person())
        result = await b.reg.call("jupyter_get_changes", {"since": mark, "wait": 5})
        done = time.monotonic()
        await typing
        return result, done

    result, done = asyncio.run(scenario())
    payload = result["structuredContent"]
    assert [(c["actor"], c["kind"], c["cellId"], c["count"]) for c in payload["changes"]] == [
        ("person", "edit", cell["id"], 4)
    ]
    assert done - typed_at[-1] >= 0.24, "told before the typing paused"
    again = b.ok("jupyter_get_changes", {"since": payload["seq"], "wait": 0.5})
    assert again["changes"] == []  # told once


def test_without_a_wait_a_burst_under_way_is_marked_typing():
    b = Agent("jupyterlite-demo-python.ipynb")
    cell = b.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    b.ws.current_notebook().person_set_source(cell["id"], "x")
    (change,) = b.ok("jupyter_get_changes", {"since": 0})["changes"]
    assert change["typing"] is True
    time.sleep(0.3)
    (change,) = b.ok("jupyter_get_changes", {"since": 0})["changes"]
    assert "typing" not in change
