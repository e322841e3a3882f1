"""What the Agent panel's buttons do: one function per ``data-action`` value, called with the panel and the
:class:`Click` ``dom.js`` reported. Each acts through the person's APIs on the raw notebook, notes the action in
Activity and may raise ToolError (shown as the panel's notice)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from webmcp_bridge.access.levels import cell_levels, next_level, notebook_level, parse_level, set_cell_level
from webmcp_bridge.changes.undo import REFUSALS
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ui.i18n import Text, _, _n
from webmcp_bridge.lab.ui.view import LEVEL_WORD
from webmcp_bridge.review.threads import CellAnchor, Review, ThreadView

if TYPE_CHECKING:  # known by their types only, so the actions run under CPython too
    from webmcp_bridge.lab.notebook import LabNotebook
    from webmcp_bridge.lab.ui.panel import AgentPanel

#: what the Comments section lists: threads by status, or every thread of the active cell
ThreadFilter = Literal["open", "resolved", "all", "cell"]
THREAD_FILTERS: tuple[ThreadFilter, ...] = ("open", "resolved", "all", "cell")


@dataclass(frozen=True)
class Click:
    """A click on an element with a ``data-action``: its ``data-*`` attributes without the prefix (``data``), the
    text and ``data-reply`` of the reply box around it (``text``, ``reply``) and the value of its row's select
    (``choice``), each None when there is none."""

    action: str
    data: Mapping[str, str] = field(default_factory=dict)
    text: str | None = None
    reply: str | None = None
    choice: str | None = None

    @classmethod
    def from_fact(cls, fact: Mapping[str, Any]) -> Click:
        """The click of a fact (parsed JSON); values are taken as strings, a missing one as None."""
        text, reply, choice = (None if fact.get(k) is None else str(fact[k]) for k in ("text", "reply", "choice"))
        data = {str(k): str(v) for k, v in (fact.get("data") or {}).items()}
        return cls(str(fact.get("action", "")), data, text, reply, choice)

    def attr(self, name: str) -> str:
        """The ``data-<name>`` attribute ("" when the element has none)."""
        return self.data.get(name, "")


def hides(nb: LabNotebook) -> bool:
    """Whether ``nb`` hides anything from the agent (its level or a cell's is ``none``)."""
    return notebook_level(nb) == "none" or "none" in cell_levels(nb).values()


def _thread_nb(panel: AgentPanel) -> LabNotebook:
    nb = panel.current()
    if nb is None:
        raise ToolError(ErrorCode.NO_ACTIVE_NOTEBOOK, str(_("Open the notebook first.")))
    return nb


def _reveal_cell(panel: AgentPanel, target: Click) -> None:
    panel.reveal(target.data.get("path"), target.attr("cell"))


def _reveal_thread(panel: AgentPanel, target: Click) -> None:
    nb = _thread_nb(panel)
    review = panel.review(nb)
    thread_id = target.attr("thread")
    nb.activate()
    try:
        review.focus(thread_id)
    except ToolError as err:
        view = review.get(thread_id)
        if view.state == "orphaned":
            nb.set_focus(view.cell_id, None, None)
            panel.say(
                _("The quoted text is gone: select the new text in the cell, then click “Re-anchor to selection”.")
            )
        else:
            raise err


def _post(panel: AgentPanel, target: Click, did: Text, missing: Text | None, post: Callable[..., ThreadView]) -> None:
    """``post(review, text)`` with the text of the clicked element's reply box (``missing`` is said when it is empty
    and a text is needed), then empty the box and note ``did`` in Activity."""
    text = (target.text or "").strip()
    if not text and missing is not None:
        panel.say(missing)
        return
    nb = _thread_nb(panel)
    view = post(panel.review(nb), text)
    if target.reply is not None:
        panel.clear_draft(target.reply)
    panel.note(did, nb.path, view.cell_id)


def _reply(panel: AgentPanel, target: Click) -> None:
    def post(review: Review, text: str) -> ThreadView:
        return review.reply(target.attr("thread"), text, "person")

    _post(panel, target, _("replied to a comment on"), _("Write a reply first."), post)


def _comment_active(panel: AgentPanel, target: Click) -> None:
    def post(review: Review, text: str) -> ThreadView:
        return review.create(CellAnchor(target.attr("cell")), text, "person")

    _post(panel, target, _("commented on"), _("Write the comment first."), post)


def _resolve(panel: AgentPanel, target: Click) -> None:
    def post(review: Review, text: str) -> ThreadView:
        return review.resolve(target.attr("thread"), "person", text or None)

    _post(panel, target, _("resolved a comment on"), None, post)


def _reopen(panel: AgentPanel, target: Click) -> None:
    nb = _thread_nb(panel)
    view = panel.review(nb).reopen(target.attr("thread"), "person")
    panel.note(_("reopened a comment on"), nb.path, view.cell_id)


def _reanchor(panel: AgentPanel, target: Click) -> None:
    nb = _thread_nb(panel)
    focus = nb.focus()
    if focus.cell_id is None or focus.selection is None:
        panel.say(_("Select the text to anchor to in a cell's editor first."))
        return
    view = panel.review(nb).reanchor(target.attr("thread"), focus.cell_id, focus.selection)
    panel.note(_("re-anchored a comment to"), nb.path, view.cell_id)


def cycle_level(panel: AgentPanel, nb: LabNotebook, cell_id: str) -> None:
    """Set the cell's agent access to the next level (write, read, none), as the panel's ``set_level`` does."""
    level = next_level(cell_levels(nb).get(cell_id, "write"))

    def apply() -> None:
        set_cell_level(nb, cell_id, level)
        panel.note(_("set agent access to %1 on", LEVEL_WORD.get(level, level)), nb.path, cell_id)

    panel.set_level(level, apply)


def _cycle_cell(panel: AgentPanel, target: Click) -> None:
    nb = panel.notebook_at(target.data.get("path"))
    if nb is not None:
        cycle_level(panel, nb, target.attr("cell"))


def _restart_agent_kernels(panel: AgentPanel, target: Click) -> None:
    async def restart() -> None:
        await panel.restart_agent_kernels(False)
        panel.refresh()

    asyncio.ensure_future(restart())


def _apply_all(panel: AgentPanel, target: Click) -> None:
    nb = _thread_nb(panel)
    level = parse_level(target.choice if target.choice is not None else "read")
    asyncio.ensure_future(panel.apply_to_all(nb, level))


def _show_cell_comments(panel: AgentPanel, target: Click) -> None:
    cell_id = target.attr("cell")
    nb = panel.notebook_at(target.data.get("path"))
    if nb is not None:
        nb.set_focus(cell_id, None, None)
    panel.set_filter("cell")
    panel.show()


def _show_edits(panel: AgentPanel, target: Click) -> None:
    """An Activity row of the agent's edit (its times bound the edits shown), or a cell's "changed by agent" badge."""
    path, cell_id = target.attr("path"), target.attr("cell")
    first, last = target.data.get("first"), target.data.get("last")
    span = None if first is None or last is None else (float(first), float(last))
    panel.show_edits(path, cell_id, span)
    panel.show()


def _close_edits(panel: AgentPanel, target: Click) -> None:
    panel.close_edits()


def _revert(panel: AgentPanel, target: Click, since: bool) -> None:
    """Revert one agent edit (or it and every later one of its notebook), as the person; what is refused is said."""
    done, refused = _revert_edits(panel, [int(target.attr("edit"))], since)
    _say_reverted(panel, done, refused, since)


def _revert_row(panel: AgentPanel, target: Click) -> None:
    """An Activity row's Revert: the agent's standing edits of the row's cell between its times, newest first (each
    expects the text the next newer one left, so they undo in turn); a cell changed since is refused, as said."""
    path, cell_id = target.attr("path"), target.attr("cell")
    first, last = float(target.attr("first")), float(target.attr("last"))
    edits = [e for e in panel.journal.between(path, cell_id, first, last) if e.reverted is None]
    done, refused = _revert_edits(panel, [e.id for e in reversed(edits)], False)
    _say_reverted(panel, done, refused, True)


def _revert_edits(panel: AgentPanel, edit_ids: list[int], since: bool) -> tuple[int, list[Text]]:
    """Revert the edits ``edit_ids`` in that order (each with every later one when ``since``): ``(reverted, the
    reasons of the refused ones)``."""
    journal = panel.journal
    done = 0
    refused: list[Text] = []
    for edit_id in edit_ids:
        edit = journal.get(edit_id)
        if edit is None:
            continue
        nb = panel.notebook_at(edit.path)
        if nb is None:
            refused.append(_("that notebook is no longer open."))
            break
        ids = [edit.cell_id, *[e.cell_id for e in journal.edits(edit.path, since_id=edit.id)]]
        current = nb.sources_of(ids)
        for step in journal.plan(edit_id, current, since):
            why = step.refused
            if why is None:
                why = nb.revert_source(step.cell_id, step.source, step.expected)
            if why is None:
                journal.mark_reverted(step.edit_id)
                done += 1
            else:
                refused.append(_(REFUSALS[why]))
    return done, refused


def _say_reverted(panel: AgentPanel, done: int, refused: list[Text], several: bool) -> None:
    if refused and not several:
        panel.say(_("Not reverted: %1", refused[0]))
    elif refused:
        panel.say(_("Reverted %1 of %2 changes. Not reverted: %3", str(done), str(done + len(refused)), refused[0]))
    else:
        panel.say(_n("Reverted %1 change of the agent.", "Reverted %1 changes of the agent.", done))
    panel.redraw_edits()


ACTIONS: dict[str, Callable[[AgentPanel, Click], None]] = {
    "show-edits": _show_edits,
    "close-edits": _close_edits,
    "revert-edit": lambda panel, target: _revert(panel, target, False),
    "revert-since": lambda panel, target: _revert(panel, target, True),
    "revert-row": _revert_row,
    "reveal-cell": _reveal_cell,
    "reveal-thread": _reveal_thread,
    "reply": _reply,
    "comment-active": _comment_active,
    "resolve": _resolve,
    "reopen": _reopen,
    "reanchor": _reanchor,
    "cycle-cell": _cycle_cell,
    "apply-all": _apply_all,
    "restart-agent-kernels": _restart_agent_kernels,
    "show-cell-comments": _show_cell_comments,
}
