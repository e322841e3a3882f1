"""The host protocol's application half over the live JupyterLab (:class:`JupyterLabHost`: the workspace's contents
and the open notebooks); one notebook is :class:`~webmcp_bridge.lab.notebook.LabNotebook`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import js
from pyodide.ffi import JsException

from webmcp_bridge.changes.undo import EditJournal
from webmcp_bridge.core.errors import ErrorCode, ToolError, file_too_large, is_a_folder, not_a_text_file
from webmcp_bridge.core.limits import (
    PLATFORM_ERROR_CHARS,
    utf8_len,
)
from webmcp_bridge.core.metadata import METADATA_KEY
from webmcp_bridge.host.protocol import (
    Entry,
    OpenDocument,
    SavedNotebook,
    TabsState,
)
from webmcp_bridge.lab.ffi import Proxies, is_nullish, js_object
from webmcp_bridge.lab.notebook import LabNotebook, load_model_js, raw_cell
from webmcp_bridge.lab.server_root import ServerRoot
from webmcp_bridge.lab.tabs import load_tabs_js


class JupyterLabHost:
    """A :class:`~webmcp_bridge.host.protocol.NotebookHost` over the running JupyterLab.

    Every method given a path first refuses one that resolves outside a server's root (a symbolic link:
    :mod:`webmcp_bridge.lab.server_root`), and a folder listing leaves such entries out; in JupyterLite nothing
    is asked.

    Args:
        ctx: the JS object the loader passes to ``boot.start``: ``{app, tracker, docManager, modules}``.
    """

    def __init__(self, ctx: Any) -> None:
        self.app = ctx.app
        self.docs = ctx.docManager
        self.modules = ctx.modules
        self.contents = self.app.serviceManager.contents
        self.live = load_model_js(ctx.tracker)
        self.tabs = load_tabs_js(ctx.tracker, self.contents)
        self.tabs_read: dict[str, tuple[float, TabsState]] = {}  # notebook path -> (monotonic time, last tabs.js read)
        self.root = ServerRoot(self.app.serviceManager.serverSettings)
        self._metadata_cache: dict[str, tuple[str, Any]] = {}
        self._proxies = Proxies()  # the change listener, while one listens
        #: the agent's source edits, for the person's review and revert in the Agent panel (changes/undo.py)
        self.journal = EditJournal()

    def listen(self, callback: Callable[[list[str]], None], delay_seconds: float) -> Callable[[], None]:
        """Call ``callback(panel ids)`` once per burst of changes of the tracked notebooks, ``delay_seconds`` after
        the burst's first change (the JS half collects the burst, so a change costs no crossing); one listener
        at a time. Returns the function that stops it and frees its proxy."""
        self._proxies.clear()
        proxy = self._proxies.keep(lambda ids: callback([str(i) for i in json.loads(str(ids))]))
        self.live.listen(proxy, round(delay_seconds * 1000))

        def stop() -> None:
            self.live.listen(None, 0)
            self._proxies.remove(proxy)

        return stop

    def panels(self) -> list[Any]:
        """The open notebook panels (for the person's side, which follows each)."""
        return list(self.live.panels())

    async def _get(self, path: str, content: bool) -> Any:
        try:
            return await self.contents.get(path, js_object({"content": content}))
        except JsException:
            return None

    @staticmethod
    def _entry(model: Any) -> Entry:
        kind = str(model.type)
        return Entry(
            str(model.path),
            str(model.name),
            "directory" if kind == "directory" else "notebook" if kind == "notebook" else "file",
        )

    async def list_dir(self, path: str) -> list[Entry] | None:
        await self.root.check(path)
        model = await self._get(path, True)
        if model is None or str(model.type) != "directory":
            return None
        entries = [self._entry(child) for child in model.content]
        outside = await self.root.outside([e.path for e in entries])
        return [e for e in entries if e.path not in outside]

    async def stat(self, path: str) -> Entry | None:
        await self.root.check(path)
        model = await self._get(path, False)
        return None if model is None else self._entry(model)

    async def open_notebook(self, path: str, activate: bool) -> LabNotebook:
        await self.root.check(path)
        if activate:  # opens it if needed and brings it to the front, making it the tracker's current
            panel = self.docs.openOrReveal(path)
        else:
            panel = self.docs.findWidget(path)
            if is_nullish(panel):
                panel = self.docs.open(path, "default", js.undefined, js_object({"activate": False}))
        if is_nullish(panel) or is_nullish(getattr(panel, "content", None)):
            raise ToolError(
                ErrorCode.NOTEBOOK_NOT_FOUND, f"JupyterLab could not open {path!r} as a notebook.", path=path
            )
        await panel.context.ready
        return LabNotebook(self, panel, path)

    async def create_notebook(self, path: str, kernel_name: str | None) -> None:
        content = {
            "cells": [],
            "metadata": {
                "kernelspec": {
                    "name": kernel_name or "python",
                    "display_name": "Python (Pyodide)",
                    "language": "python",
                },
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        await self.root.check(path)
        try:
            await self.contents.save(path, js_object({"type": "notebook", "format": "json", "content": content}))
        except JsException as exc:
            raise ToolError(
                ErrorCode.INTERNAL_ERROR, f"Creating the notebook failed: {str(exc)[:PLATFORM_ERROR_CHARS]}", path=path
            ) from None

    def open_documents(self) -> list[OpenDocument]:
        return [
            OpenDocument(str(path), "notebook", bool(dirty)) for path, dirty in json.loads(str(self.live.documents()))
        ]

    def current_notebook(self) -> LabNotebook | None:
        panel = self.live.current()
        return None if is_nullish(panel) else LabNotebook(self, panel)

    def find_open(self, path: str) -> LabNotebook | None:
        panel = self.live.find(path)
        return None if is_nullish(panel) else LabNotebook(self, panel, path)

    async def notebook_bridge_metadata(self, path: str) -> Any:
        """Of the live model when open; else read from the saved file, cached by its last_modified (listing a
        folder of notebooks reads each file once until it changes)."""
        found = self.find_open(path)
        if found is not None:
            return found.bridge_metadata()
        await self.root.check(path)
        stat = await self._get(path, False)
        if stat is None:
            return None
        stamp = str(stat.last_modified)
        cached = self._metadata_cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        model = await self._get(path, True)
        value = None
        if model is not None and not is_nullish(model.content) and str(model.type) == "notebook":
            raw = js.JSON.stringify(
                getattr(getattr(model.content, "metadata", None), METADATA_KEY, None) or js.undefined
            )
            value = None if is_nullish(raw) else json.loads(str(raw))
        self._metadata_cache[path] = (stamp, value)
        return value

    async def read_saved_notebook(
        self, path: str, max_bytes: int, *, head_bytes: int, max_outputs: int
    ) -> SavedNotebook | None:
        """The saved file through the contents service (one load; its size checked first when known); the cells
        described by ``notebook.js`` in one crossing, output texts cut to ``head_bytes`` there."""
        await self.root.check(path)
        stat = await self._get(path, False)
        if stat is None or str(stat.type) != "notebook":
            return None
        size = getattr(stat, "size", None)
        if not is_nullish(size) and int(size) > max_bytes:
            raise file_too_large(path, int(size), max_bytes)
        model = await self._get(path, True)
        if model is None or str(model.type) != "notebook" or is_nullish(model.content):
            return None
        data = json.loads(str(self.live.savedCells(model.content, head_bytes, max_outputs)))
        cells = tuple(raw_cell(c, head_bytes) for c in data["cells"])
        return SavedNotebook(data["metadata"], cells, tuple(data["cellMetadata"]))

    # -- text files -------------------------------------------------------------------------
    def _text_context(self, path: str) -> Any:
        """The document context of a text document open on ``path`` (an editor, a CSV viewer...), whose live
        model holds the person's unsaved edits; None when none is open."""
        widget = self.docs.findWidget(path)
        context = None if is_nullish(widget) else getattr(widget, "context", None)
        if is_nullish(context):
            return None
        contents_model = context.contentsModel
        if is_nullish(contents_model) or str(contents_model.type) == "notebook" or str(contents_model.format) != "text":
            return None  # an image viewer's base64 model, a notebook: not text
        return context

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        """The live text of an open editor, else the saved file. The contents API has no ranges: the whole
        file is loaded (after its size, when known, is checked against ``max_bytes``)."""
        await self.root.check(path)
        context = self._text_context(path)
        if context is not None:
            text = str(context.model.sharedModel.getSource())
        else:
            stat = await self._get(path, False)
            if stat is None:
                return None
            if str(stat.type) == "directory":
                raise is_a_folder(path)
            size = getattr(stat, "size", None)
            if not is_nullish(size) and int(size) > max_bytes:
                raise file_too_large(path, int(size), max_bytes)
            model = await self._get(path, True)
            if model is None:
                return None
            data = json.loads(str(self.live.fileText(model)))
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
        JupyterLab does not later report the file as changed on disk; else a contents save as a text file."""
        await self.root.check(path)
        context = self._text_context(path)
        try:
            if context is not None:
                context.model.sharedModel.setSource(text)
                await context.save()
            else:
                await self.contents.save(path, js_object({"type": "file", "format": "text", "content": text}))
        except JsException as exc:
            raise ToolError(
                ErrorCode.INTERNAL_ERROR, f"Writing the file failed: {str(exc)[:PLATFORM_ERROR_CHARS]}", path=path
            ) from None
