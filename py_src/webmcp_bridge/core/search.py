"""The matching half of ``jupyter_search``: a query checked and compiled, lines scanned in bounded windows,
snippets, path globs, the cursor; the walk, the reads and the deadline are :mod:`webmcp_bridge.tools.search`'s.

**Why a regular expression cannot hold the page.** ``re`` backtracks: ``(?:.|..){24}`` before a character no line
has may run for minutes. No judgement of the pattern's shape is made; the cost is bounded two ways:

1. Every match runs under a deadline checked inside the engine (:mod:`webmcp_bridge.core.alarm`); a search whose
   one match overruns ``SEARCH_MATCH_SECONDS`` twice ends with :func:`too_costly`.
2. Each match sees at most ``SEARCH_WINDOW_CHARS`` characters: a longer line is searched in windows overlapping by
   half, so a match of up to half a window is found once, each engine step stays short (the deadline is kept
   closely) and a pattern merely quadratic in the line's length still answers. A longer match may be missed on a
   long line: the result says so (``windowChars``, :attr:`Query.window`). One that reaches its window's end is
   matched again on the line itself (:func:`scan`), so ``$`` and ``\\b`` never take a window's end for the line's.
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
    SEARCH_RECHECK_CHARS,
    SEARCH_SNIPPET_BYTES,
    SEARCH_WINDOW_CHARS,
    truncate_utf8,
    utf8_len,
)


@dataclass(frozen=True)
class Query:
    """A checked query: ``pattern`` compiled; ``window``: ``SEARCH_WINDOW_CHARS`` when the pattern can match more
    than half a window (else None: no match is missed); ``digest`` names the query in a cursor."""

    pattern: re.Pattern[str]
    window: int | None
    digest: str


def _query_error(message: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_ARGUMENT, message, field="query")


def compile_query(text: str, *, regex: bool, case_sensitive: bool) -> Query:
    """Check and compile a query (``regex`` false: matched literally). Raises ToolError(INVALID_ARGUMENT, field
    "query"): empty, over ``SEARCH_PATTERN_CHARS`` characters, not a valid pattern, or one that can match zero
    characters (its least width, from ``re``'s own parser, is 0)."""
    if not text:
        raise _query_error("The query is empty.")
    if len(text) > SEARCH_PATTERN_CHARS:
        raise _query_error(f"The query is longer than {SEARCH_PATTERN_CHARS} characters.")
    flags = 0 if case_sensitive else re.IGNORECASE
    source = text if regex else re.escape(text)
    try:
        least, widest = sre.parse(source, flags).getwidth()
        pattern = re.compile(source, flags)
    except re.error as exc:
        raise _query_error(f"Not a valid regular expression: {str(exc)[:200]}.") from None
    except RecursionError:
        raise _query_error("The regular expression nests too deeply.") from None
    if least == 0:  # an empty hit says nothing, and a scan resumed at its end would find it again
        raise _query_error("The pattern can match zero characters (as a* or \\b can); make it match at least one.")
    digest = hashlib.sha256(f"{int(regex)}{int(case_sensitive)}{text}".encode("utf-8", "surrogatepass")).hexdigest()
    window = SEARCH_WINDOW_CHARS if widest > SEARCH_WINDOW_CHARS // 2 else None
    return Query(pattern, window, digest[:16])


def too_costly(path: str, line: int, text: str) -> ToolError:
    """INVALID_ARGUMENT (field "query") of a match past the deadline twice, at ``line`` (1-based) of ``text`` ("the
    file", "cell 3's source"...) in ``path``."""
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
    """One match: ``line`` and ``column`` 1-based, ``length`` in characters, ``snippet`` (:func:`snippet`)."""

    line: int
    column: int
    length: int
    snippet: str


def snippet(line: str, start: int, end: int, max_bytes: int = SEARCH_SNIPPET_BYTES) -> str:
    """``line`` around the match ``[start, end)`` in at most ``max_bytes``: the match first, "…" where cut."""
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
    """Where :func:`scan` works next (line 1-based, offset 0-based): continue with ``after=(line, offset)``."""

    line: int
    offset: int


def scan(text: str, query: Query, after: tuple[int, int] = (0, 0)) -> Iterator[LineHit | Progress]:
    """The hits of ``query`` in ``text`` (lines end at LF), in order, none overlapping the one before (as
    ``finditer`` gives them), with a :class:`Progress` before each line and each window of a long line (where a
    caller may pause or stop). Only hits at or after ``after`` = ``(line, offset)`` are reported: resumed at the
    end of a hit (``column - 1 + length``), it gives the hits one scan gives after that one.

    In a long line each match sees a window; one that reaches the window's end (where ``$``, ``\\Z`` or ``\\b``
    would see the line end) is matched again at its start on the line itself, at most ``SEARCH_RECHECK_CHARS``
    characters of it, and left out when it does not match there or reaches that end too."""
    width = SEARCH_WINDOW_CHARS
    step = width // 2
    m: re.Match[str] | None
    for number, line in enumerate(text.split("\n"), start=1):
        if number < after[0]:
            continue
        pos = after[1] if number == after[0] else 0  # the next hit starts here or later
        if len(line) <= width:
            yield Progress(number, pos)
            for m in query.pattern.finditer(line, pos):
                yield LineHit(number, m.start() + 1, m.end() - m.start(), snippet(line, m.start(), m.end()))
            continue
        first = pos - pos % step
        while first < len(line):
            yield Progress(number, max(first, pos))
            end = min(len(line), first + width)
            last = end >= len(line)
            while (m := query.pattern.search(line, max(first, pos), end)) and (m.start() < first + step or last):
                if m.end() == end and not last:
                    recheck = min(len(line), m.start() + SEARCH_RECHECK_CHARS)
                    m = query.pattern.match(line, m.start(), recheck)
                    if m is None or m.end() == recheck < len(line):
                        break
                yield LineHit(number, m.start() + 1, m.end() - m.start(), snippet(line, m.start(), m.end()))
                pos = m.end()
            if last:
                break
            first = max(first + step, pos - pos % step)


_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|\[.[^\]]*\]|.", re.DOTALL)
_GLOB_WILDCARDS = {"**/": "(?:[^/]*/)*", "**": ".*", "*": "[^/]*", "?": "[^/]"}


