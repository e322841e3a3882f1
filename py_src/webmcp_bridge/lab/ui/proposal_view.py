"""What Propose mode's inline box and workspace corner show, as element trees (:mod:`webmcp_bridge.lab.ui.view`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from webmcp_bridge.core import invisible
from webmcp_bridge.core.limits import PROPOSAL_REASON_BYTES
from webmcp_bridge.lab.ui.i18n import Text, _, _n
from webmcp_bridge.lab.ui.view import El, button_el, c, h
from webmcp_bridge.propose.proposals import Proposal

DIFF_CLASS = {"+": "add", "-": "del", "@": "head"}


def diff_kinds(diff: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    """A diff's ``(op, line)`` pairs as ``(kind, "op line")``."""
    return [(DIFF_CLASS.get(op, "ctx"), f"{op} {line}") for op, line in diff]


def listing(cls: str, lines: Iterable[tuple[str, str]], label: Text) -> El:
    """A focusable listing of ``(kind, text)`` lines (:func:`listing_line`), classes ``cls``, named ``label``."""
    return h(
        "div", c(cls), *[listing_line(kind, text) for kind, text in lines], tabindex="0", aria_label=label, role="group"
    )


def diff_lines(proposal: Proposal) -> list[tuple[str, str]]:
    """What the box lists, as ``(kind, text)`` with kind "add" | "del" | "ctx" | "head": the diff's lines prefixed
    "+ ", "- " or "  " ("@ " for a batch's header of one edit), else the code of a run line by line (as it is,
    split where Python splits it: :func:`webmcp_bridge.core.invisible.code_lines`). The text is raw: invisible
    characters are marked when the line is made (:func:`listing_line`)."""
    if proposal.diff is not None:
        return diff_kinds(proposal.diff)
    if proposal.code is not None:
        return [("ctx", line) for line in invisible.code_lines(proposal.code) or [""]]
    return []


def marked_text(text: str, cls: str, tag: str = "span", **attrs: str) -> El:
    """An element whose text is ``text`` with every invisible character (:mod:`webmcp_bridge.core.invisible`)
    shown as its mark ``⟦U+202E⟧`` in a ``.webmcp-bridge-invisible`` span (its title names the character), so a
    mark stands apart from the same letters typed as text. Text without any is the element's plain text."""
    runs = invisible.segments(text)
    if not any(hidden for _, hidden in runs):
        return h(tag, cls, text=text, **attrs)
    return h(
        tag,
        cls,
        *[
            h(
                "span",
                c("invisible"),
                text=invisible.mark(run),
                title=_("%1: invisible, it is in the text", invisible.name(run)),
            )
            if hidden
            else h("span", "", text=run)
            for run, hidden in runs
        ],
        data_invisible=str(sum(1 for _, hidden in runs if hidden)),
        **attrs,
    )


def listing_line(kind: str, text: str) -> El:
    """One ``.webmcp-bridge-diff-line`` of a box: classes ``diff-add`` / ``diff-del`` / ``diff-ctx`` (a header
    is ``diff-ctx diff-head``), invisible characters marked (:func:`marked_text`)."""
    cls = c("diff-line diff-ctx diff-head") if kind == "head" else c(f"diff-line diff-{kind}")
    return marked_text(text, cls, "div")


def invisible_count(proposal: Proposal) -> int:
    """How many invisible characters the text a proposal would leave holds: its code, or the kept and added
    lines of its diff (removed lines are marked too, but go away; a batch's headers are the bridge's)."""
    if proposal.diff is not None:
        return sum(invisible.count(line) for op, line in proposal.diff if op in (" ", "+"))
    return invisible.count(proposal.code) if proposal.code is not None else 0


