"""Which of the site's files are contributions (README, "Add your own tool"): the page configuration key
``webmcpBridgeContributions`` and the ``contributions`` setting, each a list of workspace paths of modules
``<name>.py`` or pure-Python wheels ``<name>-<version>-py3-none-any.whl``, read from the site's own origin only.
Both lists together, repeats removed, sorted by path, at most :data:`~webmcp_bridge.core.limits.CONTRIBUTION_ENTRIES`;
an unusable entry is skipped with a problem.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any, Literal

from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.limits import CONTRIBUTION_ENTRIES
from webmcp_bridge.core.paths import normalize_path

#: the page configuration key (``jupyter-config-data``) and the setting that name a site's contributions
PAGE_CONFIG_KEY = "webmcpBridgeContributions"
SETTING_KEY = "contributions"


@dataclass(frozen=True)
class Entry:
    """One contribution file: ``path`` (normalized workspace path), ``kind`` ("module" or "wheel") and the
    ``module`` name to import."""

    path: str
    kind: Literal["module", "wheel"]
    module: str


def _module_name(name: str) -> str | None:
    return name if name.isidentifier() and not keyword.iskeyword(name) and name.isascii() else None


def parse_entry(raw: Any) -> Entry:
    """One configured entry. Raises ValueError (one sentence) when it is not usable."""
    if not isinstance(raw, str):
        raise ValueError(f"an entry is {type(raw).__name__}, not a path")
    try:
        path = normalize_path(raw)
    except ToolError as err:
        raise ValueError(err.message) from None
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        module = _module_name(name[:-3])
        if module is None:
            raise ValueError(f"{name!r} is not an importable module name (letters, digits and _)")
        return Entry(path, "module", module)
    if name.endswith(".whl"):
        parts = name[:-4].split("-")
        if len(parts) not in (5, 6):
            raise ValueError(f"{name!r} is not a wheel file name (name-version-python-abi-platform.whl)")
        if parts[-2:] != ["none", "any"]:
            raise ValueError(f"{name!r} is not a pure-Python wheel (…-none-any.whl); the page loads no compiled code")
        module = _module_name(parts[0])
        if module is None:
            raise ValueError(f"{name!r}: its name {parts[0]!r} is not an importable module name")
        return Entry(path, "wheel", module)
    raise ValueError(f"{name!r} is neither a Python module (.py) nor a wheel (.whl)")


def parse_entries(*sources: tuple[str, Any]) -> tuple[list[Entry], list[tuple[str, str]]]:
    """The entries of every ``(where, value)`` source (None: not set), in order, and the problems ``(name, reason)``."""
    problems: list[tuple[str, str]] = []
    by_path: dict[str, Entry] = {}
    for where, value in sources:
        if value is None:
            continue
        if not isinstance(value, list):
            problems.append((where, "is not a list of paths; ignored"))
            continue
        for raw in value:
            try:
                entry = parse_entry(raw)
            except ValueError as exc:
                problems.append((str(raw)[:200] if isinstance(raw, str) else where, f"{exc} (from {where}); skipped"))
                continue
            by_path.setdefault(entry.path, entry)
    entries: list[Entry] = []
    modules: dict[str, str] = {}
    for path in sorted(by_path):
        entry = by_path[path]
        if entry.module in modules:
            problems.append(
                (path, f"its module name {entry.module!r} is already the one of {modules[entry.module]}; skipped")
            )
            continue
        if len(entries) >= CONTRIBUTION_ENTRIES:
            problems.append((path, f"more than {CONTRIBUTION_ENTRIES} contributions are configured; skipped"))
            continue
        modules[entry.module] = path
        entries.append(entry)
    return entries, problems
