"""Addresses of notebooks, cells and outputs as URIs (``notebook://``), formatted and parsed in one place.

Forms (RFC 3986 syntax; the notebook's workspace path takes the authority and path parts)::

    notebook://{path}                                  a notebook
    notebook://{path}/cells/{cellId}                   one cell, by its nbformat id (never by index)
    notebook://{path}/cells/{cellId}/outputs/{index}   one output of that cell (0-based)

Formatting (canonical form): each ``/``-separated segment of the path, and the cell id, is percent-encoded as
UTF-8 with every byte outside RFC 3986's unreserved characters (``A-Z a-z 0-9 - . _ ~``) written as ``%HH``
(upper-case hex); the index is decimal without leading zeros.

Parsing (:func:`parse_uri`) accepts the canonical form and any other RFC 3986 spelling of it: the scheme in any
letter case, sub-delimiters (``!$&'()*+,;=``), ``:`` and ``@`` written as they are, and lower-case escapes.
It refuses, with INVALID_ARGUMENT and one sentence saying why: another scheme, a query or fragment, a character
RFC 3986 does not allow (spaces, non-ASCII: percent-encode them), a malformed escape or one that is not UTF-8,
an empty segment, an encoded ``/`` in the path, a path that is not a workspace path
(:func:`webmcp_bridge.core.paths.normalize_path`) or does not end in ``.ipynb`` (any letter case), an empty or over-long
cell id, and an index that is not a canonical non-negative integer up to 2^31 - 1. Because encoded segments never hold a
raw ``/``, the form is read from the end: a notebook whose path itself contains a folder named ``cells`` is still
addressed unambiguously (the part before ``/cells/`` must name a ``.ipynb`` path). ``format(parse(u)) == u`` for every
canonical ``u``, and ``parse(format(a)) == a`` for every address.

A URI is only an address: whether the notebook, cell or output exists, and whether the agent may see it, is
decided where it is used (the access guard), exactly as for a path and an id, so a URI naming a hidden cell
gets the answer a missing cell gets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import ID_CHARS, MAX_INT, URI_CHARS
from webmcp_bridge.core.paths import is_notebook_path, normalize_path

SCHEME = "notebook"
#: the longest URI parsed, and the longest cell id in one (core/limits.py)
MAX_URI_CHARS = URI_CHARS
MAX_CELL_ID_CHARS = ID_CHARS
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PCHAR_RAW = _UNRESERVED | frozenset("!$&'()*+,;=:@")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class NotebookAddress:
    """What a ``notebook://`` URI names: the notebook's workspace ``path``, and a ``cell_id`` (None: the notebook)
    and ``output_index`` (None: the whole cell; only with a cell)."""

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


_ALL_UNRESERVED = re.compile(
    f"[{re.escape(''.join(sorted(_UNRESERVED)))}]*"
)  # a segment of only those: nothing to escape


def _encode(segment: str) -> str:
    if _ALL_UNRESERVED.fullmatch(segment):  # the usual id or file name
        return segment
    return "".join(chr(b) if chr(b) in _UNRESERVED else f"%{b:02X}" for b in segment.encode("utf-8", "surrogatepass"))


@lru_cache(maxsize=64)
def notebook_uri(path: str) -> str:
    """``notebook://{path}`` for a workspace path (as tools report it: "demo/analysis.ipynb"). Kept for the last
    64 paths: a read lists a URI for every cell and output of one notebook."""
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
    """One segment, percent-decoded as UTF-8 (raising INVALID_ARGUMENT on a character RFC 3986 does not allow in a
    path segment, a malformed escape, or bytes that are not UTF-8)."""
    out = bytearray()
    at = 0
    while at < len(segment):
        ch = segment[at]
        if ch == "%":
            match = _ESCAPE.match(segment, at)
            if match is None:
                raise _bad("'%' must start an escape of two hex digits")
            out.append(int(match.group(1), 16))
            at += 3
            continue
        if ch not in _PCHAR_RAW:
            shown = ch if ch.isprintable() and ch.isascii() else f"U+{ord(ch):04X}"
            raise _bad(f"the character {shown!r} must be percent-encoded")
        out.append(ord(ch))
        at += 1
    try:
        return out.decode("utf-8")
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
    if (
        not segment.isascii()
        or not segment.isdigit()
        or (len(segment) > 1 and segment[0] == "0")
        or int(segment) > MAX_INT
    ):
        raise _bad(f"an output index is a whole number from 0 to {MAX_INT} without leading zeros")
    return int(segment)


def _ends_notebook(segments: list[str]) -> bool:
    """Whether ``segments`` could be a notebook path: the last one, decoded, ends in .ipynb (any letter case)."""
    try:
        return bool(segments) and is_notebook_path(_decode(segments[-1]))
    except ToolError:
        return False


def parse_uri(uri: str) -> NotebookAddress:
    """The address ``uri`` names. Raises ToolError(INVALID_ARGUMENT) for anything that is not a well-formed
    ``notebook://`` URI of a notebook, a cell or an output (see the module docstring)."""
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
