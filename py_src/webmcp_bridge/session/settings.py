"""The person's settings of the bridge, as JupyterLab's Settings Editor keeps them (pure Python, no ``js``).

The loader's plugin ``jupyterlab-webmcp-bridge:plugin`` has one source: the pydantic model
:class:`~webmcp_bridge.session.settings_model.SettingsModel`, which carries each setting's title, description,
type, default and bounds (the numbers from :mod:`webmcp_bridge.core.limits`). The build writes its JSON schema
into the labextension (``schemas/jupyterlab-webmcp-bridge/plugin.json``; JupyterLite serves it in
``build/schemas/all_federated.json`` and keeps the person's values in the browser's IndexedDB), and
:func:`parse_settings` repairs a stored value against the same schema. Its properties:

=================  =========================================  ==========================================
key                meaning                                    kind (bounds: the schema's)
=================  =========================================  ==========================================
executionTimeout   seconds before a call returns ``pending``  a number in ``minimum .. maximum``
runTimeout         seconds jupyter_run_cells waits per cell   a number in ``minimum .. maximum``
resultBytes        cap on one result's JSON text, UTF-8       an integer in ``minimum .. maximum``
disabledTools      tool names the agent may not use           names or globs, ``MAX_DISABLED_TOOLS`` used
toolsets           the toolsets the page serves               toolset names or aliases, ``maxItems``; null
contributions      the site's own tool files                  workspace paths (read by ``contrib/config``)
defaultMode        "direct" or "propose"                      applied at start-up only
=================  =========================================  ==========================================

:func:`parse_settings` reads a composite settings object defensively (JupyterLab validates against the
schema, but a value can still arrive malformed): a value of the wrong type falls back to its default, a
number out of bounds is clamped into them, and each such repair is reported as a problem (for the console),
never raised. :func:`limits_for` turns settings into :class:`~webmcp_bridge.core.limits.Limits`
(``dataclasses.replace`` of the site's own limits); :class:`SettingsApplier` applies them to a registry at
start-up and on every change.

Disabled tools: each entry is a tool name or a glob (``fnmatch.fnmatchcase``: ``jupyter_*_comment``,
``jupyter_run_?ode``); the tools they match are left out of ``Registry.definitions()`` (so the page unregisters
them from WebMCP) and a call that still names one is refused with ``UNKNOWN_TOOL`` and ``disabled: true`` (to
the agent the tool does not exist in this page; the message says the person turned it off). An entry that
matches no tool is ignored (reported as a problem), so a setting written for a later version does no harm.

Toolsets: the words (toolset names, ``all``, ``default``) choosing the toolsets the page serves when its URL
has no ``?toolsets=`` (:mod:`webmcp_bridge.calls.toolsets`); null (the default) leaves the choice to the
default set. A change applies at once and replaces the toolsets the agent turned on or off.

Default mode: applied once when the bridge starts; afterwards the person's switch (the command palette's
"Agent: Propose changes", the Agent panel) wins, and a change of ``defaultMode`` waits for the next load.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any

from webmcp_bridge.calls.toolsets import disabled_by_patterns
from webmcp_bridge.core.limits import MAX_DISABLED_TOOLS, MIN_PAGE_BYTES, Limits
from webmcp_bridge.propose.proposals import Mode
from webmcp_bridge.session.settings_model import SettingsModel, setting_rules

PLUGIN_ID = "jupyterlab-webmcp-bridge:plugin"
#: the limits whose pages must fit in one result: scaled down with ``resultBytes`` (never up)
PAGE_LIMITS = ("output_page_bytes", "file_page_bytes", "source_read_bytes")
#: the settings that are numbers (stored names), repaired against their schema's bounds
_NUMBERS = ("executionTimeout", "runTimeout", "resultBytes")
#: a stored name -> the :class:`BridgeSettings` attribute it sets (the model's field name)
_FIELD_OF = {field.alias or name: name for name, field in SettingsModel.model_fields.items()}


def _default(name: str) -> Any:
    """The model's default of the field ``name`` (``execution_timeout``)."""
    return SettingsModel.model_fields[name].default


