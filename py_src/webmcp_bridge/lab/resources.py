"""Notebooks, cells and outputs as MCP resources, and the guidance for agents as an MCP prompt, where the page's
WebMCP runtime has them (MCP-B; native WebMCP has neither). :mod:`webmcp_bridge.session.resources` decides the
templates and what a read returns; ``webmcp.js`` registers them through the loader and hands each read to Python's
listener ``onRead(id, uri)``, answered later by ``answerRead(id, text)`` (JSON ``{"result"}`` or ``{"error"}``).
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
    """The resource templates and the guidance prompt as registered on the page's runtime through the loader
    (``loader``: its ctx, handed once to ``webmcp.js``); a read goes through ``registry``. ``count`` and
    ``prompts``: how many templates and prompts are registered."""

    def __init__(self, registry: Registry[Any], loader: Any) -> None:
        self.registry = registry
        self.half = load_half("webmcp_bridge.lab", "webmcp.js", loader)
        self._proxies = Proxies()
        self.count = 0
        self.prompts = 0
        self._tasks: set[asyncio.Future[None]] = set()  # reads under way (kept so none is collected before it ends)

    def _read(self, read_id: Any, uri: Any) -> None:
        """``webmcp.js``'s listener: read ``uri``, then answer read ``read_id``."""
        answer_to, text = int(read_id), str(uri)

        async def run() -> None:
            try:
                reply: dict[str, Any] = {"result": await read_resource(self.registry, text)}
            except ResourceError as err:
                reply = {"error": err.payload}
            except asyncio.CancelledError:  # the registration stopped: the page's read still gets its answer
                self.half.answerRead(
                    answer_to, json.dumps({"error": {"error": "ABORTED", "message": "The read stopped."}})
                )
                raise
            except Exception:
                traceback.print_exc()
                reply = {"error": {"error": "INTERNAL_ERROR", "message": "The resource could not be read."}}
            self.half.answerRead(answer_to, json.dumps(reply, ensure_ascii=False))

        self._tasks.add(task := asyncio.ensure_future(run()))
        task.add_done_callback(self._tasks.discard)

    def register(self) -> int:
        """Register the templates and the guidance prompt where the runtime has them; returns the templates'
        count."""
        self.prompts = int(self.half.connectPrompts(prompts_json(self.registry.context.guidance)))
        self.count = int(self.half.connectResources(templates_json(), self._proxies.keep(self._read)))
        if self.count == 0:
            self._proxies.clear()
        return self.count

    def unregister(self) -> None:
        """Remove the templates and the prompt and free the reader proxy."""
        if self.prompts:
            self.half.disconnectPrompts()
            self.prompts = 0
        if self.count:
            self.half.disconnectResources()
            self.count = 0
        self._proxies.clear()
