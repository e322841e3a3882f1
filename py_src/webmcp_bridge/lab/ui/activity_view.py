"""What the Agent panel's Activity section shows, as element trees (:mod:`webmcp_bridge.lab.ui.view`): each row in
the person's words (what the agent did; a tool's name is only the tooltip), a running call with its elapsed time, one
that waits for the person as waiting, and the agent's edits with their Diff and Revert and their review box.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webmcp_bridge.lab.ui.i18n import Msg, Text, _, _n
from webmcp_bridge.lab.ui.proposal_view import diff_kinds, listing
from webmcp_bridge.lab.ui.view import CellInfo, El, button_el, c, cell_label, cell_link, clock, h, icon

#: what each change kind (host.protocol.ChangeKind) reads as in the Activity list: a run ("ran"), a clear of the
#: outputs ("cleared outputs of") and outputs arriving with no run in the window (a long cell printing, a display
#: update: "new output in") are three different things to the person
CHANGE_VERBS: dict[str, Msg] = {
    "insert": _("inserted"),
    "edit": _("edited"),
    "delete": _("deleted"),
    "move": _("moved"),
    "run": _("ran"),
    "clear": _("cleared the outputs of"),
    "output": _("new output in"),
    "metadata": _("changed the metadata of"),
    "revert": _("reverted the agent's edit of"),
    "type": _("changed the type of"),
}
#: what the agent did, by group: the icon a row shows (:data:`ICONS`); a tool not listed in :data:`TOOL_WORDS`
#: (a site's own) is "other"
GROUP_ICONS = {"read": "read", "edit": "edit", "run": "run", "comment": "comment", "other": "agent"}
#: each change kind's group (an agent's change row shows its icon)
CHANGE_GROUPS = {"run": "run", "clear": "run", "output": "run"}
#: what each of the bridge's tools reads as to the person, and its group: what the agent did, not the tool's name
TOOL_WORDS: dict[str, tuple[str, Msg]] = {
    "jupyter_get_cells": ("read", _("read cells")),
    "jupyter_get_output": ("read", _("read an output")),
    "jupyter_get_output_selection": ("read", _("read the output text you shared")),
    "jupyter_get_context": ("read", _("looked at what is open")),
    "jupyter_get_changes": ("read", _("checked what changed")),
    "jupyter_get_cell_access": ("read", _("checked its access")),
    "jupyter_list_workspace": ("read", _("listed the files")),
    "jupyter_read_file": ("read", _("read a file")),
    "jupyter_search": ("read", _("searched")),
    "jupyter_export_notebook": ("read", _("exported a notebook")),
    "jupyter_list_variables": ("read", _("listed the kernel's variables")),
    "jupyter_inspect_variable": ("read", _("inspected a variable")),
    "jupyter_guidance": ("read", _("read the guidance")),
    "jupyter_toolsets": ("read", _("looked at its tools")),
    "jupyter_list_comments": ("read", _("read the comments")),
    "jupyter_get_comment": ("read", _("read a comment")),
    "jupyter_update_cell": ("edit", _("changed a cell")),
    "jupyter_edit_cell": ("edit", _("edited a cell")),
    "jupyter_edit_cell_source": ("edit", _("edited a cell")),
    "jupyter_apply_edits": ("edit", _("edited cells")),
    "jupyter_insert_cell": ("edit", _("inserted a cell")),
    "jupyter_delete_cell": ("edit", _("deleted a cell")),
    "jupyter_move_cell": ("edit", _("moved a cell")),
    "jupyter_set_cell_type": ("edit", _("changed a cell's type")),
    "jupyter_clear_outputs": ("edit", _("cleared outputs")),
    "jupyter_write_file": ("edit", _("wrote a file")),
    "jupyter_edit_file": ("edit", _("edited a file")),
    "jupyter_create_notebook": ("edit", _("created a notebook")),
    "jupyter_save_notebook": ("edit", _("saved a notebook")),
    "jupyter_run_cells": ("run", _("ran cells")),
    "jupyter_run_code": ("run", _("ran code in the kernel")),
    "jupyter_kernel_action": ("run", _("acted on the kernel")),
    "jupyter_wait_for_result": ("run", _("waited for a result")),
    "jupyter_create_comment": ("comment", _("commented")),
    "jupyter_reply_comment": ("comment", _("replied to a comment")),
    "jupyter_resolve_comment": ("comment", _("resolved a comment")),
    "jupyter_reopen_comment": ("comment", _("reopened a comment")),
    "jupyter_focus_comment": ("comment", _("showed you a comment")),
    "jupyter_open_notebook": ("other", _("opened a notebook")),
    "jupyter_focus_cell": ("other", _("showed you a cell")),
    "jupyter_answer_dialog": ("other", _("answered a dialog")),
}
#: kinds whose merged count is worth showing (×N): repeated edits of one cell
REPEATED_KINDS = frozenset({"edit"})
#: what a call's outcome reads as ("waiting": a proposal of the call waits for the person's Accept or Deny)
OUTCOME_TEXT = {"running": _("running"), "waiting": _("waiting for you"), "ok": _("done")}


#: who acted, as the person reads it
ACTOR_TEXT = {"agent": _("agent"), "person": _("you")}


@dataclass
class ActivityRow:
    """One Activity line: ``key`` (``call:<id>``, ``change:...``) for in-place updates, ``actor`` "agent" or
    "person", ``what`` it did, ``cell_id``/``path`` its cell (a link), a call's ``outcome`` ("running", "waiting",
    "ok" or an error code), ``detail`` (the tooltip), ``group`` (:data:`GROUP_ICONS`), ``count`` (calls or edits it
    stands for), ``edits`` (an agent's edit: the (first, last) times its Diff and Revert cover) and ``started``
    (when a call began, epoch seconds)."""

    key: str
    time: float
    actor: str
    what: Text
    path: str = ""
    cell_id: str | None = None
    outcome: str | None = None
    detail: Text = ""
    count: int = 1
    edits: tuple[float, float] | None = None
    group: str = "other"
    started: float | None = None


def change_row(entry: Any) -> ActivityRow:
    """The row of a :class:`~webmcp_bridge.changes.log.ChangeEntry` (coalesced entries update one row)."""
    # the key leaves the kind out: a "clear" or "output" entry that becomes "run" (changes/log.py) updates its row;
    # ×count is shown for repeated edits only (a run's count is its output changes, not a number of runs)
    return ActivityRow(
        key=f"change:{entry.path}:{entry.actor}:{entry.cell_id}:{entry.first}",
        time=entry.time,
        actor=entry.actor,
        what=CHANGE_VERBS.get(entry.kind, _("%1", entry.kind)),
        path=entry.path,
        cell_id=entry.cell_id,
        count=entry.count if entry.kind in REPEATED_KINDS else 1,
        edits=(entry.first, entry.time) if entry.actor == "agent" and entry.kind == "edit" else None,
        group=CHANGE_GROUPS.get(entry.kind, "edit"),
    )


def call_row(event: Any, now: float | None = None) -> ActivityRow:
    """The row of a registry :class:`~webmcp_bridge.calls.registry.CallEvent` (before: running; after: outcome),
    in the person's words (:data:`TOOL_WORDS`); the tool's name and arguments are its tooltip."""
    outcome = "running" if event.outcome is None else event.outcome
    ms = "" if event.duration is None else f" ({round(event.duration * 1000)} ms)"
    group, words = TOOL_WORDS.get(event.tool, ("other", _("used the tool %1", event.tool)))
    when = time.time() if now is None else now
    return ActivityRow(
        key=f"call:{event.call_id}",
        time=when,
        actor="agent",
        what=words,
        outcome=outcome,
        detail=f"{event.tool} {event.arguments}{ms}",
        group=group,
        started=when,
    )


def elapsed(seconds: float) -> Msg:
    """A running call's elapsed time: "3 s", "2 min 5 s"."""
    whole = max(0, int(seconds))
    if whole < 60:
        return _("%1 s", str(whole))
    return _("%1 min %2 s", str(whole // 60), str(whole % 60))


def activity_item(
    row: ActivityRow, cells: dict[str, CellInfo] | None, current_path: str | None, now: float | None = None
) -> El:
    """One ``li`` of the Activity list: time, who, what (the cell a link), ×count, the outcome (a running call with
    its elapsed time at ``now``, a waiting one as waiting for the person) and, for an agent's edit, its Diff and
    Revert buttons."""
    status = None
    if row.outcome is not None:
        state = row.outcome if row.outcome in OUTCOME_TEXT else "error"
        words: Text = OUTCOME_TEXT.get(row.outcome, row.outcome)
        if row.outcome == "running" and row.started is not None:
            words = _("running · %1", elapsed((time.time() if now is None else now) - row.started))
        status = h(
            "span",
            c(f"outcome outcome-{state}"),
            icon({"running": "run", "waiting": "wait", "ok": "done"}.get(row.outcome, "error")),
            h("span", "", text=words),
        )
    target = None
    if row.cell_id:
        same = row.path == current_path
        label: Text = cell_label(row.cell_id, cells if same else None)
        if not same and row.path:
            label = _("%1 of %2", label, row.path.rsplit("/", 1)[-1])
        target = cell_link(row.path, row.cell_id, cells if same else None, label)
    times = h("small", c("count"), text=_("×%1", str(row.count))) if row.count > 1 else None
    review = None
    if row.edits is not None and row.cell_id:
        data = {
            "data_path": row.path,
            "data_cell": row.cell_id,
            "data_first": repr(row.edits[0]),
            "data_last": repr(row.edits[1]),
        }
        review = h(
            "span",
            c("row-actions"),
            button_el(
                "row-button",
                text=_("Diff"),
                title=_("Show the agent's change of this cell, line by line"),
                data_action="show-edits",
                **data,
            ),
            button_el(
                "row-button",
                text=_("Revert"),
                title=_("Put back the cell's text from before these changes (refused if the cell changed since)"),
                data_action="revert-row",
                **data,
            ),
        )
    return h(
        "li",
        c(f"activity-row actor-{row.actor} group-{row.group}" + (" activity-edit" if review else "")),
        icon(GROUP_ICONS.get(row.group, "agent")) if row.actor == "agent" else None,
        h("time", c("time"), text=clock(row.time), datetime=time.strftime("%H:%M:%S", time.localtime(row.time))),
        h("span", c("actor"), text=ACTOR_TEXT.get(row.actor, row.actor)),
        h("span", c("what"), text=row.what),
        target,
        times,
        status,
        review,
        title=row.detail or row.what,
        data_key=row.key,
    )


def activity_empty() -> El:
    return h("li", c("empty"), text=_("Nothing yet: edits, runs and what the agent does show here as they happen."))


#: edits one review box shows (the newest of the row's or the cell's)
REVIEW_EDITS = 5


def edits_review(edits: Sequence[Any], diffs: Sequence[list[list[str]]], label: Text, omitted: int = 0) -> El:
    """The review box of the agent's edits of one cell (:class:`~webmcp_bridge.changes.undo.AgentEdit`, newest
    first, with their diffs from :func:`~webmcp_bridge.propose.proposals.source_diff`): ``.webmcp-bridge-edits``
    with, per edit, ``.webmcp-bridge-edit`` (``data-edit``: its id; ``data-state``: "standing" | "reverted"), a
    head (time, state), its diff lines (:func:`listing_line`: text only, invisible characters marked) and, while
    it stands, the buttons Revert (``data-action="revert-edit"``) and "Revert this and later"
    (``revert-since``)."""
    items = []
    for edit, diff in zip(edits, diffs, strict=True):
        standing = edit.reverted is None
        items.append(
            h(
                "div",
                c("edit"),
                h(
                    "div",
                    c("edit-head"),
                    h("time", c("time"), text=clock(edit.time)),
                    h("span", "", text=_("the agent's edit") if standing else _("the agent's edit (reverted)")),
                ),
                listing("proposal-diff edit-diff", diff_kinds(diff), _("The change, line by line")),
                h(
                    "div",
                    c("edit-actions"),
                    button_el(
                        "button edit-revert",
                        text=_("Revert"),
                        title=_("Put back the cell's text from before this change (refused if the cell changed since)"),
                        data_action="revert-edit",
                        data_edit=str(edit.id),
                    ),
                    button_el(
                        "button edit-revert-since",
                        text=_("Revert this and later"),
                        title=_(
                            "Revert this change and every later change of the agent in this notebook, newest first"
                        ),
                        data_action="revert-since",
                        data_edit=str(edit.id),
                    ),
                )
                if standing
                else None,
                data_edit=str(edit.id),
                data_state="standing" if standing else "reverted",
            )
        )
    return h(
        "div",
        c("edits"),
        h(
            "div",
            c("edits-head"),
            h("strong", "", text=_("The agent's changes of %1", label)),
            button_el("button edits-close", text=_("Close"), data_action="close-edits"),
        ),
        *(items or [h("p", c("empty"), text=_("No change of the agent is kept for this cell."))]),
        h("small", c("empty"), text=_n("%1 older change not shown.", "%1 older changes not shown.", omitted))
        if omitted
        else None,
        role="region",
        aria_label=_("The agent's changes"),
    )
