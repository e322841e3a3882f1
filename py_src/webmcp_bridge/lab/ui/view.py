"""What the Agent panel and the cell markers show, as plain element trees (pure Python, no ``js``).

The panel (:mod:`webmcp_bridge.lab.ui.panel`) decides *what* to show here and hands the trees to
:func:`webmcp_bridge.lab.ui.dom.build`, which makes DOM nodes with ``createElement`` and
``textContent`` only. An :class:`El` cannot carry HTML: text is text, tags and attribute names come from the
allow-lists below (no ``on*`` handler, no ``style``, ``href`` or ``src``), and any text from a notebook or an
agent (sources, comment bodies, tool arguments) only ever lands in ``El.text`` or an attribute value. So the
views can be tested under CPython, and nothing a notebook holds can become markup.

Interaction is declared, not wired: an element with ``data-action`` (plus ``data-path`` / ``data-cell`` /
``data-thread`` ...) is handled by the panel's one delegated listener per event type.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webmcp_bridge.core import invisible
from webmcp_bridge.core.limits import (
    ACCESS_ROWS,
    COMMENT_SHOWN_BYTES,
    COMMENT_TITLE_BYTES,
    PANEL_PREVIEW_BYTES,
    PROPOSAL_REASON_BYTES,
    QUOTE_SHOWN_BYTES,
    preview,
)
from webmcp_bridge.propose.proposals import Proposal

#: tags a view may use
TAGS = frozenset(
    {
        "div",
        "span",
        "p",
        "ul",
        "li",
        "button",
        "select",
        "option",
        "textarea",
        "label",
        "details",
        "summary",
        "h2",
        "h3",
        "small",
        "code",
        "time",
        "strong",
        "input",
    }
)
#: attributes a view may set besides ``data-*`` and ``aria-*`` (values are always plain strings)
ATTRIBUTES = frozenset(
    {
        "title",
        "type",
        "value",
        "placeholder",
        "role",
        "tabindex",
        "selected",
        "disabled",
        "rows",
        "open",
        "name",
        "datetime",
        "maxlength",
    }
)

CLS = "webmcp-bridge"


def _attribute_allowed(name: str) -> bool:
    return name in ATTRIBUTES or (name.startswith(("data-", "aria-")) and name.replace("-", "").isalnum())


@dataclass
class El:
    """One element: ``tag``, space-separated ``cls``, plain ``text`` (set as ``textContent``, before any
    children), string ``attrs`` and ``children``. Raises ValueError for a tag or attribute name outside the
    allow-lists, so no view can produce an event handler or a URL-bearing attribute."""

    tag: str
    cls: str = ""
    text: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[El] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.tag not in TAGS:
            raise ValueError(f"tag {self.tag!r} is not allowed in the panel")
        for name, value in self.attrs.items():
            if not _attribute_allowed(name):
                raise ValueError(f"attribute {name!r} is not allowed in the panel")
            if not isinstance(value, str):
                raise ValueError(f"attribute {name!r} must be a string")

    def to_json(self) -> list[Any]:
        """``[tag, cls, text, attrs, children]``, the form ``dom.js`` builds from."""
        return [self.tag, self.cls, self.text, self.attrs, [child.to_json() for child in self.children]]

    def walk(self) -> Iterable[El]:
        """This element and all its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def text_content(self) -> str:
        """All text of the tree, as the browser's ``textContent`` would give it."""
        return "".join(e.text or "" for e in self.walk())


def h(tag: str, cls: str = "", *children: El | None, text: str | None = None, **attrs: str) -> El:
    """Shorthand for :class:`El`: ``data_cell="x"`` becomes ``data-cell="x"``; None children are dropped."""
    return El(
        tag, cls, text, {k.replace("_", "-"): v for k, v in attrs.items()}, [c for c in children if c is not None]
    )


