"""jupyter_search: find a string or a bounded regular expression in the workspace's notebooks and text files.

Searched in path order (a bounded walk, "." names left out, narrowed by a glob): cell sources and output texts of
notebooks (open ones live, closed ones from the contents service) and every UTF-8 text file. Hidden notebooks and
cells are never read, so no count, cut or skipped path tells of them. Bounded three ways: the matching (a deadline
of ``SEARCH_MATCH_SECONDS`` a stretch, :mod:`webmcp_bridge.core.alarm`; overrun twice: INVALID_ARGUMENT), the text
(``SEARCH_TEXT_BYTES``, ``SEARCH_OUTPUT_BYTES``, ``SEARCH_SCAN_BYTES`` a call) and the time (``SEARCH_SECONDS``,
yielding every ``SEARCH_SLICE_SECONDS``); a call that stops early says ``truncated`` and gives ``nextCursor``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes
from webmcp_bridge.calls.registry import Annotations, ToolInput
from webmcp_bridge.core.alarm import Alarm, Overrun
from webmcp_bridge.core.bounds import json_bytes
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    EXPORT_CHUNK,
    MAX_PATH_BYTES,
    RESULT_HEADROOM,
    SEARCH_HITS,
    SEARCH_HITS_DEFAULT,
    SEARCH_MATCH_SECONDS,
    SEARCH_NOTEBOOK_BYTES,
    SEARCH_OUTPUT_BYTES,
    SEARCH_PATTERN_CHARS,
    SEARCH_SCAN_BYTES,
    SEARCH_SECONDS,
    SEARCH_SKIPPED_LISTED,
    SEARCH_SLICE_SECONDS,
    SEARCH_TEXT_BYTES,
    SEARCH_WALK_ENTRIES,
    truncate_utf8,
    utf8_len,
)
from webmcp_bridge.core.paths import is_notebook_path
from webmcp_bridge.core.raw import RawCell
from webmcp_bridge.core.search import (
    LineHit,
    Progress,
    Query,
    compile_query,
    decode_cursor,
    encode_cursor,
    path_matcher,
    scan,
    too_costly,
    unit_of,
)
from webmcp_bridge.core.uris import cell_uri, notebook_uri, output_uri
from webmcp_bridge.tools.common import CallContext, tool

#: file name endings never read as text (binary formats a workspace commonly holds): skipped without loading
BINARY_ENDINGS = (
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".pdf", ".zip", ".gz", ".tgz", ".bz2", ".xz",
    ".whl", ".tar", ".so", ".wasm", ".pyc", ".parquet", ".feather", ".npy", ".npz", ".pkl", ".h5", ".sqlite", ".db",
)  # fmt: skip
#: the longest cursor taken (characters; one holds a path of MAX_PATH_BYTES, escaped, in base64)
CURSOR_CHARS = 4 * MAX_PATH_BYTES


class SearchInput(ToolInput):
    query: str = Field(
        description=f"The text to find (at most {SEARCH_PATTERN_CHARS} characters): a plain string, or a "
        "regular expression (Python syntax) with regex: true.",
        min_length=1,
        max_length=SEARCH_PATTERN_CHARS,
    )
    regex: bool = Field(False, description="Read query as a regular expression.")
    case_sensitive: bool = Field(False, description="Match letter case exactly (default: ignore case).")
    glob: str | None = Field(
        None,
        description="Only paths matching this glob ('*' and '?' within a name, '**' across folders; no '/' "
        "matches names in any folder: '*.ipynb', 'data/**/*.csv'). Default: everything.",
        max_length=MAX_PATH_BYTES,
    )
    include_outputs: bool = Field(True, description="Also search the text of cell outputs.")
    limit: int = Field(
        SEARCH_HITS_DEFAULT, description=f"Most hits to return (default {SEARCH_HITS_DEFAULT}).", ge=1, le=SEARCH_HITS
    )
    cursor: str | None = Field(
        None, description="nextCursor of the previous result, to continue (same query).", max_length=CURSOR_CHARS
    )


class SearchHit(Wire):
    path: str
    kind: Literal["source", "output", "file"]
    line: int = Field(description="1-based line in the cell source, output text or file.")
    column: int = Field(description="1-based column, in characters.")
    length: int
    snippet: str
    uri: str | None = sometimes("The notebook:// address of the cell or output (a cell without an id: the notebook).")
    cellId: str | None = sometimes()
    cellIndex: int | None = sometimes("The cell's index among the cells the agent sees.")
    outputIndex: int | None = sometimes()
    mimeType: str | None = sometimes()


class Searched(Wire):
    notebooks: int
    files: int
    bytes: int


class SearchOutput(Payload):
    hits: list[SearchHit]
    truncated: bool = Field(description="More may follow: call again with nextCursor.")
    nextCursor: str | None
    stoppedBy: Literal["hits", "scanBytes", "time"] | None = sometimes("Why this call stopped early.")
    searched: Searched = Field(description="What this call looked at (this page only).")
    windowChars: int | None = Field(
        description="Lines longer than this are searched in windows of this many characters overlapping by half: "
        "a match longer than half of it can be missed (null: the query cannot match that much, nothing is missed)."
    )
    cutTexts: int = Field(description="Texts longer than what is searched of one; their ends were not searched.")
    skippedCount: int = Field(description="Files not searched: not text, or too large.")
    skippedPaths: list[str]
    walkTruncated: bool = Field(description="The workspace has more entries than one search walks.")


@dataclass
class _Run:
    """The state of one call: budgets, counts, hits."""

    query: Query
    limit: int
    byte_budget: int
    hit_budget: int  # bytes of JSON text the hits may take in the result
    started: float
    slice_started: float
    hits: list[dict[str, Any]] = field(default_factory=list)
    skipped_paths: list[str] = field(default_factory=list)
    hit_bytes: int = 0
    scanned: int = 0
    notebooks: int = 0
    files: int = 0
    cut: int = 0
    skipped: int = 0
    steps: int = 0  # lines and windows scanned in this call (a call stops for time only after one: progress)
    stopped: str | None = None
    cursor: tuple[str, int, int, int] | None = None
    alarm: Alarm = field(default_factory=Alarm)  # the deadline of the stretch of matching (core/alarm.py)


async def _walk(ctx: CallContext, glob: str | None) -> tuple[list[tuple[str, str, bool]], bool]:
    """Sorted ``(path, type, open)`` of what the guarded listing shows that ``glob`` matches; True: walk cut.
    Raises ToolError(INVALID_ARGUMENT, field "glob") for a glob that backtracks too much (:func:`_glob_matches`)."""
    matcher = path_matcher(glob)
    alarm = Alarm()
    found: list[tuple[str, str, bool]] = []
    seen, folders = 0, deque([""])
    try:
        while folders:
            alarm.stop()  # never left set across a read
            for entry in await ctx.host.list_dir(folders.popleft()) or ():
                if entry.name.startswith("."):
                    continue
                seen += 1
                if seen > SEARCH_WALK_ENTRIES:
                    return sorted(found), True
                if entry.type == "directory":
                    folders.append(entry.path)
                elif matcher is None or await _glob_matches(alarm, matcher, entry.path):
                    kind = "notebook" if is_notebook_path(entry.path) else entry.type
                    found.append((entry.path, kind, entry.open))
    finally:
        alarm.stop()
    return sorted(found), False


async def _glob_matches(alarm: Alarm, matcher: re.Pattern[str], path: str) -> bool:
    """``matcher.fullmatch(path)`` under ``alarm`` (set for a stretch of ``SEARCH_MATCH_SECONDS`` when not set), as
    a query is matched: a match it stops is tried once more in a stretch of its own; stopped again, ToolError
    (INVALID_ARGUMENT, field "glob")."""
    for _ in range(2):
        if not alarm.running:
            alarm.start(SEARCH_MATCH_SECONDS)
        try:
            with alarm.raising():
                return matcher.fullmatch(path) is not None
        except Overrun:
            alarm.stop()
            await asyncio.sleep(0)
    raise ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f"This glob took more than {SEARCH_MATCH_SECONDS * 1000:.0f} ms to match one path, so the search stopped: "
        "it backtracks too much. Use fewer '*' in one name (such as *a*a*a*b) and no '**' repeated in a row.",
        field="glob",
        matchSeconds=SEARCH_MATCH_SECONDS,
    )


async def _pause(run: _Run, *, now_or_never: bool = False) -> bool:
    """Yield when this stretch ran long (or ``now_or_never``), the matching's deadline stopped across the yield;
    True when the call's time is up (never before it scanned something: every call makes progress)."""
    now = time.monotonic()
    if run.steps > 0 and now - run.started >= SEARCH_SECONDS:
        return True
    if now_or_never or now - run.slice_started >= SEARCH_SLICE_SECONDS:
        matching = run.alarm.running
        run.alarm.stop()
        await asyncio.sleep(0)
        run.slice_started = time.monotonic()
        if matching:
            run.alarm.start(SEARCH_MATCH_SECONDS)
    return False


