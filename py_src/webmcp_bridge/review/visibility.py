"""Which review threads the agent may see, and how its write of the threads merges with the stored ones (applied
by the access guard with the notebook's levels).
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
    """Set (``hidden``) or remove ``"hiddenCell": true`` on the entries of ``cell_ids``, in place, so a hidden cell's
    thread stays hidden after the cell is deleted. True when an entry changed."""
    changed = False
    for thread in threads:
        if thread_cell_id(thread) in cell_ids:
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
    """True when the agent may see this entry: its cell not ``hidden`` now, and when marked ``hiddenCell`` or
    ``ever_hidden`` (seen hidden this session), only while it exists (``exists``, asked only then)."""
    cell_id = thread_cell_id(thread)
    if cell_id is None or cell_id in hidden:
        return False
    if thread.get("hiddenCell") is True or cell_id in ever_hidden:
        return exists(cell_id)
    return True


def merge_threads(stored: list[Any], given: Any, visible: Callable[[Any], bool]) -> list[Any]:
    """The threads to store when the agent writes ``given`` over ``stored``, in stored order: invisible and
    malformed ones untouched, visible ones replaced by the given entry of that id, new given ones appended, given
    invisible ones dropped."""
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
