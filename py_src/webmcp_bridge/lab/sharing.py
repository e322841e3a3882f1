"""The person's "Share selected output text with the agent" command (output context menu): it records the text
selected inside one output of the current notebook in the guard's
:class:`~webmcp_bridge.sharing.selections.SharedSelections`, where ``jupyter_get_output_selection`` reads it.
``commands.js`` adds the command and answers ``isEnabled`` itself (JupyterLab asks it synchronously when the menu
opens); running it calls Python's listener, which does nothing when the selection is gone by then.
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.lab.ffi import Proxies, load_half

COMMAND = "webmcp-bridge:share-output-selection"
SELECTOR = ".jp-OutputArea-child"


class ShareCommand:
    """The command and its context-menu item (``ctx``: the loader's, handed once to ``commands.js``; ``host``: the
    raw JupyterLabHost; ``shared``: the SharedSelections)."""

    def __init__(self, ctx: Any, host: Any, shared: Any) -> None:
        self.half = load_half("webmcp_bridge.lab", "commands.js", ctx)
        self.host = host
        self.shared = shared
        self._proxies = Proxies()

    def _execute(self, *_: Any) -> None:
        nb = self.host.current_notebook()
        selection = None if nb is None else nb.output_selection()
        if nb is not None and selection and selection.get("text"):
            self.shared.share(nb.path, str(selection["cellId"]), int(selection["outputIndex"]), str(selection["text"]))

    def install(self) -> ShareCommand:
        """Add the command (if no other start added it) and its context-menu item."""
        options = {
            "label": "Share selected output text with the agent",
            "enabled": "output-selection",
            "menu": {"selector": SELECTOR, "rank": 40},
        }
        listener = self._proxies.keep(self._execute)
        if not self.half.add(COMMAND, json.dumps(options), listener):
            self._proxies.remove(listener)  # another start added it: its listener stays the one JS calls
        return self

    def dispose(self) -> None:
        """Remove the command and its menu item and free the listener's proxy."""
        self.half.dispose()
        self._proxies.clear()
