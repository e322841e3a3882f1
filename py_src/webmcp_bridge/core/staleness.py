"""Outputs that may no longer match the notebook: a code cell's ``outputsStale`` in a read.

The rules (``sourceEdited``, ``earlierRanSince``, ``earlierEdited``, and by names ``readsChanged`` and
``unreadableIds``) are those of docs/TOOLS.md, "Stale outputs". Only visible cells are given (the access guard
leaves hidden cells out of the run states), so a hidden cell's runs, edits and names never show here. By names, a
read's *provider* is the nearest cell above that binds the name (what a run from the top gives); its *binder* is
the cell with the highest count below the run's that binds it (what the run really read). An unreadable cell that
ran binds any name but :data:`UNFOLLOWED_NAMES` and reads every name; one that never ran is left out.
"""

from __future__ import annotations

import bisect
import builtins
import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webmcp_bridge.core.limits import STALE_IDS_SHOWN
from webmcp_bridge.core.names import SYNTAX, CellNames, unreadable
from webmcp_bridge.core.raw import RunState

#: names an unreadable cell is not taken to bind: Python's builtins and IPython's own names
UNFOLLOWED_NAMES = frozenset(dir(builtins)) | {"In", "Out", "get_ipython", "exit", "quit", "display"}
#: IPython's output and input history (``_``, ``__``, ``_5``, ``_i``, ``_i5``, ``_ih`` ...), also not followed
_IPYTHON_HISTORY = re.compile(r"_{1,3}|_\d+|_i{1,3}|_i\d+|_[iod]h")


def names_matter(states: Sequence[RunState]) -> bool:
    """False when no output can be stale by names, so the sources need not be read: the cells ran from the top once,
    unedited (every count above the last one present, growing down the notebook)."""
    last, missing = -1, False
    for state in states:
        count = state.execution_count
        if count is None:
            missing = True
        elif missing or state.edited is True or count <= last:  # missing: a cell without a count above this one
            return True
        else:
            last = count
    return False


def stale_outputs(
    states: Sequence[RunState], cell_ids: Iterable[str], names: Mapping[str, CellNames] | None = None
) -> dict[str, dict[str, Any]]:
    """``{cellId: outputsStale}`` for those of ``cell_ids`` whose outputs may be stale.

    ``states``: the run states of the code cells from the first up to (at least) the last of ``cell_ids``, in index
    order; all of them when ``names`` (what each binds and reads, by id) is given. ``names`` None judges by the order
    of runs and edits only. Ids not in ``states`` get nothing.

    Per stale cell: ``{sourceEdited, earlierRanSince, earlierEdited}``, with ``earlierRanSinceIds`` (newest run
    first), ``earlierEditedIds`` (nearest first), ``readsChanged`` (``{name: cellId}`` in name order, and
    ``readsChangedMore``) and ``unreadableIds`` (nearest first) where they say something, each list at most
    :data:`STALE_IDS_SHOWN` long. One pass with a binary search per cell.
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
    if names is not None:
        for pos, verdict in enumerate(name_verdicts(states, names)):
            state = states[pos]
            if verdict is None or state.id not in wanted:
                continue
            stale = found.setdefault(state.id, {"sourceEdited": False, "earlierRanSince": 0, "earlierEdited": 0})
            if verdict.changed:
                shown = sorted(verdict.changed.items())
                stale["readsChanged"] = {name: states[p].id for name, p in shown[:STALE_IDS_SHOWN]}
                if len(shown) > STALE_IDS_SHOWN:
                    stale["readsChangedMore"] = len(shown) - STALE_IDS_SHOWN
            if verdict.unreadable:
                nearest = sorted(verdict.unreadable, reverse=True)[:STALE_IDS_SHOWN]
                stale["unreadableIds"] = [states[p].id for p in nearest]
    return found


@dataclass(frozen=True)
class NameVerdict:
    """Why a run code cell's outputs are stale by the names it read; positions are in the ``states`` judged."""

    changed: Mapping[str, int] = field(default_factory=dict)  # name -> the cell that changed it
    unreadable: frozenset[int] = frozenset()  # unreadable cells that may have changed what it read (or itself)
    fixes: Mapping[int, frozenset[str]] = field(default_factory=dict)  # cells to run first -> names (providers)
    orphans: frozenset[str] = frozenset()  # names it read that only cells below it bind
    rebound: frozenset[str] = frozenset()  # names it binds from a changed name (``CellNames.depends``)
    rebinds_any: bool = False  # an unreadable cell's: any name it binds may have changed


