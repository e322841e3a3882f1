"""Whether a review message that says it is the person's was written by the person in this browser (docs/TOOLS.md,
"Who wrote a message"). A file is untrusted: kernel code can write "person" messages the agent would obey. So the
person's messages carry ``"sig"``, an HMAC-SHA-256 under this browser's secret (out of the kernel's reach,
``lab/page_secret.py``) over thread id, position, author, text and time; one without a valid ``sig`` reads
:data:`FROM_FILE` ("not written here", not "forged"). The key is handed in (None: none is the person's).
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
    """:data:`SIGNATURE_HEX_DIGITS` hex digits of HMAC-SHA-256(``key``, compact ASCII JSON ``[purpose, thread_id,
    index, author, body, time with 3 decimals]``); ``index`` counts malformed stored entries too."""
    text = json.dumps([_PURPOSE, thread_id, index, author, body, f"{time:.3f}"], separators=(",", ":"))
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()[:SIGNATURE_HEX_DIGITS]


def sign(key: bytes | None, thread_id: str, index: int, message: dict[str, Any]) -> dict[str, Any]:
    """``message`` (author, body, time) as stored: signed when the person's and there is a key."""
    if key is None or message.get("author") != "person":
        return message
    return {
        **message,
        SIGNATURE_KEY: signature(key, thread_id, index, "person", message["body"], float(message["time"])),
    }


def shown_author(key: bytes | None, thread_id: str, index: int, author: str, body: str, time: float, sig: Any) -> str:
    """``author``, or :data:`FROM_FILE` for a "person" message whose ``sig`` is not its signature under ``key``."""
    if author != "person":
        return author
    if key is None or not isinstance(sig, str):
        return FROM_FILE
    expected = signature(key, thread_id, index, author, body, time)
    return author if hmac.compare_digest(sig.encode("utf-8", "surrogatepass"), expected.encode("ascii")) else FROM_FILE
