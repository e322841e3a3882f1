"""What the Agent panel's buttons do: one function per ``data-action`` value, called by the panel's delegated
click listener with the panel (as :class:`~webmcp_bridge.lab.ui.port.PanelPort`) and the clicked element
(``target``). Each acts through the person's APIs on the raw notebook (:mod:`webmcp_bridge.access.guard`,
:class:`webmcp_bridge.review.threads.Review`), notes the action in Activity, and may raise ToolError (shown as
the panel's notice); the panel looks at the notebook again after every action."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from webmcp_bridge.access.levels import cell_levels, next_level, parse_level, set_cell_level
from webmcp_bridge.changes.undo import REFUSALS
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ffi import is_nullish
from webmcp_bridge.lab.notebook import LabNotebook
from webmcp_bridge.lab.ui.dom import closest, query
from webmcp_bridge.lab.ui.port import PanelPort
from webmcp_bridge.lab.ui.view import c
from webmcp_bridge.review.threads import CellAnchor, Review


def _text_of(panel: PanelPort, target: Any) -> tuple[Any, str]:
    box = closest(target, f".{c('thread')}, .{c('new-comment')}")
    area = query(box, "textarea")
    return area, (str(area.value).strip() if area is not None else "")


def _thread_nb(panel: PanelPort) -> LabNotebook:
    nb = panel.current()
    if nb is None:
        raise ToolError(ErrorCode.NO_ACTIVE_NOTEBOOK, "Open the notebook first.")
    return nb


def _reveal_cell(panel: PanelPort, target: Any) -> None:
    path = target.getAttribute("data-path")
    panel.reveal(None if is_nullish(path) else str(path), str(target.getAttribute("data-cell")))


def _reveal_thread(panel: PanelPort, target: Any) -> None:
    nb = _thread_nb(panel)
    review = Review(nb)
    thread_id = str(target.getAttribute("data-thread"))
    panel.app.shell.activateById(nb.panel.id)
    try:
        review.focus(thread_id)
    except ToolError as err:
        view = review.get(thread_id)
        if view.state == "orphaned":
            nb.set_focus(view.cell_id, None, None)
            panel.say("The quoted text is gone: select the new text in the cell, then click “Re-anchor to selection”.")
        else:
            raise err


def _reply(panel: PanelPort, target: Any) -> None:
    area, text = _text_of(panel, target)
    if not text:
        panel.say("Write a reply first.")
        return
    nb = _thread_nb(panel)
    view = Review(nb).reply(str(target.getAttribute("data-thread")), text, "person")
    area.value = ""
    panel.note("replied to a comment on", nb.path, view.cell_id)


def _comment_active(panel: PanelPort, target: Any) -> None:
    area, text = _text_of(panel, target)
    if not text:
        panel.say("Write the comment first.")
        return
    nb = _thread_nb(panel)
    view = Review(nb).create(CellAnchor(str(target.getAttribute("data-cell"))), text, "person")
    area.value = ""
    panel.note("commented on", nb.path, view.cell_id)


def _resolve(panel: PanelPort, target: Any) -> None:
    area, text = _text_of(panel, target)
    nb = _thread_nb(panel)
    view = Review(nb).resolve(str(target.getAttribute("data-thread")), "person", text or None)
    if area is not None:
        area.value = ""
    panel.note("resolved a comment on", nb.path, view.cell_id)


def _reopen(panel: PanelPort, target: Any) -> None:
    nb = _thread_nb(panel)
    view = Review(nb).reopen(str(target.getAttribute("data-thread")), "person")
    panel.note("reopened a comment on", nb.path, view.cell_id)


def _reanchor(panel: PanelPort, target: Any) -> None:
    nb = _thread_nb(panel)
    focus = nb.focus()
    if focus.cell_id is None or focus.selection is None:
        panel.say("Select the text to anchor to in a cell's editor first.")
        return
    view = Review(nb).reanchor(str(target.getAttribute("data-thread")), focus.cell_id, focus.selection)
    panel.note("re-anchored a comment to", nb.path, view.cell_id)


def _cycle_cell(panel: PanelPort, target: Any) -> None:
    path = target.getAttribute("data-path")
    nb = panel.notebook_at(None if is_nullish(path) else str(path))
    if nb is None:
        return
    cell_id = str(target.getAttribute("data-cell"))
    level = next_level(cell_levels(nb).get(cell_id, "write"))
    set_cell_level(nb, cell_id, level)
    panel.note(f"set agent access to {level} on", nb.path, cell_id)


def _apply_all(panel: PanelPort, target: Any) -> None:
    nb = _thread_nb(panel)
    row = closest(target, f".{c('row')}")
    chosen = query(row, "select")
    level = parse_level(str(chosen.value) if chosen is not None else "read")
    asyncio.ensure_future(panel.apply_to_all(nb, level))


def _show_cell_comments(panel: PanelPort, target: Any) -> None:
    path = target.getAttribute("data-path")
    cell_id = str(target.getAttribute("data-cell"))
    nb = panel.notebook_at(None if is_nullish(path) else str(path))
    if nb is not None:
        nb.set_focus(cell_id, None, None)
    panel.set_filter("cell")
    panel.show()


def _show_edits(panel: PanelPort, target: Any) -> None:
    """An Activity row of the agent's edit (its times bound the edits shown), or a cell's "changed by agent" badge."""
    path, cell_id = str(target.getAttribute("data-path")), str(target.getAttribute("data-cell"))
    first, last = target.getAttribute("data-first"), target.getAttribute("data-last")
    span = None if is_nullish(first) or is_nullish(last) else (float(first), float(last))
    panel.show_edits(path, cell_id, span)
    panel.show()


def _close_edits(panel: PanelPort, target: Any) -> None:
    panel.close_edits()


def _revert(panel: PanelPort, target: Any, since: bool) -> None:
    """Revert one agent edit (or it and every later one of its notebook), as the person; what is refused is said."""
    journal = panel.journal
    edit_id = int(str(target.getAttribute("data-edit")))
    edit = journal.get(edit_id)
    nb = panel.notebook_at(edit.path) if edit is not None else None
    if edit is not None and nb is None:
        panel.say("Not reverted: that notebook is no longer open.")
        return
    ids = [edit.cell_id, *[e.cell_id for e in journal.edits(edit.path, since_id=edit.id)]] if edit else []
    current = nb.sources_of(ids) if nb is not None else {}
    done, refused = 0, []
    for step in journal.plan(edit_id, current, since):
        why = step.refused
        if why is None and nb is not None:
            why = nb.revert_source(step.cell_id, step.source, step.expected)
        if why is None:
            journal.mark_reverted(step.edit_id)
            done += 1
        else:
            refused.append(REFUSALS[why])
    if refused and not since:
        panel.say(f"Not reverted: {refused[0]}")
    elif refused:
        reasons = " ".join(dict.fromkeys(refused))
        panel.say(f"Reverted {done} of {done + len(refused)} changes. Not reverted: {reasons}")
    else:
        panel.say(f"Reverted {done} change{'s' if done != 1 else ''} of the agent.")
    panel.redraw_edits()


ACTIONS: dict[str, Callable[[PanelPort, Any], None]] = {
    "show-edits": _show_edits,
    "close-edits": _close_edits,
    "revert-edit": lambda panel, target: _revert(panel, target, False),
    "revert-since": lambda panel, target: _revert(panel, target, True),
    "reveal-cell": _reveal_cell,
    "reveal-thread": _reveal_thread,
    "reply": _reply,
    "comment-active": _comment_active,
    "resolve": _resolve,
    "reopen": _reopen,
    "reanchor": _reanchor,
    "cycle-cell": _cycle_cell,
    "apply-all": _apply_all,
    "show-cell-comments": _show_cell_comments,
}