def _followed(name: str) -> bool:
    """Whether an unreadable cell is taken to bind ``name`` (not a builtin nor a name IPython binds itself)."""
    return name not in UNFOLLOWED_NAMES and not _IPYTHON_HISTORY.fullmatch(name)


class _Binders:
    """Which cell last bound a name before a given run: sorted (count, position) per name, and of unreadable cells."""

    def __init__(self, states: Sequence[RunState], info: Sequence[CellNames]) -> None:
        self.by_name: dict[str, list[tuple[int, int]]] = {}
        self.wild: list[tuple[int, int]] = []
        for pos, state in enumerate(states):
            count = state.execution_count
            if count is None:
                continue
            if info[pos].unreadable is not None:
                self.wild.append((count, pos))
            else:
                for name in info[pos].defines:
                    self.by_name.setdefault(name, []).append((count, pos))
        for runs in self.by_name.values():
            runs.sort()
        self.wild.sort()

    def before(self, name: str, count: int) -> int | None:
        best: tuple[int, int] | None = None
        runs = self.by_name.get(name)
        if runs:
            cut = bisect.bisect_left(runs, (count, -1))
            if cut:
                best = runs[cut - 1]
        if self.wild and _followed(name):
            cut = bisect.bisect_left(self.wild, (count, -1))
            if cut and (best is None or self.wild[cut - 1] > best):
                best = self.wild[cut - 1]
        return None if best is None else best[1]


def _rebinds(state: RunState, verdict: NameVerdict | None, name: str | None = None) -> bool:
    """Whether what a run cell binds as ``name`` (None: any) may differ from what the notebook now gives."""
    if state.edited is True:
        return True
    if verdict is None:
        return False
    return verdict.rebinds_any or (name in verdict.rebound if name is not None else bool(verdict.rebound))


def name_verdicts(states: Sequence[RunState], names: Mapping[str, CellNames]) -> list[NameVerdict | None]:
    """For each of ``states`` (all visible code cells, in index order), why its outputs are stale by the names it
    read, or None. ``names``: :func:`webmcp_bridge.core.names.cell_names` by cell id (a cell missing is unreadable).
    """
    info = [names.get(state.id) or unreadable(SYNTAX) for state in states]
    binders = _Binders(states, info)
    verdicts: list[NameVerdict | None] = [None] * len(states)
    above = _Above()
    for pos, state in enumerate(states):
        count, cell = state.execution_count, info[pos]
        if count is not None:
            if cell.unreadable is not None:
                ran_since = bool(above.counts) and above.counts[-1][0] > count
                if above.changed or ran_since:
                    verdicts[pos] = NameVerdict(
                        unreadable=frozenset([pos]), fixes={p: frozenset() for p in above.changed}, rebinds_any=True
                    )
            else:
                now = _resolved(cell.reads, above.provider_of, info)
                verdict = _verdict(states, info, verdicts, binders, above, now, cell.later - now, count)
                if verdict is not None:
                    verdict = _with_rebound(verdict, cell, above.provider_of, info)
                verdicts[pos] = verdict
        above.add(pos, state, cell, verdicts[pos])
    return verdicts


