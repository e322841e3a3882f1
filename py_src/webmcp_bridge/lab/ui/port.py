"""What the Agent panel's helpers may ask of it: the small interface :mod:`.actions` (its buttons) and
:mod:`.cell_menu` (the cell context menu) are written against, so neither imports the panel nor reaches into it.

:class:`~webmcp_bridge.lab.ui.panel.AgentPanel` implements it. Everything goes through the person's APIs on the
*raw* notebooks (never the access guard the tools hold).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from webmcp_bridge.access.levels import Level
from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.lab.ui.i18n import Text
from webmcp_bridge.lab.ui.view import CellInfo
from webmcp_bridge.review.threads import Review

if TYPE_CHECKING:  # the browser's notebook: known by its type only, so this module imports under CPython too
    from webmcp_bridge.lab.notebook import LabNotebook

#: what the Comments section lists: threads by status, or every thread of the active cell
ThreadFilter = Literal["open", "resolved", "all", "cell"]
THREAD_FILTERS: tuple[ThreadFilter, ...] = ("open", "resolved", "all", "cell")


@dataclass(frozen=True)
class Click:
    """A click on an element with a ``data-action`` in the Agent panel or on a cell marker, as ``dom.js`` reports it
    (a fact of ``{kind: "click", ...}``, :meth:`webmcp_bridge.lab.ui.dom.Dom.create_panel`).

    Attributes:
        action: the element's ``data-action``.
        data: its ``data-*`` attributes without the prefix (``{"path": …, "cell": …}``).
        text: the value of the reply box around it (the first ``textarea`` of its thread or new-comment box), or
            None when there is none.
        reply: that box's ``data-reply`` (the key :meth:`PanelPort.clear_draft` empties it by), or None.
        choice: the value of the first ``select`` of the row around it, or None.
    """

    action: str
    data: Mapping[str, str] = field(default_factory=dict)
    text: str | None = None
    reply: str | None = None
    choice: str | None = None

    @classmethod
    def from_fact(cls, fact: Mapping[str, Any]) -> Click:
        """The click of a fact (parsed JSON); values are taken as strings, a missing one as None."""

        def text_or_none(value: Any) -> str | None:
            return None if value is None else str(value)

        data = fact.get("data") or {}
        return cls(
            str(fact.get("action", "")),
            {str(k): str(v) for k, v in data.items()},
            text_or_none(fact.get("text")),
            text_or_none(fact.get("reply")),
            text_or_none(fact.get("choice")),
        )

    def attr(self, name: str) -> str:
        """The ``data-<name>`` attribute ("" when the element has none)."""
        return self.data.get(name, "")


class PanelPort(Protocol):
    """The panel as its helpers see it (no page object: the panel's half draws and listens)."""

    @property
    def thread_filter(self) -> ThreadFilter:
        """The Comments section's filter now (:meth:`set_filter` changes it)."""

    def current(self) -> LabNotebook | None:
        """The notebook the person is looking at (raw), or None."""

    def notebook_at(self, path: str | None) -> LabNotebook | None:
        """The open notebook at ``path`` (the current one when None), or None."""

    def cells(self, nb: LabNotebook) -> dict[str, CellInfo]:
        """``{cell id: CellInfo}`` of ``nb``: index, type, first line, output count."""

    def review(self, nb: LabNotebook) -> Review:
        """The review threads of ``nb`` for the person's actions (the person's messages signed with the page secret,
        :mod:`webmcp_bridge.review.signatures`)."""

    def say(self, message: Text | None) -> None:
        """Show ``message`` in the panel's notice line (None clears it)."""

    def note(self, what: Text, path: str, cell_id: str | None = None) -> None:
        """Add the person's own action ("commented on", "set agent access to read on") to Activity."""

    def refresh(self) -> None:
        """The person just changed something: look at the notebook again (comments, access, markers)."""

    def set_filter(self, thread_filter: ThreadFilter) -> None:
        """Show ``thread_filter``'s threads in the Comments section."""

    def show(self) -> None:
        """Open the panel in the sidebar."""

    def activate(self, nb: LabNotebook) -> None:
        """Bring ``nb``'s panel to the front of the main area. Raises ToolError (NOTEBOOK_NOT_FOUND) when it was
        closed."""

    def clear_draft(self, key: str) -> None:
        """Empty the Comments section's reply box ``key`` (a thread id, "" for the new-comment box)."""

    def reveal(self, path: str | None, cell_id: str, selection: dict | None = None) -> None:
        """Bring the notebook to the front and make the cell active (selecting ``selection``). Raises ToolError
        (NOTEBOOK_NOT_FOUND) when the notebook is no longer open."""

    @property
    def journal(self) -> EditJournal:
        """The agent's source edits, for review and revert (:mod:`webmcp_bridge.changes.undo`)."""

    def show_edits(self, path: str, cell_id: str, span: tuple[float, float] | None = None) -> None:
        """Show the review box of the agent's edits of one cell (of one Activity row when ``span`` is given)."""

    def close_edits(self) -> None:
        """Hide the review box."""

    def redraw_edits(self) -> None:
        """Draw the review box again, if it is open."""

    def translate(self, texts: Sequence[Text]) -> list[str]:
        """``texts`` as the page's translator gives them, for what JupyterLab takes as plain strings."""
        ...

    async def apply_to_all(self, nb: LabNotebook, level: Level) -> None:
        """Set every cell of ``nb`` to ``level``, a few cells per stretch."""

    def set_level(self, level: Level, apply: Callable[[], None]) -> None:
        """Run ``apply``, the person's change of a level to ``level``; hiding first restarts the kernels the agent
        ran code in, with the person's confirmation (nothing is applied without it)."""

    async def restart_agent_kernels(self, hiding: bool) -> bool:
        """Ask the person, then restart the kernels the agent ran code in; True when all restarted."""