async def _search_text(
    run: _Run, text: str, cap: int, place: tuple[str, int], after: tuple[int, int], located: dict[str, Any], label: str
) -> bool:
    """Scan one text (cut to ``cap`` bytes), adding its hits after the keys ``located``; False when the call stops.
    The matching runs under the alarm, set for what is left of this stretch; a match it stops is tried once more
    from where the scan was, in a stretch of its own, and a second stop raises
    :func:`~webmcp_bridge.core.search.too_costly` (``label`` names the text)."""
    path, unit = place
    if run.scanned > 0 and run.scanned + min(utf8_len(text), cap) > run.byte_budget:
        run.stopped, run.cursor = "scanBytes", (path, unit, *after)
        return False
    if utf8_len(text) > cap:
        text = truncate_utf8(text, cap)
        run.cut += 1
    run.scanned += utf8_len(text)
    items: Iterator[LineHit | Progress] = scan(text, run.query, after)
    where, stopped_at = after, None  # where a new scan would resume; where the last match was stopped
    if not run.alarm.running:  # set once for the rest of this stretch; search() stops it after each path
        run.alarm.start(max(0.001, SEARCH_MATCH_SECONDS - (time.monotonic() - run.slice_started)))
    while True:
        if run.alarm.due:  # the stretch ran out between two matches: a yield gives the next one its own
            await _pause(run, now_or_never=True)
        try:
            with run.alarm.raising():
                item = next(items, None)
        except Overrun:
            if stopped_at == where:
                raise too_costly(path, where[0], label) from None
            stopped_at = where
            await _pause(run, now_or_never=True)
            items = scan(text, run.query, where)
            continue
        if item is None:
            return True
        if isinstance(item, Progress):
            where = (item.line, item.offset)
            if await _pause(run):
                run.stopped, run.cursor = "time", (path, unit, item.line, item.offset)
                return False
            run.steps += 1
            continue
        hit = {**located, "line": item.line, "column": item.column, "length": item.length, "snippet": item.snippet}
        size = json_bytes(hit) + 1
        if len(run.hits) >= run.limit or run.hit_bytes + size > run.hit_budget:
            run.stopped = "hits"  # the cursor stays at the last hit returned
            return False
        run.hits.append(hit)
        run.hit_bytes += size
        where = (item.line, item.column - 1 + item.length)  # the hit's end: the scan goes on from there
        run.cursor = (path, unit, *where)


