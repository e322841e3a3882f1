"""Workspace paths: the one check every path an agent sends goes through (docs/TOOLS.md: workspace-relative, no
absolute path, no ``..``, no control characters; a path names something inside the contents root or nothing)."""

from __future__ import annotations

import unicodedata

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import MAX_NAME_BYTES, MAX_PATH_BYTES


def normalize_path(path: str, *, allow_root: bool = False) -> str:
    """``path`` in canonical form ("a/b.ipynb", root ""): one leading "./" and trailing "/" stripped, "//" collapsed.

    Raises ToolError(INVALID_PATH) for an absolute path ("/x", "~"), any ":" (a drive), a "." or ".." segment, a
    backslash, a control or format character, a path over 1 KiB or a segment over 255 bytes, a name with leading or
    trailing spaces, and the root unless ``allow_root``.
    """
    if not isinstance(path, str):
        raise ToolError(ErrorCode.INVALID_PATH, "A path must be a string.")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise ToolError(ErrorCode.INVALID_PATH, f"A path may be at most {MAX_PATH_BYTES} bytes.")
    for ch in path:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            raise ToolError(ErrorCode.INVALID_PATH, "A path may not contain control or format characters.")
    if "\\" in path:
        raise ToolError(ErrorCode.INVALID_PATH, "Use '/' to separate folders; '\\' is not allowed.")
    if path.startswith(("/", "~")):
        raise ToolError(
            ErrorCode.INVALID_PATH, "Paths are relative to the workspace root; absolute paths are not allowed."
        )
    if ":" in path:  # JupyterLab reads "name:path" as a path on another drive
        raise ToolError(ErrorCode.INVALID_PATH, "':' is not allowed in a path (JupyterLab reads it as a drive name).")
    if path.startswith("./"):
        path = path[2:]
    parts = [p for p in path.split("/") if p != ""]
    for part in parts:
        if part in (".", ".."):
            raise ToolError(ErrorCode.INVALID_PATH, "'.' and '..' segments are not allowed in a path.")
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise ToolError(ErrorCode.INVALID_PATH, f"A file or folder name may be at most {MAX_NAME_BYTES} bytes.")
        if part != part.strip():
            raise ToolError(ErrorCode.INVALID_PATH, "Names may not start or end with spaces.")
    normalized = "/".join(parts)
    if not normalized and not allow_root:
        raise ToolError(ErrorCode.INVALID_PATH, "A file path is required; the workspace root is not a file.")
    return normalized


def join(directory: str, name: str) -> str:
    """``directory`` and ``name`` joined and checked (both already untrusted)."""
    d = normalize_path(directory, allow_root=True)
    if "/" in name:
        raise ToolError(ErrorCode.INVALID_PATH, "A name may not contain '/'; pass the folder as 'directory'.")
    return normalize_path(f"{d}/{name}" if d else name)


def is_notebook_path(path: str) -> bool:
    """True when ``path`` ends with ``.ipynb`` in any case: every notebook check (the hidden-notebook rule, the file
    tools' refusal) goes through here, so "a/B.IPYNB" is never treated as a plain file."""
    return path.lower().endswith(".ipynb")
