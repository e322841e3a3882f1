"""Entry point the JS loader calls once Pyodide and JupyterLab are both up, and the page's one session.

Contract with ``lite/extension/static/remoteEntry.js``: ``session = await webmcp_bridge.lab.session.start(ctx)`` where
``ctx`` is ``{app, tracker, docManager, modules: {notebook, cells, widgets, apputils, settingregistry},
modelContext, pageContributions, pageSearch, setStatus, setDiagnostics, reportCall, emit, connect, disconnect, setMode,
connectResources, disconnectResources}`` (``pageSearch``: the page URL's query string as it was when the loader's
script ran); the result is the page's :class:`LabSession`, which the loader holds (a proxy it owns) and stops with
``session.stop()``; its ``reply`` is JSON text ``{"state": "ready"|"unavailable", "tools": N, "timings": {step: ms}}``.
This module only hands ``ctx`` on (to the JS halves' ``attach``): the loader's facts it decides by (``modelContext``,
``pageSearch``, ``modules.widgets``) and the status item (``setStatus``, ``setDiagnostics``) are ``session.js``'s, so
the same Python runs in the bridge's worker, where ``ctx`` only stands for the page's (docs/WORKER.md, "Start-up").
"unavailable" means the page has no
``document.modelContext``: nothing is registered and JupyterLab works as before. Either way the Agent panel
(:mod:`webmcp_bridge.lab.ui.panel`) and Propose mode's person side (:mod:`webmcp_bridge.lab.ui.proposals`) start
in the background, so a person can review and restrict with no agent. The person's settings
(:mod:`webmcp_bridge.lab.settings`: limits, disabled tools, toolsets, the start-up mode) are applied before the tools
are connected, so no call is served under the defaults when the person chose otherwise.

One :class:`LabSession` starts and stops every part: the site's own contributions
(:mod:`webmcp_bridge.lab.contributions`, loaded first so their tools are in the first registration; their
problems go to the status item through ``setDiagnostics``), the bridge
(:func:`webmcp_bridge.session.bridge.build_bridge` over the live application and its dialogs), the page's
call and run events (:mod:`webmcp_bridge.lab.events`), the toolsets the page serves (its URL's ``?toolsets=``, the
site's own toolsets included), the settings, the WebMCP registration, the MCP resources, the person's side
(the Agent panel and cell markers, the proposal view, the share command). The loader starts one per page and
holds it; nothing in this module keeps running state.

The bridge runs on the page's main thread, so start-up is cut into steps (importing pydantic module by
module, the bridge's modules one by one, building the bridge, generating each toolset's schemas, registering)
with a yield to the browser between them: no single stretch holds the page for the whole start-up (about a second of
Python in all). The longest step is loading pydantic-core's native module (~150-300 ms on a 2-core machine), which
cannot be split. This module imports nothing heavy at import time.
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
    "webmcp_bridge.lab.events",
    "webmcp_bridge.lab.page_secret",
    "webmcp_bridge.lab.resources",
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
    """Do ahead what every start does that depends on no page: import :data:`STEPS` and :data:`LATER`, and generate
    every built-in tool's input and output schemas (a bridge over no host; the schemas are cached per model, so a
    session's own bridge finds them made). The worker calls it when it makes the memory snapshot a site's build ships
    (``lab/worker_boot.js``, docs/loader.md, "A memory snapshot"), so a page restored from it imports and generates
    none of it."""
    for module in (*STEPS, *LATER):
        _import(module)
    from webmcp_bridge.session.bridge import tools_manifest

    tools_manifest()
    gc.collect()


def _import(module: str) -> None:
    """Import one start-up step. The pydantic internals listed are only a way to cut the import into
    pieces: one that a newer pydantic no longer has is skipped (the public import still happens later)."""
    try:
        importlib.import_module(module)
    except ImportError:
        if not module.startswith("pydantic."):
            raise


class LabSession:
    """Every running part of the bridge in one page, started by :meth:`start` and stopped by :meth:`stop`.

    Args:
        ctx: the loader's context (see the module docstring).

    Attributes (None until started, and again after :meth:`stop`): ``bridge`` (the session's parts:
    registry, guard, change log, proposals, shared selections, calls, dialogs), ``settings``
    (:class:`~webmcp_bridge.lab.settings.LabSettings`), ``registration``
    (:class:`~webmcp_bridge.lab.webmcp.WebMCPRegistration`, only with WebMCP), ``resources``
    (:class:`~webmcp_bridge.lab.resources.ResourceRegistration`, only with WebMCP), the person's side: ``notebooks``
    (:class:`~webmcp_bridge.lab.ui.notebooks.OpenNotebooks`), ``markers``
    (:class:`~webmcp_bridge.lab.ui.markers.CellMarkers`), ``panel`` (:class:`~webmcp_bridge.lab.ui.panel.AgentPanel`),
    ``view`` (:class:`~webmcp_bridge.lab.ui.proposals.ProposalView`), ``share``
    (:class:`~webmcp_bridge.lab.sharing.ShareCommand`), ``events`` (:class:`~webmcp_bridge.lab.events.PageEvents`);
    and ``reply``, the loader's reply (JSON text, see the module docstring) once :meth:`start` returned.
    """

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
        self.timings[name] = round((time.perf_counter() - began) * 1000, 1)
        await asyncio.sleep(0)  # let the browser paint and handle input between steps
        return result

    async def start(self) -> dict[str, Any]:
        """Build the bridge over the live application and start every part; returns the loader's reply
        ``{state, tools, timings}`` (see the module docstring)."""
        for module in STEPS:
            await self._step(module.rsplit(".", 1)[-1], functools.partial(_import, module))
        from webmcp_bridge.core.diagnostics import Diagnostics
        from webmcp_bridge.lab.contributions import site_contributions
        from webmcp_bridge.lab.deadline import install as install_alarm_timer
        from webmcp_bridge.lab.dialogs import lab_dialogs
        from webmcp_bridge.lab.events import PageEvents
        from webmcp_bridge.lab.ffi import load_half
        from webmcp_bridge.lab.host import JupyterLabHost
        from webmcp_bridge.lab.page_secret import page_secret
        from webmcp_bridge.lab.webmcp import WebMCPRegistration
        from webmcp_bridge.session.bridge import build_bridge

        ctx = self.ctx
        install_alarm_timer()  # the deadline inside a running match (core/alarm.py; jupyter_search)
        self.page = load_half("webmcp_bridge.lab", "session.js", ctx)
        self.facts = json.loads(str(self.page.facts()))
        diagnostics = Diagnostics()
        self._show_diagnostics(diagnostics)
        began = time.perf_counter()
        site = await site_contributions(ctx, diagnostics)
        self.timings["contributions"] = round(
            (time.perf_counter() - began) * 1000, 1
        )  # fetching and importing, in steps
        self.bridge = await self._step(
            "registry",
            lambda: build_bridge(
                JupyterLabHost(ctx),
                dialogs=lab_dialogs(ctx),
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
        self._start_share()
        if not self.facts["modelContext"]:
            return self._replied({"state": "unavailable", "tools": 0, "timings": self.timings})
        registration = WebMCPRegistration(registry, ctx)
        await self._schemas()
        definitions = await self._step("definitions", functools.partial(registry.definitions, fresh=False))
        count = await self._step("register", lambda: self._register(registration, definitions))
        await self._step("resources", self._start_resources)
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
        """Hand the diagnostics to the loader's status item after each new one (``session.js`` ``setDiagnostics``)."""
        page = self.page

        def update() -> None:
            page.setDiagnostics(json.dumps(diagnostics.to_json(), ensure_ascii=False))

        self._unlisten = diagnostics.listen(update)

    async def _schemas(self) -> None:
        """Generate every tool's input and output schema (cached by the registry for its definitions), one tool per
        stretch with a yield between: generating them all at once held the page for a second and more. Timings:
        ``schemas`` (ms in all) and ``schemasLongest`` (the longest stretch)."""
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
        """Notebooks, cells and outputs as MCP resources where the runtime has them (lab/resources.py); a failure is
        printed and leaves the tools working."""
        try:
            from webmcp_bridge.lab.resources import ResourceRegistration

            resources = ResourceRegistration(self.bridge.registry, self.ctx)
            resources.register()
            self.resources = resources
        except Exception:
            traceback.print_exc()

    def _choose_toolsets(self) -> None:
        """The toolsets the page's URL chooses (``?toolsets=``, read by the loader when its script ran, before
        JupyterLab rewrites the URL), else the default; the settings may choose again (calls/toolsets.py). The
        discovery tool's switch re-registers the tools through :meth:`_tools_changed`."""
        from webmcp_bridge.calls.toolsets import words_of_query
        from webmcp_bridge.core.limits import TOOL_NAME_MAX_CHARS

        switch = self.bridge.toolsets
        search = self.facts.get("pageSearch")
        switch.query_words = words_of_query(search) if isinstance(search, str) else None
        for word in switch.choose():
            print(f"webmcp-bridge: ?toolsets= names no toolset {word[:TOOL_NAME_MAX_CHARS]!r}; ignored")
        switch.on_change = self._tools_changed

    def _background(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work()`` as a task, so tool registration does not wait for it; a failure is printed to the
        console and leaves the tools working."""

        async def run() -> None:
            try:
                await work()
            except Exception:
                print(f"webmcp-bridge: the {name} did not start")
                traceback.print_exc()

        self._tasks.append(asyncio.ensure_future(run()))

    async def _start_settings(self) -> None:
        """The person's settings (lab/settings.py) applied to the registry: limits, disabled tools and the
        start-up mode. Later changes update the limits and, through :meth:`_tools_changed`, the registered
        tools. A failure is printed and leaves the defaults."""
        began = time.perf_counter()
        try:
            from webmcp_bridge.lab.settings import LabSettings

            self.settings = LabSettings(self.ctx, self.bridge.registry, self._tools_changed)
            await self.settings.start()
        except Exception:
            traceback.print_exc()
        self.timings["settings"] = round((time.perf_counter() - began) * 1000, 1)  # mostly waiting, not running
        await asyncio.sleep(0)

    def _register(self, registration: Any, definitions: list[dict[str, Any]]) -> int:
        """Register ``definitions`` and keep ``registration`` before the page runs anything else: the loader's
        queued calls (an agent's first call, made while Python was starting) are served as soon as the step that
        connects yields, and a ``jupyter_toolsets`` among them must find the registration to update. A change
        made between the ``definitions`` step and this one is applied at once. Returns the tools registered."""
        self.registration = registration
        count = int(registration.register(definitions))
        if self._changed_before_registration:
            self._changed_before_registration = False
            count = int(registration.update())
        return count

    def _tools_changed(self) -> None:
        """The served tools changed (the disabledTools or toolsets setting, or the agent's jupyter_toolsets):
        register exactly those tools, and show their count. Before the first registration the change is noted
        and applied by :meth:`_register`."""
        if self.registration is None:
            self._changed_before_registration = True
            return
        self.page.setStatus("ready", self.registration.update())

    async def _start_panel(self) -> None:
        """The person's side in the notebooks and the sidebar: the open notebooks it follows
        (lab/ui/notebooks.py), the cell markers (lab/ui/markers.py) and the Agent panel (lab/ui/panel.py), in
        small steps; each is kept before it starts, so a stop during the start-up disposes of it. Not started
        (a console message says why) when JupyterLab's share scope lacks ``@lumino/widgets``."""
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
        """Propose mode's person side (lab/ui/proposals.py: inline proposals, the Direct/Propose command, the
        mode in the status item)."""
        from webmcp_bridge.lab.ui.proposals import ProposalView

        dom = self._dom_half()
        await dom.prepare()
        self.view = ProposalView(self.ctx, self.bridge.proposals, dom)
        await self.view.start()

    def _start_share(self) -> None:
        """The output context menu's "Share selected output text with the agent" (lab/sharing.py)."""
        try:
            from webmcp_bridge.lab.sharing import ShareCommand

            self.share = ShareCommand(self.ctx, self.bridge.guard.raw, self.bridge.shared).install()
        except Exception:
            traceback.print_exc()

    def stop(self) -> None:
        """Stop every part, the person's side first, then the tools and the dialog watch. A second call does
        nothing; a part that fails to stop is printed and the others still stop."""
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        for name in ("share", "view", "settings", "panel", "markers", "notebooks", "events"):
            part = getattr(self, name)
            setattr(self, name, None)
            if part is not None:
                quietly(part.dispose)
        if self.resources is not None:
            quietly(self.resources.unregister)
            self.resources = None
        if self.registration is not None:
            quietly(self.registration.unregister)
            self.registration = None
        if self.bridge is not None:
            quietly(self.bridge.close)  # stop watching JupyterLab's dialogs (frees the watcher's proxy)
            self.bridge = None


async def start(ctx: Any) -> LabSession:
    """Start a session over the live application; returns it (the loader holds it, reads its ``reply`` and stops
    it with :meth:`LabSession.stop`)."""
    session = LabSession(ctx)
    await session.start()
    # Every import (STEPS, the contributions) and the bridge's build are done: move all objects alive now to the
    # collector's permanent generation (gc.freeze, Python 3.7+; Pyodide 314.0.6 runs Python 3.14.2), so the cyclic
    # GC no longer rescans the start-up heap (pydantic's models and schemas) during a call, where a full collection
    # paused one call for 230 ms in the benchmark. Once per page: later sessions' objects stay collectable.
    if gc.get_freeze_count() == 0:
        gc.freeze()
    return session
