"""Whether a review message that says it is the person's was written by the person in this browser.

Threads travel in the notebook file (:mod:`webmcp_bridge.review.threads`), and a file is untrusted: kernel code the
agent ran can write a notebook whose threads hold messages marked ``"author": "person"``, and an agent that read them
would take them for the person's instructions. So a message the person writes (the Agent panel, the cell menu) is
stored with ``"sig"``: an HMAC-SHA-256, keyed by this browser's secret for the site (kept where kernel code cannot
read it: ``lab/page_secret.py``), over what the message says: the thread's id, the message's position in the thread's
stored list, its author, its text and its time (seconds, to the millisecond). Judging a stored message:

- ``"author": "agent"`` is shown as stored (a file that says the agent wrote something gains nothing from it);
- ``"author": "person"`` is shown as the person's only when its ``sig`` is that HMAC under the key at hand; any other
  (no signature, another key, a changed text, time, thread or position) is shown with the author :data:`FROM_FILE`.

So a message the person wrote in another browser, or before the secret existed, also reads ``file``: the mark says
"not written by the person in this browser", not "forged".

Pure: the key is handed in by the caller (None: there is none, and no message can be the person's).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

#: the stored message's key that holds its signature
SIGNATURE_KEY = "sig"
#: hex digits of the HMAC kept (128 bits)
SIGNATURE_HEX_DIGITS = 32
#: the author a message that says it is the person's, without a valid signature, is shown with
FROM_FILE = "file"
#: the first item of every signed text, so a signature made for anything else never verifies here
_PURPOSE = "webmcp-bridge review message 1"


def signature(key: bytes, thread_id: str, index: int, author: str, body: str, time: float) -> str:
    """The signature of a message: the first :data:`SIGNATURE_HEX_DIGITS` hex digits of HMAC-SHA-256(``key``, the JSON
    text ``[purpose, thread_id, index, author, body, time with 3 decimals]``, ASCII-escaped, no spaces). ``index``:
    the message's position in the thread's stored ``messages`` list (malformed entries count)."""
    text = json.dumps([_PURPOSE, thread_id, index, author, body, f"{time:.3f}"], separators=(",", ":"))
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()[:SIGNATURE_HEX_DIGITS]


def sign(key: bytes | None, thread_id: str, index: int, message: dict[str, Any]) -> dict[str, Any]:
    """``message`` (a stored message: author, body, time) as it is stored: with its ``sig`` when it is the person's and
    there is a key; the agent's, or any without a key, unchanged."""
    if key is None or message.get("author") != "person":
        return message
    return {
        **message,
        SIGNATURE_KEY: signature(key, thread_id, index, "person", message["body"], float(message["time"])),
    }


def shown_author(key: bytes | None, thread_id: str, index: int, author: str, body: str, time: float, sig: Any) -> str:
    """The author a valid stored message is shown with (see the module docstring): ``author`` itself unless it is
    "person" and ``sig`` is not its signature under ``key``, then :data:`FROM_FILE`."""
    if author != "person":
        return author
    if key is None or not isinstance(sig, str):
        return FROM_FILE
    expected = signature(key, thread_id, index, author, body, time)
    return author if hmac.compare_digest(sig.encode("utf-8", "surrogatepass"), expected.encode("ascii")) else FROM_FILE
