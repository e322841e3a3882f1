"""The matching half of ``jupyter_search``: a query checked and compiled, lines scanned in bounded windows,
snippets, path globs and the paging cursor. Pure (standard library only); the walk of the workspace, the reads and
the deadline are :mod:`webmcp_bridge.tools.search`'s.

**Why a regular expression cannot hold the page.** Python's ``re`` is a backtracking matcher: a pattern such as
``(?:.|..){24}`` before a character no line has tries every way to cut the line, and one match may run for minutes.
No judgement of the pattern's shape is made here; the cost is bounded by construction, two ways:

1. Every match runs under a deadline checked inside the engine (:mod:`webmcp_bridge.core.alarm`: ``re`` checks for
   signals every 4096 steps of its loop, and the alarm's signal stops the match). The tool gives each stretch of
   matching ``SEARCH_MATCH_SECONDS`` (:mod:`webmcp_bridge.core.limits`) and ends a search whose one match overruns
   it twice with a structured error (:func:`too_costly`).
2. Each match sees at most ``SEARCH_WINDOW_CHARS`` characters: a longer line is searched in windows of that many
   characters overlapping by half, so a match of up to half a window is always found, once. This keeps each step
   of the engine (a repeat of one character scans at most the window) and each match attempt short, so the
   deadline is kept closely and an ordinary pattern that is merely slow on a long line (``\\w+\\(``: quadratic in
   the line's length) still answers. A pattern that can match more than half a window may miss such a match on a
   long line: the result says so (``windowChars``, :attr:`Query.window`).

The pattern's length is capped (``SEARCH_PATTERN_CHARS``); back-references and lookarounds are allowed (their cost
is under the same deadline). The tool also bounds the text scanned per call and per cell or file, and the time it
spends before it stops with a cursor (:mod:`webmcp_bridge.tools.search`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import re._parser as sre  # type: ignore[import-not-found]  # re's own parser (named re._parser since 3.11)
from collections.abc import Iterator
from dataclasses import dataclass

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    SEARCH_MATCH_SECONDS,
    SEARCH_PATTERN_CHARS,
    SEARCH_SNIPPET_BYTES,
    SEARCH_WINDOW_CHARS,
    truncate_utf8,
    utf8_len,
)


@dataclass(frozen=True)
class Query:
    """A checked query: ``pattern`` compiled; ``window``: ``SEARCH_WINDOW_CHARS`` when the pattern can match more
    than half a window (such a match may be missed on a longer line: the result's ``windowChars``), else None (no
    match is missed); ``digest`` names the query in a cursor (a cursor of another query is refused)."""

    pattern: re.Pattern[str]
    window: int | None
    digest: str


def compile_query(text: str, *, regex: bool, case_sensitive: bool) -> Query:
    """Check and compile a query. A plain string (``regex`` false) is matched literally.

    Raises ToolError(INVALID_ARGUMENT, field "query"): empty, longer than ``SEARCH_PATTERN_CHARS`` characters, not
    a valid regular expression, or a pattern that matches the empty string (it would hit every position)."""
    if not text:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "The query is empty.", field="query")
    if len(text) > SEARCH_PATTERN_CHARS:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            f"The query is longer than {SEARCH_PATTERN_CHARS} characters.",
            field="query",
        )
    flags = 0 if case_sensitive else re.IGNORECASE
    source = text if regex else re.escape(text)
    try:
        widest = sre.parse(source, flags).getwidth()[1]
        pattern = re.compile(source, flags)
    except re.error as exc:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT, f"Not a valid regular expression: {str(exc)[:200]}.", field="query"
        ) from None
    except RecursionError:
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "The regular expression nests too deeply.", field="query") from None
    if pattern.search("") is not None:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "The pattern matches the empty string, so it would match everywhere; make it match at least one character.",
            field="query",
        )
    digest = hashlib.sha256(f"{int(regex)}{int(case_sensitive)}{text}".encode("utf-8", "surrogatepass")).hexdigest()
    window = SEARCH_WINDOW_CHARS if widest > SEARCH_WINDOW_CHARS // 2 else None
    return Query(pattern, window, digest[:16])


def too_costly(path: str, line: int, text: str) -> ToolError:
    """The error of a search whose one match ran past the deadline twice (module docstring, 1): INVALID_ARGUMENT,
    field "query", with the ``path`` and 1-based ``line`` of the ``text`` it was matching ("the file", "cell 3's
    source"...) and the deadline (``matchSeconds``)."""
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f"This regular expression took more than {SEARCH_MATCH_SECONDS * 1000:.0f} ms to match one line "
        f"(line {line} of {text} in {path}), so the search stopped: it backtracks too much. Rewrite it without a "
        "repeat of a part that can itself match in several ways (such as (a+)+, (a|aa)*, (.*x){20} or "
        "(?:.|..){24}): use one repeat of a character class, anchor it, or search for a plain string.",
        field="query",
        path=path,
        line=line,
        matchSeconds=SEARCH_MATCH_SECONDS,
    )


@dataclass(frozen=True)
class LineHit:
    """One match: ``line`` and ``column`` 1-based (columns in characters), ``length`` in characters (within the
    window it was found in), ``snippet`` the line around it (:func:`snippet`)."""

    line: int
    column: int
    length: int
    snippet: str


