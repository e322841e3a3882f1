"""The host protocol's application half over the live JupyterLab (:class:`JupyterLabHost`: the workspace's contents
and the open notebooks); one notebook is :class:`~webmcp_bridge.lab.notebook.LabNotebook`. The page's objects stay
in ``host.js`` (the contents service, text documents open in an editor) and ``notebook.js``; this module passes them
paths and text and reads JSON text back (docs/WORKER.md, "Handles instead of JS objects").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.core.errors import ErrorCode, ToolError, file_too_large, is_a_folder, not_a_text_file
from webmcp_bridge.core.limits import PLATFORM_ERROR_CHARS, utf8_len
from webmcp_bridge.core.metadata import METADATA_KEY
from webmcp_bridge.core.paths import is_notebook_path
from webmcp_bridge.host.protocol import Entry, EntryType, OpenDocument, SavedNotebook, TabsState
from webmcp_bridge.lab.ffi import Proxies, awaiting, is_nullish, json_of, load_half
from webmcp_bridge.lab.notebook import LabNotebook, access_state_of, load_model_js, raw_cell
from webmcp_bridge.lab.server_root import PAGE_CONFIG_KEY, ServerRoot
from webmcp_bridge.lab.tabs import load_tabs_js


def load_host_js(ctx: Any) -> Any:
    """``host.js`` attached to the loader's ``ctx`` and configured (the metadata key, the bound of a quoted error)."""
    files = load_half("webmcp_bridge.lab", "host.js", ctx)
    files.configure(METADATA_KEY, PLATFORM_ERROR_CHARS)
    return files


def _entry(data: dict[str, Any] | list[Any]) -> Entry:
    """An entry of ``host.js`` stat (an object) or listDir (``[path, name, type, lastModified]``)."""
    if isinstance(data, dict):
        path, name, kind, stamp = data["path"], data["name"], data["type"], data.get("lastModified")
    else:
        path, name, kind, stamp = data
    entry_kind: EntryType = "directory" if kind == "directory" else "notebook" if kind == "notebook" else "file"
    return Entry(str(path), str(name), entry_kind, None if stamp is None else str(stamp))


def _write_failed(answer: Any, what: str, path: str) -> None:
    """Raise INTERNAL_ERROR when ``host.js``'s answer to a write (JSON text ``{}`` or ``{error}``) says it failed."""
    error = json.loads(str(answer)).get("error")
    if error is not None:
        raise ToolError(ErrorCode.INTERNAL_ERROR, f"{what} failed: {str(error)[:PLATFORM_ERROR_CHARS]}", path=path)


