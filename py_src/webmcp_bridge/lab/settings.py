"""The bridge's settings from JupyterLab's setting registry (plugin ``jupyterlab-webmcp-bridge:plugin``), through
``session.js``: the composite crosses as JSON text, is validated by
:func:`webmcp_bridge.session.settings.parse_settings` and applied by
:class:`~webmcp_bridge.session.settings.SettingsApplier` at start and after every change. Without a settings registry
(or if loading fails or takes longer than :data:`SETTINGS_LOAD_SECONDS`) the defaults apply, said in the console.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable
from typing import Any

from webmcp_bridge.core.limits import SETTINGS_LOAD_SECONDS
from webmcp_bridge.lab.ffi import Proxies, awaiting, load_half, quietly
from webmcp_bridge.session.settings import DEFAULT_SETTINGS, PLUGIN_ID, BridgeSettings, SettingsApplier, parse_settings


def settings_half(loader: Any) -> Any:
    """A ``session.js`` (its settings methods) attached to the loader's ``ctx``."""
    return load_half("webmcp_bridge.lab", "session.js", loader)


async def load_composite(half: Any) -> Any:
    """The plugin's composite settings (parsed JSON) through ``half`` (JupyterLab caches them, so a second load is
    cheap), or None when the page has no setting registry (said in the console). Raises what the load raised."""
    reply = json.loads(str(await awaiting(half).loadSettings(PLUGIN_ID)))
    if reply.get("state") == "no-registry":
        half.warn("[webmcp-bridge] no setting registry in this page; using the default settings")
        return None
    return reply.get("composite") if reply.get("state") == "loaded" else None


class LabSettings:
    """The plugin's settings, applied to ``registry`` now and on every change (``loader``: the loader's ctx, handed
    once to ``session.js``); ``on_tools_changed()`` after a change enabled or disabled tools."""

    def __init__(self, loader: Any, registry: Any, on_tools_changed: Callable[[], None] | None = None) -> None:
        self.half = settings_half(loader)
        self.applier = SettingsApplier(registry)
        self.on_tools_changed = on_tools_changed
        self._proxies = Proxies()  # the change listener, while watching

    async def start(self) -> BridgeSettings:
        """Load and apply the settings (start-up: the default mode too); return what was applied."""
        composite: Any = None
        try:
            composite = await asyncio.wait_for(load_composite(self.half), SETTINGS_LOAD_SECONDS)
        except Exception as exc:  # no registry, a broken schema, a timeout: the defaults, said in the console
            if not isinstance(exc, asyncio.TimeoutError):
                traceback.print_exc()
            reason = "took too long" if isinstance(exc, asyncio.TimeoutError) else type(exc).__name__
            self.half.warn(f"[webmcp-bridge] settings not loaded ({reason}); using the defaults")
        if composite is None:
            self._apply(DEFAULT_SETTINGS, [], startup=True)
            return DEFAULT_SETTINGS
        self.half.watchSettings(self._proxies.keep(self._on_changed))
        parsed, problems = parse_settings(composite)
        self._apply(parsed, problems, startup=True)
        return parsed

    def _apply(self, parsed: BridgeSettings, problems: list[str], startup: bool) -> bool:
        """Apply ``parsed``, each problem said in the console; whether the set of served tools changed."""
        tools_changed, unknown = self.applier.apply(parsed, startup=startup)
        for problem in problems + unknown:
            self.half.warn(f"[webmcp-bridge] settings: {problem}")
        return tools_changed

    def _on_changed(self, composite_json: Any) -> None:
        """``session.js``'s settings listener: the settings changed to the composite ``composite_json`` (JSON text)."""
        try:
            parsed, problems = parse_settings(json.loads(str(composite_json)))
            if self._apply(parsed, problems, startup=False) and self.on_tools_changed is not None:
                self.on_tools_changed()
        except Exception:
            traceback.print_exc()

    def dispose(self) -> None:
        """Stop following changes and free the proxy."""
        if len(self._proxies):
            quietly(self.half.unwatchSettings)
            self._proxies.clear()
