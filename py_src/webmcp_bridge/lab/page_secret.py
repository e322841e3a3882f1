"""This browser's secret for the site: 32 random bytes kept in the page's localStorage, made the first time a page
of the site needs them, and the same for every tab of the site in this browser from then on.

Why localStorage: code the agent ran in JupyterLite's Pyodide kernel stays in the kernel's Web Worker, which is of
the page's origin, so it shares the origin's Web Locks, BroadcastChannels, IndexedDB (JupyterLite's files) and Cache
Storage with the page, but a worker has no localStorage: only a window does. A secret kept there is read by the
site's pages and by nothing the kernel runs (unless a script of the kernel's own output ran in the page as trusted
output: docs/SECURITY.md). In a JupyterLab server the kernel is another process and reaches none of
the page's storage, locks or channels at all.

What it keys (each an HMAC-SHA-256):
- the person's review messages (:mod:`webmcp_bridge.review.signatures`: what a signature covers and how a stored
  message is judged; the person's side signs, the tools and the panel judge): a message a file says is the
  person's is shown as theirs only when this browser's secret signed it;
- the messages the site's tabs exchange and the names of their presence locks (``tabs.js``, which reads the same
  localStorage key, :data:`STORAGE_KEY`, handed over by :mod:`webmcp_bridge.lab.tabs`; it never makes the secret).

This module holds no JS object: the page's strings are read and written by ``page_secret.js`` (evaluated once per
page, on first use, by :func:`~webmcp_bridge.lab.ffi.load_half`). Outside the browser, or when the page's storage
refuses, there is no secret (None): nothing the person writes can then be told from a file's claim, and tabs
exchange no messages.
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

_half: list[Any] = []  # the page's page_secret.js once loaded (a failed load is not kept: the next use tries again)


def _storage() -> Any:
    """``page_secret.js`` (one per page), or None where it cannot be loaded (outside the browser)."""
    if not _half:
        try:
            _half.append(load_half("webmcp_bridge.lab", "page_secret.js"))
        except Exception:  # CPython: no page (pyodide cannot be imported)
            return None
    return _half[0]


def page_secret() -> bytes | None:
    """The secret (:data:`SECRET_BYTES` bytes), made and stored when the page's storage holds none (or a value that is
    not one); None when there is no storage or it refuses to keep it. Read from the storage at every call (one
    crossing in the bridge's worker): two tabs that made one at the same moment agree on the one kept last."""
    storage = _storage()
    if storage is None:
        return None
    value = storage.get(STORAGE_KEY)
    text = None if is_nullish(value) else str(value)
    if text is None or not _HEX.fullmatch(text):
        if not storage.set(STORAGE_KEY, secrets.token_hex(SECRET_BYTES)):
            return None
        value = storage.get(STORAGE_KEY)  # the one kept, should another tab have stored its own meanwhile
        text = None if is_nullish(value) else str(value)
        if text is None or not _HEX.fullmatch(text):
            return None
    return bytes.fromhex(text)
