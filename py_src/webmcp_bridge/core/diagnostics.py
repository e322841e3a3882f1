"""What went wrong with a site's own contributions, for the person (the status item) and the agent
(``jupyter_get_context``): a bounded list of ``{name, kind, severity, reason}``.

The kinds are a closed list (:data:`SEVERITY`). An ``error`` means the contribution contributed nothing; a
``warning`` never removes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from webmcp_bridge.core.limits import DIAGNOSTIC_NAME_BYTES, DIAGNOSTIC_REASON_BYTES, DIAGNOSTICS_KEPT, preview

Kind = Literal["config", "fetch", "import", "build", "extension", "hook"]
Severity = Literal["error", "warning"]
SEVERITY: dict[str, Severity] = {
    "config": "warning",  # an entry of the site's configuration was not usable (not a path, wrong suffix...)
    "fetch": "error",  # the file of a contribution could not be read from the site
    "import": "error",  # the module raised (or had a syntax error) while it was imported
    "build": "error",  # what the module contributes is not valid (a duplicate tool name...)
    "extension": "warning",  # an extension was not applied (its tool is not there, or it did not fit the tool)
    "hook": "warning",  # an observer raised; the call went on (reported once per observer)
}


@dataclass(frozen=True)
class Diagnostic:
    """One problem: ``name`` is what it is about (a path, a contribution, a tool, an observer), ``reason`` one short
    sentence (never a traceback, never the contribution's source)."""

    name: str
    kind: Kind
    reason: str

    @property
    def severity(self) -> Severity:
        return SEVERITY[self.kind]

    def to_json(self) -> dict[str, str]:
        """``{name, kind, severity, reason}``."""
        return {"name": self.name, "kind": self.kind, "severity": self.severity, "reason": self.reason}


def _clip(text: str, limit: int) -> str:
    return preview(" ".join(str(text).split()), limit)


class Diagnostics:
    """The session's list of diagnostics, ``entries`` (oldest first), bounded (:data:`DIAGNOSTICS_KEPT`: later ones
    are dropped); listeners hear of each new one."""

    def __init__(self) -> None:
        self.entries: list[Diagnostic] = []
        self._keys: set[object] = set()
        self._listeners: list[Callable[[], None]] = []

    def add(self, name: str, kind: Kind, reason: str) -> None:
        """Record one problem (name and reason clipped to one line); ValueError for an unknown ``kind``."""
        if kind not in SEVERITY:
            raise ValueError(f"unknown diagnostic kind {kind!r}")
        if len(self.entries) >= DIAGNOSTICS_KEPT:
            return
        self.entries.append(
            Diagnostic(_clip(name, DIAGNOSTIC_NAME_BYTES), kind, _clip(reason, DIAGNOSTIC_REASON_BYTES))
        )
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # a listener (the status item) never stops a report
                pass

    def once(self, key: object, name: str, kind: Kind, reason: str) -> bool:
        """:meth:`add` unless ``key`` was reported before (an observer raising on every call is reported once);
        returns True when it was added now."""
        if key in self._keys:
            return False
        self._keys.add(key)
        self.add(name, kind, reason)
        return True

    def to_json(self) -> list[dict[str, str]]:
        """Every entry as ``{name, kind, severity, reason}``, oldest first."""
        return [d.to_json() for d in self.entries]

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after each new entry; returns the function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None