def c(name: str) -> str:
    """The panel's class ``webmcp-bridge-<name>`` (several names: space-separated)."""
    return " ".join(f"{CLS}-{n}" for n in name.split())


def clock(seconds: float) -> str:
    """HH:MM:SS of an epoch time, in the page's local time."""
    return time.strftime("%H:%M:%S", time.localtime(seconds))


def first_line(source: str, max_bytes: int = PANEL_PREVIEW_BYTES) -> str:
    """The first non-blank line of a source, bounded (``(empty)`` for an empty cell)."""
    for line in source.splitlines():
        if line.strip():
            return preview(line.strip(), max_bytes)
    return "(empty)"


# -- cells -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CellInfo:
    """What a list row says about a cell: its index (0-based; shown 1-based), type, first line and number of
    outputs."""

    index: int
    cell_type: str
    line: str
    outputs: int = 0


def cell_label(cell_id: str, cells: dict[str, CellInfo] | None) -> str:
    """``cell 4`` (1-based, as the person counts) when the cell is known, else a short id."""
    info = (cells or {}).get(cell_id)
    return f"cell {info.index + 1}" if info else f"cell {cell_id[:8]}"


def comment_title(what: str, label: str, anything_hidden: bool) -> str:
    """The title of the person's comment dialog: "Comment on cell 4", "Comment on output 2 of cell 4"
    (``what``: "cell", "the selection", "output N"; ``label``: :func:`cell_label`). JupyterLab's open dialogs
    are reported to the agent with their titles (``jupyter_get_context`` ``dialogs``), so while anything in the
    notebook is hidden from the agent (``anything_hidden``) the cell is "this cell": a real index would tell
    where hidden cells are."""
    label = "this cell" if anything_hidden else label
    return f"Comment on {label}" if what == "cell" else f"Comment on {what} of {label}"


def cell_link(path: str, cell_id: str, cells: dict[str, CellInfo] | None, label: str | None = None) -> El:
    """A button that reveals the cell (``data-action="reveal-cell"``)."""
    info = (cells or {}).get(cell_id)
    title = f"{info.cell_type} cell {info.index + 1}: {info.line}" if info else f"cell id {cell_id}"
    return h(
        "button",
        c("link"),
        text=label or cell_label(cell_id, cells),
        type="button",
        title=title,
        data_action="reveal-cell",
        data_path=path,
        data_cell=cell_id,
    )


# -- Activity ----------------------------------------------------------------------------------------------
#: what each change kind (host.protocol.ChangeKind) reads as in the Activity list: a run ("ran"), a clear of the
#: outputs ("cleared outputs of") and outputs arriving with no run in the window (a long cell printing, a display
#: update: "new output in") are three different things to the person
CHANGE_VERBS = {
    "insert": "inserted",
    "edit": "edited",
    "delete": "deleted",
    "move": "moved",
    "run": "ran",
    "clear": "cleared outputs of",
    "output": "new output in",
    "metadata": "changed metadata of",
    "type": "changed the type of",
}
#: kinds whose merged count is worth showing (×N): repeated edits of one cell
REPEATED_KINDS = frozenset({"edit"})


@dataclass
class ActivityRow:
    """One Activity line. ``key`` identifies it for in-place updates (``call:<id>`` or ``change:<path>:<cell>``
    ...); ``actor`` is "agent" or "person"; ``what`` the verb phrase; ``cell_id``/``path`` make the cell a link;
    ``outcome`` is "running", "ok" or an error code for tool calls; ``detail`` is the tooltip."""

    key: str
    time: float
    actor: str
    what: str
    path: str = ""
    cell_id: str | None = None
    outcome: str | None = None
    detail: str = ""
    count: int = 1


