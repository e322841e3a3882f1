"""The matching half of ``jupyter_search``: a query checked and compiled with a bound on its cost, lines scanned in
bounded windows, snippets, path globs and the paging cursor. Pure (standard library only); the walk of the
workspace and the reads are :mod:`webmcp_bridge.tools.search`'s.

**Why a regular expression cannot hold the page.** Python's ``re`` is a backtracking matcher with no timeout, and
the bridge runs on the page's main thread, so a pattern is bounded before it runs (the numbers are in
:mod:`webmcp_bridge.core.limits`, ``SEARCH_*``):

1. Its length is capped (``SEARCH_PATTERN_CHARS``).
2. The constructs behind exponential backtracking are refused (INVALID_ARGUMENT, naming the construct): a variable
   repeat (``*``, ``+``, ``?``, ``{m,n}``) whose body holds another variable repeat or an alternation (``(a+)+``,
   ``(a|a)*``), back-references and conditional groups, and lookarounds (they rerun a sub-match at every position).
3. What is left backtracks at most polynomially: a match attempt at one position costs at most about
   ``W ** k`` steps on a text of ``W`` characters, where ``k`` is the pattern's *degree*, the number of variable
   repeats one path through it meets (a fixed repeat ``{n}`` counts its body ``n`` times; alternatives count
   their largest). A degree above ``SEARCH_REGEX_DEGREE`` is refused.
4. Each match runs on at most ``W`` characters: :func:`window_chars` picks the largest ``W`` (at most
   ``SEARCH_WINDOW_CHARS``) with ``W ** (k + 1) <= SEARCH_MATCH_STEPS`` (a search tries every start position). A
   line longer than ``W`` is searched in windows of ``W`` characters that overlap by half, so a match of up to
   ``W // 2`` characters is always found once; a longer match can be missed (the result reports ``windowChars``).
   A pattern without variable repeats (a plain string among them) is linear: its lines are searched whole.

So one call of ``re`` is bounded by construction; the tool bounds the text scanned per call and per cell or file,
and the time it spends before it stops with a cursor (:mod:`webmcp_bridge.tools.search`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import re._parser as sre  # type: ignore[import-not-found]  # re's own parser (named re._parser since 3.11)
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    SEARCH_MATCH_STEPS,
    SEARCH_PATTERN_CHARS,
    SEARCH_REGEX_DEGREE,
    SEARCH_SNIPPET_BYTES,
    SEARCH_WINDOW_CHARS,
    truncate_utf8,
    utf8_len,
)

_VARIABLE = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
_REFUSED = {
    sre.GROUPREF: "back-references",
    sre.GROUPREF_EXISTS: "conditional groups",
    sre.ASSERT: "lookarounds",
    sre.ASSERT_NOT: "lookarounds",
}


def _refuse(what: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f"This regular expression is refused: {what} can make a search take unbounded time in the page. "
        "Search for a plain string, or simplify the pattern.",
        field="query",
    )


def _has(items: Any, ops: set) -> bool:
    """True when the parsed ``items`` hold an opcode of ``ops`` (or a variable repeat, for ``_VARIABLE``) anywhere."""
    for op, av in items:
        if op in ops and (op not in _VARIABLE or av[0] != av[1]):
            return True
        for sub in _children(op, av):
            if _has(sub, ops):
                return True
    return False


def _children(op: Any, av: Any) -> list:
    """The sub-patterns of one parsed item."""
    if op == sre.BRANCH:
        return list(av[1])
    if op == sre.SUBPATTERN:
        return [av[3]]
    if op in _VARIABLE or op == sre.ATOMIC_GROUP:
        return [av[-1] if op != sre.ATOMIC_GROUP else av]
    return []


def _degree(items: Any) -> int:
    """The pattern's degree (module docstring, 3); raises ToolError for a refused construct (2)."""
    total = 0
    for op, av in items:
        if op in _REFUSED:
            raise _refuse(_REFUSED[op])
        if op in _VARIABLE:
            low, high, body = av
            inner = _degree(body)
            if low == high:
                total += low * inner
                continue
            if inner or _has(body, {sre.BRANCH}):
                raise _refuse("a repeat of a part that itself repeats or has alternatives")
            total += 1
        elif op == sre.BRANCH:
            total += max(_degree(branch) for branch in av[1])
        else:
            total += sum(_degree(sub) for sub in _children(op, av))
        if total > SEARCH_REGEX_DEGREE:
            raise _refuse(f"more than {SEARCH_REGEX_DEGREE} variable repeats in a row")
    return total


def window_chars(degree: int) -> int | None:
    """The characters one match attempt sees for a pattern of ``degree`` (module docstring, 4); None: whole lines
    (degree 0, linear)."""
    if degree == 0:
        return None
    width = SEARCH_WINDOW_CHARS
    while width > 1 and width ** (degree + 1) > SEARCH_MATCH_STEPS:
        width -= 1
    return width


@dataclass(frozen=True)
class Query:
    """A checked query: ``pattern`` compiled, ``window`` as :func:`window_chars` (None: whole lines), ``digest``
    names the query in a cursor (a cursor of another query is refused)."""

    pattern: re.Pattern[str]
    window: int | None
    digest: str


def compile_query(text: str, *, regex: bool, case_sensitive: bool) -> Query:
    """Check and compile a query. A plain string (``regex`` false) is matched literally.

    Raises ToolError(INVALID_ARGUMENT, field "query"): empty, longer than ``SEARCH_PATTERN_CHARS`` characters, not
    a valid regular expression, a refused construct (module docstring), or a pattern that matches the empty string
    (it would hit every position)."""
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
        parsed = sre.parse(source, flags)
        degree = _degree(parsed)
        pattern = re.compile(source, flags)
    except re.error as exc:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT, f"Not a valid regular expression: {str(exc)[:200]}.", field="query"
        ) from None
    except RecursionError:
        raise _refuse("nesting this deep") from None
    if pattern.search("") is not None:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "The pattern matches the empty string, so it would match everywhere; make it match at least one character.",
            field="query",
        )
    digest = hashlib.sha256(f"{int(regex)}{int(case_sensitive)}{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return Query(pattern, window_chars(degree), digest[:16])


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
    before each line and each window of a long line (the caller may pause or stop there). Only hits after
    ``after`` = ``(line, offset)`` are reported: on that line, those starting at character ``offset`` or later.
    Lines end at LF."""
    width = query.window
    for number, line in enumerate(text.split("\n"), start=1):
        if number < after[0]:
            continue
        start_at = after[1] if number == after[0] else 0
        if width is None or len(line) <= width:
            yield Progress(number, start_at)
            for m in query.pattern.finditer(line, start_at):
                yield LineHit(number, m.start() + 1, m.end() - m.start(), snippet(line, m.start(), m.end()))
            continue
        step = max(1, width // 2)
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