class _Above:
    """What :func:`name_verdicts` knows of the cells above the one it judges."""

    def __init__(self) -> None:
        self.provider_of: dict[str, int] = {}  # name -> position of the nearest readable cell above that binds it
        self.last_wild = -1  # position of the nearest unreadable cell above
        self.changed: list[int] = []  # cells above that bind something and never ran, or changed what they bind
        self.counts: list[tuple[int, int]] = []  # (count, position) of the cells above that bind something, sorted

    def provider(self, name: str) -> int:
        return max(self.provider_of.get(name, -1), self.last_wild if _followed(name) else -1)

    def add(self, pos: int, state: RunState, cell: CellNames, verdict: NameVerdict | None) -> None:
        if cell.unreadable is not None:
            if state.execution_count is None:
                return  # an unreadable cell that never ran: nothing says it would bind anything
            self.last_wild = pos
        else:
            self.provider_of.update((name, pos) for name in cell.defines)
        if cell.unreadable is not None or cell.defines:
            if state.execution_count is None or _rebinds(state, verdict):
                self.changed.append(pos)
            if state.execution_count is not None:
                bisect.insort(self.counts, (state.execution_count, pos))


def _resolved(reads: frozenset[str], provider_of: Mapping[str, int], info: Sequence[CellNames]) -> set[str]:
    """``reads`` and, transitively, the free names of the bodies of the functions and classes read."""
    found = set(reads)
    todo = list(reads)
    while todo:
        name = todo.pop()
        provider = provider_of.get(name)
        body = info[provider].calls.get(name) if provider is not None else None
        for inner in body or ():
            if inner not in found:
                found.add(inner)
                todo.append(inner)
    return found


def _verdict(
    states: Sequence[RunState],
    info: Sequence[CellNames],
    verdicts: Sequence[NameVerdict | None],
    binders: _Binders,
    above: _Above,
    now: Iterable[str],
    later: Iterable[str],
    count: int,
) -> NameVerdict | None:
    """The verdict of a readable cell run with ``count`` that read ``now`` (and ``later`` in its functions)."""
    changed: dict[str, int] = {}
    unread: set[int] = set()
    fixes: dict[int, set[str]] = {}
    orphans: set[str] = set()
    affected: set[str] = set()  # names read where the code stands that changed, or may have
    for late, reads in ((False, now), (True, later)):
        for name in reads:
            provider = above.provider(name)
            binder = binders.before(name, count)
            if provider < 0:
                if binder is None:
                    continue  # a builtin, or a name no cell binds
                responsible = binder
                orphans.add(name)
            else:
                cell = states[provider]
                if cell.execution_count is None or _rebinds(cell, verdicts[provider], name):
                    responsible = provider
                    fixes.setdefault(provider, set()).add(name)
                elif cell.execution_count > count:
                    responsible = provider  # it ran since: running this cell again reads what it bound
                elif binder is not None and binder != provider:
                    responsible = binder
                    fixes.setdefault(provider, set()).add(name)
                else:
                    continue
            upstream = verdicts[responsible]
            if info[responsible].unreadable is not None:
                unread.add(responsible)
            elif (
                responsible == provider
                and upstream is not None
                and not upstream.changed
                and states[responsible].edited is not True
                and (states[responsible].execution_count or 0) <= count
            ):
                unread |= upstream.unreadable  # its provider is stale only by unreadable cells: so is this read
            else:
                changed[name] = responsible
            if not late:
                affected.add(name)
    if not (changed or unread):
        return None
    fixed = {p: frozenset(n) for p, n in fixes.items()}
    return NameVerdict(changed, frozenset(unread), fixed, frozenset(orphans), frozenset(affected))


def _with_rebound(
    verdict: NameVerdict, cell: CellNames, provider_of: Mapping[str, int], info: Sequence[CellNames]
) -> NameVerdict:
    """``verdict`` (``rebound``: the changed names read, for now) with the names the cell binds from them."""
    affected = verdict.rebound
    rebound = frozenset(
        name for name, uses in cell.depends.items() if not affected.isdisjoint(_resolved(uses, provider_of, info))
    )
    return dataclasses.replace(verdict, rebound=rebound)
