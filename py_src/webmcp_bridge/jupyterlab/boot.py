"""Entry point the JS loader calls once Pyodide and JupyterLab are both up.

Contract with ``lite/extension/static/remoteEntry.js``: ``await boot.start(ctx)`` where ``ctx`` is
``{app, tracker, docManager, modules: {notebook, cells}, modelContext, setStatus, reportCall}``; the result is
JSON text
``{"state": "ready"|"unavailable", "tools": N}``. "unavailable" means the page has no
``document.modelContext``: nothing is registered and JupyterLab works as before.
"""

from __future__ import annotations

import json
from typing import Any

from ..app import build_registry
from .adapter import JupyterLabHost, is_nullish

_running: dict[str, Any] = {}


async def start(ctx: Any) -> str:
    """Build the registry over the live application and register its tools on ``ctx.modelContext``."""
    from .webmcp import WebMCPRegistration

    stop()
    registry = build_registry(JupyterLabHost(ctx))
    _running["registry"] = registry
    report = ctx.reportCall
    registry.on_after(lambda event: report(f"{event.tool} {event.outcome} {round((event.duration or 0) * 1000)} ms"))
    if is_nullish(ctx.modelContext):
        return json.dumps({"state": "unavailable", "tools": 0})
    registration = WebMCPRegistration(registry, ctx.modelContext)
    count = registration.register()
    _running["registration"] = registration
    return json.dumps({"state": "ready", "tools": count})


def stop() -> None:
    """Unregister the tools of a previous start, if any."""
    registration = _running.pop("registration", None)
    if registration is not None:
        registration.unregister()