def _output_text(cell: RawCell, index: int) -> tuple[str, str, bool] | None:
    """``(text searched, mime, cut)`` of output ``index``: text/plain, else its first text representation."""
    items = [item for item in cell.outputs[index].items if not item.binary]
    if not items:
        return None
    item = next((i for i in items if i.mime == "text/plain"), items[0])
    head = truncate_utf8(item.head, SEARCH_OUTPUT_BYTES)
    return head, item.mime, item.bytes > utf8_len(head)


async def _search_cells(
    ctx: CallContext, run: _Run, path: str, cells: list[RawCell], after: tuple[int, int, int], outputs: bool
) -> bool:
    per_cell = ctx.limits.outputs_per_cell
    for cell in cells:
        units: list[tuple[int | None, str, str | None, bool]] = [(None, cell.source, None, False)]
        if outputs:
            units += [(j, *found) for j in range(len(cell.outputs)) if (found := _output_text(cell, j)) is not None]
        for output_index, text, mime, was_cut in units:
            unit = unit_of(cell.index, output_index, per_cell)
            if unit < after[0]:
                continue
            start = after[1:] if unit == after[0] else (0, 0)
            kind = "source" if output_index is None else "output"
            located: dict[str, Any] = {"path": path, "kind": kind, "uri": notebook_uri(path)}
            if cell.id:
                uri = cell_uri(path, cell.id) if output_index is None else output_uri(path, cell.id, output_index)
                located.update(uri=uri, cellId=cell.id)
            located["cellIndex"] = cell.index
            if output_index is not None:
                located.update(outputIndex=output_index, mimeType=mime)
            run.cut += was_cut
            cap = SEARCH_TEXT_BYTES if output_index is None else SEARCH_OUTPUT_BYTES
            label = f"cell {cell.index}'s " + ("source" if output_index is None else f"output {output_index}")
            if not await _search_text(run, text, cap, (path, unit), start, located, label):
                return False
    return True


async def _search_notebook(
    ctx: CallContext, run: _Run, path: str, after: tuple[int, int, int], outputs: bool, listed_open: bool
) -> bool:
    """One notebook, True when searched to its end (or not there): the saved file first if listed closed (the guard
    refuses it if open now), else the live one first."""
    if not listed_open:
        done = await _search_saved(ctx, run, path, after, outputs)
        if done is not None:
            return done
    per_cell = ctx.limits.outputs_per_cell
    nb = ctx.host.find_open(path)
    if nb is not None:
        run.notebooks += 1
        first = after[0] // (per_cell + 1)
        count = nb.cell_count()
        for start in range(first, count, EXPORT_CHUNK):
            head = SEARCH_OUTPUT_BYTES if outputs else 0
            cells = nb.read_cells(
                list(range(start, min(count, start + EXPORT_CHUNK))),
                head_bytes=head,
                max_outputs=per_cell if outputs else 0,
            )
            if not await _search_cells(ctx, run, path, cells, after, outputs):
                return False
            if await _pause(run):
                run.stopped, run.cursor = "time", (path, unit_of(start + EXPORT_CHUNK, None, per_cell), 0, 0)
                return False
        return True
    if not listed_open:
        return True  # neither saved nor open: gone since the listing, or hidden
    done = await _search_saved(ctx, run, path, after, outputs)
    return True if done is None else done


