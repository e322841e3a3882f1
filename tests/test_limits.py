"""limits.py: UTF-8 measuring, cutting and paging on real multilingual corpus text, ANSI stripping."""

from __future__ import annotations

import pytest

from helpers import corpus_json, text_of
from webmcp_bridge.core.limits import (
    DEFAULT_LIMITS,
    KIB,
    base64_decoded_len,
    preview,
    slice_utf8,
    strip_ansi,
    truncate_utf8,
    utf8_len,
)


def markdown_text(name: str) -> str:
    return "\n".join(text_of(c["source"]) for c in corpus_json(name)["cells"] if c["cell_type"] == "markdown")


@pytest.fixture(scope="module")
def zwj_text() -> str:
    text = markdown_text("notebook-v7-tour.ipynb")
    assert "\U0001f3c3\u200d\u2640\ufe0f" in text  # 🏃‍♀️, a ZWJ sequence
    return text


@pytest.fixture(scope="module")
def arabic_text() -> str:
    text = markdown_text("hf-quicktour-ar.ipynb")
    assert sum("\u0600" <= ch <= "\u06ff" for ch in text) > 5000
    return text


@pytest.fixture(scope="module")
def cjk_text() -> str:
    text = markdown_text("hf-quicktour-ja.ipynb")
    assert sum("\u3040" <= ch <= "\u9fff" for ch in text) > 3000
    return text


@pytest.fixture(scope="module", params=["zwj", "arabic", "cjk"])
def multilingual(request, zwj_text, arabic_text, cjk_text) -> str:
    return {"zwj": zwj_text, "arabic": arabic_text, "cjk": cjk_text}[request.param]


def test_defaults_match_the_contract():
    assert DEFAULT_LIMITS.result_bytes == 50 * KIB
    assert DEFAULT_LIMITS.source_read_bytes == 16 * KIB
    assert DEFAULT_LIMITS.source_write_bytes == 256 * KIB
    assert DEFAULT_LIMITS.input_bytes == 1024 * KIB


@pytest.mark.parametrize(
    "text, size",
    [
        ("", 0),
        ("abc", 3),
        ("é", 2),
        ("日本", 6),
        ("مرحبا", 10),
        ("🤗", 4),
        ("\U0001f3c3\u200d\u2640\ufe0f", 4 + 3 + 3 + 3),
        ("\ud800", 3),
    ],
)
def test_utf8_len(text, size):
    assert utf8_len(text) == size


def test_utf8_len_on_corpus_text(multilingual):
    assert utf8_len(multilingual) == len(multilingual.encode("utf-8"))
    assert utf8_len(multilingual) > len(multilingual)  # really multibyte


def test_truncate_never_splits_a_code_point(multilingual):
    data = multilingual.encode("utf-8")
    for max_bytes in list(range(0, 64)) + list(range(64, min(len(data), 6000), 37)):
        cut = truncate_utf8(multilingual, max_bytes)
        encoded = cut.encode("utf-8")  # strict: fails on a half code point or a lone surrogate
        assert len(encoded) <= max_bytes
        assert multilingual.startswith(cut)
        # the longest such prefix: one more code point would not fit
        if len(cut) < len(multilingual):
            assert len(encoded) + len(multilingual[len(cut)].encode("utf-8")) > max_bytes


def test_truncate_inside_the_zwj_sequence(zwj_text):
    seq = "\U0001f3c3\u200d\u2640\ufe0f"
    at = zwj_text.index(seq)
    base = utf8_len(zwj_text[:at])
    for extra in range(0, 14):
        cut = truncate_utf8(zwj_text, base + extra)
        assert cut.encode("utf-8")
        tail = cut[at:]
        assert seq.startswith(tail), (extra, tail)
    assert truncate_utf8(zwj_text, base + 1) == zwj_text[:at]  # 1..3 bytes of a 4-byte emoji: nothing of it
    assert truncate_utf8(zwj_text, base + 4) == zwj_text[:at] + "\U0001f3c3"


def test_truncate_short_text_and_negative():
    assert truncate_utf8("abc", 10) == "abc"
    assert truncate_utf8("abc", -5) == ""
    assert truncate_utf8("日本語", 7) == "日本"