def change_row(entry: Any) -> ActivityRow:
    """The row of a :class:`~webmcp_bridge.changes.log.ChangeEntry` (coalesced entries update one row)."""
    # the key leaves the kind out: a "clear" or "output" entry that becomes "run" (changes/log.py) updates its row;
    # ×count is shown for repeated edits only (a run's count is its output changes, not a number of runs)
    return ActivityRow(
        key=f"change:{entry.path}:{entry.actor}:{entry.cell_id}:{entry.first}",
        time=entry.time,
        actor=entry.actor,
        what=CHANGE_VERBS.get(entry.kind, entry.kind),
        path=entry.path,
        cell_id=entry.cell_id,
        count=entry.count if entry.kind in REPEATED_KINDS else 1,
    )


def call_row(event: Any) -> ActivityRow:
    """The row of a registry :class:`~webmcp_bridge.calls.registry.CallEvent` (before: running; after: outcome)."""
    outcome = "running" if event.outcome is None else event.outcome
    ms = "" if event.duration is None else f" in {round(event.duration * 1000)} ms"
    return ActivityRow(
        key=f"call:{event.call_id}",
        time=time.time(),
        actor="agent",
        what=f"called {event.tool}",
        outcome=outcome,
        detail=f"{event.tool} {event.arguments}{ms}",
    )


def activity_item(row: ActivityRow, cells: dict[str, CellInfo] | None, current_path: str | None) -> El:
    """One ``li`` of the Activity list."""
    status = None
    if row.outcome is not None:
        status = h(
            "span",
            c(f"outcome outcome-{'ok' if row.outcome == 'ok' else 'running' if row.outcome == 'running' else 'error'}"),
            text=row.outcome,
        )
    target = None
    if row.cell_id:
        same = row.path == current_path
        label = cell_label(row.cell_id, cells if same else None)
        if not same and row.path:
            label = f"{label} of {row.path.rsplit('/', 1)[-1]}"
        target = cell_link(row.path, row.cell_id, cells if same else None, label)
    times = h("small", c("count"), text=f" ×{row.count}") if row.count > 1 else None
    return h(
        "li",
        c(f"activity-row actor-{row.actor}"),
        h("time", c("time"), text=clock(row.time)),
        h("span", c("actor"), text=row.actor),
        h("span", c("what"), text=row.what),
        target,
        times,
        status,
        title=row.detail or row.what,
        data_key=row.key,
    )


def activity_empty() -> El:
    return h("li", c("empty"), text="Nothing yet: edits, runs and the agent's tool calls show here as they happen.")


# -- Comments ------------------------------------------------------------------------------------------------
FILTERS = (("open", "Open"), ("resolved", "Resolved"), ("all", "All"), ("cell", "Current cell"))
STATE_TEXT = {
    "exact": "anchored",
    "reanchored": "re-anchored after an edit",
    "orphaned": "orphaned: the quoted text is gone",
    "cell-missing": "the cell was deleted",
    "output-changed": "the output changed since",
}


@dataclass(frozen=True)
class Message:
    """One message of a thread."""

    author: str
    body: str
    time: float | None = None


@dataclass(frozen=True)
class ThreadRow:
    """What the panel shows of one review thread (read from a review ThreadView by :func:`thread_row`).

    ``kind`` is "cell", "range" or "output"; ``selection`` is ``{start:{line,column}, end:{...}}`` when the
    range is located; ``quote`` the anchored text of a range; ``output_index`` for output anchors."""

    id: str
    status: str
    state: str
    kind: str
    cell_id: str | None
    messages: tuple[Message, ...]
    quote: str | None = None
    selection: dict | None = None
    output_index: int | None = None
    omitted_messages: int = 0


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if not isinstance(obj, dict) and hasattr(obj, name):
            return getattr(obj, name)
    return None


def _message(raw: Any) -> Message:
    if isinstance(raw, (tuple, list)):
        author, body, when = (list(raw) + [None, None, None])[:3]
    else:
        author, body, when = _get(raw, "author"), _get(raw, "body"), _get(raw, "time", "created", "at")
    return Message(str(author or "?"), str(body or ""), when if isinstance(when, (int, float)) else None)


