"""A notebook's outline: the ATX headings of a markdown cell (CommonMark: up to three spaces, one to six ``#``, a
space or the line's end; a closing ``#`` run dropped; not inside fenced code) and a cell's first line. Setext and
HTML headings are not read: notebooks write headings with ``#``.
"""

from __future__ import annotations

import re

# the title is cut of its closing run by _title: one regex for both backtracks quadratically on a long run of spaces
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def headings(source: str) -> list[tuple[int, str]]:
    """The headings of a markdown cell's ``source``, in order: ``(level 1-6, title)`` ("" for a bare ``#``)."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for line in source.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        match = _ATX.match(line)
        if match:
            found.append((len(match.group(1)), _title(match.group(2) or "")))
    return found


def _title(text: str) -> str:
    """A heading's ``text`` stripped, without its closing ``#`` run (one after a space or tab, or the whole text)."""
    title = text.rstrip(" \t")
    bare = title.rstrip("#")
    return (bare if not bare or bare[-1] in " \t" else title).strip()


def first_line(source: str) -> str:
    """The first non-blank line of ``source``, stripped, whole ("" for none)."""
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def is_heading(line: str) -> bool:
    """Whether ``line`` (outside a fenced code block) is an ATX heading."""
    return _ATX.match(line) is not None
