"""Characters that draw nothing or change how the text around them is laid out, and a visible form of each.

Code shown to the person for a decision (a proposal's diff, the code a run would execute) must look like what
runs: a right-to-left override (U+202E) can show ``if admin:`` for what Python reads as something else, a zero
width space makes two names that look the same differ, and tag characters or variation selectors can carry a
whole hidden message after one visible letter. This module finds them and gives each a visible text form,
``⟦U+202E⟧``; the views (``lab/ui/view.py``) show that form, marked, in place of the character, and flag the
proposal that holds any.

**The set** (:func:`is_invisible`), fixed here instead of read from :mod:`unicodedata`, so CPython and the page's
Pyodide (another Unicode version) decide alike:

- Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 16): the characters Unicode
  says a renderer draws as nothing when it does not support them. It holds the bidi controls (U+061C, U+200E,
  U+200F, U+202A–U+202E, U+2066–U+2069), the zero-width characters (U+200B–U+200D, U+2060–U+2064, U+FEFF), the
  soft hyphen U+00AD, U+034F, U+115F–U+1160, U+17B4–U+17B5, U+180B–U+180F, U+3164, U+FFA0, the variation
  selectors (U+FE00–U+FE0F, U+E0100–U+E01EF), the tag characters (U+E0000–U+E007F) and the reserved ranges
  beside them (U+2065, U+FFF0–U+FFF8, U+E0000–U+E0FFF).
- Every format character (general category Cf, Unicode 16) not already in it: U+0600–U+0605, U+06DD, U+070F,
  U+0890–U+0891, U+08E2, U+110BD, U+110CD, U+13430–U+1343F, U+FFF9–U+FFFB (interlinear annotations, which
  hide the text between them).
- Every control character (Cc) but tab, line feed and carriage return: U+0000–U+0008, U+000B–U+000C,
  U+000E–U+001F, U+007F–U+009F. Form feed, vertical tab, U+001C–U+001E and U+0085 end a line for
  :meth:`str.splitlines` but not for Python's tokenizer or the cell editor.
- The line and paragraph separators U+2028 and U+2029 (the same split).
- Lone surrogates U+D800–U+DFFF (no character at all; a browser draws a replacement sign).

Visible spaces other than U+0020 (no-break space, the U+2000 family, ideographic space) are not in the set: they
draw as blank space, and marking them would flag most text pasted from a web page.

Lines are split as Python and the cell editor split them (:func:`code_lines`: ``\\r\\n``, ``\\r``, ``\\n``), so a
character that :meth:`str.splitlines` takes for a line break stays inside its line and is marked there.
"""

from __future__ import annotations

import re
import unicodedata

#: the ranges of :func:`is_invisible`, inclusive (see the module docstring for where each comes from)
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


def is_invisible(char: str) -> bool:
    """Whether one character (a string of length 1) is in the set of the module docstring."""
    return _PATTERN.fullmatch(char) is not None


def find(text: str) -> list[int]:
    """The offsets (in characters, 0-based) of every invisible character of ``text``, in order."""
    return [m.start() for m in _PATTERN.finditer(text)]


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


def marked(text: str) -> str:
    """``text`` with every invisible character replaced by its :func:`mark` (everything else as it is)."""
    return _PATTERN.sub(lambda m: mark(m.group()), text)


def segments(text: str) -> list[tuple[str, bool]]:
    """``text`` as runs ``(text, invisible)``: plain runs as they are, and one ``(char, True)`` per invisible
    character, in order (joined, the runs give ``text`` back). No runs for an empty text."""
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
    """The lines of ``text`` as Python's tokenizer and the cell editor count them: split at ``\\r\\n``, ``\\r``
    and ``\\n`` only (never at form feed, U+0085 or U+2028, which :meth:`str.splitlines` also takes for breaks).
    A final line break ends the last line, as in :meth:`str.splitlines`; ``""`` has no lines."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def flag(n: int) -> str | None:
    """The warning for a text holding ``n`` invisible characters, or None when ``n`` is 0."""
    if n <= 0:
        return None
    return (
        f"Contains {n} invisible character{'s' if n != 1 else ''} (shown as {OPEN}U+…{CLOSE}): they are in the text "
        "as the kernel or the notebook gets it, and can make it read differently from what it does."
    )
