"""core/invisible.py: which characters are marked, their visible form, and lines split as Python splits them."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from webmcp_bridge.core import invisible
from webmcp_bridge.core.invisible import code_lines, count, mark, segments


def is_invisible(char: str) -> bool:
    return segments(char) == [(char, True)]


def find(text: str) -> list[int]:
    offsets, at = [], 0
    for run, hidden in segments(text):
        if hidden:
            offsets.append(at)
        at += len(run)
    return offsets


def marked(text: str) -> str:
    return "".join(mark(run) if hidden else run for run, hidden in segments(text))


BIDI = [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C]
ZERO_WIDTH = [0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x00AD, 0x180E]
OTHERS = [
    0xE0001,
    0xE0041,
    0xE007F,
    0xFE00,
    0xFE0F,
    0xE0100,
    0xE01EF,
    0x3164,
    0x115F,
    0x034F,
    0x2028,
    0x2029,
    0x000B,
    0x000C,
    0x001C,
    0x0085,
    0x0000,
    0x007F,
    0xD800,
    0xFFF9,
]


@pytest.mark.parametrize("code", BIDI + ZERO_WIDTH + OTHERS)
def test_each_listed_character_is_invisible(code: int) -> None:
    assert is_invisible(chr(code)), hex(code)


@pytest.mark.parametrize(
    "char", ["a", " ", "\t", "\n", "\r", "é", "ש", "ا", "😀", "❤", "\u00a0", "\u3000", "⟦", "\ufffc"]
)
def test_visible_characters_and_plain_whitespace_are_not(char: str) -> None:
    assert not is_invisible(char)


def test_every_format_and_control_character_this_python_knows_is_in_the_set() -> None:
    """The fixed ranges cover Cf and Cc (but tab, LF, CR) of this interpreter's Unicode database."""
    missing = [
        hex(cp)
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) in ("Cf", "Cc") and chr(cp) not in "\t\n\r" and not is_invisible(chr(cp))
    ]
    assert missing == []


def test_ranges_are_sorted_and_disjoint() -> None:
    ranges = invisible.RANGES
    assert all(a <= b for a, b in ranges)
    assert all(ranges[i][1] < ranges[i + 1][0] for i in range(len(ranges) - 1))


def test_trojan_source_line_is_marked_in_place() -> None:
    line = 'access = "user\u202e \u2066# admin\u2069 \u2066"'
    assert count(line) == 4 and find(line) == [14, 16, 24, 26]
    assert marked(line) == 'access = "user⟦U+202E⟧ ⟦U+2066⟧# admin⟦U+2069⟧ ⟦U+2066⟧"'
    assert marked("a\u200bb") == "a⟦U+200B⟧b" and marked("plain ש text") == "plain ש text"
    assert mark("\U000e0041") == "⟦U+E0041⟧" and mark("\x00") == "⟦U+0000⟧"


def test_segments_give_the_text_back_and_one_run_per_invisible_character() -> None:
    text = "x\u202e\u202ey = 1\ufeff"
    runs = segments(text)
    assert runs == [("x", False), ("\u202e", True), ("\u202e", True), ("y = 1", False), ("\ufeff", True)]
    assert "".join(t for t, _ in runs) == text
    assert segments("") == [] and segments("plain") == [("plain", False)]


def test_code_lines_split_where_python_does() -> None:
    assert code_lines("a\nb\r\nc\rd") == ["a", "b", "c", "d"]
    assert code_lines("# note\u2028import os\x0cx\x85y") == ["# note\u2028import os\x0cx\x85y"]
    assert code_lines("") == [] and code_lines("a\n") == ["a"] and code_lines("a\n\n") == ["a", ""]
    for text in ("", "a", "a\n", "a\n\nb", "\n"):
        assert code_lines(text) == text.splitlines()


def test_names() -> None:
    assert invisible.name("\u202e") == "U+202E RIGHT-TO-LEFT OVERRIDE"
    assert invisible.name("\ud800") == "U+D800"