def _strings(raw: Any, key: str, what: str, most: int, problems: list[str]) -> tuple[str, ...] | None:
    """The valid, unique, sorted entries of list setting ``key`` (each a string matching the schema's ``items``
    ``pattern``; ``what`` names them in a problem), at most ``most``; None when ``raw`` is not a list."""
    if not isinstance(raw, list):
        return None
    pattern = re.compile(setting_rules(key)["items"]["pattern"])
    good = [n for n in raw if isinstance(n, str) and pattern.fullmatch(n)]
    if len(good) != len(raw):
        problems.append(f"{key}: {len(raw) - len(good)} entry(ies) are not {what} and were ignored")
    unique = sorted(set(good))
    if len(unique) > most:
        problems.append(f"{key}: only the first {most} entries (sorted) are used")
        unique = unique[:most]
    return tuple(unique)


@dataclass(frozen=True)
class BridgeSettings:
    """The settings, validated. ``execution_timeout`` in seconds, ``result_bytes`` in UTF-8 bytes,
    ``disabled_tools`` sorted and unique, ``default_mode`` one of :data:`~webmcp_bridge.propose.proposals.MODES`,
    ``run_timeout`` the seconds jupyter_run_cells waits for one cell (then reports it running), ``toolsets`` the
    words choosing the page's toolsets (None: not chosen by the settings; see :mod:`webmcp_bridge.calls.toolsets`)."""

    execution_timeout: float = _default("execution_timeout")
    result_bytes: int = _default("result_bytes")
    disabled_tools: tuple[str, ...] = tuple(_default("disabled_tools"))
    default_mode: Mode = _default("default_mode")
    run_timeout: float = _default("run_timeout")
    toolsets: tuple[str, ...] | None = _default("toolsets")


DEFAULT_SETTINGS = BridgeSettings()


