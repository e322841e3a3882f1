"""The page's JupyterLab dialogs as a :class:`webmcp_bridge.host.protocol.DialogSource`, through ``dialogs.js``
(``Dialog.tracker``: every dialog, shown or queued); every rule is in :mod:`webmcp_bridge.calls.dialogs`. One crossing
per snapshot, and none while no dialog can be open: ``dialogs.js`` tells Python the moment a dialog is made, so after
a snapshot found none the next ones answer "none" from here until one opens.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from webmcp_bridge.core.limits import PERSON_INPUT_WINDOW_SECONDS
from webmcp_bridge.host.protocol import RawButton, RawDialog, RawInput
from webmcp_bridge.lab.ffi import Proxies, load_half


def by_person(input_ago_ms: Any) -> bool:
    """Whether a dialog is the person's: it opened within PERSON_INPUT_WINDOW_SECONDS of their own key or pointer
    press (``input_ago_ms``: ms from that press to the opening, None before any). An agent's opens with none."""
    return input_ago_ms is not None and float(input_ago_ms) < PERSON_INPUT_WINDOW_SECONDS * 1000


def _raw(data: dict[str, Any]) -> RawDialog:
    field = data.get("input")
    box = data.get("checkbox")
    return RawDialog(
        id=str(data["id"]),
        title=str(data["title"]),
        body=str(data["body"]),
        body_cut=bool(data["bodyCut"]),
        buttons=tuple(
            RawButton(str(b["label"]), bool(b["accept"]), bool(b["warn"]), bool(b["disabled"])) for b in data["buttons"]
        ),
        shown=bool(data["shown"]),
        by_person=by_person(data.get("inputAgoMs")),
        input=None if field is None else RawInput(str(field["type"]), field.get("value"), field.get("checked")),
        checkbox=None if box is None else (str(box["label"]), bool(box["checked"])),
    )


class LabDialogs:
    """JupyterLab's dialogs (``Dialog`` of ``@jupyterlab/apputils``, read by ``dialogs.js`` from the loader's
    ``ctx``; without it no dialog is ever reported)."""

    def __init__(self, ctx: Any) -> None:
        self.live = load_half("webmcp_bridge.lab", "dialogs.js", ctx)
        self.available = bool(self.live.available())  # False: no Dialog in the share scope
        self._proxies = Proxies()  # the watch callbacks, while watching
        self._watching = False
        self._maybe_open = True  # False only while watching, after a snapshot found no dialog and none was made since

    def _opened(self) -> None:
        """``dialogs.js``: a dialog was just made (inside JupyterLab's constructor)."""
        self._maybe_open = True

    def snapshot(self, max_chars: int) -> list[RawDialog]:
        """The open dialogs, oldest first; no crossing while none can be open."""
        if not self.available or not self._maybe_open:
            return []
        found = [_raw(d) for d in json.loads(str(self.live.snapshot(int(max_chars))))]
        if not found and self._watching:
            self._maybe_open = False
        return found

    def click(self, dialog_id: str, index: int) -> str:
        """Click a button with a real click event, so JupyterLab resolves the dialog itself."""
        return str(self.live.click(dialog_id, int(index)))

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when a dialog opens, is shown or closes (after a tick, once per burst)."""
        self.close()
        if not self.available:
            return
        self.live.watch(self._proxies.keep(callback), self._proxies.keep(self._opened))
        self._watching = True

    def close(self) -> None:
        """Stop watching and free the callbacks' proxies."""
        self.live.unwatch()
        self._proxies.clear()
        self._watching = False
        self._maybe_open = True
