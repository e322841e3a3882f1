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

**By names** (:func:`name_verdicts`, given what each cell binds and reads: :mod:`webmcp_bridge.core.names`), the
reads of a run cell are followed to the cells that bound them. The notebook's order is the one that makes the
results (a run from the top gives each read the nearest cell above that binds the name: its *provider*); the
execution counts say what the run really read (the cell with the highest count below the run's that binds the
name: its *binder*). A run cell read a name that changed since (``readsChanged``: the name and the cell that changed
it) when its provider

- never ran, or lost its count (the notebook's value never reached the kernel);
- was edited since its own run;
- ran after it (a higher execution count);
- made the name from a name that changed itself (``depends``: the staleness follows the values down; a function
  does not change with the names its body reads, but a cell that calls it reads them, where the call stands);

or when its binder is not its provider (another cell rebound the name between the provider's run and this one:
a cell below that ran before it, or one above the provider that ran after it), or a cell below bound the name before
this one ran and no cell above binds it (an *orphan*: no run of the cells above gives it). A cell below its provider
that reran is not flagged: the notebook's order runs the cell above first.

An unreadable cell (``unreadable``) that ran is taken to bind any name but the builtins and IPython's own
(:data:`UNFOLLOWED_NAMES`) and to read every name: a read that reaches one that changed, and an unreadable cell with
a changed cell above it (or one above that ran after it), say ``unreadableIds`` (the unreadable cells involved), never
a name. One that never ran is left out: nothing says what it would bind. Only visible cells are given: a hidden
cell's names are not followed.
Standard library only.
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

#: names an unreadable cell is not taken to bind: Python's builtins and the names IPython puts in every notebook's
#: namespace (a cell magic or ``%run`` that rebinds ``print`` is not followed)
UNFOLLOWED_NAMES = frozenset(dir(builtins)) | {"In", "Out", "get_ipython", "exit", "quit", "display"}
#: IPython's output and input history: ``_``, ``__``, ``___``, ``_5``, ``_i``, ``_ii``, ``_iii``, ``_i5``, ``_ih``,
#: ``_oh``, ``_dh``
_IPYTHON_HISTORY = re.compile(r"_{1,3}|_\d+|_i{1,3}|_i\d+|_[iod]h")


def names_matter(states: Sequence[RunState]) -> bool:
    """False when no output can be stale by names (:func:`name_verdicts` would flag nothing), so the sources need not
    be read: every code cell above the last one with an execution count has one, none is edited, and the counts
    grow down the notebook (a notebook run from the top once)."""
    last = -1
    for state in states:
        count = state.execution_count
        if count is None:
            continue
        if state.edited is True or count <= last:
            return True
        last = count
    seen_count = False
    for state in reversed(states):  # a cell without a count above one with a count
        if state.execution_count is not None:
            seen_count = True
        elif seen_count:
            return True
    return False


def stale_outputs(
    states: Sequence[RunState], cell_ids: Iterable[str], names: Mapping[str, CellNames] | None = None
) -> dict[str, dict[str, Any]]:
    """``{cellId: outputsStale}`` for those of ``cell_ids`` whose outputs may be stale.

    Args:
        states: the run states of the notebook's code cells from the first up to (at least) the last of
            ``cell_ids``, in index order (:meth:`webmcp_bridge.host.protocol.LiveNotebook.run_states`); all of them
            when ``names`` is given (a cell below may have bound what a cell read).
        cell_ids: the cells asked about; ids not in ``states`` (markdown, raw, unknown) get nothing.
        names: what each cell of ``states`` binds and reads (by id), to follow the names (:func:`name_verdicts`);
            None to judge by the order of runs and edits only.

    Returns:
        Per stale cell: ``{"sourceEdited": bool, "earlierRanSince": int, "earlierEdited": int}`` with, when a
        count is not 0, ``earlierRanSinceIds`` (the most recently run of those cells, newest first) and
        ``earlierEditedIds`` (the nearest above first), each at most :data:`STALE_IDS_SHOWN` ids. With ``names``,
        also ``readsChanged`` (``{name: id of the cell that changed it}``, at most :data:`STALE_IDS_SHOWN` names in
        name order, and ``readsChangedMore``: how many more) and ``unreadableIds`` (the unreadable cells involved,
        the nearest first, at most :data:`STALE_IDS_SHOWN`) when the names say so; a cell stale by names only has
        the other keys at their zero values.

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
    """Why a run code cell's outputs are stale by the names it read (:func:`name_verdicts`). Positions are in the
    ``states`` the verdict was made from.

    Attributes:
        changed: ``{name: position of the cell that changed it}`` for the names a readable cell read that changed.
        unreadable: positions of the unreadable cells that may have changed what it read (its own position when the
            cell itself is unreadable).
        fixes: ``{position: names}``: the cells to run before this one so that it reads what the notebook's order
            gives (the providers of the names, or the changed cells above an unreadable cell, with no names).
        orphans: names it read that only cells below it bind: no run of the cells above gives them.
        rebound: the names the cell binds whose values may have changed too: those it made from a name that
            changed (:attr:`webmcp_bridge.core.names.CellNames.depends`). Not the names of functions whose bodies
            read the changed names: a function does not change with them, and the cells that call it read them.
        rebinds_any: an unreadable cell's: any name it binds may have changed.
    """

    changed: Mapping[str, int] = field(default_factory=dict)
    unreadable: frozenset[int] = frozenset()
    fixes: Mapping[int, frozenset[str]] = field(default_factory=dict)
    orphans: frozenset[str] = frozenset()
    rebound: frozenset[str] = frozenset()
    rebinds_any: bool = False


def _followed(name: str) -> bool:
    """Whether an unreadable cell is taken to bind ``name``: not Python's builtins, nor the names IPython itself binds
    after every cell (``_``, ``__``, ``_5``, ``_i5``, ``In``, ``Out`` ...: what they hold follows every run, which no
    source says)."""
    return name not in UNFOLLOWED_NAMES and not _IPYTHON_HISTORY.fullmatch(name)


class _Binders:
    """Which cell last bound a name before a given run: per name the (count, position) of the readable cells with a
    count that bind it, and of the unreadable ones (which bind any followed name), sorted."""

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
        """The position of the cell whose run bound ``name`` last before the run counted ``count``, if any."""
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
    """Whether what a run cell binds as ``name`` (any name: None) may differ from what the notebook now gives: it was
    edited since its run, or made it from a name that changed."""
    if state.edited is True:
        return True
    if verdict is None:
        return False
    return verdict.rebinds_any or (name in verdict.rebound if name is not None else bool(verdict.rebound))


def name_verdicts(states: Sequence[RunState], names: Mapping[str, CellNames]) -> list[NameVerdict | None]:
    """For each of ``states`` (every code cell of the notebook, in index order), why its outputs are stale by the
    names it read (the rules: the module docstring), or None (no execution count, or nothing changed).

    Args:
        states: the run states of all the notebook's (visible) code cells, in index order.
        names: what each binds and reads, by cell id (:func:`webmcp_bridge.core.names.cell_names`); a cell missing
            from it is unreadable.

    One pass down the notebook; each read costs a dictionary lookup and two binary searches.
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
        """The position of the nearest cell above that binds ``name`` (-1: none)."""
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
    """``reads`` and, for each function or class read, the free names its body reads when called, looked up from
    where the reading cell stands (transitively)."""
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
    """The verdict of one readable cell run with ``count`` that read ``now`` where its code stands and ``later`` in
    the bodies of its functions, given the cells above it."""
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
    """``verdict`` (whose ``rebound`` holds, for now, the names read where the code stands that changed) with the
    names the cell binds from them."""
    affected = verdict.rebound
    rebound = frozenset(
        name for name, uses in cell.depends.items() if not affected.isdisjoint(_resolved(uses, provider_of, info))
    )
    return dataclasses.replace(verdict, rebound=rebound)
