"""Outputs that may no longer match the notebook: a code cell's ``outputsStale`` in a read.

A cell's outputs were made by one run of one text, in one kernel state. They may no longer be what the notebook
produces when:

- ``sourceEdited``: the cell's source changed since that run (the host's own rule: JupyterLab's code cell model
  ``isDirty``);
- ``earlierRanSince``: an earlier code cell ran after it (a higher execution count above it: the cells ran out of
  order, or an earlier cell re-ran since);
- ``earlierEdited``: an earlier code cell's source changed since its own last run (what the cells above now say is
  not what ran before this one).

Only cells the agent can see are given (the access guard leaves hidden cells out of the run states), so a hidden
cell's runs and edits never show here. A cell with no execution count has no outputs of a run to judge and gets
no ``outputsStale``; neither does a cell for which nothing holds. Counts restart with the kernel: a cell run
before a restart, above one run after it, counts as having run since, which is true of the kernel's state too.
Standard library only.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

from webmcp_bridge.core.limits import STALE_IDS_SHOWN
from webmcp_bridge.core.raw import RunState


def stale_outputs(states: Sequence[RunState], cell_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{cellId: outputsStale}`` for those of ``cell_ids`` whose outputs may be stale.

    Args:
        states: the run states of the notebook's code cells from the first up to (at least) the last of
            ``cell_ids``, in index order (:meth:`webmcp_bridge.host.protocol.LiveNotebook.run_states`).
        cell_ids: the cells asked about; ids not in ``states`` (markdown, raw, unknown) get nothing.

    Returns:
        Per stale cell: ``{"sourceEdited": bool, "earlierRanSince": int, "earlierEdited": int}`` with, when a
        count is not 0, ``earlierRanSinceIds`` (the most recently run of those cells, newest first) and
        ``earlierEditedIds`` (the nearest above first), each at most :data:`STALE_IDS_SHOWN` ids.

    One pass over ``states`` (a sorted list of the earlier counts, so each cell costs a binary search, not a
    walk of the cells above it): a 3,000-cell notebook is read in milliseconds.
    """
    wanted = set(cell_ids)
    found: dict[str, dict[str, Any]] = {}
    earlier_counts: list[tuple[int, int]] = []  # (execution count, position in states) of the cells above, sorted
    earlier_edited: list[str] = []  # ids of the cells above edited since their run, in index order
    for pos, state in enumerate(states):
        count = state.execution_count
        if state.id in wanted and count is not None:
            cut = bisect.bisect_right(earlier_counts, (count, len(states)))
            ran_since = len(earlier_counts) - cut
            edited = state.edited is True
            if edited or ran_since or earlier_edited:
                stale: dict[str, Any] = {
                    "sourceEdited": edited,
                    "earlierRanSince": ran_since,
                    "earlierEdited": len(earlier_edited),
                }
                if ran_since:
                    newest = earlier_counts[max(cut, len(earlier_counts) - STALE_IDS_SHOWN) :]
                    stale["earlierRanSinceIds"] = [states[p].id for _, p in reversed(newest)]
                if earlier_edited:
                    stale["earlierEditedIds"] = earlier_edited[-STALE_IDS_SHOWN:][::-1]
                found[state.id] = stale
        if count is not None:
            bisect.insort(earlier_counts, (count, pos))
            if state.edited is True:
                earlier_edited.append(state.id)
    return found
