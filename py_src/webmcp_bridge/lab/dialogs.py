"""The page's JupyterLab dialogs as a :class:`webmcp_bridge.host.protocol.DialogSource`, through ``dialogs.js``.

``dialogs.js`` reads JupyterLab's ``Dialog.tracker`` (every dialog, shown or queued) and clicks buttons; every
rule (ownership, refusals, bounds) is in :mod:`webmcp_bridge.calls.dialogs`. One crossing per snapshot (JSON text
back). The watch callback is the one Python proxy kept by JS here (owned by a :class:`~webmcp_bridge.lab.ffi.Proxies`):
made in :meth:`LabDialogs.watch`, destroyed in :meth:`LabDialogs.close`.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Callable

from pyodide.code import run_js

from webmcp_bridge.core.limits import PERSON_INPUT_WINDOW_SECONDS
from webmcp_bridge.host.protocol import RawButton, RawDialog, RawInput
from webmcp_bridge.lab.ffi import Proxies, is_nullish


def by_person(input_ago_ms: Any) -> bool:
    """Whether a dialog is the person's: it opened within PERSON_INPUT_WINDOW_SECONDS of their own key or pointer
    press (``input_ago_ms``: ms from that press to the dialog's opening, as ``dialogs.js`` measured it; None when
    the person has pressed nothing yet). A dialog an agent's action opens comes with no fresh input."""
    return input_ago_ms is not None and float(input_ago_ms) < PERSON_INPUT_WINDOW_SECONDS * 1000


def _raw(data: dict[str, Any]) -> RawDialog:
    field = data.get("input")
    box = data.get("checkbox")
    return RawDialog(
        id=str(data["id"]), title=str(data["title"]), body=str(data["body"]), body_cut=bool(data["bodyCut"]),
        buttons=tuple(RawButton(str(b["label"]), bool(b["accept"]), bool(b["warn"]), bool(b["disabled"])) for b in data["buttons"]),
        shown=bool(data["shown"]), by_person=by_person(data.get("inputAgoMs")),
        input=None if field is None else RawInput(str(field["type"]), field.get("value"), field.get("checked")),
        checkbox=None if box is None else (str(box["label"]), bool(box["checked"])),
    )


class LabDialogs:
    """JupyterLab's dialogs (``Dialog`` of ``@jupyterlab/apputils``, or None when the loader could not get it:
    then no dialog is ever reported)."""

    def __init__(self, dialog_class: Any) -> None:
        self.dialog_class = None if is_nullish(dialog_class) else dialog_class
        source = resources.files("webmcp_bridge.lab").joinpath("dialogs.js").read_text(encoding="utf-8")
        self.live = run_js(source)
        self._proxies = Proxies()  # the watch callback, while watching

    def snapshot(self, max_chars: int) -> list[RawDialog]:
        """The open dialogs, oldest first (see :meth:`webmcp_bridge.host.protocol.DialogSource.snapshot`)."""
        if self.dialog_class is None:
            return []
        return [_raw(d) for d in json.loads(str(self.live.snapshot(int(max_chars))))]

    def click(self, dialog_id: str, index: int) -> str:
        """Click a button with a real click event on its element, so JupyterLab resolves the dialog itself."""
        return str(self.live.click(dialog_id, int(index)))

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when a dialog opens, is shown or closes (after a tick, once per burst)."""
        self.close()
        if self.dialog_class is None:
            return
        self.live.watch(self.dialog_class, self._proxies.keep(callback))

    def close(self) -> None:
        """Stop watching and free the callback's proxy."""
        self.live.unwatch()
        self._proxies.clear()


def lab_dialogs(ctx: Any) -> LabDialogs:
    """The dialog source over the loader's ``ctx.modules.apputils`` (optional in the loader)."""
    apputils = getattr(ctx.modules, "apputils", None)
    return LabDialogs(None if is_nullish(apputils) else getattr(apputils, "Dialog", None))
