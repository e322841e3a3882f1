"""Registering the registry's tools on ``document.modelContext`` (WebMCP), and unregistering them.

One Python dispatcher proxy serves every tool; ``register.js`` gives each tool an ``execute`` that calls it
with the tool name and the input as JSON text, and parses the CallToolResult JSON text it resolves to.
Unregistering aborts the AbortSignal the tools were registered with (the WebMCP rule) and destroys the one
proxy.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from importlib import resources
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.code import run_js  # type: ignore[import-not-found]
from pyodide.ffi import create_once_callable, create_proxy  # type: ignore[import-not-found]

from ..errors import ErrorCode, ToolError
from ..registry import Registry, envelope


class WebMCPRegistration:
    """The registry's tools as registered on one ``modelContext``.

    Args:
        registry: the tools and their single call path.
        model_context: ``document.modelContext`` (native WebMCP or a polyfill).
    """

    def __init__(self, registry: Registry, model_context: Any) -> None:
        self.registry = registry
        self.model_context = model_context
        self._controller: Any = None
        self._dispatch: Any = None

    def _call(self, name: str, arguments: str) -> Any:
        """JS-facing dispatcher: returns a JS Promise of the CallToolResult as JSON text (never rejects)."""

        def executor(resolve: Any, _reject: Any) -> None:
            async def run() -> None:
                try:
                    text = json.dumps(await self.registry.call(str(name), str(arguments)), ensure_ascii=False)
                except Exception:  # Registry.call never raises; this guards the promise anyway
                    traceback.print_exc()
                    text = json.dumps(envelope(ToolError(ErrorCode.INTERNAL_ERROR, "The bridge failed unexpectedly.").payload(), is_error=True))
                resolve(text)  # always settles: the agent's call never hangs on a bridge failure

            asyncio.ensure_future(run())

        return js.Promise.new(create_once_callable(executor))

    def register(self, definitions: list[dict[str, Any]] | None = None) -> int:
        """Register every tool (``definitions``: the registry's, if already generated); returns how many.
        Calling it again first unregisters the old set."""
        self.unregister()
        script = resources.files("webmcp_bridge.jupyterlab").joinpath("register.js").read_text(encoding="utf-8")
        self._controller = js.AbortController.new()
        self._dispatch = create_proxy(self._call)
        text = json.dumps(self.registry.definitions() if definitions is None else definitions, ensure_ascii=False)
        return int(run_js(script)(self.model_context, text, self._dispatch, self._controller.signal))

    def unregister(self) -> None:
        """Remove every tool (abort their signal) and free the dispatcher proxy."""
        if self._controller is not None:
            self._controller.abort()
            self._controller = None
        if self._dispatch is not None:
            self._dispatch.destroy()
            self._dispatch = None
