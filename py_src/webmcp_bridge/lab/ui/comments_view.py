"""What the Agent panel's Comments section shows, as plain element trees (the rules of
:mod:`webmcp_bridge.lab.ui.view`: text only, allow-listed tags and attributes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from webmcp_bridge.core.limits import COMMENT_SHOWN_BYTES, COMMENT_TITLE_BYTES, QUOTE_SHOWN_BYTES, preview
from webmcp_bridge.lab.ui.i18n import Text, _, _n
from webmcp_bridge.lab.ui.view import CellInfo, El, button_el, c, cell_label, choice_select, clock, field_row, h
from webmcp_bridge.review.signatures import FROM_FILE
from webmcp_bridge.review.threads import ThreadView

FILTERS = (("open", _("Open")), ("resolved", _("Resolved")), ("all", _("All")), ("cell", _("Current cell")))
STATE_TEXT = {
    "exact": _("anchored"),
    "reanchored": _("re-anchored after an edit"),
    "orphaned": _("orphaned: the quoted text is gone"),
    "cell-missing": _("the cell was deleted"),
    "output-changed": _("the output changed since"),
}
STATUS_TEXT = {"open": _("open"), "resolved": _("resolved")}
#: who wrote a message, as the person reads it; "file": it says it is the person's, and no signature of this browser
#: says so (:mod:`webmcp_bridge.review.signatures`)
AUTHOR_TEXT = {"agent": _("agent"), "person": _("you"), FROM_FILE: _("from the file")}
#: the tooltip of a message shown as from the file
FROM_FILE_TITLE = _(
    "This message says it is yours, but you did not write it in this browser: it came with the notebook's file "
    "(another browser, an upload, or code that wrote the file). The agent is told the same."
)


@dataclass(frozen=True)
class Message:
    """One message of a thread."""

    author: str
    body: str
    time: float | None = None


@dataclass(frozen=True)
class ThreadRow:
    """What the panel shows of one review thread: ``kind`` "cell", "range" or "output"; ``selection``
    ``{start: {line, column}, end}`` when the range is located; ``quote`` a range's text; ``output_index``."""

    id: str
    status: str
    state: str
    kind: str
    cell_id: str | None
    messages: tuple[Message, ...]
    quote: str | None = None
    selection: dict | None = None
    output_index: int | None = None


def thread_row(view: ThreadView) -> ThreadRow:
    """The :class:`ThreadRow` of a review thread as read now."""
    quote, index = view.anchor.get("quote"), view.anchor.get("outputIndex")
    return ThreadRow(
        id=view.id,
        status=view.status,
        state=view.state,
        kind=view.kind,
        cell_id=view.cell_id,
        messages=tuple(Message(m.author, m.body, m.time) for m in view.messages),
        quote=quote if isinstance(quote, str) else None,
        selection=view.selection,
        output_index=index if isinstance(index, int) else None,
    )


def anchor_text(thread: ThreadRow, cells: dict[str, CellInfo] | None) -> Text:
    """``cell 3 · lines 2–4`` / ``cell 3 · output 1`` / ``cell 3``."""
    where: Text = cell_label(thread.cell_id, cells) if thread.cell_id else _("no cell")
    if thread.kind == "range":
        sel = thread.selection
        if isinstance(sel, dict) and isinstance(sel.get("start"), dict) and isinstance(sel.get("end"), dict):
            a, b = sel["start"].get("line"), sel["end"].get("line")
            if isinstance(a, int) and isinstance(b, int):
                return (
                    _("%1 · line %2", where, str(a + 1))
                    if a == b
                    else _("%1 · lines %2–%3", where, str(a + 1), str(b + 1))
                )
        return _("%1 · selection", where)
    if thread.kind == "output":
        return _("%1 · output %2", where, str((thread.output_index or 0) + 1))
    return where


def reply_box(key: str, draft: str, placeholder: Text, label: Text) -> El:
    """A reply box holding ``draft``; ``data-reply`` = ``key`` (a thread id, "" for a new comment)."""
    return h("textarea", c("reply"), text=draft, rows="2", placeholder=placeholder, aria_label=label, data_reply=key)


