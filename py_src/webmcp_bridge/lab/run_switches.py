"""The person's "Stop asking" switch of the run rule, per notebook, kept in the page's localStorage.

The run rule (:mod:`webmcp_bridge.access.run_consent`) shows every kernel run the agent starts to the person
while something is hidden from the agent. The Agent panel's Access section lets the person turn that off for
one notebook; the choice is stored here, under ``STORAGE_PREFIX + path`` (value ``"1"``), so it holds across
reloads of the same site in the same browser. Off (asking) by default; a storage that cannot be read counts
as off. Only the person's panel writes it; no tool does.
"""

from __future__ import annotations

from webmcp_bridge.lab.ffi import is_nullish

#: the localStorage key of a notebook's switch is this followed by the notebook's path
STORAGE_PREFIX = "webmcp-bridge:stop-asking-runs:"


def _storage():
    try:
        import js  # the page's globals (Pyodide); absent outside the browser

        storage = js.window.localStorage
    except Exception:
        return None
    return None if is_nullish(storage) else storage


def asking_off(path: str) -> bool:
    """True when the person turned asking off for the notebook at ``path`` (False when storage is unavailable)."""
    storage = _storage()
    if storage is None:
        return False
    try:
        value = storage.getItem(STORAGE_PREFIX + path)
    except Exception:
        return False
    return not is_nullish(value) and str(value) == "1"


def set_asking_off(path: str, off: bool) -> bool:
    """Store the person's choice for the notebook at ``path``; returns False when storage refused it (then the
    run rule keeps asking)."""
    storage = _storage()
    if storage is None:
        return False
    try:
        if off:
            storage.setItem(STORAGE_PREFIX + path, "1")
        else:
            storage.removeItem(STORAGE_PREFIX + path)
    except Exception:
        return False
    return True
