"""Serving notebooks, cells and outputs as MCP resources, and the guidance for agents as an MCP prompt, where the
page's WebMCP runtime has them (the MCP-B runtime; native WebMCP has neither).

:mod:`webmcp_bridge.session.resources` decides the templates and what a read returns. This module hands them to the
loader, ``connectResources(templatesJson, read) -> count`` (0 when the runtime has no ``registerResource``: native
WebMCP), with one proxy ``read(uri)`` that resolves to JSON text ``{"result": ReadResourceResult}`` or
``{"error": {error, message, ...}}`` (never rejects; the loader throws the error to the runtime). Unregistering
calls ``disconnectResources()`` and destroys the proxy.

The prompt (:func:`webmcp_bridge.tools.guidance.prompts_json`, the session's guidance with the site's paragraphs) is
plain data: ``connectPrompts(promptsJson) -> count`` (0 without ``registerPrompt``), ``disconnectPrompts()``.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from typing import Any

import js

from webmcp_bridge.calls.registry import Registry
from webmcp_bridge.lab.ffi import Proxies, is_nullish
from webmcp_bridge.session.resources import ResourceError, read_resource, templates_json
from webmcp_bridge.tools.guidance import prompts_json


class ResourceRegistration:
    """The resource templates and the guidance prompt as registered on the page's runtime through the loader.

    Args:
        registry: the tools a read goes through (its context holds the guidance).
        loader: the loader's ``ctx`` (``connectResources``, ``disconnectResources``, ``connectPrompts``,
            ``disconnectPrompts``; a loader without the prompt functions registers no prompt).

    Attributes: ``count`` (resource templates registered), ``prompts`` (prompts registered).
    """

    def __init__(self, registry: Registry[Any], loader: Any) -> None:
        self.registry = registry
        self.loader = loader
        self._proxies = Proxies()
        self.count = 0
        self.prompts = 0

    def _read(self, uri: Any) -> Any:
        """JS-facing: a Promise of the read's JSON text (see the module docstring)."""

        def executor(resolve: Any, _reject: Any) -> None:
            async def run() -> None:
                try:
                    reply: dict[str, Any] = {"result": await read_resource(self.registry, str(uri))}
                except ResourceError as err:
                    reply = {"error": err.payload}
                except Exception:
                    traceback.print_exc()
                    reply = {"error": {"error": "INTERNAL_ERROR", "message": "The resource could not be read."}}
                resolve(json.dumps(reply, ensure_ascii=False))

            asyncio.ensure_future(run())

        return js.Promise.new(self._proxies.once(executor))

    def register(self) -> int:
        """Register the templates (none where the runtime has no resources) and the guidance prompt (none where it
        has no prompts); returns how many templates were registered."""
        prompts = getattr(self.loader, "connectPrompts", None)
        if not is_nullish(prompts):
            self.prompts = int(prompts(prompts_json(self.registry.context.guidance)))
        connect = getattr(self.loader, "connectResources", None)
        if is_nullish(connect):
            return 0
        self.count = int(connect(templates_json(), self._proxies.keep(self._read)))
        if self.count == 0:
            self._proxies.clear()
        return self.count

    def unregister(self) -> None:
        """Remove the templates and the prompt and free the reader proxy (a second call does nothing)."""
        if self.prompts:
            self.loader.disconnectPrompts()
            self.prompts = 0
        if self.count:
            self.loader.disconnectResources()
            self.count = 0
        self._proxies.clear()