def thread_row(view: Any) -> ThreadRow:
    """A :class:`ThreadRow` from a review ThreadView (attributes) or its JSON (dict), read defensively."""
    anchor = _get(view, "anchor") or {}
    kind = str(
        _get(anchor, "kind", "type")
        or (
            "output"
            if _get(anchor, "outputIndex", "output_index") is not None
            else "range"
            if _get(anchor, "quote", "selection") is not None
            else "cell"
        )
    )
    output_index = _get(anchor, "outputIndex", "output_index")
    quote = _get(anchor, "quote")
    messages = tuple(_message(m) for m in (_get(view, "messages") or ()))
    return ThreadRow(
        id=str(_get(view, "id")),
        status=str(_get(view, "status") or "open"),
        state=str(_get(view, "state") or "exact"),
        kind=kind,
        cell_id=_get(view, "cell_id", "cellId") or _get(anchor, "cellId", "cell_id"),
        messages=messages,
        quote=quote if isinstance(quote, str) else None,
        selection=_get(view, "selection"),
        output_index=output_index if isinstance(output_index, int) else None,
        omitted_messages=int(_get(view, "omitted_messages", "omittedMessages") or 0),
    )


def anchor_text(thread: ThreadRow, cells: dict[str, CellInfo] | None) -> str:
    """``cell 3 · lines 2–4`` / ``cell 3 · output 1`` / ``cell 3``, plus the anchor's state when not exact."""
    where = cell_label(thread.cell_id, cells) if thread.cell_id else "no cell"
    if thread.kind == "range":
        sel = thread.selection
        if isinstance(sel, dict) and isinstance(sel.get("start"), dict) and isinstance(sel.get("end"), dict):
            a, b = sel["start"].get("line"), sel["end"].get("line")
            if isinstance(a, int) and isinstance(b, int):
                where += f" · line {a + 1}" if a == b else f" · lines {a + 1}–{b + 1}"
        else:
            where += " · selection"
    elif thread.kind == "output":
        where += f" · output {(thread.output_index or 0) + 1}"
    return where