class JupyterLabHost:
    """A :class:`~webmcp_bridge.host.protocol.NotebookHost` over the running JupyterLab (``ctx``: the loader's).
    Every method given a path first refuses one that resolves outside a server's root (a symbolic link:
    :mod:`webmcp_bridge.lab.server_root`), and a folder listing leaves such entries out."""

    def __init__(self, ctx: Any) -> None:
        self.files = load_host_js(ctx)
        self.live = load_model_js(ctx)
        self.tabs = load_tabs_js(ctx)
        self.tabs_read: dict[str, tuple[float, TabsState]] = {}  # notebook path -> (monotonic time, last tabs.js read)
        root = json.loads(str(self.files.serverRoot(PAGE_CONFIG_KEY)))
        self.root = ServerRoot(root["url"], root["token"], self.files.cookie)
        self._metadata_cache: dict[str, tuple[Any, Any]] = {}
        self._proxies = Proxies()  # the change listener, while one listens
        self.journal = EditJournal()  # the agent's source edits, for the person's review and revert

    def listen(self, callback: Callable[[list[str]], None], delay_seconds: float) -> Callable[[], None]:
        """Call ``callback(handles)`` once per burst of changes of the tracked notebooks, ``delay_seconds`` after its
        first change (collected by the JS half); one listener at a time. Returns the function that stops it."""
        self._proxies.clear()
        proxy = self._proxies.keep(lambda ids: callback([str(i) for i in json.loads(str(ids))]))
        self.live.listen(proxy, round(delay_seconds * 1000))

        def stop() -> None:
            self.live.listen(None, 0)
            self._proxies.remove(proxy)

        return stop

    # -- the kernel model (the loader's kernel_trust.js, through notebook.js): the person's side only ---------------
    def agent_kernels(self) -> int:
        """How many kernels are the agent's now (ran its code, not restarted since)."""
        return int(self.live.agentKernels())

    async def restart_agent_kernels(self) -> tuple[int, int]:
        """Restart every kernel that is the agent's (no dialog: the person confirmed); ``(restarted, failed)``."""
        data = json.loads(str(await awaiting(self.live).restartAgentKernels()))
        return int(data["restarted"]), int(data["failed"])

    async def confirm(self, title: str, body: str, accept: str) -> bool:
        """JupyterLab's dialog with these texts (as text), Cancel and a warning button ``accept``: True when pressed."""
        return bool(await awaiting(self.live).confirm(title, body, accept))

    def handles(self) -> list[str]:
        """The open notebook panels' handles (for the person's side)."""
        return [str(h) for h in json.loads(str(self.live.panels()))]

    def notebook(self, handle: str, path: str | None = None) -> LabNotebook:
        """The notebook of a handle ``notebook.js`` issued."""
        return LabNotebook(self, handle, path)

    async def _stat(self, path: str) -> dict[str, Any] | None:
        """``{path, name, type, size, lastModified}`` or None."""
        return json_of(await awaiting(self.files).stat(path))

    async def list_dir(self, path: str) -> list[Entry] | None:
        await self.root.check(path)
        listed = json_of(await awaiting(self.files).listDir(path))
        if listed is None:
            return None
        entries = [_entry(row) for row in listed]
        outside = await self.root.outside([e.path for e in entries])
        entries = [e for e in entries if e.path not in outside]
        if any(is_notebook_path(e.path) for e in entries):  # one crossing says which are open, for every entry
            opened = {doc.path for doc in self.open_documents()}
            entries = [dataclasses.replace(e, open=True) if e.path in opened else e for e in entries]
        return entries

    async def stat(self, path: str) -> Entry | None:
        await self.root.check(path)
        data = await self._stat(path)
        return None if data is None else _entry(data)

    async def open_notebook(self, path: str, activate: bool) -> LabNotebook:
        await self.root.check(path)
        handle = await awaiting(self.live).open(path, bool(activate))
        if is_nullish(handle):
            raise ToolError(
                ErrorCode.NOTEBOOK_NOT_FOUND, f"JupyterLab could not open {path!r} as a notebook.", path=path
            )
        return LabNotebook(self, str(handle), path)

    async def create_notebook(self, path: str, kernel_name: str | None) -> None:
        kernelspec = {"name": kernel_name or "python", "display_name": "Python (Pyodide)", "language": "python"}
        metadata = {"kernelspec": kernelspec, "language_info": {"name": "python"}}
        content = {"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
        await self.root.check(path)
        answer = await awaiting(self.files).saveModel(
            path, json.dumps({"type": "notebook", "format": "json", "content": content})
        )
        _write_failed(answer, "Creating the notebook", path)

    def open_documents(self) -> list[OpenDocument]:
        return [
            OpenDocument(str(path), "notebook", bool(dirty)) for path, dirty in json.loads(str(self.live.documents()))
        ]

    def current_notebook(self) -> LabNotebook | None:
        return self._viewed(self.live.currentViewed())

    def find_open(self, path: str) -> LabNotebook | None:
        return self._viewed(self.live.findViewed(path), path)

    def _viewed(self, raw: Any, path: str | None = None) -> LabNotebook | None:
        """The notebook of ``notebook.js``'s ``{handle, state}`` answer (null: none), holding the access state read
        with the handle when the page gave one (only while no change waited, so a state left unused loses nothing)."""
        data = json_of(raw)
        if data is None:
            return None
        handle, facts = str(data["handle"]), data["state"]
        if facts is None:
            return LabNotebook(self, handle, path)
        return LabNotebook(self, handle, str(facts["path"]), access_state_of(facts))

    async def notebook_bridge_metadata(self, path: str, listed: Entry | None = None) -> Any:
        """Of the live model when open; else of the saved file, cached by its last_modified (``listed``: a listing's
        entry of the closed notebook, whose last_modified saves a crossing)."""
        if listed is None:
            found = self.find_open(path)
            if found is not None:
                return found.bridge_metadata()
            await self.root.check(path)
            stat = await self._stat(path)
            if stat is None:
                return None
            stamp = stat["lastModified"]
        else:
            stamp = listed.last_modified
        cached = self._metadata_cache.get(path)
        if cached is not None and stamp is not None and cached[0] == stamp:
            return cached[1]
        data = json_of(await awaiting(self.files).notebookMetadata(path))
        value = None if data is None else data["value"]
        self._metadata_cache[path] = (stamp, value)
        return value

    async def saved_access_blocks(self, path: str) -> tuple[Any, list[Any]] | None:
        """One read of the saved file (the run rule keeps the answer by the listing's last_modified)."""
        await self.root.check(path)
        data = json_of(await awaiting(self.files).notebookMetadata(path))
        return None if data is None else (data["value"], list(data.get("cells") or []))

    async def read_saved_notebook(
        self, path: str, max_bytes: int, *, head_bytes: int, max_outputs: int
    ) -> SavedNotebook | None:
        """The saved file in one crossing: ``notebook.js`` checks its size first (when known), loads it and describes
        the cells, output texts cut to ``head_bytes``; None as well when the notebook is open in the page."""
        await self.root.check(path)
        data = json_of(await awaiting(self.live).savedNotebook(path, head_bytes, max_outputs, max_bytes))
        if data is None:
            return None
        if "size" in data:
            raise file_too_large(path, int(data["size"]), max_bytes)
        cells = tuple(raw_cell(c, head_bytes) for c in data["cells"])
        return SavedNotebook(data["metadata"], cells, tuple(data["cellMetadata"]))

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        """The live text of an open editor, else the saved file, loaded whole (the contents API has no ranges) after
        its size, when known, is checked against ``max_bytes``."""
        await self.root.check(path)
        live = self.files.openText(path)
        if not is_nullish(live):
            text = str(live)
        else:
            stat = await self._stat(path)
            if stat is None:
                return None
            if stat["type"] == "directory":
                raise is_a_folder(path)
            size = stat["size"]
            if size is not None and int(size) > max_bytes:
                raise file_too_large(path, int(size), max_bytes)
            data = json_of(await awaiting(self.files).fileText(path))
            if data is None:
                return None
            if data["kind"] == "directory":
                raise is_a_folder(path)
            if data["kind"] != "text" or "\x00" in data["text"]:  # text is UTF-8 without NUL
                raise not_a_text_file(path)
            text = data["text"]
        size = utf8_len(text)
        if size > max_bytes:
            raise file_too_large(path, size, max_bytes)
        return text

    async def write_text(self, path: str, text: str) -> None:
        """Through the open editor's model (then saved) when there is one, so the person sees the new text and
        JupyterLab does not report the file as changed on disk; else a contents save as a text file."""
        await self.root.check(path)
        _write_failed(await awaiting(self.files).writeText(path, text), "Writing the file", path)
