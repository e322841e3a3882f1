"""The person's settings of the bridge, as JupyterLab's Settings Editor keeps them (docs/TOOLS.md, "Settings").

:class:`~webmcp_bridge.session.settings_model.SettingsModel` makes the schema the build writes and the rules
:func:`parse_settings` repairs a stored value against: a wrong type falls back to its default, a number out of
bounds is clamped, each repair a reported problem, never raised (a value can arrive malformed), and a
``disabledTools`` entry matching no tool is reported, not an error. :func:`limits_for` makes the
:class:`~webmcp_bridge.core.limits.Limits`; :class:`SettingsApplier` applies them at start-up and on every change
(``defaultMode`` at start-up only: afterwards the person's switch wins).
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
    return SettingsModel.model_fields[name].default


def _strings(raw: Any, key: str, what: str, most: int, problems: list[str]) -> tuple[str, ...] | None:
    """The valid (``items`` ``pattern``), unique, sorted entries of list setting ``key``, at most ``most``; None when
    ``raw`` is not a list."""
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
    """The settings, validated: timeouts in seconds, ``result_bytes`` in UTF-8 bytes, ``disabled_tools`` sorted and
    unique, ``toolsets`` None when the settings do not choose."""

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
    """Number setting ``key`` clamped to its schema's bounds; None (the default) when not a number (integer). Each
    repair is told in ``problems``."""
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
    """Validate a composite settings object (not a dict: all defaults); returns the settings and the problems (a
    sentence each). Missing keys take their defaults silently; unknown keys are ignored."""
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
    """``base`` with the settings' timeouts and result cap; a smaller cap scales :data:`PAGE_LIMITS` down with it, so
    a page still fits in one result."""
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
    """Applies settings to a bridge's registry; its limits at construction are the base of every change (changes
    never compound)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.base: Limits = registry.limits
        self.current: BridgeSettings | None = None

    def apply(self, settings: BridgeSettings, *, startup: bool = False) -> tuple[bool, list[str]]:
        """Apply ``settings`` (the mode only at start-up). Returns ``(tools_changed, problems)``: whether the served
        tools changed, and the ``disabledTools`` entries and ``toolsets`` words that match nothing."""
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