def thread_item(thread: ThreadRow, cells: dict[str, CellInfo] | None, draft: str = "") -> El:
    """One thread: anchor and state, the quoted text, the messages, a reply box and its actions."""
    state = STATE_TEXT.get(thread.state, thread.state)
    header = h(
        "div",
        c("thread-head"),
        h(
            "button",
            c("link thread-anchor"),
            text=anchor_text(thread, cells),
            type="button",
            title="Show in the notebook",
            data_action="reveal-thread",
            data_thread=thread.id,
        ),
        h("span", c(f"state state-{thread.state}"), text=state),
        h("span", c(f"status status-{thread.status}"), text=thread.status),
    )
    quote = h("code", c("quote"), text=preview(thread.quote, QUOTE_SHOWN_BYTES)) if thread.quote else None
    messages = [
        h(
            "li",
            c(f"message author-{m.author}"),
            h("span", c("author"), text=m.author),
            h("time", c("time"), text=clock(m.time)) if m.time is not None else None,
            h("p", c("body"), text=preview(m.body, COMMENT_SHOWN_BYTES), title=preview(m.body, COMMENT_TITLE_BYTES)),
        )
        for m in thread.messages
    ]
    if thread.omitted_messages:
        messages.append(h("li", c("omitted"), text=f"{thread.omitted_messages} more messages not shown"))
    actions = [h("button", c("button"), text="Reply", type="button", data_action="reply", data_thread=thread.id)]
    if thread.status == "open":
        actions.append(
            h("button", c("button"), text="Resolve", type="button", data_action="resolve", data_thread=thread.id)
        )
    else:
        actions.append(
            h("button", c("button"), text="Reopen", type="button", data_action="reopen", data_thread=thread.id)
        )
    if thread.kind == "range" and thread.state == "orphaned":
        actions.append(
            h(
                "button",
                c("button"),
                text="Re-anchor to selection",
                type="button",
                data_action="reanchor",
                data_thread=thread.id,
                title="Select the text in the cell's editor, then click",
            )
        )
    return h(
        "li",
        c(f"thread thread-{thread.status} thread-state-{thread.state}"),
        header,
        quote,
        h("ul", c("messages"), *messages),
        h("textarea", c("reply"), text=draft, rows="2", placeholder="Reply…", aria_label="Reply", data_reply=thread.id),
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
    notice: str | None = None,
) -> El:
    """The Comments section's body: a filter, a box to comment on the active cell, the threads."""
    options = [
        h(
            "option",
            "",
            text=f"{label} ({counts[key]})" if key in counts else label,
            value=key,
            **({"selected": ""} if key == chosen else {}),
        )
        for key, label in FILTERS
    ]
    if active_cell is None:
        button = h(
            "button",
            c("button"),
            text="Comment on the active cell",
            type="button",
            disabled="",
            title="Select a cell in the notebook first",
        )
    else:
        button = h(
            "button",
            c("button"),
            text=f"Comment on {cell_label(active_cell, cells)}",
            type="button",
            data_action="comment-active",
            data_cell=active_cell,
        )
    new_box = h(
        "div",
        c("new-comment"),
        h(
            "textarea",
            c("reply"),
            text=(drafts or {}).get("", ""),
            rows="2",
            placeholder="Comment on the active cell…",
            aria_label="New comment",
            data_reply="",
        ),
        button,
    )
    if threads:
        items = [thread_item(t, cells, (drafts or {}).get(t.id, "")) for t in threads]
        if omitted:
            items.append(h("li", c("omitted"), text=f"{omitted} more threads not shown"))
        body = h("ul", c("threads"), *items)
    else:
        body = h(
            "p",
            c("empty"),
            text={
                "open": "No open comments.",
                "resolved": "No resolved comments.",
                "cell": "No comments on the active cell.",
            }.get(chosen, "No comments."),
        )
    return h(
        "div",
        c("comments-body"),
        h(
            "label",
            c("row"),
            h("span", "", text="Show "),
            h("select", c("select"), *options, data_action="filter", aria_label="Which comments"),
        ),
        new_box,
        h("p", c("notice"), text=notice, role="status") if notice else None,
        body,
        data_filter=chosen,
    )


# -- Access --------------------------------------------------------------------------------------------------
LEVEL_TEXT = {
    "write": "write: the agent may read and change",
    "read": "read: the agent may read, not change",
    "none": "none: hidden from the agent",
}


MODE_TEXT = {"direct": "Direct: the agent's changes apply at once", "propose": "Propose: ask me before each change"}


#: what Propose mode does not hold, said under the switch (docs/TOOLS.md, "Propose mode"): the agent's review
#: comments are it talking, not changing the notebook; a save writes what the notebook already holds
MODE_NOTE = "Propose holds cell, file and notebook changes and runs; comments and saves go through."


def mode_note() -> El:
    """One short line under the Direct/Propose switch: what Propose mode does not hold (:data:`MODE_NOTE`)."""
    return h("p", c("mode-note"), text=MODE_NOTE)


def mode_select(mode: str) -> El:
    """The person's Direct/Propose switch (``data-action="mode"``), showing ``mode``."""
    return h(
        "select",
        c("select mode-select"),
        *[
            h("option", "", text=text, value=value, **({"selected": ""} if value == mode else {}))
            for value, text in MODE_TEXT.items()
        ],
        data_action="mode",
        aria_label="Agent mode",
    )


def level_select(action: str, level: str, label: str) -> El:
    """A select of the three levels (``data-action`` = action)."""
    return h(
        "select",
        c("select"),
        *[
            h("option", "", text=LEVEL_TEXT[lv], value=lv, **({"selected": ""} if lv == level else {}))
            for lv in ("write", "read", "none")
        ],
        data_action=action,
        aria_label=label,
    )


