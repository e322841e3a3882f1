"""What the Agent panel and the cell markers show, as plain element trees (pure Python, tested under CPython).

An :class:`El` cannot carry HTML: ``dom.js`` makes it with ``createElement`` and ``textContent`` only, tags and
attribute names come from the allow-lists below (no ``on*`` handler, no ``style``, ``href`` or ``src``), and text
from a notebook or an agent only ever lands in ``El.text`` or an attribute value. Interaction is declared, not
wired: an element's ``data-action`` (with ``data-path``, ``data-cell`` ...) is handled by the panel's one listener.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webmcp_bridge.core.limits import ACCESS_ROWS
from webmcp_bridge.lab.ui.i18n import Msg, Text, _, _n, to_json

#: tags a view may use: text and structure, and form controls
TAGS = frozenset(
    ("div", "span", "p", "ul", "li", "details", "summary", "h2", "h3", "small", "code", "time", "strong")
    + ("button", "select", "option", "textarea", "label", "input")
)
#: attributes a view may set besides ``data-*`` and ``aria-*`` (values are always plain strings)
ATTRIBUTES = frozenset(
    ("title", "role", "tabindex", "hidden", "open", "datetime", "rows")
    + ("type", "value", "placeholder", "selected", "disabled", "name", "maxlength")
)

CLS = "webmcp-bridge"


def _attribute_allowed(name: str) -> bool:
    return name in ATTRIBUTES or (name.startswith(("data-", "aria-")) and name.replace("-", "").isalnum())


#: the icons a view may show (``icon``): a name -> the LabIcon ``dom.js`` draws, either one of JupyterLab's own
#: (``@jupyterlab/ui-components``' export) or one of the bridge's (an SVG of this package, ``icons/<file>``)
ICONS: dict[str, dict[str, str]] = {
    "lock": {"labicon": "lockIcon"},
    "comment": {"svg": "comment.svg"},
    "run": {"labicon": "runIcon"},
    "edit": {"labicon": "editIcon"},
    "read": {"labicon": "searchIcon"},
    "wait": {"labicon": "historyIcon"},
    "error": {"labicon": "closeIcon"},
    "done": {"labicon": "checkIcon"},
    "agent": {"svg": "agent.svg"},
}


@dataclass
class El:
    """One element: ``tag``, space-separated ``cls``, ``text`` (set as ``textContent``, before any children),
    ``attrs`` and ``children``; texts are strings or messages. Raises ValueError for a tag or attribute outside the
    allow-lists or an icon not in :data:`ICONS`, so no view can make an event handler or a URL-bearing attribute.
    ``data-icon`` draws that icon as the element's first child."""

    tag: str
    cls: str = ""
    text: Text | None = None
    attrs: dict[str, Text] = field(default_factory=dict)
    children: list[El] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.tag not in TAGS:
            raise ValueError(f"tag {self.tag!r} is not allowed in the panel")
        for name, value in self.attrs.items():
            if not _attribute_allowed(name):
                raise ValueError(f"attribute {name!r} is not allowed in the panel")
            if not isinstance(value, (str, Msg)):
                raise ValueError(f"attribute {name!r} must be a string")
        icon = self.attrs.get("data-icon")
        if icon is not None and icon not in ICONS:
            raise ValueError(f"icon {icon!r} is not one of the panel's")

    def to_json(self) -> list[Any]:
        """``[tag, cls, text, attrs, children]``, the form ``dom.js`` builds from."""
        text = None if self.text is None else to_json(self.text)
        attrs = {name: to_json(value) for name, value in self.attrs.items()}
        return [self.tag, self.cls, text, attrs, [child.to_json() for child in self.children]]

    def walk(self) -> Iterable[El]:
        """This element and all its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def text_content(self) -> str:
        """All text of the tree, as the browser's ``textContent`` would give it (in English)."""
        return "".join(str(e.text or "") for e in self.walk())


def h(tag: str, cls: str = "", *children: El | None, text: Text | None = None, **attrs: Text) -> El:
    """Shorthand for :class:`El`: ``data_cell="x"`` becomes ``data-cell="x"``; None children are dropped."""
    return El(
        tag, cls, text, {k.replace("_", "-"): v for k, v in attrs.items()}, [c for c in children if c is not None]
    )


