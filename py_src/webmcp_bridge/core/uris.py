"""Addresses of notebooks, cells and outputs as URIs, formatted and parsed in one place.

``notebook://{path}``, ``notebook://{path}/cells/{cellId}`` (by nbformat id, never index) and
``notebook://{path}/cells/{cellId}/outputs/{index}`` (0-based), in RFC 3986 syntax. Canonical form: each path
segment and the cell id percent-encoded as UTF-8, every byte outside the unreserved characters as upper-case
``%HH``; the index decimal without leading zeros. :func:`parse_uri` also takes any other RFC 3986 spelling of it,
and reads the form from the end (encoded segments hold no raw ``/``), so a folder named ``cells`` is unambiguous.
``format(parse(u)) == u`` for a canonical ``u``. A URI is only an address: whether its target exists and may be
seen is decided where it is used (the access guard), so a hidden cell's URI gets a missing cell's answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, unquote_to_bytes

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import ID_CHARS, MAX_INT, URI_CHARS
from webmcp_bridge.core.paths import is_notebook_path, normalize_path

SCHEME = "notebook"
#: the longest URI parsed, and the longest cell id in one (core/limits.py)
MAX_URI_CHARS = URI_CHARS
MAX_CELL_ID_CHARS = ID_CHARS
#: the first problem of a segment: a '%' that starts no escape, or a character RFC 3986 does not allow in a path
#: segment as it is (unreserved, sub-delimiters, ':' and '@' are)
_PROBLEM = re.compile(r"%(?![0-9A-Fa-f]{2})|[^-A-Za-z0-9._~!$&'()*+,;=:@%]")


@dataclass(frozen=True)
class NotebookAddress:
    """What a URI names: a ``path``, a ``cell_id`` (None: the notebook), an ``output_index`` (None: the cell)."""

    path: str
    cell_id: str | None = None
    output_index: int | None = None

    @property
    def uri(self) -> str:
        """The canonical URI of this address."""
        if self.cell_id is None:
            return notebook_uri(self.path)
        if self.output_index is None:
            return cell_uri(self.path, self.cell_id)
        return output_uri(self.path, self.cell_id, self.output_index)


def _encode(segment: str) -> str:
    return quote(segment.encode("utf-8", "surrogatepass"), safe="")  # every byte but unreserved ones as %HH


@lru_cache(maxsize=64)
def notebook_uri(path: str) -> str:
    """``notebook://{path}`` for a workspace path (cached: a read lists a URI for every cell and output)."""
    return f"{SCHEME}://" + "/".join(_encode(part) for part in path.split("/"))


def cell_uri(path: str, cell_id: str) -> str:
    """``notebook://{path}/cells/{cellId}``."""
    return f"{notebook_uri(path)}/cells/{_encode(cell_id)}"


def output_uri(path: str, cell_id: str, index: int) -> str:
    """``notebook://{path}/cells/{cellId}/outputs/{index}``."""
    return f"{cell_uri(path, cell_id)}/outputs/{int(index)}"


def _bad(reason: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f"Not a notebook URI: {reason}. The forms are notebook://{{path}}, "
        "notebook://{path}/cells/{cellId} and notebook://{path}/cells/{cellId}/outputs/{index}.",
    )


def _decode(segment: str) -> str:
    """One segment, percent-decoded as UTF-8."""
    problem = _PROBLEM.search(segment)
    if problem is not None:
        ch = problem.group()
        if ch == "%":
            raise _bad("'%' must start an escape of two hex digits")
        shown = ch if ch.isprintable() and ch.isascii() else f"U+{ord(ch):04X}"
        raise _bad(f"the character {shown!r} must be percent-encoded")
    try:
        return unquote_to_bytes(segment).decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("an escape is not UTF-8") from None


def _notebook_path(segments: list[str]) -> str:
    if not segments:
        raise _bad("it names no notebook")
    parts = [_decode(s) for s in segments]
    if any("/" in part for part in parts):
        raise _bad("a path segment holds an encoded '/' (write the folders with '/')")
    path = "/".join(parts)
    try:
        normalized = normalize_path(path)
    except ToolError as err:
        raise _bad(f"its path is not a workspace path ({err.message})") from None
    if normalized != path:
        raise _bad("its path is not in canonical form")
    if not is_notebook_path(path):
        raise _bad("its path does not name a notebook (.ipynb)")
    return path


def _cell_id(segment: str) -> str:
    cell_id = _decode(segment)
    if not 1 <= len(cell_id) <= MAX_CELL_ID_CHARS:
        raise _bad(f"a cell id has 1 to {MAX_CELL_ID_CHARS} characters")
    return cell_id


def _index(segment: str) -> int:
    if not (segment.isascii() and segment.isdigit()) or str(int(segment)) != segment or int(segment) > MAX_INT:
        raise _bad(f"an output index is a whole number from 0 to {MAX_INT} without leading zeros")
    return int(segment)


def _ends_notebook(segments: list[str]) -> bool:
    try:
        return bool(segments) and is_notebook_path(_decode(segments[-1]))
    except ToolError:
        return False


def parse_uri(uri: str) -> NotebookAddress:
    """The address ``uri`` names. Raises ToolError(INVALID_ARGUMENT), one sentence saying why, for another scheme,
    a query or fragment, a character to percent-encode, a bad escape, an empty segment, an encoded ``/``, a path
    that is not a canonical workspace ``.ipynb`` path, a bad cell id or an index that is not 0 to 2^31 - 1."""
    if not isinstance(uri, str) or not uri:
        raise _bad("it is empty")
    if len(uri) > MAX_URI_CHARS:
        raise _bad(f"it is longer than {MAX_URI_CHARS} characters")
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme.lower() != SCHEME:
        raise _bad(f"it does not start with {SCHEME}://")
    if "?" in rest or "#" in rest:
        raise _bad("it has a query or fragment")
    segments = rest.split("/")
    if any(s == "" for s in segments):
        raise _bad("it has an empty segment (a leading, trailing or doubled '/')")
    if len(segments) >= 5 and segments[-4] == "cells" and segments[-2] == "outputs" and _ends_notebook(segments[:-4]):
        return NotebookAddress(_notebook_path(segments[:-4]), _cell_id(segments[-3]), _index(segments[-1]))
    if len(segments) >= 3 and segments[-2] == "cells" and _ends_notebook(segments[:-2]):
        return NotebookAddress(_notebook_path(segments[:-2]), _cell_id(segments[-1]))
    return NotebookAddress(_notebook_path(segments))
