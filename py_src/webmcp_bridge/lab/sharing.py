"""The person's "Share selected output text with the agent" command (output context menu).

It records the text selected inside one output of the current notebook in the guard's
:class:`~webmcp_bridge.sharing.selections.SharedSelections`, where ``jupyter_get_output_selection`` reads it. Disabled
when nothing inside an output is selected. Works without WebMCP too (the share waits for an agent).
"""

from __future__ import annotations

from typing import Any

from webmcp_bridge.lab.ffi import Proxies, is_nullish, js_object
from webmcp_bridge.lab.notebook import LabNotebook

COMMAND = "webmcp-bridge:share-output-selection"
SELECTOR = ".jp-OutputArea-child"


class ShareCommand:
    """The command and its context-menu item; :meth:`dispose` removes them and frees the proxies.

    Args:
        ctx: the loader's context (``app``); host: the raw JupyterLabHost; shared: the SharedSelections.
    """

    def __init__(self, ctx: Any, host: Any, shared: Any) -> None:
        self.app = ctx.app
        self.host = host
        self.shared = shared
        self._proxies = Proxies()
        self._disposables: list[Any] = []

    def _selection(self) -> tuple[LabNotebook, dict[str, Any]] | None:
        nb = self.host.current_notebook()
        if nb is None:
            return None
        selection = nb.output_selection()
        return (nb, selection) if selection and selection.get("text") else None

    def _enabled(self, *_: Any) -> bool:
        return self._selection() is not None

    def _execute(self, *_: Any) -> None:
        found = self._selection()
        if found is not None:
            nb, selection = found
            self.shared.share(nb.path, str(selection["cellId"]), int(selection["outputIndex"]), str(selection["text"]))

    def install(self) -> ShareCommand:
        """Add the command (if no other start added it) and its context-menu item."""
        commands = self.app.commands
        if not commands.hasCommand(COMMAND):
            self._disposables.append(
                commands.addCommand(
                    COMMAND,
                    js_object(
                        {
                            "label": "Share selected output text with the agent",
                            "execute": self._proxies.keep(self._execute),
                            "isEnabled": self._proxies.keep(self._enabled),
                        }
                    ),
                )
            )
            self._disposables.append(
                self.app.contextMenu.addItem(js_object({"command": COMMAND, "selector": SELECTOR, "rank": 40}))
            )
        return self

    def dispose(self) -> None:
        for disposable in reversed(self._disposables):
            if not is_nullish(disposable):
                disposable.dispose()
        self._disposables.clear()
        self._proxies.clear()