def button_el(cls: str, *children: El | None, text: Text | None = None, **attrs: Text) -> El:
    """A button of the panel (classes ``cls``, :func:`c`); ``type="button"``, so a click never submits anything."""
    return h("button", c(cls), *children, text=text, type="button", **attrs)


def icon(name: str) -> El:
    """A decorative icon (:data:`ICONS`), ``aria-hidden``: what it stands for is said in text beside it."""
    return h("span", c("icon"), data_icon=name, aria_hidden="true")


def c(name: str) -> str:
    """The panel's class ``webmcp-bridge-<name>`` (several names: space-separated)."""
    return " ".join(f"{CLS}-{n}" for n in name.split())


def clock(seconds: float) -> str:
    """HH:MM:SS of an epoch time, in the page's local time."""
    return time.strftime("%H:%M:%S", time.localtime(seconds))


@dataclass(frozen=True)
class CellInfo:
    """What a row says about a cell: its 0-based index, type, first line and number of outputs."""

    index: int
    cell_type: str
    line: Text
    outputs: int = 0


def cell_label(cell_id: str, cells: dict[str, CellInfo] | None) -> Msg:
    """``cell 4`` (1-based, as the person counts) when the cell is known, else a short id."""
    info = (cells or {}).get(cell_id)
    return _("cell %1", str(info.index + 1)) if info else _("cell %1", cell_id[:8])


def comment_title(what: Text, label: Text, anything_hidden: bool) -> Msg:
    """The comment dialog's title: "Comment on cell 4", "Comment on output 2 of cell 4" (``what``: "cell", "the
    selection", "output N"). The agent reads open dialogs' titles (``jupyter_get_context``), so while anything is
    hidden from it the cell is "this cell": a real index would tell where hidden cells are."""
    label = _("this cell") if anything_hidden else label
    return _("Comment on %1", label) if what == "cell" else _("Comment on %1 of %2", what, label)


def cell_link(path: str, cell_id: str, cells: dict[str, CellInfo] | None, label: Text | None = None) -> El:
    """A button that reveals the cell (``data-action="reveal-cell"``)."""
    info = (cells or {}).get(cell_id)
    title = _("%1 cell %2: %3", info.cell_type, str(info.index + 1), info.line) if info else _("cell id %1", cell_id)
    return button_el(
        "link",
        text=label or cell_label(cell_id, cells),
        title=title,
        data_action="reveal-cell",
        data_path=path,
        data_cell=cell_id,
    )


# -- Access --------------------------------------------------------------------------------------------------
LEVEL_TEXT = {
    "write": _("write: the agent may read and change"),
    "read": _("read: the agent may read, not change"),
    "none": _("none: hidden from the agent"),
}
#: a level's one word (its badge on a cell, its button in Access)
LEVEL_WORD = {"write": _("write"), "read": _("read"), "none": _("none")}


MODE_TEXT = {"direct": _("Direct: changes apply at once"), "propose": _("Propose: ask me first")}


#: what Propose mode does not hold, said under the switch (docs/TOOLS.md, "Propose mode"): the agent's review
#: comments are it talking, not changing the notebook; a save writes what the notebook already holds
MODE_NOTE = _("Propose holds cell, file and notebook changes and runs; comments and saves go through.")


def mode_note() -> El:
    """The line under the Direct/Propose switch (:data:`MODE_NOTE`)."""
    return h("p", c("mode-note"), text=MODE_NOTE)


def choice_select(
    action: str, label: Text, choices: Iterable[tuple[str, Text]], chosen: str, cls: str = "select"
) -> El:
    """A select of ``choices`` (value, text) with ``chosen`` selected, ``data-action``, accessible name ``label``."""
    return h(
        "select",
        c(cls),
        *[
            h("option", "", text=text, value=value, **({"selected": ""} if value == chosen else {}))
            for value, text in choices
        ],
        data_action=action,
        aria_label=label,
    )


