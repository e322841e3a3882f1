"""Text-file tools: jupyter_read_file, jupyter_write_file, jupyter_edit_file.

Never notebooks: a path ending in ``.ipynb`` (any case) or a name starting with "." is refused with INVALID_PATH
before the workspace is looked at, so the cell tools' access control cannot be bypassed and a hidden notebook reads
as a missing one. Text is UTF-8 without NUL. A file open in an editor is read and written through its live model.

An overwrite needs the ``hash`` read (:func:`~webmcp_bridge.core.snapshot.source_hash`, else STALE_FILE) and every
byte of that version read or written by the agent in this session (else FILE_NOT_FULLY_READ, ``CallContext.
file_reads``): a write back of a cut read would delete what the agent did not see. Check and write are two contents
API steps (no conditional write exists). Propose mode holds every write and checks the file again after Accept.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from webmcp_bridge.calls.payloads import Payload
from webmcp_bridge.calls.registry import Annotations, ToolInput
from webmcp_bridge.core.bounds import json_bytes
from webmcp_bridge.core.errors import ErrorCode, ToolError, is_a_folder
from webmcp_bridge.core.limits import (
    DEFAULT_LIMITS,
    DIFF_LINES,
    KIB,
    MAX_PATH_BYTES,
    MIN_FILE_PAGE_BYTES,
    RESULT_HEADROOM,
    preview,
    slice_utf8,
    utf8_len,
)
from webmcp_bridge.core.paths import is_notebook_path, normalize_path
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.propose.proposals import DeniedPayload, source_diff
from webmcp_bridge.tools.common import MAX_INT, CallContext, Index, ShortId, check_size, tool
from webmcp_bridge.tools.payloads import model

PathField = Annotated[
    str,
    Field(
        description="Workspace-relative path of a text file (for example 'data/notes.md'); not a notebook.",
        min_length=1,
        max_length=MAX_PATH_BYTES,
    ),
]


def file_path(path: str) -> str:
    """``path`` normalized, refusing notebooks and hidden names (INVALID_PATH) without touching the workspace."""
    normalized = normalize_path(path)
    if is_notebook_path(normalized):
        raise ToolError(
            ErrorCode.INVALID_PATH,
            "Notebooks are not read or written as files; use jupyter_get_notebook_map, "
            "jupyter_get_cells and the cell tools.",
            path=normalized,
        )
    if any(part.startswith(".") for part in normalized.split("/")):
        raise ToolError(
            ErrorCode.INVALID_PATH,
            "Names starting with '.' are hidden files, not part of the workspace.",
            path=normalized,
        )
    return normalized


#: the "cell id" of a text file in ``CallContext.file_reads`` (files have none)
FILE = ""
#: how many unread ranges a FILE_NOT_FULLY_READ error lists
UNREAD_RANGES = 8


class ReadFileInput(ToolInput):
    path: PathField
    offset: Index = Field(
        0, description="UTF-8 byte offset to start at, for paging; use nextOffset from the previous page."
    )
    max_bytes: int | None = Field(
        None,
        description=f"Most bytes of text to return (default and maximum: {DEFAULT_LIMITS.file_page_bytes // KIB} KiB).",
        ge=1,
        le=MAX_INT,
    )


async def read_file(ctx: CallContext, args: ReadFileInput) -> dict[str, Any]:
    """One page of a text file (:class:`FileRead`): UTF-8 bytes [offset, offset + its length) of ``totalBytes``,
    never splitting a character; ``hash`` is of the whole text. Raises ToolError: INVALID_PATH (bad path, notebook,
    hidden name, folder, not text), PATH_NOT_FOUND, TOO_LARGE (over ``Limits.file_read_bytes``)."""
    path = file_path(args.path)
    text = await ctx.host.read_text(path, ctx.limits.file_read_bytes)
    if text is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No file at {path!r}.", path=path)
    page_max = min(args.max_bytes or ctx.limits.file_page_bytes, ctx.limits.file_page_bytes)
    while True:  # JSON escaping (control characters) can make a page's text much longer: keep it whole
        page, start, nxt, total = slice_utf8(text, args.offset, page_max)
        if page_max <= MIN_FILE_PAGE_BYTES or json_bytes(page) <= ctx.limits.result_bytes - RESULT_HEADROOM:
            break
        page_max //= 2
    digest = source_hash(text)
    ctx.file_reads.record(path, FILE, digest, start, start + utf8_len(page))  # what reached the agent of this version
    return {
        "path": path,
        "text": page,
        "offset": start,
        "nextOffset": nxt,
        "totalBytes": total,
        "hash": digest,
        "truncated": nxt is not None,
    }


FileRead = model(
    "FileRead", path=str, text=str, offset=int, nextOffset=int | None, totalBytes=int, hash=str, truncated=bool
)


class FileWritten(Payload):
    path: str
    created: bool
    bytes: int = Field(description="UTF-8 bytes this call wrote: the content, or for an append the bytes added.")
    totalBytes: int = Field(description="The file's UTF-8 size now.")
    hash: str = Field(description="The hash of the file's whole new text (the expectedHash of the next write).")
    appended: bool


FileEdited = model("FileEdited", path=str, replacements=int, totalBytes=int, hash=str)


class WriteFileInput(ToolInput):
    path: PathField
    content: str = Field(
        description="The file's whole new text, or with append the text to add at its end (UTF-8; at most "
        f"{DEFAULT_LIMITS.file_write_bytes // KIB} KiB)."
    )
    overwrite: bool = Field(
        False,
        description="Replace an existing file (then expectedHash is required, and you must have read all of that "
        "version).",
    )
    append: bool = Field(
        False,
        description="Add content at the end of the file (created if missing); keeps every byte already there, so "
        "no full read is needed.",
    )
    expected_hash: ShortId | None = Field(
        None,
        description="The hash jupyter_read_file returned for the file; refused with STALE_FILE if the file "
        "changed since.",
    )


def stale(path: str, expected: str, current: str | None, ctx: CallContext) -> ToolError:
    """STALE_FILE: the file is no longer the version the agent read (``current``: its text now, None when gone)."""
    details: dict[str, Any] = {"path": path, "expectedHash": expected, "currentHash": None}
    if current is None:
        message = f"{path!r} no longer exists (it was deleted or renamed since you read it)."
        return ToolError(ErrorCode.STALE_FILE, message, **details)
    details.update(currentHash=source_hash(current), currentPreview=preview(current, ctx.limits.error_preview_bytes))
    message = "The file changed since you read it (the person's edit wins). Read it again and retry with the new hash."
    return ToolError(ErrorCode.STALE_FILE, message, **details)


def check_file_read(ctx: CallContext, path: str, text: str) -> None:
    """FILE_NOT_FULLY_READ unless every byte of ``text`` (the file now) reached the agent or the agent wrote it,
    with ``nextOffset`` and the first UNREAD_RANGES gaps (``unreadRanges``, UTF-8 byte ranges)."""
    digest, total = source_hash(text), utf8_len(text)
    gaps = ctx.file_reads.unread_ranges(path, FILE, digest, total, UNREAD_RANGES)
    if not gaps:
        return
    listed = ", ".join(f"[{lo}, {hi})" for lo, hi in gaps)
    raise ToolError(
        ErrorCode.FILE_NOT_FULLY_READ,
        f"{path!r} is {total} bytes and you were given only part of this version, so overwriting it would delete what "
        f"you did not see. Read the rest with jupyter_read_file (offset {gaps[0][0]}, then each nextOffset until it "
        f"is null; unread byte ranges: {listed}{' and more' if len(gaps) >= UNREAD_RANGES else ''}) and send the "
        "whole new text, or change part of it with jupyter_edit_file (oldText/newText), or add to its end with "
        "jupyter_write_file append: true.",
        path=path,
        totalBytes=total,
        nextOffset=gaps[0][0],
        unreadRanges=[list(g) for g in gaps],
        hash=digest,
    )


def check_total(ctx: CallContext, text: str, what: str) -> None:
    """TOO_LARGE when a file would grow past ``Limits.file_read_bytes`` (the largest file these tools load)."""
    check_size(
        utf8_len(text),
        ctx.limits.file_read_bytes,
        what + " would be {size} bytes; files up to {cap} bytes are read and written here.",
    )


async def write_file(ctx: CallContext, args: WriteFileInput) -> dict[str, Any]:
    """Create a text file (its folder must exist), replace one (``overwrite``: ``expectedHash`` and a full read) or
    add to its end (``append``: created if missing). Returns :class:`FileWritten`. Raises ToolError, writing nothing:
    INVALID_PATH (as :func:`read_file`), PATH_NOT_FOUND (no folder), PATH_EXISTS (neither overwrite nor append),
    INVALID_ARGUMENT (overwrite without ``expectedHash``, or with append), STALE_FILE (:func:`stale`),
    FILE_NOT_FULLY_READ (:func:`check_file_read`), TOO_LARGE (content over ``Limits.file_write_bytes``, a file
    grown past ``Limits.file_read_bytes``)."""
    path = file_path(args.path)
    size = utf8_len(args.content)
    message = "content is {size} bytes; files up to {cap} bytes can be written."
    check_size(size, ctx.limits.file_write_bytes, message, field="content")
    if args.overwrite and args.append:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "Pass overwrite (replace the whole file) or append (add to its end), not both.",
            path=path,
        )
    parent = path.rpartition("/")[0]
    if parent and await ctx.host.list_dir(parent) is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No folder at {parent!r}.", path=parent)
    entry = await ctx.host.stat(path)
    current: str | None = None
    if entry is None:
        if args.expected_hash is not None:
            raise stale(path, args.expected_hash, None, ctx)
    else:
        if entry.type == "directory":
            raise is_a_folder(path)
        if not args.overwrite and not args.append:
            raise ToolError(
                ErrorCode.PATH_EXISTS,
                f"A file already exists at {path!r}; to replace it, read it and pass "
                "overwrite: true with its hash as expectedHash; to add to its end pass append: true; to change "
                "part of it use jupyter_edit_file.",
                path=path,
            )
        if args.overwrite and args.expected_hash is None:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                "Replacing a file needs expectedHash: the hash jupyter_read_file "
                "returned for it, so a person's edit is never overwritten unseen.",
                path=path,
            )
        current = await ctx.host.read_text(
            path, ctx.limits.file_read_bytes
        )  # binary: INVALID_PATH; over the cap: TOO_LARGE
        if current is None:
            raise stale(path, args.expected_hash or "", None, ctx)
        if args.expected_hash is not None and source_hash(current) != args.expected_hash:
            raise stale(path, args.expected_hash, current, ctx)
        if args.overwrite:
            check_file_read(ctx, path, current)
    new_text = (current or "") + args.content if args.append else args.content
    if args.append:
        check_total(ctx, new_text, "The appended file")
    if args.append and current is not None:
        lines = args.content.splitlines() or [""]
        if len(lines) > DIFF_LINES:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"This append is {len(lines)} lines; Propose mode shows at most {DIFF_LINES} "
                "lines to the person. Append less at once.",
                lines=len(lines),
                maxLines=DIFF_LINES,
            )
        what = f"Add {size} bytes at the end of {path} ({utf8_len(current)} bytes now)"
        diff = [["+", line] for line in lines]
        waited = await ctx.propose_workspace("jupyter_write_file", "append_file", path, what, diff=diff)
    else:
        what = f"Replace the whole text of {path}" if current is not None else f"Create the file {path}"
        waited = await ctx.propose_workspace(
            "jupyter_write_file", "write_file", path, what, before=current or "", after=args.content
        )
    if waited:  # the person may have changed the workspace while the proposal waited
        again = await ctx.host.stat(path)
        if current is None and again is not None and not args.append:
            raise ToolError(
                ErrorCode.PATH_EXISTS,
                f"A file was created at {path!r} while the proposal waited; nothing was written.",
                path=path,
            )
        if current is not None:
            now = await ctx.host.read_text(path, ctx.limits.file_read_bytes)
            if now != current:
                raise stale(path, source_hash(current), now, ctx)
        elif again is not None:  # an append to a file created meanwhile adds to what is there now
            now = await ctx.host.read_text(path, ctx.limits.file_read_bytes)
            current, new_text = now, (now or "") + args.content
            check_total(ctx, new_text, "The appended file")
    await ctx.host.write_text(path, new_text)
    digest = source_hash(new_text)
    if (
        args.append
        and current is not None
        and not ctx.file_reads.fully_read(path, FILE, source_hash(current), utf8_len(current))
    ):
        start = utf8_len(current)
        ctx.file_reads.record(path, FILE, digest, start, start + size)  # it knows what it added
    else:
        ctx.file_reads.mark_known(path, FILE, digest)  # the agent knows this version whole: it wrote it
    return {
        "path": path,
        "created": entry is None and current is None,
        "bytes": size,
        "totalBytes": utf8_len(new_text),
        "hash": digest,
        "appended": args.append,
    }


class EditFileInput(ToolInput):
    path: PathField
    old_text: str = Field(
        description="Exact text to replace (line ends as in the file); it must occur exactly once unless replaceAll.",
        min_length=1,
    )
    new_text: str = Field(description="Replacement text.")
    expected_hash: ShortId = Field(
        description="The hash jupyter_read_file returned for the file; refused with STALE_FILE if the file "
        "changed since."
    )
    replace_all: bool = Field(
        False, description="Replace every occurrence of oldText (default: it must occur exactly once)."
    )


def edit_diff(text: str, old: str, new: str, count: int) -> list[list[str]]:
    """Propose mode's diff of an edit: the whole lines the first ``count`` occurrences of ``old`` touch (as
    :meth:`str.replace` finds them), each group headed ``["…", "line N"]`` (1-based). TOO_LARGE past DIFF_LINES."""
    groups: list[tuple[int, int, int]] = []  # (line start, line end, occurrences)
    pos = text.find(old)
    while pos != -1 and sum(g[2] for g in groups) < count:
        end = pos + len(old)
        line_start = text.rfind("\n", 0, pos) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        if groups and line_start <= groups[-1][1]:
            groups[-1] = (groups[-1][0], max(groups[-1][1], line_end), groups[-1][2] + 1)
        else:
            groups.append((line_start, line_end, 1))
        pos = text.find(old, end)
    diff: list[list[str]] = []
    line, counted_to = 1, 0
    for start, stop, n in groups:
        line += text.count("\n", counted_to, start)
        counted_to = start
        before = text[start:stop]
        diff.append(["…", f"line {line}"])
        diff.extend(source_diff(before, before.replace(old, new, n), max_lines=None) if len(diff) <= DIFF_LINES else [])
        if len(diff) > DIFF_LINES:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"This edit shows more than {DIFF_LINES} diff lines; Propose mode shows at most "
                f"{DIFF_LINES} lines to the person. Split it into smaller edits.",
                maxLines=DIFF_LINES,
            )
    return diff


async def edit_file(ctx: CallContext, args: EditFileInput) -> dict[str, Any]:
    """Replace ``oldText`` (exact, line ends included) by ``newText`` in a text file, keeping every other byte (no
    full read needed). Returns :class:`FileEdited`. Raises ToolError, writing nothing: INVALID_PATH (as
    :func:`read_file`), PATH_NOT_FOUND, STALE_FILE (:func:`stale`), INVALID_ARGUMENT (``oldText`` not once without
    ``replaceAll``: ``occurrences``), TOO_LARGE (a text over ``Limits.file_write_bytes``, a result over
    ``Limits.file_read_bytes``, or in Propose mode over DIFF_LINES lines to show)."""
    path = file_path(args.path)
    for name, value in (("oldText", args.old_text), ("newText", args.new_text)):
        check_size(
            utf8_len(value), ctx.limits.file_write_bytes, name + " is {size} bytes; at most {cap} bytes.", field=name
        )
    entry = await ctx.host.stat(path)
    if entry is not None and entry.type == "directory":
        raise is_a_folder(path)
    current = None if entry is None else await ctx.host.read_text(path, ctx.limits.file_read_bytes)
    if current is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No file at {path!r}.", path=path)
    if source_hash(current) != args.expected_hash:
        raise stale(path, args.expected_hash, current, ctx)
    occurrences = current.count(args.old_text)
    if occurrences == 0 or (occurrences > 1 and not args.replace_all):
        hint = ""
        if occurrences == 0 and "\r\n" in current and "\n" in args.old_text and "\r\n" not in args.old_text:
            hint = " The file's lines end with CRLF (\\r\\n): send oldText with the same line ends."
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            ("oldText does not occur in the file." + hint)
            if occurrences == 0
            else f"oldText occurs {occurrences} times; include more surrounding text so it occurs once, or pass "
            "replaceAll: true.",
            path=path,
            occurrences=occurrences,
        )
    count = occurrences if args.replace_all else 1
    new_text = current.replace(args.old_text, args.new_text, count)
    check_total(ctx, new_text, "The edited file")
    diff = edit_diff(current, args.old_text, args.new_text, count) if ctx.proposals.mode == "propose" else None
    noun = "occurrence" if count == 1 else "occurrences"
    if await ctx.propose_workspace(
        "jupyter_edit_file", "edit_file", path, f"Edit {path} ({count} {noun} replaced)", diff=diff
    ):
        now = await ctx.host.read_text(path, ctx.limits.file_read_bytes)
        if now != current:
            raise stale(path, args.expected_hash, now, ctx)
    await ctx.host.write_text(path, new_text)
    digest = source_hash(new_text)
    if ctx.file_reads.fully_read(path, FILE, args.expected_hash, utf8_len(current)):
        ctx.file_reads.mark_known(path, FILE, digest)  # it knew the old version whole and chose the change
    return {"path": path, "replacements": count, "totalBytes": utf8_len(new_text), "hash": digest}


TOOLS = (
    tool(
        "jupyter_read_file",
        "Read a text file of the workspace (not a notebook), paged by UTF-8 byte offset "
        f"({DEFAULT_LIMITS.file_page_bytes // KIB} KiB a page). Returns the text, nextOffset (null at the end), "
        "totalBytes and the file's hash (needed to change it). An open editor's unsaved text is what you read.",
        read_file,
        Annotations.read(),
        FileRead,
    ),
    tool(
        "jupyter_write_file",
        f"Create a text file in the workspace (not a notebook; at most {DEFAULT_LIMITS.file_write_bytes // KIB} KiB; "
        "its folder must exist). To replace an existing file pass overwrite: true and expectedHash (the hash "
        "jupyter_read_file returned); you must have read every page of that version (else FILE_NOT_FULLY_READ), and "
        "it is refused with STALE_FILE if it changed since. append: true adds content at the end instead (no full "
        "read needed). To change part of a big file use jupyter_edit_file.",
        write_file,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True, consequential=True),
        FileWritten | DeniedPayload,
    ),
    tool(
        "jupyter_edit_file",
        "Replace oldText by newText in a text file of the workspace (not a notebook), keeping the rest: changes a big "
        "file without reading it whole. oldText must occur exactly once (else INVALID_ARGUMENT with occurrences) "
        "unless replaceAll: true; expectedHash is the hash jupyter_read_file returned (STALE_FILE if the file changed "
        "since).",
        edit_file,
        Annotations.write(destructive=True, idempotent=False, untrusted_content=True, consequential=True),
        FileEdited | DeniedPayload,
    ),
)
