"""This browser's secret for the site: 32 random bytes in the page's localStorage, made the first time a page of the
site needs them, the same for every tab of the site from then on. Code the agent ran in JupyterLite's kernel runs in
a Web Worker of the page's origin, which shares its locks, channels and IndexedDB but has no localStorage, so it
cannot read the secret (docs/SECURITY.md). It keys the person's review messages
(:mod:`webmcp_bridge.review.signatures`) and the tabs' messages and presence locks (``tabs.js`` reads
:data:`STORAGE_KEY` but never makes it). Without it (outside the browser, a storage that refuses) nothing the person
writes can be told from a file's claim, and tabs exchange no messages.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from webmcp_bridge.lab.ffi import is_nullish, load_half

#: the localStorage key of the secret (its value: 64 lowercase hex digits)
STORAGE_KEY = "webmcp-bridge:page-secret"
#: the secret's length in bytes
SECRET_BYTES = 32
_HEX = re.compile(f"[0-9a-f]{{{2 * SECRET_BYTES}}}")

_half: list[Any] = []  # the page's session.js once loaded (a failed load is not kept: the next use tries again)


def _storage() -> Any:
    """``session.js`` (its localStorage methods; one per page), or None outside the browser."""
    if not _half:
        try:
            _half.append(load_half("webmcp_bridge.lab", "session.js"))
        except Exception:  # CPython: no page (pyodide cannot be imported)
            return None
    return _half[0]


def page_secret() -> bytes | None:
    """The secret (:data:`SECRET_BYTES` bytes), made and stored when the storage holds none (or not one); None when
    there is no storage or it refuses. Read at every call, so two tabs that made one at once agree on the last."""
    storage = _storage()
    if storage is None:
        return None
    secret = _kept(storage)
    if secret is None and storage.writeStorage(STORAGE_KEY, secrets.token_hex(SECRET_BYTES)):
        secret = _kept(storage)  # the one kept, should another tab have stored its own meanwhile
    return secret


def _kept(storage: Any) -> bytes | None:
    """The secret the storage holds, or None (none, or a value that is not one)."""
    value = storage.readStorage(STORAGE_KEY)
    text = None if is_nullish(value) else str(value)
    return bytes.fromhex(text) if text is not None and _HEX.fullmatch(text) else None
