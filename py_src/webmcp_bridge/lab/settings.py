"""The bridge's settings from JupyterLab's setting registry (plugin ``jupyterlab-webmcp-bridge:plugin``).

The loader hands Python ``modules.settingregistry`` (``@jupyterlab/settingregistry`` from the share scope);
its ``ISettingRegistry`` token is resolved with ``app.resolveOptionalService`` and the plugin's settings
loaded with ``registry.load(PLUGIN_ID)``. The composite (defaults merged with the person's values) crosses
once as JSON text and is validated by :func:`webmcp_bridge.session.settings.parse_settings`;
:class:`~webmcp_bridge.session.settings.SettingsApplier` applies it to the tool registry. On every ``changed``
signal the same happens again (limits, disabled tools, toolsets; the mode only at start-up) and, when the set
of served tools changed, ``on_tools_changed()`` lets the caller update the WebMCP registration.

Without a settings registry (or if loading fails or takes longer than :data:`SETTINGS_LOAD_SECONDS`) the defaults
apply and the reason is written to the console.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable
from typing import Any

import js

from webmcp_bridge.core.limits import SETTINGS_LOAD_SECONDS
from webmcp_bridge.lab.ffi import Proxies, is_nullish
from webmcp_bridge.session.settings import DEFAULT_SETTINGS, PLUGIN_ID, BridgeSettings, SettingsApplier, parse_settings


async def _awaited(promise: Any) -> Any:
    return await promise


async def load_plugin_settings(loader: Any) -> Any:
    """The plugin's ``ISettings`` from the page's setting registry (JupyterLab caches a plugin's settings, so a
    second load is cheap), or None when the page has no setting registry."""
    module = getattr(loader.modules, "settingregistry", None)
    token = None if is_nullish(module) else getattr(module, "ISettingRegistry", None)
    if is_nullish(token):
        js.console.warn("[webmcp-bridge] no setting registry in this page; using the default settings")
        return None
    registry = await _awaited(loader.app.resolveOptionalService(token))
    if is_nullish(registry):
        return None
    return await _awaited(registry.load(PLUGIN_ID))


class LabSettings:
    """The plugin's settings, applied to ``registry`` now and on every change.

    Args:
        loader: the loader's ``ctx`` (``app``, ``modules.settingregistry``).
        registry: the tool registry (see :class:`~webmcp_bridge.session.settings.SettingsApplier`).
        on_tools_changed: called (no arguments) after a change enabled or disabled tools.
    """

    def __init__(self, loader: Any, registry: Any, on_tools_changed: Callable[[], None] | None = None) -> None:
        self.loader = loader
        self.applier = SettingsApplier(registry)
        self.on_tools_changed = on_tools_changed
        self.settings: Any = None  # ISettingRegistry.ISettings once loaded
        self._changed: Any = None
        self.tools_changed = False  # whether the last application changed the set of served tools
        self._proxies = Proxies()

    async def start(self) -> BridgeSettings:
        """Load and apply the settings (start-up: the default mode too); return what was applied."""
        try:
            self.settings = await asyncio.wait_for(self._load(), SETTINGS_LOAD_SECONDS)
        except Exception as exc:  # no registry, a broken schema, a timeout: the defaults, said in the console
            if not isinstance(exc, asyncio.TimeoutError):
                traceback.print_exc()
            self.settings = None
            reason = "took too long" if isinstance(exc, asyncio.TimeoutError) else type(exc).__name__
            js.console.warn(f"[webmcp-bridge] settings not loaded ({reason}); using the defaults")
        if self.settings is None:
            self._apply(DEFAULT_SETTINGS, [], startup=True)
            return DEFAULT_SETTINGS
        self._changed = self._proxies.keep(self._on_changed)
        self.settings.changed.connect(self._changed)
        return self._read_and_apply(startup=True)

    async def _load(self) -> Any:
        return await load_plugin_settings(self.loader)

    def _read_and_apply(self, startup: bool) -> BridgeSettings:
        raw = json.loads(str(js.JSON.stringify(self.settings.composite)))
        parsed, problems = parse_settings(raw)
        self.tools_changed = self._apply(parsed, problems, startup=startup)
        return parsed

    def _apply(self, parsed: BridgeSettings, problems: list[str], startup: bool) -> bool:
        tools_changed, unknown = self.applier.apply(parsed, startup=startup)
        for problem in problems + unknown:
            js.console.warn(f"[webmcp-bridge] settings: {problem}")
        return tools_changed

    def _on_changed(self, *_args: Any) -> None:
        try:
            self._read_and_apply(startup=False)
            if self.tools_changed and self.on_tools_changed is not None:
                self.on_tools_changed()
        except Exception:
            traceback.print_exc()

    def dispose(self) -> None:
        """Stop following changes and free the proxy."""
        if self._changed is not None:
            try:
                self.settings.changed.disconnect(self._changed)
            except Exception:
                traceback.print_exc()
            self._proxies.clear()
            self._changed = None