def _glob_regex(glob: str) -> re.Pattern[str]:
    out = []
    for token in _GLOB_TOKEN.findall(glob):
        if token in _GLOB_WILDCARDS:
            out.append(_GLOB_WILDCARDS[token])
        elif len(token) > 1:  # [seq] or [!seq]
            body = "^" + token[2:-1] if token.startswith("[!") else token[1:-1]
            out.append("[" + body.replace("\\", "\\\\") + "]")
        else:
            out.append(re.escape(token))
    return re.compile("".join(out), re.DOTALL)


def path_matcher(glob: str | None) -> re.Pattern[str] | None:
    """The path glob as a full-match pattern: ``*``, ``?``, ``[seq]``, ``[!seq]`` within one name, ``**`` across
    folders (``**/`` also none); case-sensitive; no "/" matches in any folder. None (every path) for None, "", "**"."""
    if not glob or glob == "**":
        return None
    if "/" not in glob:
        glob = "**/" + glob
    return _glob_regex(glob)


# -- the cursor -----------------------------------------------------------------------------------------------

#: where a scan goes on after a hit or a stop: (path, unit, line, offset); a file has one unit (0), a notebook
#: :func:`unit_of`
Key = tuple[str, int, int, int]


def unit_of(cell_index: int, output_index: int | None, outputs_per_cell: int) -> int:
    """The ordinal of a visible cell's source (``output_index`` None) or output, cell by cell, the source first."""
    return cell_index * (outputs_per_cell + 1) + (0 if output_index is None else output_index + 1)


def encode_cursor(query: Query, key: Key) -> str:
    """An opaque cursor: continue after ``key`` with the same query."""
    data = json.dumps([query.digest, *key], ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def decode_cursor(query: Query, cursor: str) -> Key:
    """The key a cursor holds; ToolError(INVALID_ARGUMENT, field "cursor") for no cursor or another query's."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8", "surrogatepass"))
        digest, path, unit, line, offset = data
        if not (
            isinstance(path, str) and all(isinstance(n, int) and not isinstance(n, bool) for n in (unit, line, offset))
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
    return path, unit, line, offset