#: said in the Access section when a cell is hidden (docs/TOOLS.md, "Hidden cells and the kernel")
KERNEL_NOTE = (
    "Code the agent runs in the kernel can read every file of the workspace (hidden notebooks included) and "
    "everything in the kernel's memory (the variables and functions hidden cells defined). So while a cell or notebook is hidden, "
    "every run the agent starts is shown to you with its code and waits for your Accept, in Direct mode too. "
    "Hidden cells' sources are also cleared from the kernel's history, as a second line of defence only."
)
#: the Access section's switch of the run rule (lab/run_switches.py): "ask" (the default) or "stop"
RUN_ASKING_TEXT = {"ask": "Ask me before each run", "stop": "Stop asking (runs go ahead)"}


def run_asking_select(asking_off: bool) -> El:
    """The select of the run rule's switch for the notebook in front (``data-action="run-asking"``)."""
    chosen = "stop" if asking_off else "ask"
    return h(
        "select",
        c("select"),
        *[
            h("option", "", text=text, value=value, **({"selected": ""} if value == chosen else {}))
            for value, text in RUN_ASKING_TEXT.items()
        ],
        data_action="run-asking",
        aria_label="Agent's kernel runs while something is hidden",
    )


def access_view(
    path: str,
    notebook_level: str,
    restricted: Sequence[tuple[str, str]],
    cells: dict[str, CellInfo] | None,
    asking_off: bool = False,
) -> El:
    """The Access section's body: the notebook's level, "apply to all cells", the restricted cells, what kernel
    code reaches and the run rule's switch (``asking_off``: the person turned asking off for this notebook).

    ``restricted``: ``(cell id, level)`` of cells whose level is not "write", in notebook order."""
    rows = []
    for cell_id, level in list(restricted)[:ACCESS_ROWS]:
        info = (cells or {}).get(cell_id)
        rows.append(
            h(
                "li",
                c(f"access-row level-{level}"),
                cell_link(path, cell_id, cells),
                h("span", c("line"), text=info.line if info else ""),
                h(
                    "button",
                    c(f"button level level-{level}"),
                    text=level,
                    type="button",
                    title="Cycle: write → read → none",
                    data_action="cycle-cell",
                    data_path=path,
                    data_cell=cell_id,
                ),
            )
        )
    more = len(restricted) - ACCESS_ROWS
    if more > 0:
        rows.append(h("li", c("omitted"), text=f"{more} more restricted cells not listed"))
    listing = (
        h("ul", c("access-list"), *rows) if rows else h("p", c("empty"), text="Every cell is at the notebook's level.")
    )
    kernel = [
        h("p", c("kernel-note"), text=KERNEL_NOTE),
        h("label", c("row"), h("span", "", text="Agent's runs "), run_asking_select(asking_off)),
    ]
    return h(
        "div",
        c("access-body"),
        h(
            "label",
            c("row"),
            h("span", "", text="Notebook "),
            level_select("notebook-level", notebook_level, "Notebook access"),
        ),
        h(
            "div",
            c("row"),
            level_select("all-level", "read", "Level for all cells"),
            h("button", c("button"), text="Apply to all cells", type="button", data_action="apply-all"),
        ),
        h("h3", c("subhead"), text=f"Restricted cells ({len(restricted)})"),
        listing,
        *kernel,
    )


# -- markers ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Markers:
    """The markers one cell carries: open comment threads, its access level, whether an agent is working on
    it now, whether its last run was the agent's."""

    comments: int = 0
    access: str = "write"
    working: bool = False
    agent_run: bool = False

    def signature(self) -> str:
        """A short text equal for equal markers (stored on the cell node to skip unchanged cells)."""
        return f"{self.comments}|{self.access}|{int(self.working)}|{int(self.agent_run)}"

    def empty(self) -> bool:
        return self == Markers()