def snippet(line: str, start: int, end: int, max_bytes: int = SEARCH_SNIPPET_BYTES) -> str:
    """The part of ``line`` around the match ``[start, end)`` (characters), at most ``max_bytes`` UTF-8 bytes: the
    match first (cut when longer), then context on both sides, with "…" where the line was cut."""
    line = line.rstrip("\r")
    if utf8_len(line) <= max_bytes:
        return line
    budget = max_bytes - 6  # two ellipses
    match = truncate_utf8(line[start:end], budget)
    left = budget - utf8_len(match)
    before = line[max(0, start - left) : start]
    before = before[len(before) - len(truncate_utf8(before[::-1], left // 2)) :]
    after = truncate_utf8(line[start + len(match) :], left - utf8_len(before))
    head = "…" if start - len(before) > 0 else ""
    tail = "…" if start + len(match) + len(after) < len(line) else ""
    return f"{head}{before}{match}{after}{tail}"


@dataclass(frozen=True)
class Progress:
    """Where :func:`scan` is about to work next (a line, 1-based, and a character offset in it, 0-based): a caller
    that stops there continues later with ``after=(line, offset)``."""

    line: int
    offset: int


def scan(text: str, query: Query, after: tuple[int, int] = (0, 0)) -> Iterator[LineHit | Progress]:
    """The hits of ``query`` in ``text``, line by line, in order, each position once, with a :class:`Progress`
    before each line and each window of a long line (the caller may pause or stop there; each match of the
    engine happens between two of them). Only hits after ``after`` = ``(line, offset)`` are reported: on that line,
    those starting at character ``offset`` or later. Lines end at LF; a line longer than ``SEARCH_WINDOW_CHARS`` is
    searched in windows (module docstring, 2)."""
    width = SEARCH_WINDOW_CHARS
    step = width // 2
    for number, line in enumerate(text.split("\n"), start=1):
        if number < after[0]:
            continue
        start_at = after[1] if number == after[0] else 0
        if len(line) <= width:
            yield Progress(number, start_at)
            for m in query.pattern.finditer(line, start_at):
                yield LineHit(number, m.start() + 1, m.end() - m.start(), snippet(line, m.start(), m.end()))
            continue
        last = start_at - 1
        for first in range(start_at - start_at % step, len(line), step):
            yield Progress(number, max(first, start_at))
            end = min(len(line), first + width)
            for m in query.pattern.finditer(line, first, end):
                if m.start() > last and (m.start() < first + step or end >= len(line)):
                    last = m.start()
                    yield LineHit(number, m.start() + 1, m.end() - m.start(), snippet(line, m.start(), m.end()))
            if end >= len(line):
                break


def _glob_regex(glob: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            close = glob.find("]", i + 2)
            if close < 0:
                out.append(re.escape(ch))
            else:
                body = glob[i + 1 : close]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def path_matcher(glob: str | None) -> re.Pattern[str] | None:
    """The path glob as a compiled full-match pattern: ``*`` and ``?`` within one name, ``**`` across folders
    (``**/`` also matches no folder), ``[seq]`` / ``[!seq]``; case-sensitive. None (every path) for None or "" or
    "**". A glob with no "/" matches names in any folder (``*.py`` is ``**/*.py``)."""
    if not glob or glob == "**":
        return None
    if "/" not in glob:
        glob = "**/" + glob
    return _glob_regex(glob)


# -- the cursor -----------------------------------------------------------------------------------------------

#: where a hit or a stop is: (path, unit, line, column); a notebook's units are its visible cells' sources and
#: outputs in order (unit = 2 * visible cell index for the source... see :func:`unit_of`), a file has one (0)
Key = tuple[str, int, int, int]


def unit_of(cell_index: int, output_index: int | None, outputs_per_cell: int) -> int:
    """The ordinal of a notebook's text: the source of the visible cell ``cell_index`` (``output_index`` None) or
    one of its outputs, ordered cell by cell, the source first."""
    return cell_index * (outputs_per_cell + 1) + (0 if output_index is None else output_index + 1)


def encode_cursor(query: Query, key: Key) -> str:
    """An opaque cursor: continue after ``key`` with the same query."""
    data = json.dumps([query.digest, *key], ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def decode_cursor(query: Query, cursor: str) -> Key:
    """The key a cursor of :func:`encode_cursor` holds. Raises ToolError(INVALID_ARGUMENT, field "cursor") for a
    cursor that is not one, or is of another query."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8", "surrogatepass"))
        digest, path, unit, line, column = data
        if not (
            isinstance(path, str) and all(isinstance(n, int) and not isinstance(n, bool) for n in (unit, line, column))
        ):
            raise ValueError
    except (ValueError, TypeError, UnicodeDecodeError):
        raise ToolError(ErrorCode.INVALID_ARGUMENT, "Not a cursor of jupyter_search.", field="cursor") from None
    if digest != query.digest:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "This cursor belongs to another query; pass the same query, regex and caseSensitive.",
            field="cursor",
        )
    return path, unit, line, column
