"""The person's "Stop asking" switch of the run rule, per notebook, kept in the page's localStorage.

The run rule (:mod:`webmcp_bridge.access.run_consent`) shows every kernel run the agent starts to the person
while something is hidden from the agent. The Agent panel's Access section lets the person turn that off for
one notebook; the choice is stored here, under ``STORAGE_PREFIX + path`` (value ``"1"``), so it holds across
reloads of the same site in the same browser. Off (asking) by default; a storage that cannot be read counts
as off. Only the person's panel writes it; no tool does.

The storage is the page's: ``run_switches.js`` (evaluated once per page, on first use, by
:func:`~webmcp_bridge.lab.ffi.load_half`) reads and writes its strings; this module holds no JS object and decides
what a value means. Outside the browser (no Pyodide) there is no storage: asking stays on.
"""

from __future__ import annotations

from typing import Any

from webmcp_bridge.lab.ffi import is_nullish, load_half

#: the localStorage key of a notebook's switch is this followed by the notebook's path
STORAGE_PREFIX = "webmcp-bridge:stop-asking-runs:"


_half: list[Any] = []  # the page's run_switches.js once loaded (a failed load is not kept: the next use tries again)


def page_storage() -> Any:
    """``run_switches.js`` (one per page: ``get(key)`` / ``set(key, value)`` of the page's localStorage strings), or
    None where it cannot be loaded (outside the browser); a failure is tried again at the next use, so one failed
    load does not switch the person's "Stop asking" off for good. :mod:`webmcp_bridge.lab.page_secret` keeps the
    page secret through it too."""
    if not _half:
        try:
            _half.append(load_half("webmcp_bridge.lab", "run_switches.js"))
        except Exception:  # CPython: no page (pyodide cannot be imported)
            return None
    return _half[0]


def asking_off(path: str) -> bool:
    """True when the person turned asking off for the notebook at ``path`` (False when storage is unavailable)."""
    storage = page_storage()
    if storage is None:
        return False
    value = storage.get(STORAGE_PREFIX + path)
    return not is_nullish(value) and str(value) == "1"


def set_asking_off(path: str, off: bool) -> bool:
    """Store the person's choice for the notebook at ``path``; returns False when storage refused it (then the
    run rule keeps asking)."""
    storage = page_storage()
    if storage is None:
        return False
    return bool(storage.set(STORAGE_PREFIX + path, "1" if off else None))