def proposal_box(proposal: Proposal) -> El:
    """The box of one waiting proposal: ``.webmcp-bridge-proposal`` (``data-proposal-id``, ``data-kind``, ``data-tool``,
    ``data-cell-id``, ``data-invisible``: :func:`invisible_count`) with a head, the flag when that count is not 0, the
    diff or the code to run (invisible characters marked) and Accept, a reason input (at most PROPOSAL_REASON_BYTES)
    and Deny. Accept starts disabled: :class:`~webmcp_bridge.lab.ui.proposals.ProposalView` enables it. With a
    listing the box also holds "Show all" and a hint. Every text from the proposal is element text."""
    lines = diff_lines(proposal)
    hidden = invisible_count(proposal)
    shown = None
    if lines and proposal.diff is None:
        shown = listing("proposal-diff proposal-code", lines, _("The code to run"))
    elif lines:
        shown = listing("proposal-diff", lines, _("The change, line by line"))
    flag = (
        _n(
            "Contains %1 invisible character (shown as %2): it is in the text as the kernel or the notebook gets it, "
            "and can make it read differently from what it does.",
            "Contains %1 invisible characters (shown as %2): they are in the text as the kernel or the notebook gets "
            "it, and can make it read differently from what it does.",
            hidden,
            f"{invisible.OPEN}U+…{invisible.CLOSE}",
        )
        if hidden
        else None
    )
    return h(
        "div",
        c("proposal"),
        h(
            "div",
            c("proposal-head"),
            h("strong", c("proposal-title"), text=_("Agent proposes:")),
            marked_text(proposal.summary, c("proposal-summary")),
            h("small", c("proposal-tool"), text=proposal.tool),
        ),
        h("div", c("proposal-flag"), text=flag, role="note") if flag else None,
        h("div", c("proposal-caption"), text=_("Code to run:")) if lines and proposal.diff is None else None,
        h("div", c("proposal-caption"), text=WORKSPACE_CAPTIONS.get(proposal.kind, ""))
        if proposal.scope == "workspace"
        else None,
        shown,
        h(
            "div",
            c("proposal-actions"),
            button_el(
                "proposal-accept",
                text=_("Accept"),
                title=_("Apply this change (it is checked again first: if the cell changed since, nothing is applied)"),
                disabled="",
            ),
            h(
                "input",
                c("proposal-reason"),
                type="text",
                placeholder=_("Reason (optional)"),
                maxlength=str(PROPOSAL_REASON_BYTES),
                aria_label=_("Reason for Deny (optional; the agent reads it)"),
            ),
            button_el("proposal-deny", text=_("Deny"), title=_("Refuse this change; the agent gets your reason")),
            button_el(
                "proposal-expand",
                text=_n("Show all %1 line", "Show all %1 lines", len(lines)),
                title=_("Show the whole listing without its scroll bar"),
            )
            if shown is not None
            else None,
            h(
                "small",
                c("proposal-hint"),
                text=_("Accept is enabled once you have seen the whole listing: scroll it to its end or show it all."),
            )
            if shown is not None
            else None,
        ),
        role="group",
        aria_label=_("A change the agent proposes"),
        data_proposal_id=proposal.id,
        data_kind=proposal.kind,
        data_tool=proposal.tool,
        data_cell_id=proposal.cell_id or "",
        data_invisible=str(hidden),
        data_scope=proposal.scope,
        data_path=proposal.path,
    )


#: the caption of a workspace proposal's listing, by kind (Propose mode, lab/ui/proposals.py's corner box)
WORKSPACE_CAPTIONS: dict[str, Text] = {
    "write_file": _("The file's new text:"),
    "append_file": _("Text added at the end of the file:"),
    "edit_file": _("The lines this edit changes:"),
    "create_notebook": _("A new, empty notebook."),
    "site_tool": _("The site's tool runs with these arguments; what it then changes is accepted with it:"),
}


def workspace_corner() -> El:
    """The corner box that holds Propose mode's workspace proposals (files written or edited, notebooks
    created, a site author's tools): ``.webmcp-bridge-proposal-corner`` with a title; the proposals' boxes
    (:func:`proposal_box`) are added to it below the title."""
    return h(
        "div",
        c("proposal-corner"),
        h("div", c("proposal-corner-title"), text=_("The agent proposes changes to the workspace")),
        role="region",
        aria_label=_("Changes to the workspace the agent proposes"),
    )
