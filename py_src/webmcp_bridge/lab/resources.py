"""Serving notebooks, cells and outputs as MCP resources, and the guidance for agents as an MCP prompt, where the
page's WebMCP runtime has them (the MCP-B runtime; native WebMCP has neither).

:mod:`webmcp_bridge.session.resources` decides the templates and what a read returns. This module hands them to the
loader through ``resources.js``, the loader's ``connectResources(templatesJson, read) -> count`` (0 when the runtime
has no ``registerResource``: native WebMCP), whose ``read(uri)`` is ``resources.js``'s: it resolves to JSON text
``{"result": ReadResourceResult}`` or ``{"error": {error, message, ...}}`` (never rejects; the loader throws the
error to the runtime). Unregistering calls ``disconnectResources()`` and destroys the listener's proxy.

This module holds no JS object and returns nothing to JS: ``resources.js`` receives the loader's ``ctx`` once
(``attach``); the one Python callable it holds is the listener ``onRead(id, uri)``, whose return value it does not use
(in a worker: an event), and Python answers the read by a later call, ``answer(id, text)``.

The prompt (:func:`webmcp_bridge.tools.guidance.prompts_json`, the session's guidance with the site's paragraphs) is
plain data: ``connectPrompts(promptsJson) -> count`` (0 without ``registerPrompt``), ``disconnectPrompts()``.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from typing import Any

from webmcp_bridge.calls.registry import Registry
from webmcp_bridge.lab.ffi import Proxies, load_half
from webmcp_bridge.session.resources import ResourceError, read_resource, templates_json
from webmcp_bridge.tools.guidance import prompts_json


class ResourceRegistration:
    """The resource templates and the guidance prompt as registered on the page's runtime through the loader.

    Args:
        registry: the tools a read goes through (its context holds the guidance).
        loader: the loader's ``ctx`` (``connectResources``, ``disconnectResources``, ``connectPrompts``,
            ``disconnectPrompts``; a loader without the prompt functions registers no prompt), handed once to
            ``resources.js``.

    Attributes: ``count`` (resource templates registered), ``prompts`` (prompts registered).
    """

    def __init__(self, registry: Registry[Any], loader: Any) -> None:
        self.registry = registry
        self.half = load_half("webmcp_bridge.lab", "resources.js", loader)
        self._proxies = Proxies()
        self.count = 0
        self.prompts = 0
        self._tasks: set[asyncio.Future[None]] = set()  # reads under way (kept so none is collected before it ends)

    def _read(self, read_id: Any, uri: Any) -> None:
        """JS-facing listener: read ``uri``, then answer read ``read_id`` with its JSON text (module docstring)."""
        answer_to, text = int(read_id), str(uri)

        async def run() -> None:
            try:
                reply: dict[str, Any] = {"result": await read_resource(self.registry, text)}
            except ResourceError as err:
                reply = {"error": err.payload}
            except asyncio.CancelledError:  # the registration stopped: the page's read still gets its answer
                self.half.answer(answer_to, json.dumps({"error": {"error": "ABORTED", "message": "The read stopped."}}))
                raise
            except Exception:
                traceback.print_exc()
                reply = {"error": {"error": "INTERNAL_ERROR", "message": "The resource could not be read."}}
            self.half.answer(answer_to, json.dumps(reply, ensure_ascii=False))

        self._tasks.add(task := asyncio.ensure_future(run()))
        task.add_done_callback(self._tasks.discard)

    def register(self) -> int:
        """Register the templates (none where the runtime has no resources) and the guidance prompt (none where it
        has no prompts); returns how many templates were registered."""
        self.prompts = int(self.half.connectPrompts(prompts_json(self.registry.context.guidance)))
        self.count = int(self.half.connect(templates_json(), self._proxies.keep(self._read)))
        if self.count == 0:
            self._proxies.clear()
        return self.count

    def unregister(self) -> None:
        """Remove the templates and the prompt and free the reader proxy (a second call does nothing)."""
        if self.prompts:
            self.half.disconnectPrompts()
            self.prompts = 0
        if self.count:
            self.half.disconnect()
            self.count = 0
        self._proxies.clear()
