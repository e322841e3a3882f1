"""The Agent panel's review box of the agent's edits of one cell (Activity: click a row of the agent's edits, or
a cell's "changed by agent" badge): each edit's diff as text, with Revert and "Revert every agent change since".
Pure: builds :class:`~webmcp_bridge.lab.ui.view.El` trees, tested under CPython."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webmcp_bridge.lab.ui.i18n import Text, _, _n
from webmcp_bridge.lab.ui.proposal_view import DIFF_CLASS, listing_line
from webmcp_bridge.lab.ui.view import El, button_el, c, clock, h

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
                h(
                    "div",
                    c("proposal-diff edit-diff"),
                    *[listing_line(DIFF_CLASS.get(op, "ctx"), f"{op} {line}") for op, line in diff],
                    tabindex="0",
                    aria_label=_("The change, line by line"),
                    role="group",
                ),
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
