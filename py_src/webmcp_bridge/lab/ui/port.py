"""A click in the Agent panel or on a cell marker as ``dom.js`` reports it, and the Comments section's filters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: what the Comments section lists: threads by status, or every thread of the active cell
ThreadFilter = Literal["open", "resolved", "all", "cell"]
THREAD_FILTERS: tuple[ThreadFilter, ...] = ("open", "resolved", "all", "cell")


@dataclass(frozen=True)
class Click:
    """A click on an element with a ``data-action`` (a fact ``{kind: "click", ...}`` of
    :meth:`webmcp_bridge.lab.ui.dom.Dom.create_panel`).

    Attributes:
        action: the element's ``data-action``.
        data: its ``data-*`` attributes without the prefix (``{"path": …, "cell": …}``).
        text: the value of the reply box around it (the first ``textarea`` of its thread or new-comment box), or
            None when there is none.
        reply: that box's ``data-reply`` (the key the panel's ``clear_draft`` empties it by), or None.
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
        text, reply, choice = (None if fact.get(k) is None else str(fact[k]) for k in ("text", "reply", "choice"))
        data = {str(k): str(v) for k, v in (fact.get("data") or {}).items()}
        return cls(str(fact.get("action", "")), data, text, reply, choice)

    def attr(self, name: str) -> str:
        """The ``data-<name>`` attribute ("" when the element has none)."""
        return self.data.get(name, "")
