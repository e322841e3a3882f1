"""Other tabs of this site with the same notebook open, and saves that cannot lose another tab's work.

JupyterLite, and a JupyterLab server opened in two browser tabs, keeps one copy of a notebook per tab; nothing
syncs them. ``tabs.js`` (its JS half: Web Locks shared by every tab of the origin, a BroadcastChannel) counts
the other tabs and makes every save of the page check and write in one step for all tabs (see its opening
comment); this module loads it once per page, hands it the names it uses, and decides what its facts mean.
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.host.protocol import SaveKind, SaveOutcome, TabsState
from webmcp_bridge.lab.ffi import load_half

#: the prefix of every Web Lock the bridge takes (presence: "<prefix>open:<tab>:<path>", saves: "<prefix>save:<path>")
LOCK_PREFIX = "webmcp-bridge:"
#: the BroadcastChannel the pages of one site tell each other about opens, closes and saves on
CHANNEL = "webmcp-bridge:tabs"
#: after another tab says it opened, closed or saved a notebook, the other tabs are counted at once and again this
#: many seconds later, when the Web Locks of a tab that just opened or closed have settled (a lock request or release
#: is asynchronous, so the first count can miss it)
RECOUNT_AFTER_SECONDS = 0.25


def load_tabs_js(ctx: Any) -> Any:
    """Evaluate ``tabs.js`` attached to the loader's context ``ctx`` (:func:`~webmcp_bridge.lab.ffi.load_half`,
    which publishes its count of crossings; attaching starts watching every notebook panel of its tracker, whose
    saves go through the page's contents manager) and configure it. Returns the JS object (``state``, ``fresh``,
    ``save``, each taking a notebook's path)."""
    tabs = load_half("webmcp_bridge.lab", "tabs.js", ctx)
    tabs.configure(LOCK_PREFIX, CHANNEL, RECOUNT_AFTER_SECONDS * 1000)
    return tabs


def tabs_state(raw: str) -> TabsState:
    """What ``tabs.js``'s state JSON means: another tab saved the file since this tab loaded or last saved it
    when the last save another tab announced is not the version this tab holds (its hash when both have one,
    else its modification time)."""
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


def save_outcome(raw: str, revision: int) -> SaveOutcome:
    """What ``tabs.js``'s save JSON means. ``revision``: the notebook's revision when the save started (its
    content is what JupyterLab writes). A save that did not go through the lock ("unguarded": a browser without
    Web Locks, a collaborative server) is JupyterLab's own save: reported as saved, as JupyterLab reports it."""
    data = json.loads(raw)
    outcome: SaveKind = "saved" if data["outcome"] in ("saved", "unguarded") else data["outcome"]
    if outcome not in ("saved", "overwritten"):
        return SaveOutcome(outcome)
    modified = data.get("lastModified")
    return SaveOutcome(outcome, revision, None if modified is None else str(modified))
