"""Which toolsets a page serves, and the switch that turns them on and off (pure Python, no ``js``).

A page serves a selection of toolsets (agents pay for each definition; some drop every tool of a page registering
more than about 30), by the rules of docs/TOOLS.md, "Toolsets per page": words (toolset names, ``all``,
``default``; unknown ones ignored and reported) from the URL's ``?toolsets=``, else the ``toolsets`` setting, else
:attr:`ToolsetSwitch.default`; :attr:`ToolsetSwitch.always` is always on; the agent's switch holds for the page;
tools the person disabled are never served. The loader applies the same rules from :meth:`ToolsetSwitch.manifest`
before Python runs (splitting the query and looking words up only); every other decision is here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

if TYPE_CHECKING:
    from webmcp_bridge.calls.registry import Registry

#: the page URL's query parameter that chooses the toolsets
QUERY_KEY = "toolsets"
ALL = "all"
DEFAULT = "default"


def words_of_query(search: str | None) -> list[str] | None:
    """The words of a URL query's ``toolsets`` (``"?path=a&toolsets=notebooks,review"``): None when absent, else
    every comma-separated word of every occurrence, stripped, empty ones dropped (``toolsets=``: ``[]``)."""
    if not search:
        return None
    pairs = parse_qsl(search[1:] if search.startswith("?") else search, keep_blank_values=True)
    values = [value for key, value in pairs if key == QUERY_KEY]
    if not values:
        return None
    return [word.strip() for value in values for word in value.split(",") if word.strip()]


def disabled_by_patterns(patterns: Iterable[str], names: Iterable[str]) -> tuple[frozenset[str], list[str]]:
    """The ``names`` the ``disabledTools`` ``patterns`` match (names or case-sensitive
    :func:`fnmatch.fnmatchcase` globs), and the patterns that match none (reported, never an error)."""
    names = list(names)
    hit: set[str] = set()
    unmatched: list[str] = []
    for pattern in patterns:
        matched = {name for name in names if fnmatchcase(name, pattern)}
        if not matched:
            unmatched.append(pattern)
        hit |= matched
    return frozenset(hit), unmatched


class ToolsetSwitch:
    """Which toolsets of ``registry`` are on (all until :meth:`choose`), applied to it at once. ``on_change()`` is
    called after the agent's switch changed the set (not by :meth:`choose`, whose caller registers anyway)."""

    def __init__(self, registry: Registry[Any], default: Sequence[str], always: Sequence[str] = ()) -> None:
        self.registry = registry
        self.default = tuple(default)
        self.always = tuple(always)
        self.on_change: Callable[[], None] | None = None
        self.query_words: list[str] | None = None  # None: the URL does not choose
        self.setting_words: list[str] | None = None  # None: the setting does not choose

    def names(self) -> list[str]:
        """Every toolset of the registry, in registration order."""
        return [t.name for t in self.registry.toolsets()]

    def aliases(self) -> dict[str, list[str]]:
        """The alias table: ``all`` and ``default`` to the toolset names they stand for."""
        known = self.names()
        return {ALL: known, DEFAULT: [n for n in self.default if n in known]}

    def expand(self, words: Iterable[str]) -> tuple[frozenset[str], list[str]]:
        """The toolsets ``words`` choose (aliases expanded, the always-on ones added), and the unknown words."""
        known, aliases = set(self.names()), self.aliases()
        chosen = {n for n in self.always if n in known}
        unknown: list[str] = []
        for word in words:
            if word in aliases:
                chosen.update(aliases[word])
            elif word in known:
                chosen.add(word)
            else:
                unknown.append(word)
        return frozenset(chosen), unknown

    def chosen_words(self) -> list[str]:
        """The words in force: the URL's, else the setting's, else ``["default"]``."""
        if self.query_words is not None:
            return self.query_words
        if self.setting_words is not None:
            return self.setting_words
        return [DEFAULT]

    def on(self) -> frozenset[str]:
        """The toolsets on now."""
        return frozenset(self.names()) - self.registry.toolsets_off

    def choose(self) -> list[str]:
        """Turn on exactly what :meth:`chosen_words` choose; returns the unknown words."""
        chosen, unknown = self.expand(self.chosen_words())
        self.registry.set_toolsets_off(frozenset(self.names()) - chosen)
        return unknown

    def switch(self, turn_on: Iterable[str] = (), turn_off: Iterable[str] = ()) -> list[str]:
        """The agent's switch (names only; an always-on toolset stays on). Returns the names that changed, in order.
        Raises ValueError naming the first unknown or refused name, changing nothing."""
        known = self.names()
        turn_on, turn_off = list(turn_on), list(turn_off)
        for name in [*turn_on, *turn_off]:
            if name not in known:
                raise ValueError(f"there is no toolset named {name!r}")
        for name in turn_off:
            if name in self.always:
                raise ValueError(f"the toolset {name!r} is always on")
        both = set(turn_on) & set(turn_off)
        if both:
            raise ValueError(f"the toolset {sorted(both)[0]!r} cannot be turned on and off at once")
        before = self.on()
        after = (before | set(turn_on)) - set(turn_off)
        self.registry.set_toolsets_off(frozenset(known) - after)
        changed = [n for n in known if (n in before) != (n in after)]
        if changed and self.on_change is not None:
            self.on_change()
        return changed

    def listing(self) -> list[dict[str, Any]]:
        """``{name, description, tools, enabled, alwaysOn}`` of each toolset with a tool the person did not disable."""
        on, disabled = self.on(), self.registry.disabled
        listed = []
        for toolset in self.registry.toolsets():
            tools = [t.name for t in toolset.tools if t.name not in disabled]
            if tools:
                listed.append(
                    {
                        "name": toolset.name,
                        "description": toolset.description,
                        "tools": tools,
                        "enabled": toolset.name in on,
                        "alwaysOn": toolset.name in self.always,
                    }
                )
        return listed

    def manifest(self) -> dict[str, Any]:
        """The loader's rules (tools.json besides the definitions): ``{queryKey, toolsets: {name: [tool names]},
        aliases: {alias: [toolset names]}, always: [toolset names]}``."""
        return {
            "queryKey": QUERY_KEY,
            "toolsets": {t.name: [tool.name for tool in t.tools] for t in self.registry.toolsets()},
            "aliases": self.aliases(),
            "always": [n for n in self.always if n in self.names()],
        }
