"""Output text the person chose to share with the agent (jupyter_get_output_selection), recorded bounded by the
JupyterLab side. The agent reads a notebook's latest share; one of a cell it may not see (or gone) reads as none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from webmcp_bridge.core.limits import MAX_SHARE_BYTES, truncate_utf8, utf8_len


@dataclass(frozen=True)
class SharedSelection:
    """One share: ``text`` at most MAX_SHARE_BYTES, ``bytes`` its full UTF-8 size, ``time`` in epoch seconds."""

    path: str
    cell_id: str
    output_index: int
    text: str
    bytes: int
    time: float

    @property
    def truncated(self) -> bool:
        """True when the person selected more than was kept."""
        return self.bytes > utf8_len(self.text)


class SharedSelections:
    """The latest share per notebook path."""

    def __init__(self) -> None:
        self._latest: dict[str, SharedSelection] = {}

    def share(self, path: str, cell_id: str, output_index: int, text: str) -> SharedSelection:
        """Record the person's share (replacing the notebook's previous one); returns it."""
        shared = SharedSelection(
            path, cell_id, int(output_index), truncate_utf8(text, MAX_SHARE_BYTES), utf8_len(text), time.time()
        )
        self._latest[path] = shared
        return shared

    def latest(self, path: str) -> SharedSelection | None:
        """The notebook's latest share, or None."""
        return self._latest.get(path)

    def clear(self, path: str) -> None:
        """Forget the notebook's share (the person withdrew it)."""
        self._latest.pop(path, None)
