"""The bridge's settings from JupyterLab's setting registry (plugin ``jupyterlab-webmcp-bridge:plugin``).

``settings.js`` (this module's JS half, given the loader's ``ctx`` once by :func:`~webmcp_bridge.lab.ffi.load_half`)
resolves ``modules.settingregistry``'s ``ISettingRegistry`` token with ``app.resolveOptionalService`` and loads the
plugin's settings with ``registry.load(PLUGIN_ID)``. The composite (defaults merged with the person's values) crosses
once as JSON text and is validated by :func:`webmcp_bridge.session.settings.parse_settings`;
:class:`~webmcp_bridge.session.settings.SettingsApplier` applies it to the tool registry. After every change of the
settings ``settings.js`` calls Python's listener with the new composite's JSON text (its return value is not used:
in a worker it is an event) and the same happens again (limits, disabled tools, toolsets; the mode only at start-up)
and, when the set of served tools changed, ``on_tools_changed()`` lets the caller update the WebMCP registration.
This module holds no JS object.

Without a settings registry (or if loading fails or takes longer than :data:`SETTINGS_LOAD_SECONDS`) the defaults
apply and the reason is written to the console.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable
from typing import Any

from webmcp_bridge.core.limits import SETTINGS_LOAD_SECONDS
from webmcp_bridge.lab.ffi import Proxies, awaiting, load_half
from webmcp_bridge.session.settings import DEFAULT_SETTINGS, PLUGIN_ID, BridgeSettings, SettingsApplier, parse_settings


def settings_half(loader: Any) -> Any:
    """A ``settings.js`` attached to the loader's ``ctx`` (``app``, ``modules.settingregistry``)."""
    return load_half("webmcp_bridge.lab", "settings.js", loader)


async def load_composite(half: Any) -> Any:
    """The plugin's composite settings (parsed JSON: an object as JupyterLab has it) through ``half``
    (:func:`settings_half`; JupyterLab caches a plugin's settings, so a second load is cheap), or None when the
    page has no setting registry (said in the console). Raises what the load raised (a broken schema)."""
    reply = json.loads(str(await _awaited(awaiting(half).load(PLUGIN_ID))))
    if reply.get("state") == "no-registry":
        half.warn("[webmcp-bridge] no setting registry in this page; using the default settings")
        return None
    return reply.get("composite") if reply.get("state") == "loaded" else None


async def _awaited(promise: Any) -> Any:
    return await promise


class LabSettings:
    """The plugin's settings, applied to ``registry`` now and on every change.

    Args:
        loader: the loader's ``ctx`` (``app``, ``modules.settingregistry``), handed once to ``settings.js``.
        registry: the tool registry (see :class:`~webmcp_bridge.session.settings.SettingsApplier`).
        on_tools_changed: called (no arguments) after a change enabled or disabled tools.
    """

    def __init__(self, loader: Any, registry: Any, on_tools_changed: Callable[[], None] | None = None) -> None:
        self.half = settings_half(loader)
        self.applier = SettingsApplier(registry)
        self.on_tools_changed = on_tools_changed
        self.loaded = False  # whether the plugin's settings were loaded (else the defaults apply)
        self._changed: Any = None
        self.tools_changed = False  # whether the last application changed the set of served tools
        self._proxies = Proxies()

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
        self.loaded = composite is not None
        if not self.loaded:
            self._apply(DEFAULT_SETTINGS, [], startup=True)
            return DEFAULT_SETTINGS
        self._changed = self._proxies.keep(self._on_changed)
        self.half.watch(self._changed)
        return self._read_and_apply(composite, startup=True)

    def _read_and_apply(self, raw: Any, startup: bool) -> BridgeSettings:
        parsed, problems = parse_settings(raw)
        self.tools_changed = self._apply(parsed, problems, startup=startup)
        return parsed

    def _apply(self, parsed: BridgeSettings, problems: list[str], startup: bool) -> bool:
        tools_changed, unknown = self.applier.apply(parsed, startup=startup)
        for problem in problems + unknown:
            self.half.warn(f"[webmcp-bridge] settings: {problem}")
        return tools_changed

    def _on_changed(self, composite_json: Any) -> None:
        """Listener of ``settings.js``: the settings changed; ``composite_json`` is the new composite's JSON text."""
        try:
            self._read_and_apply(json.loads(str(composite_json)), startup=False)
            if self.tools_changed and self.on_tools_changed is not None:
                self.on_tools_changed()
        except Exception:
            traceback.print_exc()

    def dispose(self) -> None:
        """Stop following changes and free the proxy."""
        if self._changed is not None:
            try:
                self.half.unwatch()
            except Exception:
                traceback.print_exc()
            self._proxies.clear()
            self._changed = None
