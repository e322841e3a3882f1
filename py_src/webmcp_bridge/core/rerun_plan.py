"""The cells to run, in order, so that stale outputs are fresh again (``jupyter_rerun_plan``): a plan, never a run.

Fresh means what :func:`webmcp_bridge.core.staleness.name_verdicts` says (an order of runs alone is not followed).
The plan is simulated: its cells get new execution counts in notebook order, the verdicts are made again, and what
is still stale adds to it until nothing does. So a stale cell's providers the kernel does not hold come first
(``provides``); for the whole notebook the cells below that read what it rebinds follow (``follows``), for one cell
they are reported (``stale_after``); a name only cells below bind (``orphans``) is not planned for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from webmcp_bridge.core.names import CellNames
from webmcp_bridge.core.raw import RunState
from webmcp_bridge.core.staleness import NameVerdict, name_verdicts

#: why a cell is in a plan (:attr:`PlanStep.why`)
EDITED = "edited"  # its source changed since the run that made its outputs
STALE = "stale"  # its outputs read names that changed since (the names)
UNREADABLE = "unreadable"  # its names cannot be read, and a cell above it changed
PROVIDES = "provides"  # a later cell of the plan reads names it binds, which the kernel does not hold (the names)
FOLLOWS = "follows"  # a cell before it in the plan rebinds names its outputs read (the names)
TARGET = "target"  # the cell asked about has never run


@dataclass(frozen=True)
class PlanStep:
    """One cell of a plan: its position in ``states``, why it runs, and the names that say so (sorted)."""

    position: int
    why: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """A re-run plan.

    Attributes:
        steps: the cells to run, in notebook order.
        orphans: ``(position, name)``: a run cell read a name that only cells below it bind.
        stale_after: positions of the run cells outside the plan still stale after it, in notebook order.
    """

    steps: tuple[PlanStep, ...]
    orphans: tuple[tuple[int, str], ...] = ()
    stale_after: tuple[int, ...] = ()


def rerun_plan(states: Sequence[RunState], names: Mapping[str, CellNames], target: int | None = None) -> Plan:
    """The plan that makes the outputs of the cell at position ``target`` fresh (a cell that never ran: with what
    it reads first), or every run cell's (None). ``states`` and ``names`` as for ``name_verdicts``. One pass of the
    verdicts a round, at most one round per cell.
    """
    before = name_verdicts(states, names)
    top = max((s.execution_count for s in states if s.execution_count is not None), default=0)
    reasons: dict[int, tuple[str, set[str]]] = {}
    if target is not None and states[target].execution_count is None:
        reasons[target] = (TARGET, set())
    orphans: set[tuple[int, str]] = set()
    ran, verdicts = list(states), before
    for _ in range(len(states) + 1):
        ran = _simulated(states, reasons, top)
        verdicts = name_verdicts(ran, names) if reasons else before
        scope = range(len(states)) if target is None else sorted({target, *reasons})
        todo = [p for p in scope if ran[p].execution_count is not None and _stale(ran[p], verdicts[p])]
        added = False
        while todo:
            pos = todo.pop()
            verdict = verdicts[pos]
            if verdict is not None:
                orphans.update((pos, name) for name in verdict.orphans)
            if pos not in reasons:
                if not _fixable(ran[pos], verdict):
                    continue
                reasons[pos] = _reason(states[pos], before[pos], verdict)
                added = True
            for fix, read in (verdict.fixes if verdict is not None else {}).items():
                if fix in reasons:
                    if reasons[fix][0] == PROVIDES:
                        reasons[fix][1].update(read)
                    continue
                own = _reason(states[fix], before[fix], None) if _stale(states[fix], before[fix]) else None
                reasons[fix] = own or (PROVIDES, set(read))
                added = True
                todo.append(fix)
        if not added:
            break
    steps = tuple(PlanStep(p, why, tuple(sorted(read))) for p, (why, read) in sorted(reasons.items()))
    after = tuple(
        p
        for p, state in enumerate(ran)
        if p not in reasons and state.execution_count is not None and _stale(state, verdicts[p])
    )
    return Plan(steps, tuple(sorted(orphans)), after)


def _simulated(states: Sequence[RunState], planned: Mapping[int, object], top: int) -> list[RunState]:
    """``states`` after the ``planned`` cells ran in notebook order (counts above ``top``, edits run)."""
    ran: list[RunState] = []
    for pos, state in enumerate(states):
        if pos in planned:
            top += 1
            state = RunState(state.id, state.index, top, False)
        ran.append(state)
    return ran


def _stale(state: RunState, verdict: NameVerdict | None) -> bool:
    return state.edited is True or verdict is not None


def _fixable(state: RunState, verdict: NameVerdict | None) -> bool:
    """Whether running the cell can make it fresh (not when its only changed names are orphans)."""
    if state.edited is True or verdict is None or verdict.unreadable:
        return True
    return not set(verdict.changed) <= verdict.orphans


def _reason(state: RunState, before: NameVerdict | None, now: NameVerdict | None) -> tuple[str, set[str]]:
    """Why a cell is planned: its own staleness (``before``), else what the plan's cells above do to it (``now``)."""
    if state.edited is True:
        return EDITED, set()
    if before is not None:
        return (STALE, set(before.changed)) if before.changed else (UNREADABLE, set())
    if state.execution_count is None:
        return PROVIDES, set()
    return FOLLOWS, set(now.changed) if now is not None else set()