def _number(value: Any) -> float | None:
    """A finite JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


def _bounded(value: Any, key: str, problems: list[str]) -> float | int | None:
    """Number setting ``key`` stored as ``value``, clamped to the schema's ``minimum .. maximum`` (an integer when
    its ``type`` is ``integer``); None (the schema's ``default`` is used) when it is not a number (an integer).
    Each repair is told in ``problems``."""
    rules = setting_rules(key)
    bounds, default, integer = (rules["minimum"], rules["maximum"]), rules["default"], rules["type"] == "integer"
    number = _number(value)
    shown = str if integer else (lambda v: f"{v:g}")
    if number is None or (integer and number != int(number)):
        problems.append(f"{key} is not {'an integer' if integer else 'a number'}; using {shown(default)}")
        return None
    clamped = int(_clamp(number, bounds)) if integer else _clamp(number, bounds)
    if clamped != number:
        given = int(number) if integer else number
        problems.append(
            f"{key} {shown(given)} is outside {shown(bounds[0])}..{shown(bounds[1])}; using {shown(clamped)}"
        )
    return clamped


def parse_settings(raw: Any) -> tuple[BridgeSettings, list[str]]:
    """Validate a composite settings object (a dict, as JSON gives it; anything else means all defaults).

    Returns the settings and a list of problems (one short sentence each: what was wrong and what was used
    instead). Missing keys take their defaults silently; unknown keys are ignored.
    """
    problems: list[str] = []
    if not isinstance(raw, dict):
        if raw is not None:
            problems.append("the settings are not an object; using the defaults")
        return DEFAULT_SETTINGS, problems
    values: dict[str, Any] = {}

    for key in _NUMBERS:
        if key in raw:
            value = _bounded(raw[key], key, problems)
            if value is not None:
                values[_FIELD_OF[key]] = value

    if "disabledTools" in raw:
        patterns = _strings(raw["disabledTools"], "disabledTools", "tool names or globs", MAX_DISABLED_TOOLS, problems)
        if patterns is None:
            problems.append("disabledTools is not a list; no tool is disabled")
        else:
            values["disabled_tools"] = patterns

    if raw.get("toolsets") is not None:
        words = raw["toolsets"]
        if isinstance(words, list):  # the order of words does not matter: a set of toolsets
            most = setting_rules("toolsets")["maxItems"]
            values["toolsets"] = _strings(words, "toolsets", "toolset names", most, problems)
        else:
            problems.append("toolsets is not a list; the default toolsets are served")

    if "defaultMode" in raw:
        mode, rules = raw["defaultMode"], setting_rules("defaultMode")
        if mode in rules["enum"]:
            values["default_mode"] = mode
        else:
            problems.append(f"defaultMode must be one of {', '.join(rules['enum'])}; using {rules['default']}")

    return BridgeSettings(**values), problems


def limits_for(base: Limits, settings: BridgeSettings) -> Limits:
    """``base`` with the settings' execution timeout, run timeout and result cap. A cap smaller than ``base``'s also
    scales down the text pages (:data:`PAGE_LIMITS`) in the same proportion, so a page of output, file or cell source
    still fits in one result (a larger cap leaves them as they are)."""
    changes: dict[str, Any] = {
        "execution_timeout_seconds": float(settings.execution_timeout),
        "run_timeout_seconds": float(settings.run_timeout),
        "result_bytes": int(settings.result_bytes),
    }
    if settings.result_bytes < base.result_bytes:
        ratio = settings.result_bytes / base.result_bytes
        for name in PAGE_LIMITS:
            changes[name] = max(MIN_PAGE_BYTES, int(getattr(base, name) * ratio))
    return dataclasses.replace(base, **changes)


class SettingsApplier:
    """Applies settings to a :class:`~webmcp_bridge.calls.registry.Registry` built by
    :func:`webmcp_bridge.session.bridge.build_bridge` (``bridge.registry``: its ``context`` is a CallContext with
    ``limits`` and ``proposals``).

    The registry's limits at construction are the base every later change starts from (changes never
    compound). :meth:`apply` replaces ``registry.limits`` and ``registry.context.limits`` with
    :func:`limits_for`, sets the disabled tools, chooses the toolsets (through the context's
    :class:`~webmcp_bridge.calls.toolsets.ToolsetSwitch`, when it has one) and at start-up sets the mode.
    """

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.base: Limits = registry.limits
        self.current: BridgeSettings | None = None

    def apply(self, settings: BridgeSettings, *, startup: bool = False) -> tuple[bool, list[str]]:
        """Apply ``settings``. Returns ``(tools_changed, problems)``: whether the set of served tools changed
        (the caller then updates the WebMCP registration), and the ``disabledTools`` entries that match no tool
        of this registry and the ``toolsets`` words that name no toolset."""
        limits = limits_for(self.base, settings)
        self.registry.limits = limits
        context = self.registry.context
        if hasattr(context, "limits"):
            context.limits = limits
        before = {d["name"] for d in self.registry.definitions(fresh=False)}
        disabled, unmatched = disabled_by_patterns(
            settings.disabled_tools, (tool.name for tool in self.registry.tools())
        )
        problems = [f"disabledTools: {pattern!r} matches no tool" for pattern in unmatched]
        self.registry.set_disabled(disabled)
        switch = getattr(context, "toolsets", None)
        previous = (self.current or DEFAULT_SETTINGS).toolsets
        if switch is not None and (startup or settings.toolsets != previous):
            switch.setting_words = None if settings.toolsets is None else list(settings.toolsets)
            problems += [f"toolsets: there is no toolset named {word!r}" for word in switch.choose()]
        if startup:
            context.proposals.set_mode(settings.default_mode)
        self.current = settings
        return {d["name"] for d in self.registry.definitions(fresh=False)} != before, problems