def mode_select(mode: str) -> El:
    """The person's Direct/Propose switch (``data-action="mode"``), showing ``mode``."""
    return choice_select("mode", _("Agent mode"), MODE_TEXT.items(), mode, "select mode-select")


def level_select(action: str, level: str, label: Text) -> El:
    """A select of the three levels (``data-action`` = action)."""
    return choice_select(action, label, [(lv, LEVEL_TEXT[lv]) for lv in ("write", "read", "none")], level)


#: said in the Access section when a cell is hidden (docs/TOOLS.md, "Hidden cells and the kernel"): the short
#: line, and the details behind "Why?"
KERNEL_NOTE = _("While anything is hidden, every run the agent starts waits for your Accept, in Direct mode too.")
KERNEL_DETAILS = _(
    "Code the agent runs in the kernel can read every file of the workspace (hidden notebooks included) and "
    "everything in the kernel's memory (the variables and functions hidden cells defined). So every run it starts "
    "is shown to you with its code first. Hidden cells' sources are also cleared from the kernel's history, as a "
    "second line of defence only."
)
#: the Access section's switch of the run rule (access/run_consent.py; for this open notebook's own hidden cells,
#: while it stays open): "ask" (the default) or "stop"
RUN_ASKING_TEXT = {"ask": _("Ask me before each run"), "stop": _("Stop asking for this notebook's hidden cells")}
#: the kernel model's lines (docs/SECURITY.md, "The kernel")
AGENT_KERNEL_NOTE = _(
    "The agent ran code in this notebook's kernel: its outputs show without script until the kernel restarts, "
    "whoever runs the cell."
)


@dataclass(frozen=True)
class KernelFacts:
    """What Access says of the kernels: "Stop asking" for the notebook in front, whether its kernel is the agent's,
    how many kernels are the agent's, whether anything open hides anything."""

    asking_off: bool = False
    agent_kernel: bool = False
    agent_kernels: int = 0
    hides: bool = False


def field_row(label: Text, control: El) -> El:
    """A labelled control on its own line, the control full width (a long option never widens the sidebar)."""
    return h("label", c("row field"), h("span", c("field-label"), text=label), control)


def access_view(
    path: str,
    notebook_level: str,
    restricted: Sequence[tuple[str, str]],
    cells: dict[str, CellInfo] | None,
    kernel: KernelFacts | None = None,
) -> El:
    """The Access section's body: the notebook's level, "apply to all cells", the ``restricted`` cells (``(cell id,
    level)`` in notebook order), what kernel code reaches, the run rule's switch and the kernel model's state: a
    line when the notebook's kernel is the agent's, a warning and Restart while something is hidden and kernels the
    agent ran code in are alive."""
    rows = []
    for cell_id, level in list(restricted)[:ACCESS_ROWS]:
        info = (cells or {}).get(cell_id)
        rows.append(
            h(
                "li",
                c(f"access-row level-{level}"),
                cell_link(path, cell_id, cells),
                h("span", c("line"), text=info.line if info else ""),
                button_el(
                    f"button level level-{level}",
                    icon("lock"),
                    h("span", "", text=LEVEL_WORD.get(level, level)),
                    title=_("Agent access: %1. Click to cycle: write, read, none.", LEVEL_WORD.get(level, level)),
                    data_action="cycle-cell",
                    data_path=path,
                    data_cell=cell_id,
                ),
            )
        )
    if (more := len(restricted) - ACCESS_ROWS) > 0:
        said = _n("%1 more restricted cell not listed", "%1 more restricted cells not listed", more)
        rows.append(h("li", c("omitted"), text=said))
    listing = (
        h("ul", c("access-list"), *rows)
        if rows
        else h("p", c("empty"), text=_("Every cell is at the notebook's level."))
    )
    facts = kernel or KernelFacts()
    kernel_rows: list[El] = []
    if facts.agent_kernel:
        kernel_rows.append(h("p", c("kernel-agent"), text=AGENT_KERNEL_NOTE, data_role="agent-kernel"))
    if facts.hides and facts.agent_kernels:
        warning = _n(
            "Something is hidden, and code the agent ran is still in %1 kernel: it could read what you hide when you "
            "run it or save it. Restart it.",
            "Something is hidden, and code the agent ran is still in %1 kernels: they could read what you hide when "
            "you run it or save it. Restart them.",
            facts.agent_kernels,
        )
        kernel_rows.append(h("p", c("kernel-warning"), text=warning, role="alert", data_role="agent-kernels"))
    if facts.agent_kernels:
        restart = button_el("button", text=_("Restart the agent's kernels"), data_action="restart-agent-kernels")
        kernel_rows.append(h("div", c("row"), restart))
    return h(
        "div",
        c("access-body"),
        field_row(_("Notebook"), level_select("notebook-level", notebook_level, _("Notebook access"))),
        h(
            "div",
            c("row apply-row"),
            level_select("all-level", "read", _("Level for all cells")),
            button_el("button", text=_("Apply to all cells"), data_action="apply-all"),
        ),
        h("h3", c("subhead"), text=_("Restricted cells (%1)", str(len(restricted)))),
        listing,
        h("details", c("kernel-note"), h("summary", "", text=KERNEL_NOTE), h("p", "", text=KERNEL_DETAILS)),
        field_row(
            _("Agent's runs"),
            choice_select(
                "run-asking",
                _("Agent's kernel runs while something is hidden"),
                RUN_ASKING_TEXT.items(),
                "stop" if facts.asking_off else "ask",
            ),
        ),
        *kernel_rows,
    )