@pytest.mark.parametrize("page", [4, 5, 7, 100, 1000, 16 * KIB])
def test_slice_pages_join_back_exactly(multilingual, page):
    total = utf8_len(multilingual)
    pages, offset, seen = [], 0, 0
    while True:
        text, start, nxt, size = slice_utf8(multilingual, offset, page)
        assert size == total
        assert start == offset  # following nextOffset never lands inside a code point
        assert utf8_len(text) <= page
        text.encode("utf-8")
        pages.append(text)
        seen += 1
        assert seen < total + 2
        if nxt is None:
            assert start + utf8_len(text) == total
            break
        assert nxt == start + utf8_len(text) and nxt > start
        offset = nxt
    assert "".join(pages) == multilingual


def test_slice_offset_inside_a_code_point_moves_back(cjk_text):
    first = next(i for i, ch in enumerate(cjk_text) if utf8_len(ch) == 3)
    at = utf8_len(cjk_text[:first])
    for inside in (at + 1, at + 2):
        text, start, _, _ = slice_utf8(cjk_text, inside, 30)
        assert start == at
        assert text.startswith(cjk_text[first])


def test_slice_edges():
    assert slice_utf8("", 0, 10) == ("", 0, None, 0)
    assert slice_utf8("abc", 99, 10) == ("", 3, None, 3)
    assert slice_utf8("🤗x", 0, 2) == ("🤗", 0, 4, 5)  # one code point wider than the page comes alone
    with pytest.raises(ValueError):
        slice_utf8("abc", -1, 10)


def error_tracebacks(name: str) -> list[str]:
    return [
        "\n".join(o["traceback"])
        for c in corpus_json(name)["cells"]
        for o in c.get("outputs", [])
        if o["output_type"] == "error"
    ]


@pytest.mark.parametrize("name, count", [("ipython-beyond-plain-python.ipynb", 4), ("sci-python-lecture-1.ipynb", 5)])
def test_strip_ansi_on_real_tracebacks(name, count):
    traces = error_tracebacks(name)
    assert len(traces) == count
    assert sum("\x1b" in t for t in traces) >= 1
    for trace in traces:
        clean = strip_ansi(trace)
        assert "\x1b" not in clean
        assert "[0;31m" not in clean and "[1;31m" not in clean and "[0m" not in clean
    joined = strip_ansi("\n".join(traces))
    assert "Traceback" in joined or "Error" in joined


def test_strip_ansi_keeps_the_words():
    line = "\x1b[1;31mZeroDivisionError\x1b[0m                         Traceback (most recent call last)"
    assert strip_ansi(line) == "ZeroDivisionError                         Traceback (most recent call last)"
    assert strip_ansi("\x1b]0;title\x07plain") == "plain"
    assert strip_ansi("no escapes") == "no escapes"


def test_preview_is_bounded_and_marked(arabic_text):
    p = preview(arabic_text, 240)
    assert utf8_len(p) <= 240 and p.endswith("…")
    assert arabic_text.startswith(p[:-1])
    assert preview("short", 240) == "short"
    assert "\x1b" not in preview("\x1b[0;31mred\x1b[0m", 240)


def test_base64_decoded_len():
    import base64

    for raw in (b"", b"a", b"ab", b"abc", bytes(range(256)) * 3):
        encoded = base64.b64encode(raw).decode()
        assert base64_decoded_len(encoded) == len(raw)
        wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76)) + "\n"
        assert base64_decoded_len(wrapped) == len(raw)


def test_a_page_cut_from_its_window_equals_the_page_cut_from_the_whole_text():
    """The JupyterLab host reads only page_window's bytes of an output and pages them with page_utf8: every
    page, at every offset and size, is the page slice_utf8 cuts from the whole text."""
    from webmcp_bridge.core.limits import page_utf8, page_window, slice_utf8

    text = "a\u00e9\u20ac\U0001f600b" * 7 + "\U0001f600" * 3
    data = text.encode("utf-8")
    for max_bytes in (0, 1, 2, 3, 4, 5, 9):
        for offset in range(len(data) + 3):
            first, end = page_window(offset, max_bytes)
            first, end = min(first, len(data)), min(end, len(data))
            assert page_utf8(data[first:end], first, len(data), offset, max_bytes) == slice_utf8(
                text, offset, max_bytes
            ), (offset, max_bytes)
