"""Other tabs of this site with the same notebook open, and saves that cannot lose another tab's work: ``tabs.js``
(Web Locks of the origin, a BroadcastChannel) counts the other tabs and makes every save check and write in one step
for all tabs; this module configures it and reads its facts. The kernel's worker shares the origin's locks and
channels (docs/SECURITY.md), so a save waits for its lock at most
:data:`~webmcp_bridge.core.limits.SAVE_LOCK_WAIT_SECONDS`, and messages and presence locks count only when sealed
with the page secret (:mod:`webmcp_bridge.lab.page_secret`).
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    PLATFORM_ERROR_CHARS,
    SAVE_LOCK_WAIT_SECONDS,
    TAB_MESSAGE_CHARS,
    TAB_MESSAGE_SECONDS,
)
from webmcp_bridge.host.protocol import SaveKind, SaveOutcome, TabsState
from webmcp_bridge.lab.ffi import load_half
from webmcp_bridge.lab.page_secret import STORAGE_KEY, page_secret
from webmcp_bridge.lab.ui.i18n import DOMAIN

#: the prefix of every Web Lock the bridge takes (presence: "<prefix>open:<tab>:<path>", saves: "<prefix>save:<path>")
LOCK_PREFIX = "webmcp-bridge:"
#: the BroadcastChannel the pages of one site tell each other about opens, closes and saves on
CHANNEL = "webmcp-bridge:tabs"
#: after another tab says it opened, closed or saved a notebook, the tabs are counted at once and again this many
#: seconds later, when its Web Locks have settled (a lock request or release is asynchronous)
RECOUNT_AFTER_SECONDS = 0.25
#: what the person is told when a save went ahead without the lock ("%1": the path, "%2": the seconds it waited)
SAVE_WARNING = (
    "%1 was saved without the lock the site's tabs take around a save: something else in this browser held it for "
    "%2 s (code running in a kernel can). The file was checked for changes first, but a save from another tab at the "
    "same moment may have been overwritten. Restarting the kernel releases what its code holds."
)


def load_tabs_js(ctx: Any) -> Any:
    """``tabs.js`` attached to the loader's ``ctx`` (it watches every notebook panel's saves) and configured, the page
    secret made first."""
    page_secret()  # tabs.js reads it, never makes it
    tabs = load_half("webmcp_bridge.lab", "tabs.js", ctx)
    options = {
        "prefix": LOCK_PREFIX,
        "channel": CHANNEL,
        "secretKey": STORAGE_KEY,
        "recountMs": RECOUNT_AFTER_SECONDS * 1000,
        "saveWaitMs": SAVE_LOCK_WAIT_SECONDS * 1000,
        "messageMs": TAB_MESSAGE_SECONDS * 1000,
        "messageChars": TAB_MESSAGE_CHARS,
        "warning": SAVE_WARNING,
        "domain": DOMAIN,
    }
    tabs.configure(json.dumps(options))
    return tabs


def tabs_state(raw: str) -> TabsState:
    """What ``tabs.js``'s state JSON means: another tab saved the file when the last save another tab announced is
    not the version this tab holds (by hash when both have one, else by modification time)."""
    data = json.loads(raw)
    announced, mine = data.get("announced"), data.get("mine") or {}
    elsewhere = False
    if announced:
        if announced.get("hash") is not None and mine.get("hash") is not None:
            elsewhere = announced["hash"] != mine["hash"]
        else:
            elsewhere = announced.get("lastModified") != mine.get("lastModified")
    others = data.get("others")
    return TabsState(None if others is None else int(others), elsewhere)


def save_outcome(raw: str, revision: int, path: str) -> SaveOutcome:
    """What ``tabs.js``'s save JSON means; ``revision``: the notebook's when the save started. "unguarded" (no Web
    Locks, a collaborative server) is JupyterLab's own save, reported as saved. JupyterLab's "File Changed" dialog
    (docregistry rejects with an Error named ModalCancelError, or ModalDuplicateError when it is already open) is
    "cancelled" / "dialog-open"; any other failure raises INTERNAL_ERROR."""
    data = json.loads(raw)
    failed = data.get("failed")
    if failed is not None:
        name, message = str(failed.get("name") or ""), str(failed.get("message") or "")
        if name == "ModalCancelError" or message.strip().endswith("ModalCancelError: Cancel"):
            return SaveOutcome("cancelled")
        if name == "ModalDuplicateError" or "ModalDuplicateError" in message:
            return SaveOutcome("dialog-open")
        raise ToolError(ErrorCode.INTERNAL_ERROR, f"Saving failed: {message[:PLATFORM_ERROR_CHARS]}", path=path)
    outcome: SaveKind = "saved" if data["outcome"] in ("saved", "unguarded") else data["outcome"]
    unlocked = data.get("unlocked") is True
    if outcome not in ("saved", "overwritten"):
        return SaveOutcome(outcome, unlocked=unlocked)
    modified = data.get("lastModified")
    return SaveOutcome(outcome, revision, None if modified is None else str(modified), unlocked)
