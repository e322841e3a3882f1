"""A notebook's outline, read from its cells' text: the headings of a markdown cell and a cell's first line.

Headings are Markdown's ATX headings (CommonMark: up to three spaces, one to six ``#``, then a space or the line's
end; a closing run of ``#`` is dropped), outside fenced code blocks (a line starting with at least three backticks
or tildes opens one, the same fence closes it). Setext headings (a line underlined with ``===``) and HTML ``<h1>``
are not read: notebooks write headings with ``#``. Standard library only.
"""

from __future__ import annotations

import re

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def headings(source: str) -> list[tuple[int, str]]:
    """The ATX headings of a markdown cell's ``source``, in order: ``(level 1-6, title)``; the title with its
    surrounding spaces and closing ``#`` run removed ("" for a bare ``#``)."""
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
            found.append((len(match.group(1)), (match.group(2) or "").strip()))
    return found


def first_line(source: str) -> str:
    """The first line of ``source`` that is not blank, its surrounding spaces removed ("" for a blank source); whole
    (the caller cuts it)."""
    for line in source.splitlines():
        if line.strip():
            return line.strip()
    return ""


def is_heading(line: str) -> bool:
    """Whether ``line`` (outside a fenced code block) is an ATX heading."""
    return _ATX.match(line) is not None
