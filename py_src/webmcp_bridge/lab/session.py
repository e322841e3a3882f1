"""Entry point the JS loader (``lite/extension/static/remoteEntry.js``) calls once Pyodide and JupyterLab are both
up, and the page's one session: ``session = await webmcp_bridge.lab.session.start(ctx)`` (``ctx``: the loader's
context, handed on only to the JS halves' ``attach``; docs/WORKER.md "Start-up"), stopped by ``session.stop()``; its
``reply`` is JSON text ``{"state": "ready" | "unavailable", "tools": N, "timings": {step: ms}}`` ("unavailable": no
``document.modelContext``, nothing registered). The person's side starts either way, and the person's settings
apply before any tool is connected.

The bridge may run on the page's main thread, so start-up is cut into steps (pydantic module by module, the bridge's
modules one by one, each tool's schemas, the registration) with a yield to the browser between them; the longest,
loading pydantic-core's native module (~150-300 ms), cannot be split.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import importlib
import json
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from webmcp_bridge.lab.ffi import quietly

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
    "webmcp_bridge.core.limits",
    "webmcp_bridge.core.snapshot",
    "webmcp_bridge.host.protocol",
    "webmcp_bridge.calls.payloads",
    "webmcp_bridge.calls.registry",
    "webmcp_bridge.calls.toolsets",
    "webmcp_bridge.calls.dialogs",
    "webmcp_bridge.changes.log",
    "webmcp_bridge.propose.proposals",
    "webmcp_bridge.review.threads",
    "webmcp_bridge.sharing.selections",
    "webmcp_bridge.review.visibility",
    "webmcp_bridge.access.levels",
    "webmcp_bridge.access.step",
    "webmcp_bridge.access.notebook_guard",
    "webmcp_bridge.access.guard",
    "webmcp_bridge.tools.common",
    "webmcp_bridge.tools.payloads",
    "webmcp_bridge.tools.workspace",
    "webmcp_bridge.tools.cells",
    "webmcp_bridge.tools.edit",
    "webmcp_bridge.tools.run",
    "webmcp_bridge.tools.access",
    "webmcp_bridge.tools.changes",
    "webmcp_bridge.tools.sharing",
    "webmcp_bridge.tools.review",
    "webmcp_bridge.tools.files",
    "webmcp_bridge.tools.batch",
    "webmcp_bridge.tools.code",
    "webmcp_bridge.core.kernel_inspect",
    "webmcp_bridge.tools.variables",
    "webmcp_bridge.tools.toolsets",
    "webmcp_bridge.contrib",
    "webmcp_bridge.contrib.assemble",
    "webmcp_bridge.lab.notebook",
    "webmcp_bridge.lab.host",
    "webmcp_bridge.lab.dialogs",
    "webmcp_bridge.lab.webmcp",
    "webmcp_bridge.session.resources",
    "webmcp_bridge.lab.resources",
)


#: imported by :meth:`LabSession.start` after :data:`STEPS`, as it needs them
LATER = (
    "webmcp_bridge.lab.wire",
    "webmcp_bridge.core.diagnostics",
    "webmcp_bridge.lab.contributions",
    "webmcp_bridge.lab.deadline",
    "webmcp_bridge.lab.page_secret",
    "webmcp_bridge.lab.settings",
    "webmcp_bridge.lab.sharing",
    "webmcp_bridge.lab.ui.dom",
    "webmcp_bridge.lab.ui.markers",
    "webmcp_bridge.lab.ui.notebooks",
    "webmcp_bridge.lab.ui.panel",
    "webmcp_bridge.lab.ui.proposals",
    "webmcp_bridge.session.bridge",
)


def warm() -> None:
    """Do ahead what every start does that depends on no page: import :data:`STEPS` and :data:`LATER` and generate
    every built-in tool's schemas (cached per model). Called when the worker makes the memory snapshot a site ships
    (``lab/worker_boot.js``, docs/loader.md, "A memory snapshot")."""
    for module in (*STEPS, *LATER):
        _import(module)
    from webmcp_bridge.session.bridge import tools_manifest

    tools_manifest()
    gc.collect()


def _import(module: str) -> None:
    """Import one start-up step; a pydantic internal that a newer pydantic no longer has is skipped."""
    try:
        importlib.import_module(module)
    except ImportError:
        if not module.startswith("pydantic."):
            raise


#: the parts :meth:`LabSession.stop` stops, in order, and how (the bridge's close stops the dialog watch)
_STOPS = (
    *((name, "dispose") for name in ("share", "view", "settings", "panel", "markers", "notebooks", "events")),
    ("resources", "unregister"),
    ("registration", "unregister"),
    ("bridge", "close"),
)


class LabSession:
    """Every running part of the bridge in one page (``ctx``: the loader's context), started by :meth:`start` and
    stopped by :meth:`stop`. The parts are None until started and again after :meth:`stop`; ``registration`` and
    ``resources`` exist only with WebMCP. ``reply``: the loader's reply once :meth:`start` returned."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.timings: dict[str, float] = {}  # start-up step -> ms
        self.reply = ""
        self.bridge: Any = None
        self.settings: Any = None
        self.registration: Any = None
        self._changed_before_registration = False  # a tool change came before the first registration
        self.notebooks: Any = None
        self.markers: Any = None
        self.panel: Any = None
        self.view: Any = None
        self.share: Any = None
        self.resources: Any = None
        self._dom: Any = None  # the person's side's dom.js, made once and shared by the panel, markers and view
        self.events: Any = None
        self._tasks: list[asyncio.Future[None]] = []
        self._unlisten: Callable[[], None] | None = None
        self.page: Any = None  # session.js: the loader's facts and status item (start)
        self.facts: dict[str, Any] = {}  # session.js facts(): {modelContext, pageSearch, widgets}

    async def _step(self, name: str, work: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        result = work()
        self.timings[name] = _ms_since(began)
        await asyncio.sleep(0)  # let the browser paint and handle input between steps
        return result

    async def start(self) -> dict[str, Any]:
        """Build the bridge over the live application and start every part; returns the loader's reply."""
        for module in STEPS:
            await self._step(module.rsplit(".", 1)[-1], functools.partial(_import, module))
        from webmcp_bridge.core.diagnostics import Diagnostics
        from webmcp_bridge.lab.contributions import site_contributions
        from webmcp_bridge.lab.deadline import install as install_alarm_timer
        from webmcp_bridge.lab.dialogs import LabDialogs
        from webmcp_bridge.lab.ffi import load_half
        from webmcp_bridge.lab.host import JupyterLabHost
        from webmcp_bridge.lab.page_secret import page_secret
        from webmcp_bridge.lab.webmcp import PageEvents, WebMCPRegistration
        from webmcp_bridge.session.bridge import build_bridge

        ctx = self.ctx
        install_alarm_timer()  # the deadline inside a running match (core/alarm.py; jupyter_search)
        self.page = load_half("webmcp_bridge.lab", "session.js", ctx)
        self.facts = json.loads(str(self.page.facts()))
        diagnostics = Diagnostics()
        self._show_diagnostics(diagnostics)
        began = time.perf_counter()
        site = await site_contributions(ctx, diagnostics)  # fetched and imported in steps
        self.timings["contributions"] = _ms_since(began)
        self.bridge = await self._step(
            "registry",
            lambda: build_bridge(
                JupyterLabHost(ctx),
                dialogs=LabDialogs(ctx),
                contributions=site,
                diagnostics=diagnostics,
                page_secret=page_secret,  # the person's review messages are signed with this browser's secret
            ),
        )
        self.events = PageEvents(ctx, self.bridge)
        registry = self.bridge.registry
        self._choose_toolsets()
        await self._start_settings()  # before any call is served: limits, disabled tools, toolsets, mode
        self._background("panel", self._start_panel)  # with or without WebMCP: the person's side always comes up
        self._background("proposals", self._start_view)
        quietly(self._start_share)
        if not self.facts["modelContext"]:
            return self._replied({"state": "unavailable", "tools": 0, "timings": self.timings})
        registration = WebMCPRegistration(registry, ctx)
        await self._schemas()
        definitions = await self._step("definitions", functools.partial(registry.definitions, fresh=False))
        count = await self._step("register", lambda: self._register(registration, definitions))
        await self._step("resources", functools.partial(quietly, self._start_resources))
        return self._replied({"state": "ready", "tools": count, "timings": self.timings})

    def _replied(self, reply: dict[str, Any]) -> dict[str, Any]:
        self.reply = json.dumps(reply)
        return reply

    def _dom_half(self) -> Any:
        """The person's side's ``dom.js`` (lab/ui/dom.py), made on first use and shared."""
        if self._dom is None:
            from webmcp_bridge.lab.ui.dom import Dom

            self._dom = Dom(self.ctx)
        return self._dom

    def _show_diagnostics(self, diagnostics: Any) -> None:
        """Hand the diagnostics to the status item after each new one (``session.js`` ``setDiagnostics``)."""
        self._unlisten = diagnostics.listen(
            lambda: self.page.setDiagnostics(json.dumps(diagnostics.to_json(), ensure_ascii=False))
        )

    async def _schemas(self) -> None:
        """Generate every tool's schemas (cached for its definitions), one tool per stretch with a yield between: all
        at once held the page for a second and more. Timings ``schemas`` (ms in all) and ``schemasLongest``."""
        total = longest = 0.0
        for tool in self.bridge.registry.tools():
            began = time.perf_counter()
            tool.definition(fresh=False)  # fills the caches; nothing to copy
            spent = (time.perf_counter() - began) * 1000
            total, longest = total + spent, max(longest, spent)
            await asyncio.sleep(0)
        self.timings["schemas"] = round(total, 1)
        self.timings["schemasLongest"] = round(longest, 1)

    def _start_resources(self) -> None:
        """Notebooks, cells and outputs as MCP resources where the runtime has them; a failure is printed."""
        from webmcp_bridge.lab.resources import ResourceRegistration

        resources = ResourceRegistration(self.bridge.registry, self.ctx)
        resources.register()
        self.resources = resources

    def _choose_toolsets(self) -> None:
        """The toolsets the page's URL chooses (``?toolsets=``, read before JupyterLab rewrites the URL), else the
        default; the settings may choose again. A switch re-registers the tools through :meth:`_tools_changed`."""
        from webmcp_bridge.calls.toolsets import words_of_query
        from webmcp_bridge.core.limits import TOOL_NAME_MAX_CHARS

        switch = self.bridge.toolsets
        search = self.facts.get("pageSearch")
        switch.query_words = words_of_query(search) if isinstance(search, str) else None
        for word in switch.choose():
            print(f"webmcp-bridge: ?toolsets= names no toolset {word[:TOOL_NAME_MAX_CHARS]!r}; ignored")
        switch.on_change = self._tools_changed

    def _background(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work()`` as a task, so tool registration does not wait for it; a failure is printed."""

        async def run() -> None:
            try:
                await work()
            except Exception:
                print(f"webmcp-bridge: the {name} did not start")
                traceback.print_exc()

        self._tasks.append(asyncio.ensure_future(run()))

    async def _start_settings(self) -> None:
        """The person's settings applied to the registry (limits, disabled tools, toolsets, the start-up mode); later
        changes through :meth:`_tools_changed`. A failure is printed and leaves the defaults."""
        began = time.perf_counter()
        try:
            from webmcp_bridge.lab.settings import LabSettings

            self.settings = LabSettings(self.ctx, self.bridge.registry, self._tools_changed)
            await self.settings.start()
        except Exception:
            traceback.print_exc()
        self.timings["settings"] = _ms_since(began)  # mostly waiting, not running
        await asyncio.sleep(0)

    def _register(self, registration: Any, definitions: list[dict[str, Any]]) -> int:
        """Register ``definitions`` and keep ``registration`` before the page runs anything else (a queued
        ``jupyter_toolsets`` call must find it); a change made since the ``definitions`` step is applied at once."""
        self.registration = registration
        count = int(registration.register(definitions))
        if self._changed_before_registration:
            self._changed_before_registration = False
            count = int(registration.update())
        return count

    def _tools_changed(self) -> None:
        """The served tools changed (a setting, or the agent's jupyter_toolsets): register exactly those and show
        their count; before the first registration :meth:`_register` applies it."""
        if self.registration is None:
            self._changed_before_registration = True
            return
        self.page.setStatus("ready", self.registration.update())

    async def _start_panel(self) -> None:
        """The open notebooks it follows, the cell markers and the Agent panel, in small steps, each kept before it
        starts (a stop meanwhile disposes of it). Not started without ``@lumino/widgets`` in the share scope."""
        if not self.facts.get("widgets"):
            print("webmcp-bridge: no @lumino/widgets in the share scope; the Agent panel is not shown")
            return
        from webmcp_bridge.lab.ui.markers import CellMarkers
        from webmcp_bridge.lab.ui.notebooks import OpenNotebooks
        from webmcp_bridge.lab.ui.panel import AgentPanel

        bridge, dom = self.bridge, self._dom_half()
        await dom.prepare()  # the translator first: every word drawn goes through it
        self.notebooks = OpenNotebooks(bridge.guard.raw, bridge.changes)
        self.notebooks.start()
        await asyncio.sleep(0)
        self.markers = CellMarkers(self.notebooks, bridge.registry, bridge.changes, dom, bridge.guard.raw.journal)
        self.markers.start()
        await asyncio.sleep(0)
        self.panel = AgentPanel(
            self.ctx,
            self.notebooks,
            self.markers,
            bridge.registry,
            bridge.changes,
            bridge.proposals,
            dom,
            bridge.guard.consent,
        )
        await self.panel.start()

    async def _start_view(self) -> None:
        """Propose mode's person side (inline proposals, the Direct/Propose command, the mode in the status item)."""
        from webmcp_bridge.lab.ui.proposals import ProposalView

        dom = self._dom_half()
        await dom.prepare()
        self.view = ProposalView(self.ctx, self.bridge.proposals, dom)
        await self.view.start()

    def _start_share(self) -> None:
        """The output context menu's "Share selected output text with the agent"."""
        from webmcp_bridge.lab.sharing import ShareCommand

        self.share = ShareCommand(self.ctx, self.bridge.guard.raw, self.bridge.shared).install()

    def stop(self) -> None:
        """Stop every part, the person's side first. A second call does nothing; a part that fails to stop is
        printed and the others still stop."""
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        for name, method in _STOPS:
            part = getattr(self, name)
            setattr(self, name, None)
            if part is not None:
                quietly(getattr(part, method))


async def start(ctx: Any) -> LabSession:
    """Start a session over the live application and return it."""
    session = LabSession(ctx)
    await session.start()
    # move the start-up heap (pydantic's models and schemas) to the collector's permanent generation, so a full
    # collection no longer rescans it during a call (it paused one call for 230 ms); once per page
    if gc.get_freeze_count() == 0:
        gc.freeze()
    return session


def _ms_since(began: float) -> float:
    return round((time.perf_counter() - began) * 1000, 1)