# -- markers ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Markers:
    """The markers one cell carries: open comment threads, its access level, whether an agent is working on it now,
    whether its last run was the agent's, whether the agent changed it since the person last looked at it."""

    comments: int = 0
    access: str = "write"
    working: bool = False
    agent_run: bool = False
    agent_changed: bool = False

    def signature(self) -> str:
        """A short text equal for equal markers (stored on the cell node to skip unchanged cells)."""
        return f"{self.comments}|{self.access}|{int(self.working)}|{int(self.agent_run)}|{int(self.agent_changed)}"


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
    changed = set(agent_changed)
    out = {}
    for cell_id in set(comments) | set(levels) | working | agent_run | changed:
        flags = (cell_id in working, cell_id in agent_run, cell_id in changed)
        m = Markers(comments.get(cell_id, 0), levels.get(cell_id, "write"), *flags)
        if m != Markers():
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
    """The badge strip shown on a cell of the notebook at ``path`` (an empty strip when no marker applies): each
    badge an icon, with a level's word or a count where there is one (so it fits the cell's prompt area in
    JupyterLab and Notebook 7), its whole meaning in its ``aria-label`` and title. An agent at work shows as a ring
    around the cell (a class, see :func:`marker_classes`), not as a badge."""

    def badge(cls: str, name: str, said: Text, action: str, word: Text | None = None) -> El:
        shown = h("span", "", text=word) if word is not None else None
        return button_el(
            f"badge {cls}",
            icon(name),
            shown,
            title=said,
            aria_label=said,
            data_action=action,
            data_path=path,
            data_cell=cell_id,
        )

    badges = []
    if m.access != "write":
        said = {
            "read": _("Agent access: read (the agent may read this cell, not change it). Click to cycle."),
            "none": _("Agent access: none (hidden from the agent). Click to cycle."),
        }.get(m.access, _("Agent access: %1", m.access))
        badges.append(
            badge(f"badge-lock level-{m.access}", "lock", said, "cycle-cell", LEVEL_WORD.get(m.access, m.access))
        )
    if m.comments:
        said = _n("%1 open comment thread. Click to show.", "%1 open comment threads. Click to show.", m.comments)
        badges.append(badge("badge-comments", "comment", said, "show-cell-comments", str(m.comments)))
    if m.agent_run:
        said = _("The agent ran this cell last.")
        badges.append(h("span", c("badge badge-agent-run"), icon("run"), role="img", title=said, aria_label=said))
    if m.agent_changed:
        said = _("The agent changed this cell since you last looked at it. Click to see the change and revert it.")
        badges.append(badge("badge-agent-changed", "edit", said, "show-edits"))
    return h("div", c("markers"), *badges, data_path=path, data_cell=cell_id)
