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
        edited = (
            lines[: len(lines) // 2]
            + ["# inserted by the agent"]
            + [ln.replace("=", "==", 1) for ln in lines[len(lines) // 2 :]]
        )
        pairs.append((src, "\n".join(edited)))
        pairs.append((src, cells[(i + 1) % len(cells)]))
    return pairs


@pytest.mark.parametrize("pair", range(0, 120, 7))
def test_the_diff_shows_the_same_lines_as_ndiff(pair):
    before, after = corpus_pairs()[pair]
    diff = source_diff(before, after, max_lines=None)
    assert sides(diff) == (before.splitlines(), after.splitlines())  # each side reads back exactly
    assert all(op in " +-" for op, _ in diff)  # no "?" hint lines
    old = [
        [line[0], line[2:]]
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if not line.startswith("? ")
    ]
    assert Counter(map(tuple, diff)) == Counter(map(tuple, old))


def test_a_rewrite_too_big_to_show_is_refused_before_any_diff_runs(monkeypatch):
    s = Session()
    cell = s.cells()[1]
    before, after = rewritten(800)
    s.nb.person_set_source(cell["id"], before)
    snap, offset = s.cells()[1], 0
    while offset is not None:  # the whole 32 KB source, read page by page as an agent must before replacing it
        page = asyncio.run(s.reg.call("jupyter_get_cells", {"cellIds": [cell["id"]], "sourceOffset": offset}))[
            "structuredContent"
        ]
        offset = page["cells"][0]["nextSourceOffset"]

    def no_diff(*_a, **_k):
        raise AssertionError("a diff was computed for a change too big to show")

    monkeypatch.setattr(proposals.difflib, "ndiff", no_diff)
    monkeypatch.setattr(proposals.difflib, "SequenceMatcher", no_diff)
    result = asyncio.run(
        s.reg.call(
            "jupyter_update_cell", {"cellId": cell["id"], "source": after, "expectedSourceHash": snap["sourceHash"]}
        )
    )
    payload = result["structuredContent"]
    assert payload["error"] == "TOO_LARGE" and payload["maxLines"] == DIFF_LINES and payload["lines"] >= 800
    assert not s.book.waiting() and s.nb.find_cell(cell["id"]).source == before


def test_the_largest_diff_allowed_is_shown_whole():
    before, after = rewritten(DIFF_LINES // 2)
    diff = source_diff(before, after, max_lines=None)
    assert len(diff) == DIFF_LINES and sides(diff) == (before.splitlines(), after.splitlines())


# -- the worst shapes for a line matcher: bounded work, still a true diff ------------------------------------------


def worst_cases() -> dict[str, tuple[str, str]]:
    """At most DIFF_LINES lines a side (the size Propose mode lets through to the diff), in the shapes that made
    difflib's SequenceMatcher (autojunk off) take 0.2 to 2 s under CPython: repeated and blank lines."""
    n = DIFF_LINES
    statements = [f"value_{i} = compute({i}, scale=1.0)" for i in range(n // 2)]
    blank_between = "\n".join(x for s in statements for x in (s, ""))
    return {
        "blank lines between rewritten statements": (
            blank_between,
            "\n".join(x for s in statements for x in (s.replace("1.0", "2.0"), "")),
        ),
        "blank lines between, every other rewritten": (
            blank_between,
            "\n".join(x for k, s in enumerate(statements) for x in (s.replace("1.0", "2.0") if k % 2 else s, "")),
        ),
        "many pass lines": ("\n".join(["pass"] * n), "\n".join("pass" if i % 3 else "x = 1" for i in range(n))),
        "ab against alternating ab/ba": (
            "\n".join(["ab"] * n),
            "\n".join("ab" if i % 2 == 0 else "ba" for i in range(n)),
        ),
        "unique lines, every other changed": (
            "\n".join(f"x_{i}" for i in range(n)),
            "\n".join(f"x_{i}" if i % 2 else f"y_{i}" for i in range(n)),
        ),
    }


class CountingPositions(list):
    """A list of positions of ``b`` (SequenceMatcher's b2j values) that counts every position handed out."""

    visits = 0

    def __iter__(self):
        for j in list.__iter__(self):
            CountingPositions.visits += 1
            yield j


@pytest.mark.parametrize("case", sorted(worst_cases()))
def test_the_worst_shapes_give_a_true_diff_within_the_matchers_step_budget(case, monkeypatch):
    before, after = worst_cases()[case]
    steps = []  # the steps each _Matcher counted
    original = difflib.SequenceMatcher.find_longest_match

    def counting(self, *args):  # whatever matcher runs: its positions are counted as they are visited
        if not isinstance(next(iter(self.b2j.values()), CountingPositions()), CountingPositions):
            self.b2j = {line: CountingPositions(where) for line, where in self.b2j.items()}
            steps.append(self)
        return original(self, *args)

    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match", counting)
    CountingPositions.visits = 0
    diff = source_diff(before, after, max_lines=None)
    assert sides(diff) == (before.splitlines(), after.splitlines())  # each side reads back exactly
    # one budget for the matcher, one for the anchored gaps: about 13,000 positions at most (the unbounded matcher
    # visits 4 to 12 million on these shapes, 0.2 to 2 s of the page's main thread)
    assert CountingPositions.visits < 50_000, CountingPositions.visits  # about 1 µs each in Pyodide: under 50 ms
    budget = proposals.match_steps(DIFF_LINES, DIFF_LINES)
    assert CountingPositions.visits <= 2 * budget, (CountingPositions.visits, budget)
    assert all(m.steps <= budget for m in steps), [m.steps for m in steps]


def test_a_diff_past_the_budget_keeps_the_lines_it_can_anchor():
    before, after = worst_cases()["blank lines between, every other rewritten"]
    diff = source_diff(before, after, max_lines=None)
    kept = [line for op, line in diff if op == " "]
    # the statements not rewritten, and the blank lines next to them, are shown as kept
    assert [line for line in kept if line] == [
        f"value_{i} = compute({i}, scale=1.0)" for i in range(0, DIFF_LINES // 2, 2)
    ]
    assert len(diff) <= DIFF_LINES * 5 // 4, len(diff)


def test_random_diffs_read_back_whatever_the_budget(monkeypatch):
    import random

    rng = random.Random(7)
    for budget_per_line in (8, 1, 0):
        monkeypatch.setattr(proposals, "MATCH_STEPS_PER_LINE", budget_per_line)
        monkeypatch.setattr(proposals, "MATCH_STEPS_BASE", 200 if budget_per_line else 0)
        for _ in range(300):
            alphabet = rng.choice(["ab", "abc", "abcdefgh", "abcdefghijklmnopqrstuvwxyz"])
            before = "\n".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            after = "\n".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            assert sides(source_diff(before, after, max_lines=None)) == (before.splitlines(), after.splitlines()), (
                before,
                after,
            )