async def _search_saved(
    ctx: CallContext, run: _Run, path: str, after: tuple[int, int, int], outputs: bool
) -> bool | None:
    """A closed notebook's saved file: True when done (or too large), False when the call stopped, None when the
    guard gave nothing."""
    per_cell = ctx.limits.outputs_per_cell
    try:
        saved = await ctx.host.read_saved_notebook(
            path, SEARCH_NOTEBOOK_BYTES, head_bytes=SEARCH_OUTPUT_BYTES if outputs else 0, max_outputs=per_cell
        )
    except ToolError as exc:
        if exc.code != ErrorCode.TOO_LARGE:
            raise
        return _skip(run, path)
    if saved is None:
        return None
    run.notebooks += 1
    return await _search_cells(ctx, run, path, list(saved.cells), after, outputs)


def _skip(run: _Run, path: str) -> bool:
    run.skipped += 1
    if len(run.skipped_paths) < SEARCH_SKIPPED_LISTED:
        run.skipped_paths.append(path)
    return True


async def _search_file(ctx: CallContext, run: _Run, path: str, after: tuple[int, int, int]) -> bool:
    if after[0] > 0:  # a cursor past the file's one unit: it was searched to its end
        return True
    if path.lower().endswith(BINARY_ENDINGS):
        return _skip(run, path)
    try:
        text = await ctx.host.read_text(path, ctx.limits.file_read_bytes)
    except ToolError as exc:
        if exc.code in (ErrorCode.TOO_LARGE, ErrorCode.INVALID_PATH):
            return _skip(run, path)
        raise
    if text is None:
        return True
    run.files += 1
    start = after[1:] if after[0] == 0 else (0, 0)
    located = {"path": path, "kind": "file"}
    return await _search_text(run, text, SEARCH_TEXT_BYTES, (path, 0), start, located, "the file")


async def search(ctx: CallContext, args: SearchInput) -> dict[str, Any]:
    """The search (module docstring). Raises ToolError(INVALID_ARGUMENT) for a refused query or a bad cursor."""
    query = compile_query(args.query, regex=args.regex, case_sensitive=args.case_sensitive)
    resume = decode_cursor(query, args.cursor) if args.cursor else None
    paths, walk_cut = await _walk(ctx, args.glob)
    now = time.monotonic()
    # the hits share the result with the skipped paths (each at most MAX_PATH_BYTES, JSON-escaped) and the counts
    hit_budget = ctx.limits.result_bytes - RESULT_HEADROOM - SEARCH_SKIPPED_LISTED * MAX_PATH_BYTES // 2
    run = _Run(query, args.limit, SEARCH_SCAN_BYTES, max(hit_budget, ctx.limits.result_bytes // 2), now, now)
    for path, kind, listed_open in paths:
        if resume is not None and path < resume[0]:
            continue
        after = resume[1:] if resume is not None and path == resume[0] else (0, 0, 0)
        try:
            done = (
                await _search_notebook(ctx, run, path, after, args.include_outputs, listed_open)
                if kind == "notebook"
                else await _search_file(ctx, run, path, after)
            )
        finally:
            run.alarm.stop()  # never left set across the next path's reads
        if not done:
            break
        if await _pause(run):
            run.stopped, run.cursor = "time", (path, 1 << 30, 0, 0)
            break
    result: dict[str, Any] = {
        "hits": run.hits,
        "truncated": run.stopped is not None,
        "nextCursor": encode_cursor(query, run.cursor) if run.stopped is not None and run.cursor else None,
        "searched": {"notebooks": run.notebooks, "files": run.files, "bytes": run.scanned},
        "windowChars": query.window,
        "cutTexts": run.cut,
        "skippedCount": run.skipped,
        "skippedPaths": run.skipped_paths,
        "walkTruncated": walk_cut,
    }
    if run.stopped is not None:
        result["stoppedBy"] = run.stopped
    return result


TOOLS = (
    tool(
        "jupyter_search",
        "Find a string (or a regular expression with regex: true) in the cell sources and text outputs of the "
        "workspace's notebooks, open or not, and in its text files; glob narrows the paths. Each hit has its path, "
        "the notebook:// uri of the cell or output, line, column and a snippet. Paged: pass nextCursor to go on "
        f"(at most {SEARCH_HITS} hits a call). A regular expression that backtracks too much on some line (nested "
        "repeats such as (a+)+) ends the search with an error.",
        search,
        Annotations.read(),
        SearchOutput,
    ),
)
