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
