"""Which toolsets a page serves, and the switch that turns them on and off (pure Python, no ``js``).

A registry's tools come in named toolsets (:class:`~webmcp_bridge.calls.registry.Toolset`). A page does not
register every tool: agents pay for each definition, and some in-browser agents drop every tool of a page
that registers more than about 30. So a page serves a *selection* of toolsets, chosen by these rules:

1. **Words.** A selection is a list of words, each a toolset name or an alias: ``all`` (every toolset) or
   ``default`` (the page's default set). Words are compared exactly (toolset names are lower case); an
   unknown word is ignored and reported (a query written for a later version does no harm).
2. **Where the words come from.** The page URL's query ``toolsets`` (``?toolsets=notebooks,review``: words
   separated by commas, the parameter may repeat; an empty value means "only the always-on toolsets") wins
   over the ``toolsets`` setting, which wins over the default (:attr:`ToolsetSwitch.default`).
3. **Always on.** The toolsets of :attr:`ToolsetSwitch.always` (the discovery tool's) are on whatever the
   words, so the agent can always reach the rest.
4. **The agent's switch.** The discovery tool turns toolsets on or off for this page only (nothing is kept);
   a later change of the ``toolsets`` setting chooses again from the rules above.
5. **The person's word is last.** Tools the person disabled (setting ``disabledTools``, names or
   :func:`fnmatch.fnmatchcase` globs, :func:`disabled_by_patterns`) are never registered, whatever toolset is
   on.

The page's loader registers tools before Python runs, so it gets these rules as data
(:meth:`ToolsetSwitch.manifest`): each toolset's tool names, the alias table and the always-on list. It only
splits the query on commas and looks words up in those tables (the same as :func:`words_of_query` and
:meth:`ToolsetSwitch.expand`); every other decision is made here.
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
    """The words of the ``toolsets`` parameter of a URL query string (``"?path=a&toolsets=notebooks,review"``).

    Returns None when the parameter is absent; otherwise every comma-separated word of every occurrence, in
    order, surrounding spaces removed and empty words dropped (``toolsets=`` gives ``[]``). Percent-escapes and
    ``+`` are decoded as in any query string.
    """
    if not search:
        return None
    pairs = parse_qsl(search[1:] if search.startswith("?") else search, keep_blank_values=True)
    values = [value for key, value in pairs if key == QUERY_KEY]
    if not values:
        return None
    return [word.strip() for value in values for word in value.split(",") if word.strip()]


def disabled_by_patterns(patterns: Iterable[str], names: Iterable[str]) -> tuple[frozenset[str], list[str]]:
    """The tool ``names`` matched by the person's ``disabledTools`` ``patterns`` (exact names or
    :func:`fnmatch.fnmatchcase` globs: ``*``, ``?``, ``[seq]``, ``[!seq]``; case-sensitive), and the patterns
    that match no tool (reported, never an error)."""
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
    """Which toolsets of ``registry`` are on; applied to the registry at once (``Registry.set_toolsets_off``).

    Args:
        registry: the registry whose toolsets are switched (every toolset is on until :meth:`choose`).
        default: the toolsets a page serves when neither its URL nor the settings choose (see the module
            docstring); unknown names are ignored.
        always: toolsets that are always on (the discovery tool's).

    ``on_change`` (no arguments) is called after the agent's switch changed the set of toolsets on (the page
    then registers the new set); :meth:`choose` does not call it (its caller registers anyway).
    """

    def __init__(self, registry: Registry[Any], default: Sequence[str], always: Sequence[str] = ()) -> None:
        self.registry = registry
        self.default = tuple(default)
        self.always = tuple(always)
        self.on_change: Callable[[], None] | None = None
        self.query_words: list[str] | None = None  # the page URL's words (None: the URL does not choose)
        self.setting_words: list[str] | None = None  # the setting's words (None: the setting does not choose)

    # -- the rules -------------------------------------------------------------------------------------------
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

    # -- the state -------------------------------------------------------------------------------------------
    def on(self) -> frozenset[str]:
        """The toolsets on now."""
        return frozenset(self.names()) - self.registry.toolsets_off

    def choose(self) -> list[str]:
        """Turn on exactly the toolsets :meth:`chosen_words` choose (every other one off). Returns the unknown
        words (for the console)."""
        chosen, unknown = self.expand(self.chosen_words())
        self.registry.set_toolsets_off(frozenset(self.names()) - chosen)
        return unknown

    def switch(self, turn_on: Iterable[str] = (), turn_off: Iterable[str] = ()) -> list[str]:
        """The agent's switch: turn toolsets on and off (names only, no aliases; an always-on toolset cannot be
        turned off). Returns the names whose state changed, in registration order, and calls ``on_change``
        when there is one. Raises ValueError naming the first unknown or refused name (nothing changes then)."""
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
        """Every toolset the agent may use: ``{name, description, tools (names the person did not disable),
        enabled, alwaysOn}``, in registration order. A toolset whose every tool the person disabled is left
        out (to the agent those tools do not exist in this page)."""
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
        """What the loader needs to register the page's tools before Python runs (tools.json, besides the
        definitions): ``{queryKey, toolsets: {name: [tool names]}, aliases: {alias: [toolset names]},
        always: [toolset names]}``. The loader reads the words of ``?<queryKey>=`` (commas, as
        :func:`words_of_query`), expands them through ``aliases`` (``["default"]`` when the URL has none), adds
        ``always`` and registers the tools of those toolsets."""
        return {
            "queryKey": QUERY_KEY,
            "toolsets": {t.name: [tool.name for tool in t.tools] for t in self.registry.toolsets()},
            "aliases": self.aliases(),
            "always": [n for n in self.always if n in self.names()],
        }