def cell_markers(
    comments: Mapping[str, int], levels: Mapping[str, str], working: set[str], agent_run: set[str]
) -> dict[str, Markers]:
    """``{cell id: Markers}`` of the cells that carry any: ``comments`` open threads per cell, ``levels`` the
    restricted cells' levels, ``working`` cells an agent is changing now, ``agent_run`` cells whose outputs
    are from the agent's run."""
    out = {}
    for cell_id in set(comments) | set(levels) | working | agent_run:
        m = Markers(comments.get(cell_id, 0), levels.get(cell_id, "write"), cell_id in working, cell_id in agent_run)
        if not m.empty():
            out[cell_id] = m
    return out


def marker_classes(m: Markers) -> dict[str, bool]:
    """Classes on the cell node: ``webmcp-bridge-cell-<...>`` on or off."""
    return {
        c("cell-commented"): m.comments > 0,
        c("cell-read"): m.access == "read",
        c("cell-none"): m.access == "none",
        c("cell-working"): m.working,
        c("cell-agent-run"): m.agent_run,
    }


def marker_badges(m: Markers, cell_id: str, path: str) -> El:
    """The badge strip shown on a cell of the notebook at ``path`` (an empty strip when no marker applies). An
    agent at work shows as a ring around the cell (a class, see :func:`marker_classes`), not as a badge."""
    badges = []
    if m.access != "write":
        badges.append(
            h(
                "button",
                c(f"badge badge-lock level-{m.access}"),
                text=f"🔒 {m.access}",
                type="button",
                title={
                    "read": "Agent access: read (the agent may read this cell, not change it). Click to cycle.",
                    "none": "Agent access: none (hidden from the agent). Click to cycle.",
                }.get(m.access, m.access),
                data_action="cycle-cell",
                data_path=path,
                data_cell=cell_id,
            )
        )
    if m.comments:
        badges.append(
            h(
                "button",
                c("badge badge-comments"),
                text=f"💬 {m.comments}",
                type="button",
                title=f"{m.comments} open comment thread{'s' if m.comments != 1 else ''}. Click to show.",
                data_action="show-cell-comments",
                data_path=path,
                data_cell=cell_id,
            )
        )
    if m.agent_run:
        badges.append(h("span", c("badge badge-agent-run"), text="run by agent", title="The agent ran this cell last."))
    return h("div", c("markers"), *badges, data_path=path, data_cell=cell_id)


# -- Propose mode's inline box (lab/ui/proposals.py places it and handles its buttons) ---------------------

_DIFF_CLASS = {"+": "add", "-": "del", "@": "head"}


