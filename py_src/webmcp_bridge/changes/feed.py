"""The change feed an agent follows with ``jupyter_get_changes`` and a wait (docs/TOOLS.md, "Following the person's
typing"): a burst of typing is told once it is over, every other change at once. :func:`announce` is the pure rule;
:func:`wait_for_announcement` waits with the clock and sleep handed in.
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
    """What to tell a reader now: ``ready`` up to the first unfinished burst, ``held`` from it on; ``seq`` the
    reader's next ``since`` (None: the latest), stopping before it; ``wake`` when it is over (None: nothing held)."""

    ready: list[ChangeEntry]
    held: list[ChangeEntry] = field(default_factory=list)
    seq: int | None = None
    wake: float | None = None


def announce(entries: Sequence[ChangeEntry], since: int | None, now: float, typing: Typing) -> Announcement:
    """Split one reader's ``entries`` (oldest first, newer than ``since``) into what to tell at ``now`` and hold."""
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
    """Look at ``read()`` until something is ready or ``wait`` seconds passed, sleeping at most :data:`POLL_SECONDS`
    and never past the first held burst's end; returns the last :func:`announce`."""
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
