"""The change feed an agent follows with ``jupyter_get_changes`` and a wait: when to tell it of what.

The log (:mod:`webmcp_bridge.changes.log`) merges the person's typing into bursts
(:class:`~webmcp_bridge.changes.log.Typing`: 0.25 s of quiet ends one, and none lasts 2 s or more). A waiting reader is
told of a burst once, when it is
over: 0.25 s after the typing pauses, and at most 2 s after it began however continuously the person types
(the typing after that is the next burst, told of in its turn). Every other change (the agent's own edits, a
person's insert, delete, move or run) is told at once; the agent's changes carry ``actor: "agent"``, so they
are never taken for the person's.

:func:`announce` is the pure rule (what to tell a reader at a given time); :func:`wait_for_announcement` is the
waiting, with the clock and the sleep handed in, so the timing is tested with a fake clock and the page's
waiting never blocks (it sleeps on the event loop between looks, never longer than until the next burst is over).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from webmcp_bridge.changes.log import ChangeEntry, Typing
from webmcp_bridge.core.limits import CHANGES_POLL_SECONDS

#: the longest a waiting reader sleeps before looking for new changes again (seconds)
POLL_SECONDS = CHANGES_POLL_SECONDS


@dataclass(frozen=True)
class Announcement:
    """What to tell a reader now.

    Attributes:
        ready: the entries to tell of, oldest first: every entry up to the first one whose burst is not over.
        held: the entries kept back (a burst of typing still under way, and every entry after it).
        seq: the ``seq`` to hand the reader as its next ``since`` (None: the log's latest); it stops before the
            first entry held, so the reader is told of it once it is over.
        wake: when the first held burst is over if no edit follows (seconds since the epoch; None: nothing held).
    """

    ready: list[ChangeEntry]
    held: list[ChangeEntry] = field(default_factory=list)
    seq: int | None = None
    wake: float | None = None


def announce(entries: Sequence[ChangeEntry], since: int | None, now: float, typing: Typing) -> Announcement:
    """Split ``entries`` (one reader's, oldest first, all newer than ``since``) into what to tell it at ``now``
    and what to hold back (see :class:`Announcement`)."""
    for at, entry in enumerate(entries):
        if not typing.over(entry, since, now):
            return Announcement(list(entries[:at]), list(entries[at:]), entry.seq - 1, typing.over_at(entry))
    return Announcement(list(entries))


async def wait_for_announcement(
    read: Callable[[], Sequence[ChangeEntry]],
    since: int | None,
    wait: float,
    typing: Typing,
    clock: Callable[[], float],
    sleep: Callable[[float], Awaitable[object]],
) -> Announcement:
    """Look at ``read()`` (the reader's entries newer than ``since``, oldest first, brought up to date by each call)
    until something is ready to tell, or ``wait`` seconds passed on ``clock`` (seconds since the epoch); between
    looks, ``sleep`` until the next look: at most :data:`POLL_SECONDS`, and no later than the moment the first
    burst held back is over or the wait ends. Returns the last :func:`announce` (its ``ready`` is empty when the
    wait ended with nothing to tell)."""
    deadline = clock() + wait
    while True:
        now = clock()
        told = announce(read(), since, now, typing)
        if told.ready or now >= deadline:
            return told
        pause = min(POLL_SECONDS, deadline - now)
        if told.wake is not None:
            pause = min(pause, max(0.0, told.wake - now))
        await sleep(pause)
