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

from webmcp_bridge.core.limits import (
    ACCESS_ROWS,
    PANEL_PREVIEW_BYTES,
    preview,
)

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
        "hidden",
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
    "revert": "reverted the agent's edit of",
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
    #: an agent's edit: (first, last) times of the changes the row stands for (seconds since the epoch), so a click
    #: on the row shows their diffs and Revert (changes/undo.py); None for every other row
    edits: tuple[float, float] | None = None


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
        edits=(entry.first, entry.time) if entry.actor == "agent" and entry.kind == "edit" else None,
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
    review: dict[str, str] = {}
    if row.edits is not None and row.cell_id:
        review = {
            "data_action": "show-edits",
            "data_path": row.path,
            "data_cell": row.cell_id,
            "data_first": repr(row.edits[0]),
            "data_last": repr(row.edits[1]),
            "tabindex": "0",
            "role": "button",
            "aria_label": "Show the agent's change and Revert",
        }
    return h(
        "li",
        c(f"activity-row actor-{row.actor}" + (" activity-edit" if review else "")),
        h("time", c("time"), text=clock(row.time)),
        h("span", c("actor"), text=row.actor),
        h("span", c("what"), text=row.what),
        target,
        times,
        status,
        h("small", c("review-hint"), text=" · diff, revert") if review else None,
        title="Click to see the change and revert it" if review else row.detail or row.what,
        data_key=row.key,
        **review,
    )


def activity_empty() -> El:
    return h("li", c("empty"), text="Nothing yet: edits, runs and the agent's tool calls show here as they happen.")


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
    "everything in the kernel's memory (the variables and functions hidden cells defined). So while a cell or "
    "notebook is hidden, every run the agent starts is shown to you with its code and waits for your Accept, in "
    "Direct mode too. Hidden cells' sources are also cleared from the kernel's history, as a second line of defence "
    "only."
)
#: the Access section's switch of the run rule (access/run_consent.py; for this open notebook's own hidden cells,
#: while it stays open): "ask" (the default) or "stop"
RUN_ASKING_TEXT = {"ask": "Ask me before each run", "stop": "Stop asking for this notebook's hidden cells"}
#: the kernel model's lines (docs/SECURITY.md, "The kernel")
AGENT_KERNEL_NOTE = (
    "The agent ran code in this notebook's kernel: its outputs show without script or styling handlers until the "
    "kernel restarts, whoever runs the cell."
)
AGENT_KERNELS_WARNING = (
    "Something is hidden, and code the agent ran is still in {count} kernel(s): it could read what you hide when "
    "you run it or save it. Restart them."
)


@dataclass(frozen=True)
class KernelFacts:
    """What the Access section says of the kernels: the person's "Stop asking" for the notebook in front, whether
    its kernel is the agent's, how many kernels are the agent's, whether anything is hidden anywhere open."""

    asking_off: bool = False
    agent_kernel: bool = False
    agent_kernels: int = 0
    hides: bool = False


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
    kernel: KernelFacts | None = None,
) -> El:
    """The Access section's body: the notebook's level, "apply to all cells", the restricted cells, what kernel
    code reaches, the run rule's switch and the kernel model's state (``kernel``, :class:`KernelFacts`): a line
    when the notebook's kernel is the agent's, and a warning with a Restart button when something is hidden while
    kernels the agent ran code in are alive.

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
    facts = kernel or KernelFacts()
    restart = h(
        "button", c("button"), text="Restart the agent's kernels", type="button", data_action="restart-agent-kernels"
    )
    kernel_rows = [
        h("p", c("kernel-note"), text=KERNEL_NOTE),
        h("label", c("row"), h("span", "", text="Agent's runs "), run_asking_select(facts.asking_off)),
    ]
    if facts.agent_kernel:
        kernel_rows.append(h("p", c("kernel-agent"), text=AGENT_KERNEL_NOTE, data_role="agent-kernel"))
    if facts.hides and facts.agent_kernels:
        warning = AGENT_KERNELS_WARNING.format(count=facts.agent_kernels)
        kernel_rows.append(h("p", c("kernel-warning"), text=warning, role="alert", data_role="agent-kernels"))
    if facts.agent_kernels:
        kernel_rows.append(h("div", c("row"), restart))
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
        *kernel_rows,
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
    agent_changed: bool = False  # the agent changed its source and the person has not looked at it since

    def signature(self) -> str:
        """A short text equal for equal markers (stored on the cell node to skip unchanged cells)."""
        return f"{self.comments}|{self.access}|{int(self.working)}|{int(self.agent_run)}|{int(self.agent_changed)}"

    def empty(self) -> bool:
        return self == Markers()


def cell_markers(
    comments: Mapping[str, int],
    levels: Mapping[str, str],
    working: set[str],
    agent_run: set[str],
    agent_changed: Iterable[str] = (),
) -> dict[str, Markers]:
    """``{cell id: Markers}`` of the cells that carry any: ``comments`` open threads per cell, ``levels`` the
    restricted cells' levels, ``working`` cells an agent is changing now, ``agent_run`` cells whose outputs
    are from the agent's run, ``agent_changed`` cells the agent edited that the person has not looked at."""
    out = {}
    changed = set(agent_changed)
    for cell_id in set(comments) | set(levels) | working | agent_run | changed:
        m = Markers(
            comments.get(cell_id, 0),
            levels.get(cell_id, "write"),
            cell_id in working,
            cell_id in agent_run,
            cell_id in changed,
        )
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
        c("cell-agent-changed"): m.agent_changed,
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
    if m.agent_changed:
        badges.append(
            h(
                "button",
                c("badge badge-agent-changed"),
                text="changed by agent",
                type="button",
                title="The agent changed this cell since you last looked at it. Click to see the change and revert it.",
                data_action="show-edits",
                data_path=path,
                data_cell=cell_id,
            )
        )
    return h("div", c("markers"), *badges, data_path=path, data_cell=cell_id)
