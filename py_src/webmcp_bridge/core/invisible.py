"""Characters that draw nothing or change how the text around them is laid out, and a visible form of each.

Code shown to the person for a decision (a proposal's diff, the code a run would execute) must look like what runs:
a right-to-left override (U+202E) can show ``if admin:`` for something else, a zero-width space makes two names that
look the same differ, tag characters can carry a hidden message. The views (``lab/ui/view.py``) show each as
``⟦U+202E⟧``, marked, and flag the proposal.

The set (:data:`RANGES`) is fixed here, not read from :mod:`unicodedata`, so CPython and Pyodide (another Unicode
version) decide alike: Unicode 16's Default_Ignorable_Code_Point characters, every format character (Cf, such as the
interlinear annotations that hide the text between them), every control (Cc) but tab, LF and CR, U+2028/U+2029 and
lone surrogates. Visible spaces other than U+0020 are not in it (marking them would flag most text pasted from a web
page). Lines are split at CR LF, CR and LF only (:func:`code_lines`), as Python and the cell editor split them, so a
character :meth:`str.splitlines` takes for a break (form feed, U+0085, U+2028) stays in its line and is marked there.
"""

from __future__ import annotations

import re
import unicodedata

#: the ranges of the set, inclusive
RANGES: tuple[tuple[int, int], ...] = (
    # controls (Cc) but tab, line feed, carriage return
    (0x0000, 0x0008),
    (0x000B, 0x000C),
    (0x000E, 0x001F),
    (0x007F, 0x009F),
    # Default_Ignorable_Code_Point and format characters (Cf)
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xD800, 0xDFFF),  # lone surrogates
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),  # tag characters, variation selectors supplement, reserved
)

_CLASS = "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in RANGES)
_PATTERN = re.compile(f"[{_CLASS}]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: the brackets of the visible form (:func:`mark`)
OPEN, CLOSE = "⟦", "⟧"


def count(text: str) -> int:
    """How many invisible characters ``text`` holds."""
    return sum(1 for _ in _PATTERN.finditer(text))


def name(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: the code point and, where Unicode gives one, its name."""
    label = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {label}" if label else "")


def mark(char: str) -> str:
    """The visible form of one character: ``⟦U+202E⟧`` (code point in hex, at least four digits)."""
    return f"{OPEN}U+{ord(char):04X}{CLOSE}"


def segments(text: str) -> list[tuple[str, bool]]:
    """``text`` as runs ``(text, invisible)``: plain runs, and one ``(char, True)`` per invisible character."""
    out: list[tuple[str, bool]] = []
    at = 0
    for m in _PATTERN.finditer(text):
        if m.start() > at:
            out.append((text[at : m.start()], False))
        out.append((m.group(), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def code_lines(text: str) -> list[str]:
    """The lines of ``text`` as Python's tokenizer and the cell editor count them (a final break ends the last line,
    as in :meth:`str.splitlines`)."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines
