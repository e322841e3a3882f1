"""Which review threads the agent may see, and how its write of the threads merges with the stored ones.

Pure functions over the ``threads`` list of a notebook's bridge metadata (:mod:`webmcp_bridge.review.threads`
describes an entry); the access guard (:mod:`webmcp_bridge.access.guard`) applies them with the notebook's
levels, and the person's level changes (:mod:`webmcp_bridge.access.levels`) mark the threads of hidden cells.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any


def thread_cell_id(thread: Any) -> str | None:
    """The id of the cell a thread entry is anchored to; None for a malformed entry."""
    anchor = thread.get("anchor") if isinstance(thread, dict) else None
    cell_id = anchor.get("cellId") if isinstance(anchor, dict) else None
    return cell_id if isinstance(cell_id, str) else None


def mark_hidden_cells(threads: Iterable[Any], cell_ids: Collection[str], hidden: bool) -> bool:
    """Set ``"hiddenCell": true`` on the entries anchored to ``cell_ids`` (``hidden``) or remove it (not
    ``hidden``), in place, so a thread of a hidden cell stays hidden after the cell is deleted. Returns True
    when an entry changed."""
    changed = False
    for thread in threads:
        anchor = thread.get("anchor") if isinstance(thread, dict) else None
        if isinstance(anchor, dict) and anchor.get("cellId") in cell_ids:
            if hidden and thread.get("hiddenCell") is not True:
                thread["hiddenCell"] = True
                changed = True
            elif not hidden and "hiddenCell" in thread:
                del thread["hiddenCell"]
                changed = True
    return changed


def thread_visible(
    thread: Any, hidden: Collection[str], ever_hidden: Collection[str], exists: Callable[[str], bool]
) -> bool:
    """True when the agent may see this entry: anchored to a cell that is not ``hidden`` now; for a cell marked
    ``hiddenCell`` or among ``ever_hidden`` (ids seen hidden in this session), only while that cell exists again
    (``exists(cell id)``, asked only then)."""
    cell_id = thread_cell_id(thread)
    if cell_id is None or cell_id in hidden:
        return False
    if thread.get("hiddenCell") is True or cell_id in ever_hidden:
        return exists(cell_id)
    return True


def merge_threads(stored: list[Any], given: Any, visible: Callable[[Any], bool]) -> list[Any]:
    """The threads to store when the agent writes ``given`` over ``stored``: the stored order is kept, entries the
    agent may not see (``visible`` False) and malformed ones stay untouched, visible ones are replaced by the
    given entry of the same id; given entries with a new id (or none) are appended. Given entries the agent may not
    see are dropped."""
    shown = [t for t in (given if isinstance(given, list) else []) if visible(t)]
    by_id = {t.get("id"): t for t in shown if isinstance(t.get("id"), str)}
    threads, used = [], set()
    for old in stored:
        if not visible(old):
            threads.append(old)
        elif old.get("id") in by_id and old.get("id") not in used:
            threads.append(by_id[old["id"]])
            used.add(old["id"])
    threads.extend(t for t in shown if t.get("id") not in used or not isinstance(t.get("id"), str))
    return threads
