"""Text-file tools: jupyter_read_file, jupyter_write_file.

Bounded text files of the workspace, never notebooks: a path ending in ``.ipynb`` (any case, as JupyterLab
types files) is refused with INVALID_PATH before the workspace is looked at, so these tools cannot bypass the
cell tools' access control, and a notebook the agent may not see can never be told apart from a missing one.
Names starting with "." are refused the same way (they are not part of the workspace view, as in
``jupyter_list_workspace``).

Files are text when they are UTF-8 without NUL characters; anything else (images, archives, a CSV uploaded
in another encoding) is refused as a whole, never read or replaced as text. A file open in an editor is read
and written through the editor's live model (unsaved edits included; the person sees a write at once).

The ``hash`` of a file is :func:`webmcp_bridge.core.snapshot.source_hash` of its whole text (16 hex digits of
SHA-256 over UTF-8), as for cell sources. Overwriting an existing file needs the hash the agent read
(``expectedHash``): if the person changed the file since, the write is refused with STALE_FILE and the
person's text stays. The check and the write are two steps of the contents API (no conditional write
exists), so an edit saved in the instant between them is not detected.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from webmcp_bridge.calls.registry import Annotations, Tool, ToolInput
from webmcp_bridge.core.bounds import json_bytes
from webmcp_bridge.core.errors import ErrorCode, ToolError, is_a_folder
from webmcp_bridge.core.limits import MAX_PATH_BYTES, MIN_FILE_PAGE_BYTES, RESULT_HEADROOM, SHORT_ID_CHARS, preview, slice_utf8, utf8_len
from webmcp_bridge.core.paths import normalize_path
from webmcp_bridge.core.snapshot import source_hash
from webmcp_bridge.tools.common import MAX_INT, CallContext

PathField = Annotated[str, Field(description="Workspace-relative path of a text file (for example 'data/notes.md'); not a notebook.",
                                 min_length=1, max_length=MAX_PATH_BYTES)]


def file_path(path: str) -> str:
    """``path`` normalized, refusing notebooks and hidden names (INVALID_PATH) without touching the workspace."""
    normalized = normalize_path(path)
    if normalized.lower().endswith(".ipynb"):
        raise ToolError(ErrorCode.INVALID_PATH, "Notebooks are not read or written as files; use jupyter_get_cells, "
                        "jupyter_export_notebook and the cell tools.", path=normalized)
    if any(part.startswith(".") for part in normalized.split("/")):
        raise ToolError(ErrorCode.INVALID_PATH, "Names starting with '.' are hidden files, not part of the workspace.", path=normalized)
    return normalized


class ReadFileInput(ToolInput):
    path: PathField
    offset: Annotated[int, Field(description="UTF-8 byte offset to start at, for paging; use nextOffset from the previous page.", ge=0, le=MAX_INT)] = 0
    max_bytes: Annotated[int | None, Field(description="Most bytes of text to return (default and maximum: 16 KiB).", ge=1, le=MAX_INT)] = None


async def read_file(ctx: CallContext, args: ReadFileInput) -> dict[str, Any]:
    """One page of a text file.

    Returns ``{path, text, offset, nextOffset, totalBytes, hash, truncated}``: ``text`` spans UTF-8 bytes
    [offset, offset + its length) of ``totalBytes`` (never splitting a character: an offset inside one moves
    back to its start); ``nextOffset`` is null on the last page; ``truncated`` is true when more follows;
    ``hash`` is of the whole text (what ``jupyter_write_file`` needs as ``expectedHash``).

    Raises ToolError: INVALID_PATH (bad path, notebook, hidden name, folder, not a text file),
    PATH_NOT_FOUND, TOO_LARGE (a file over ``Limits.file_read_bytes``).
    """
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
    return {"path": path, "text": page, "offset": start, "nextOffset": nxt, "totalBytes": total,
            "hash": source_hash(text), "truncated": nxt is not None}


class WriteFileInput(ToolInput):
    path: PathField
    content: Annotated[str, Field(description="The file's whole new text (UTF-8; at most 512 KiB).")]
    overwrite: Annotated[bool, Field(description="Replace an existing file (then expectedHash is required).")] = False
    expected_hash: Annotated[str | None, Field(description="The hash jupyter_read_file returned for the file; refused with STALE_FILE if the file changed since.",
                                               min_length=1, max_length=SHORT_ID_CHARS)] = None


async def write_file(ctx: CallContext, args: WriteFileInput) -> dict[str, Any]:
    """Create or replace a text file.

    A new file is created (its folder must exist). An existing one is replaced only with ``overwrite: true``
    and the ``expectedHash`` read from it, and only when it is a text file. Returns
    ``{path, created, bytes, hash}`` (``bytes``: UTF-8 size written; ``hash``: of the new text).

    Raises ToolError: INVALID_PATH (bad path, notebook, hidden name, folder, not a text file), PATH_NOT_FOUND
    (no such folder), PATH_EXISTS (a file is there and ``overwrite`` is false), INVALID_ARGUMENT (overwrite
    without ``expectedHash``), STALE_FILE (the file changed or went away since it was read: details
    ``currentHash`` (null when gone) and a bounded ``currentPreview``), TOO_LARGE (content over
    ``Limits.file_write_bytes``: refused, never truncated). Nothing is written when any of these is raised.
    """
    path = file_path(args.path)
    size = utf8_len(args.content)
    if size > ctx.limits.file_write_bytes:
        raise ToolError(ErrorCode.TOO_LARGE, f"content is {size} bytes; files up to {ctx.limits.file_write_bytes} bytes can be written.",
                        field="content", bytes=size, maxBytes=ctx.limits.file_write_bytes)
    parent = path.rpartition("/")[0]
    if parent and await ctx.host.list_dir(parent) is None:
        raise ToolError(ErrorCode.PATH_NOT_FOUND, f"No folder at {parent!r}.", path=parent)
    entry = await ctx.host.stat(path)
    if entry is None:
        if args.expected_hash is not None:
            raise ToolError(ErrorCode.STALE_FILE, f"{path!r} no longer exists (it was deleted or renamed since you read it).",
                            path=path, expectedHash=args.expected_hash, currentHash=None)
    else:
        if entry.type == "directory":
            raise is_a_folder(path)
        if not args.overwrite:
            raise ToolError(ErrorCode.PATH_EXISTS, f"A file already exists at {path!r}; to replace it, read it and pass "
                            "overwrite: true with its hash as expectedHash.", path=path)
        if args.expected_hash is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "Replacing a file needs expectedHash: the hash jupyter_read_file "
                            "returned for it, so a person's edit is never overwritten unseen.", path=path)
        current = await ctx.host.read_text(path, ctx.limits.file_read_bytes)  # also refuses binary files
        current_hash = None if current is None else source_hash(current)
        if current_hash != args.expected_hash:
            raise ToolError(ErrorCode.STALE_FILE, "The file changed since you read it (the person's edit wins). Read it again "
                            "and retry with the new hash.", path=path, expectedHash=args.expected_hash, currentHash=current_hash,
                            currentPreview=None if current is None else preview(current, ctx.limits.error_preview_bytes))
    await ctx.host.write_text(path, args.content)
    return {"path": path, "created": entry is None, "bytes": size, "hash": source_hash(args.content)}


TOOLS = (
    Tool("jupyter_read_file", "Read file",
         "Read a text file of the workspace (not a notebook), paged by UTF-8 byte offset (16 KiB a page). Returns the text, "
         "nextOffset (null at the end), totalBytes and the file's hash (needed to overwrite it). An open editor's unsaved text is what you read.",
         ReadFileInput, read_file, Annotations(read_only=True, untrusted_content=True)),
    Tool("jupyter_write_file", "Write file",
         "Create a text file in the workspace (not a notebook; at most 512 KiB; its folder must exist). To replace an existing file pass "
         "overwrite: true and expectedHash (the hash jupyter_read_file returned); refused with STALE_FILE if it changed since.",
         WriteFileInput, write_file, Annotations(untrusted_content=True, consequential=True)),
)
