"""What the Agent panel's buttons do: one function per ``data-action`` value, called for each click ``dom.js``
reports with the panel (as :class:`~webmcp_bridge.lab.ui.port.PanelPort`) and the click's facts
(:class:`~webmcp_bridge.lab.ui.port.Click`: the element's ``data-*`` attributes, the text of its reply box, the
choice of its row's select; no node). Each acts through the person's APIs on the raw notebook
(:mod:`webmcp_bridge.access.guard`, :class:`webmcp_bridge.review.threads.Review`), notes the action in Activity,
and may raise ToolError (shown as the panel's notice); the panel looks at the notebook again after every action."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from webmcp_bridge.access.levels import cell_levels, next_level, parse_level, set_cell_level
from webmcp_bridge.changes.undo import REFUSALS
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ui.port import Click, PanelPort
from webmcp_bridge.review.threads import CellAnchor

if TYPE_CHECKING:  # the browser's notebook: known by its type only, so the actions run under CPython too
    from webmcp_bridge.lab.notebook import LabNotebook


def _text_of(target: Click) -> str:
    return (target.text or "").strip()


def _cleared(panel: PanelPort, target: Click) -> None:
    """The text of the clicked element's reply box was used: empty the box."""
    if target.reply is not None:
        panel.clear_draft(target.reply)


def _thread_nb(panel: PanelPort) -> LabNotebook:
    nb = panel.current()
    if nb is None:
        raise ToolError(ErrorCode.NO_ACTIVE_NOTEBOOK, "Open the notebook first.")
    return nb


def _reveal_cell(panel: PanelPort, target: Click) -> None:
    panel.reveal(target.data.get("path"), target.attr("cell"))


def _reveal_thread(panel: PanelPort, target: Click) -> None:
    nb = _thread_nb(panel)
    review = panel.review(nb)
    thread_id = target.attr("thread")
    panel.activate(nb)
    try:
        review.focus(thread_id)
    except ToolError as err:
        view = review.get(thread_id)
        if view.state == "orphaned":
            nb.set_focus(view.cell_id, None, None)
            panel.say("The quoted text is gone: select the new text in the cell, then click “Re-anchor to selection”.")
        else:
            raise err


def _reply(panel: PanelPort, target: Click) -> None:
    text = _text_of(target)
    if not text:
        panel.say("Write a reply first.")
        return
    nb = _thread_nb(panel)
    view = panel.review(nb).reply(target.attr("thread"), text, "person")
    _cleared(panel, target)
    panel.note("replied to a comment on", nb.path, view.cell_id)


def _comment_active(panel: PanelPort, target: Click) -> None:
    text = _text_of(target)
    if not text:
        panel.say("Write the comment first.")
        return
    nb = _thread_nb(panel)
    view = panel.review(nb).create(CellAnchor(target.attr("cell")), text, "person")
    _cleared(panel, target)
    panel.note("commented on", nb.path, view.cell_id)


def _resolve(panel: PanelPort, target: Click) -> None:
    text = _text_of(target)
    nb = _thread_nb(panel)
    view = panel.review(nb).resolve(target.attr("thread"), "person", text or None)
    _cleared(panel, target)
    panel.note("resolved a comment on", nb.path, view.cell_id)


def _reopen(panel: PanelPort, target: Click) -> None:
    nb = _thread_nb(panel)
    view = panel.review(nb).reopen(target.attr("thread"), "person")
    panel.note("reopened a comment on", nb.path, view.cell_id)


def _reanchor(panel: PanelPort, target: Click) -> None:
    nb = _thread_nb(panel)
    focus = nb.focus()
    if focus.cell_id is None or focus.selection is None:
        panel.say("Select the text to anchor to in a cell's editor first.")
        return
    view = panel.review(nb).reanchor(target.attr("thread"), focus.cell_id, focus.selection)
    panel.note("re-anchored a comment to", nb.path, view.cell_id)


def _cycle_cell(panel: PanelPort, target: Click) -> None:
    nb = panel.notebook_at(target.data.get("path"))
    if nb is None:
        return
    cell_id = target.attr("cell")
    level = next_level(cell_levels(nb).get(cell_id, "write"))
    set_cell_level(nb, cell_id, level)
    panel.note(f"set agent access to {level} on", nb.path, cell_id)


def _apply_all(panel: PanelPort, target: Click) -> None:
    nb = _thread_nb(panel)
    level = parse_level(target.choice if target.choice is not None else "read")
    asyncio.ensure_future(panel.apply_to_all(nb, level))


def _show_cell_comments(panel: PanelPort, target: Click) -> None:
    cell_id = target.attr("cell")
    nb = panel.notebook_at(target.data.get("path"))
    if nb is not None:
        nb.set_focus(cell_id, None, None)
    panel.set_filter("cell")
    panel.show()


def _show_edits(panel: PanelPort, target: Click) -> None:
    """An Activity row of the agent's edit (its times bound the edits shown), or a cell's "changed by agent" badge."""
    path, cell_id = target.attr("path"), target.attr("cell")
    first, last = target.data.get("first"), target.data.get("last")
    span = None if first is None or last is None else (float(first), float(last))
    panel.show_edits(path, cell_id, span)
    panel.show()


def _close_edits(panel: PanelPort, target: Click) -> None:
    panel.close_edits()


def _revert(panel: PanelPort, target: Click, since: bool) -> None:
    """Revert one agent edit (or it and every later one of its notebook), as the person; what is refused is said."""
    journal = panel.journal
    edit_id = int(target.attr("edit"))
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


ACTIONS: dict[str, Callable[[PanelPort, Click], None]] = {
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
