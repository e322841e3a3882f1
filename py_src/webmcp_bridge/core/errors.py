"""The closed list of error codes a tool may return (docs/TOOLS.md; a code is only ever added, never renamed), and
the one exception that carries them: the registry turns a :class:`ToolError` into ``isError: true`` with
``{"error": CODE, "message": ..., **details}``, anything else into ``INTERNAL_ERROR``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class ErrorCode(str, Enum):  # noqa: UP042 (StrEnum would change str() of a member)
    """Error codes: the product contract's closed list plus the project's own (docs/TOOLS.md, "Error codes")."""

    NO_ACTIVE_NOTEBOOK = "NO_ACTIVE_NOTEBOOK"
    NOTEBOOK_NOT_FOUND = "NOTEBOOK_NOT_FOUND"
    CELL_NOT_FOUND = "CELL_NOT_FOUND"
    OUTPUT_NOT_FOUND = "OUTPUT_NOT_FOUND"
    PATH_NOT_FOUND = "PATH_NOT_FOUND"
    STALE_CELL = "STALE_CELL"
    INVALID_PATH = "INVALID_PATH"
    PATH_EXISTS = "PATH_EXISTS"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    TOO_LARGE = "TOO_LARGE"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    KERNEL_UNAVAILABLE = "KERNEL_UNAVAILABLE"
    TIMEOUT = "TIMEOUT"
    ABORTED = "ABORTED"
    PENDING_NOT_FOUND = "PENDING_NOT_FOUND"
    CELL_ACCESS_DENIED = "CELL_ACCESS_DENIED"
    NOTEBOOK_ACCESS_DENIED = "NOTEBOOK_ACCESS_DENIED"
    COMMENT_NOT_FOUND = "COMMENT_NOT_FOUND"
    COMMENT_ANCHOR_STALE = "COMMENT_ANCHOR_STALE"
    PROPOSAL_ALREADY_PENDING = "PROPOSAL_ALREADY_PENDING"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    STALE_FILE = "STALE_FILE"
    SOURCE_NOT_FULLY_READ = "SOURCE_NOT_FULLY_READ"
    CELL_LOCKED = "CELL_LOCKED"
    FILE_NOT_FULLY_READ = "FILE_NOT_FULLY_READ"


#: the TIMEOUT message the loader answers when its watchdog stopped the worker (docs/loader.md), written by the build
#: into ``bridge.json``: ``{tool}`` the call, ``{tools}`` the calls running, ``{seconds}`` how long it did not answer
WATCHDOG_MESSAGE = (
    "{tool} was stopped: the bridge's Python did not answer for {seconds} s while {tools} ran, so the bridge was "
    "restarted. Calls that were running ended and pending results were lost; the notebooks are as those calls left "
    "them. Call again, and narrow a search, a pattern or a read that could take this long."
)


class ToolError(Exception):
    """An expected failure of a tool call: ``message`` is one sentence for the agent (never notebook content the
    caller may not read); ``details`` are JSON fields merged into the payload."""

    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.details = details

    def payload(self) -> dict[str, Any]:
        """The error payload: ``{"error": CODE, "message": str, **details}``."""
        return {"error": self.code.value, "message": self.message, **self.details}


def cell_not_found(cell_id: str) -> ToolError:
    """The one wording for a cell id that does not exist."""
    return ToolError(ErrorCode.CELL_NOT_FOUND, f"No cell with id {cell_id!r} in this notebook.", cellId=cell_id)


def notebook_not_found(path: str) -> ToolError:
    """The one wording for a notebook path that does not exist in the workspace."""
    return ToolError(ErrorCode.NOTEBOOK_NOT_FOUND, f"No notebook at {path!r}.", path=path)


def is_a_folder(path: str) -> ToolError:
    """A file tool given the path of a folder."""
    return ToolError(
        ErrorCode.INVALID_PATH, f"{path!r} is a folder; use jupyter_list_workspace to see what it holds.", path=path
    )


def not_a_text_file(path: str) -> ToolError:
    """A file tool given a file that is not UTF-8 text (an image, an archive...): never read or replaced as text."""
    return ToolError(
        ErrorCode.INVALID_PATH,
        f"{path!r} is not a UTF-8 text file; only text files can be read or written.",
        path=path,
        binary=True,
    )


def file_too_large(path: str, size: int, max_bytes: int) -> ToolError:
    """A text file larger than the bridge loads whole (the contents API has no ranges)."""
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{path!r} is {size} bytes; files up to {max_bytes} bytes can be read as text "
        "(read a larger one in the kernel, for example with jupyter_run_code).",
        path=path,
        bytes=size,
        maxBytes=max_bytes,
    )


def aborted(tool: str) -> ToolError:
    """A call whose WebMCP invocation the agent's client aborted (its signal) before the call returned."""
    return ToolError(
        ErrorCode.ABORTED,
        f"{tool} was aborted before it finished: it stopped at once and did nothing more "
        "(a cell that was running was interrupted and the cells after it did not run; changes completed "
        "before the abort stay).",
        tool=tool,
    )
