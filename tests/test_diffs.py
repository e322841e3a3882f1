"""Propose mode's source diffs: the size is checked before any diff is computed, and the diff (SequenceMatcher
opcodes, no intra-line pass) shows the same kept, removed and added lines as difflib.ndiff did."""

from __future__ import annotations

import asyncio
import difflib
from collections import Counter

import pytest

from helpers import corpus_json, text_of
from test_propose import Session
from webmcp_bridge.propose import proposals
from webmcp_bridge.propose.proposals import DIFF_LINES, source_diff


def rewritten(n: int) -> tuple[str, str]:
    """``n`` lines, each of them changed a little: the case where ndiff compares every pair of lines."""
    before = "\n".join(f"total_{i} = compute({i}, 'alpha', scale=1.0)" for i in range(n))
    after = "\n".join(f"total_{i} = compute({i}, 'beta', scale=2.0)" for i in range(n))
    return before, after


def sides(diff: list[list[str]]) -> tuple[list[str], list[str]]:
    return [t for op, t in diff if op in " -"], [t for op, t in diff if op in " +"]


def corpus_pairs() -> list[tuple[str, str]]:
    cells = [text_of(c["source"]) for c in corpus_json("pytudes-euler.ipynb")["cells"] if c["cell_type"] == "code"]
    pairs = []
    for i, src in enumerate(cells[:60]):
        lines = src.splitlines()
        edited = lines[: len(lines) // 2] + ["# inserted by the agent"] + [ln.replace("=", "==", 1) for ln in lines[len(lines) // 2:]]
        pairs.append((src, "\n".join(edited)))
        pairs.append((src, cells[(i + 1) % len(cells)]))
    return pairs


@pytest.mark.parametrize("pair", range(0, 120, 7))
def test_the_diff_shows_the_same_lines_as_ndiff(pair):
    before, after = corpus_pairs()[pair]
    diff = source_diff(before, after, max_lines=None)
    assert sides(diff) == (before.splitlines(), after.splitlines())  # each side reads back exactly
    assert all(op in " +-" for op, _ in diff)  # no "?" hint lines
    old = [[line[0], line[2:]] for line in difflib.ndiff(before.splitlines(), after.splitlines()) if not line.startswith("? ")]
    assert Counter(map(tuple, diff)) == Counter(map(tuple, old))


def test_a_rewrite_too_big_to_show_is_refused_before_any_diff_runs(monkeypatch):
    s = Session()
    cell = s.cells()[1]
    before, after = rewritten(800)
    s.nb.person_set_source(cell["id"], before)
    snap, offset = s.cells()[1], 0
    while offset is not None:  # the whole 32 KB source, read page by page as an agent must before replacing it
        page = asyncio.run(s.reg.call("jupyter_get_cells", {"cellIds": [cell["id"]], "sourceOffset": offset}))["structuredContent"]
        offset = page["cells"][0]["nextSourceOffset"]

    def no_diff(*_a, **_k):
        raise AssertionError("a diff was computed for a change too big to show")

    monkeypatch.setattr(proposals.difflib, "ndiff", no_diff)
    monkeypatch.setattr(proposals.difflib, "SequenceMatcher", no_diff)
    result = asyncio.run(s.reg.call("jupyter_update_cell", {"cellId": cell["id"], "source": after, "expectedSourceHash": snap["sourceHash"]}))
    payload = result["structuredContent"]
    assert payload["error"] == "TOO_LARGE" and payload["maxLines"] == DIFF_LINES and payload["lines"] >= 800
    assert not s.book.waiting() and s.nb.find_cell(cell["id"]).source == before


def test_the_largest_diff_allowed_is_shown_whole():
    before, after = rewritten(DIFF_LINES // 2)
    diff = source_diff(before, after, max_lines=None)
    assert len(diff) == DIFF_LINES and sides(diff) == (before.splitlines(), after.splitlines())