def diff_lines(proposal: Proposal) -> list[tuple[str, str]]:
    """What the box lists, as ``(kind, text)`` with kind "add" | "del" | "ctx" | "head": the diff's lines prefixed
    "+ ", "- " or "  " ("@ " for a batch's header of one edit), else the code of a run line by line (as it is,
    split where Python splits it: :func:`webmcp_bridge.core.invisible.code_lines`). The text is raw: invisible
    characters are marked when the line is made (:func:`listing_line`)."""
    if proposal.diff is not None:
        return [(_DIFF_CLASS.get(op, "ctx"), f"{op} {line}") for op, line in proposal.diff]
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
                title=f"{invisible.name(run)}: invisible, it is in the text",
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
    """The box of one waiting proposal: ``.webmcp-bridge-proposal`` with ``data-proposal-id``, ``data-kind``,
    ``data-tool``, ``data-cell-id``, ``data-invisible`` (count, see :func:`invisible_count`); a head (title,
    summary, tool), the flag ``.webmcp-bridge-proposal-flag`` when that count is not 0, the diff or the code to
    run (one ``.webmcp-bridge-diff-line`` per line, wrapped, invisible characters marked), and the actions
    (Accept, a reason input of at most PROPOSAL_REASON_BYTES characters, Deny). Every text from the proposal is
    element text.

    With a listing, Accept starts disabled and the box holds "Show all" (``.webmcp-bridge-proposal-expand``)
    and a hint (``.webmcp-bridge-proposal-hint``): :class:`~webmcp_bridge.lab.ui.proposals.ProposalView`
    enables Accept once the whole listing has been in view (it fits, was scrolled to its end, or was expanded)."""
    lines = diff_lines(proposal)
    hidden = invisible_count(proposal)
    listing = None
    if lines:
        listing = h(
            "div",
            c("proposal-diff") + (" " + c("proposal-code") if proposal.diff is None else ""),
            *[listing_line(kind, text) for kind, text in lines],
            tabindex="0",
            aria_label="The code to run" if proposal.diff is None else "The change, line by line",
        )
    flag = invisible.flag(hidden)
    accept_attrs = {"disabled": ""} if listing is not None else {}
    return h(
        "div",
        c("proposal"),
        h(
            "div",
            c("proposal-head"),
            h("strong", c("proposal-title"), text="Agent proposes:"),
            marked_text(proposal.summary, c("proposal-summary")),
            h("small", c("proposal-tool"), text=proposal.tool),
        ),
        h("div", c("proposal-flag"), text=flag, role="note") if flag else None,
        h("div", c("proposal-caption"), text="Code to run:") if lines and proposal.diff is None else None,
        h("div", c("proposal-caption"), text=WORKSPACE_CAPTIONS.get(proposal.kind, ""))
        if proposal.scope == "workspace"
        else None,
        listing,
        h(
            "div",
            c("proposal-actions"),
            h(
                "button",
                c("proposal-accept") + " jp-mod-styled jp-mod-accept",
                text="Accept",
                type="button",
                title="Apply this change (it is checked again first: if the cell changed since, nothing is applied)",
                **accept_attrs,
            ),
            h(
                "input",
                c("proposal-reason"),
                type="text",
                placeholder="Reason (optional)",
                maxlength=str(PROPOSAL_REASON_BYTES),
                aria_label="Why you deny this change (optional; the agent reads it)",
            ),
            h(
                "button",
                c("proposal-deny") + " jp-mod-styled jp-mod-reject",
                text="Deny",
                type="button",
                title="Refuse this change; the agent gets your reason",
            ),
            h(
                "button",
                c("proposal-expand") + " jp-mod-styled",
                text=f"Show all {len(lines)} lines",
                type="button",
                title="Show the whole listing without its scroll bar",
            )
            if listing is not None
            else None,
            h(
                "small",
                c("proposal-hint"),
                text="Accept is enabled once you have seen the whole listing: scroll it to its end or show it all.",
            )
            if listing is not None
            else None,
        ),
        role="group",
        aria_label="A change the agent proposes",
        data_proposal_id=proposal.id,
        data_kind=proposal.kind,
        data_tool=proposal.tool,
        data_cell_id=proposal.cell_id or "",
        data_invisible=str(hidden),
        data_scope=proposal.scope,
        data_path=proposal.path,
    )


#: the caption of a workspace proposal's listing, by kind (Propose mode, lab/ui/proposals.py's corner box)
WORKSPACE_CAPTIONS = {
    "write_file": "The file's new text:",
    "append_file": "Text added at the end of the file:",
    "edit_file": "The lines this edit changes:",
    "create_notebook": "A new, empty notebook.",
    "site_tool": "The site's tool runs with these arguments; what it then changes is accepted with it:",
}


def workspace_corner() -> El:
    """The corner box that holds Propose mode's workspace proposals (files written or edited, notebooks
    created, a site author's tools): ``.webmcp-bridge-proposal-corner`` with a title; the proposals' boxes
    (:func:`proposal_box`) are added to it below the title."""
    return h(
        "div",
        c("proposal-corner"),
        h("div", c("proposal-corner-title"), text="The agent proposes changes to the workspace"),
        role="region",
        aria_label="Changes to the workspace the agent proposes",
    )
