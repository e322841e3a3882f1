"""Entry point the JS loader calls once Pyodide and JupyterLab are both up.

Contract with ``lite/extension/static/remoteEntry.js``: ``await boot.start(ctx)`` where ``ctx`` is
``{app, tracker, docManager, modules: {notebook, cells, widgets, apputils, settingregistry}, modelContext,
setStatus, reportCall, connect, disconnect, setMode}``; the result is
JSON text ``{"state": "ready"|"unavailable", "tools": N, "timings": {step: ms}}``. "unavailable" means the
page has no ``document.modelContext``: nothing is registered and JupyterLab works as before. Either way the
Agent panel (:mod:`.panel`) and Propose mode's person side (:mod:`.proposal_view`) start in the background,
so a person can review and restrict with no agent. The person's settings (:mod:`.lab_settings`: limits,
disabled tools, the start-up mode) are applied before the tools are connected, so no call is served under
the defaults when the person chose otherwise.

The bridge runs on the page's main thread, so start-up is cut into steps (importing pydantic module by
module, each tool module, building the registry, generating schemas, registering) with a yield to the
browser between them: no single stretch holds the page for the whole start-up (about a second of Python in
all). The longest step is loading pydantic-core's native module (~150-300 ms on a 2-core machine), which
cannot be split. This module imports nothing heavy at import time.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import time
import traceback
from typing import Any

_running: dict[str, Any] = {}

# Imported one per step, heaviest first; each import builds the pydantic models of its tools.
STEPS = (
    "typing_extensions",
    "annotated_types",
    "pydantic_core._pydantic_core",
    "pydantic_core.core_schema",
    "pydantic_core",
    "pydantic.errors",
    "pydantic._internal._validators",
    "pydantic._internal._decorators",
    "pydantic._internal._fields",
    "pydantic._internal._generate_schema",
    "pydantic.json_schema",
    "pydantic.types",
    "pydantic.fields",
    "pydantic._internal._model_construction",
    "pydantic.main",
    "pydantic",
    "webmcp_bridge.calls.registry",
    "webmcp_bridge.tools.workspace",
    "webmcp_bridge.tools.cells",
    "webmcp_bridge.tools.edit",
    "webmcp_bridge.tools.run",
    "webmcp_bridge.tools.access",
    "webmcp_bridge.tools.changes",
    "webmcp_bridge.tools.sharing",
    "webmcp_bridge.tools.comments",
    "webmcp_bridge.tools.files",
    "webmcp_bridge.tools.batch",
    "webmcp_bridge.tools.code",
    "webmcp_bridge.lab.notebook",
    "webmcp_bridge.lab.dialogs",
    "webmcp_bridge.lab.webmcp",
)


def _import(module: str) -> None:
    """Import one start-up step. The pydantic internals listed are only a way to cut the import into
    pieces: one that a newer pydantic no longer has is skipped (the public import still happens later)."""
    try:
        importlib.import_module(module)
    except ImportError:
        if not module.startswith("pydantic."):
            raise


async def start(ctx: Any) -> str:
    """Build the registry over the live application and register its tools on ``ctx.modelContext``."""
    timings: dict[str, float] = {}

    async def step(name: str, work: Any) -> Any:
        began = time.perf_counter()
        result = work()
        timings[name] = round((time.perf_counter() - began) * 1000, 1)
        await asyncio.sleep(0)  # let the browser paint and handle input between steps
        return result

    for module in STEPS:
        await step(module.rsplit(".", 1)[-1], lambda m=module: _import(m))
    from webmcp_bridge.lab.dialogs import lab_dialogs
    from webmcp_bridge.lab.notebook import JupyterLabHost, is_nullish
    from webmcp_bridge.lab.webmcp import WebMCPRegistration
    from webmcp_bridge.session.bridge import build_registry

    stop()
    registry = await step("registry", lambda: build_registry(JupyterLabHost(ctx), dialogs=lab_dialogs(ctx)))
    _running["registry"] = registry
    report = ctx.reportCall
    registry.on_after(lambda event: report(f"{event.tool} {event.outcome} {round((event.duration or 0) * 1000)} ms"))
    await _start_settings(ctx, registry, timings)  # before any call is served: limits, disabled tools, mode
    _start_panel(ctx, registry)  # with or without WebMCP: the person's side always comes up
    _start_proposals(ctx, registry)
    _start_share(ctx, registry)
    if is_nullish(ctx.modelContext):
        return json.dumps({"state": "unavailable", "tools": 0, "timings": timings})
    registration = WebMCPRegistration(registry, ctx)
    definitions = await step("schemas", registry.definitions)
    count = await step("register", lambda: registration.register(definitions))
    _running["registration"] = registration
    return json.dumps({"state": "ready", "tools": count, "timings": timings})


def _start_panel(ctx: Any, registry: Any) -> None:
    """Start the Agent panel (lab/ui/panel.py) as a background task in its own small steps, so tool
    registration does not wait for it; a failure is printed to the console and leaves the tools working."""

    async def run() -> None:
        try:
            from webmcp_bridge.lab.ui.panel import start_panel

            await start_panel(ctx, registry)
        except Exception:
            traceback.print_exc()

    _running["panel"] = asyncio.ensure_future(run())


async def _start_settings(ctx: Any, registry: Any, timings: dict[str, float]) -> None:
    """The person's settings (lab/settings.py) applied to the registry: limits, disabled tools and
    the start-up mode. Later changes update the limits and, through :func:`_tools_changed`, the registered
    tools. A failure is printed and leaves the defaults."""
    began = time.perf_counter()
    try:
        from webmcp_bridge.lab.settings import LabSettings

        settings = LabSettings(ctx, registry, lambda: _tools_changed(ctx))
        _running["settings"] = settings
        await settings.start()
    except Exception:
        traceback.print_exc()
    timings["settings"] = round((time.perf_counter() - began) * 1000, 1)  # mostly waiting, not running
    await asyncio.sleep(0)


def _tools_changed(ctx: Any) -> None:
    """The disabledTools setting changed: register exactly the enabled tools, and show their count."""
    registration = _running.get("registration")
    if registration is not None:
        ctx.setStatus("ready", registration.update())


def _start_proposals(ctx: Any, registry: Any) -> None:
    """Propose mode's person side (lab/ui/proposals.py: inline proposals, the Direct/Propose command,
    the mode in the status item) as a background task; a failure is printed to the console."""

    async def run() -> None:
        try:
            from webmcp_bridge.lab.ui.proposals import start_view

            await start_view(ctx, registry.context.proposals)
        except Exception:
            traceback.print_exc()

    _running["proposals"] = asyncio.ensure_future(run())


def _start_share(ctx: Any, registry: Any) -> None:
    """The output context menu's "Share selected output text with the agent" (lab/share.py)."""
    try:
        from webmcp_bridge.lab.share import ShareCommand

        _running["share"] = ShareCommand(ctx, registry.context.host.raw, registry.context.host.shared).install()
    except Exception:
        traceback.print_exc()


def stop() -> None:
    """Unregister the tools of a previous start and dispose of its Agent panel, if any."""
    share = _running.pop("share", None)
    if share is not None:
        share.dispose()
    if _running.pop("proposals", None) is not None:
        from webmcp_bridge.lab.ui.proposals import stop_view

        stop_view()
    settings = _running.pop("settings", None)
    if settings is not None:
        settings.dispose()
    if _running.pop("panel", None) is not None:
        from webmcp_bridge.lab.ui.panel import stop_panel

        stop_panel()
    registration = _running.pop("registration", None)
    if registration is not None:
        registration.unregister()
    registry = _running.pop("registry", None)
    if registry is not None:
        registry.dialogs.close()  # stop watching JupyterLab's dialogs (frees the watcher's proxy)