def thread_item(thread: ThreadRow, cells: dict[str, CellInfo] | None, draft: str = "") -> El:
    """One thread: anchor and state, the quoted text, the messages, a reply box and its actions."""
    state: Text = STATE_TEXT.get(thread.state, thread.state)
    header = h(
        "div",
        c("thread-head"),
        button_el(
            "link thread-anchor",
            text=anchor_text(thread, cells),
            title=_("Show in the notebook"),
            data_action="reveal-thread",
            data_thread=thread.id,
        ),
        h("span", c(f"state state-{thread.state}"), text=state),
        h("span", c(f"status status-{thread.status}"), text=STATUS_TEXT.get(thread.status, thread.status)),
    )
    quote = h("code", c("quote"), text=preview(thread.quote, QUOTE_SHOWN_BYTES)) if thread.quote else None
    messages = [
        h(
            "li",
            c(f"message author-{m.author}"),
            h(
                "span",
                c("author"),
                text=AUTHOR_TEXT.get(m.author, m.author),
                **({"title": FROM_FILE_TITLE} if m.author == FROM_FILE else {}),
            ),
            h("time", c("time"), text=clock(m.time)) if m.time is not None else None,
            h("p", c("body"), text=preview(m.body, COMMENT_SHOWN_BYTES), title=preview(m.body, COMMENT_TITLE_BYTES)),
        )
        for m in thread.messages
    ]
    toggle = ("resolve", _("Resolve")) if thread.status == "open" else ("reopen", _("Reopen"))
    actions = [
        button_el("button", text=word, data_action=action, data_thread=thread.id)
        for action, word in (("reply", _("Reply")), toggle)
    ]
    if thread.kind == "range" and thread.state == "orphaned":
        actions.append(
            button_el(
                "button",
                text=_("Re-anchor to selection"),
                data_action="reanchor",
                data_thread=thread.id,
                title=_("Select the text in the cell's editor, then click"),
            )
        )
    return h(
        "li",
        c(f"thread thread-{thread.status} thread-state-{thread.state}"),
        header,
        quote,
        h("ul", c("messages"), *messages),
        reply_box(thread.id, draft, _("Reply…"), _("Reply")),
        h("div", c("actions"), *actions),
        data_thread_box=thread.id,
    )


def comments_view(
    threads: Sequence[ThreadRow],
    chosen: str,
    counts: dict[str, int],
    cells: dict[str, CellInfo] | None,
    drafts: dict[str, str] | None = None,
    active_cell: str | None = None,
    omitted: int = 0,
) -> El:
    """The Comments section's body: a filter, a box to comment on the active cell, the threads."""
    choices = [(key, _("%1 (%2)", label, str(counts[key])) if key in counts else label) for key, label in FILTERS]
    if active_cell is None:
        button = button_el(
            "button", text=_("Comment on the active cell"), disabled="", title=_("Select a cell in the notebook first")
        )
    else:
        button = button_el(
            "button",
            text=_("Comment on %1", cell_label(active_cell, cells)),
            data_action="comment-active",
            data_cell=active_cell,
        )
    new_box = h(
        "div",
        c("new-comment"),
        reply_box("", (drafts or {}).get("", ""), _("Comment on the active cell…"), _("New comment")),
        button,
    )
    if threads:
        items = [thread_item(t, cells, (drafts or {}).get(t.id, "")) for t in threads]
        if omitted:
            items.append(
                h("li", c("omitted"), text=_n("%1 more thread not shown", "%1 more threads not shown", omitted))
            )
        body = h("ul", c("threads"), *items)
    else:
        body = h(
            "p",
            c("empty"),
            text={
                "open": _("No open comments."),
                "resolved": _("No resolved comments."),
                "cell": _("No comments on the active cell."),
            }.get(chosen, _("No comments.")),
        )
    return h(
        "div",
        c("comments-body"),
        field_row(_("Show"), choice_select("filter", _("Which comments"), choices, chosen)),
        new_box,
        body,
        data_filter=chosen,
    )
