#!/usr/bin/env python3
"""Propose mode's source diff, old (difflib.ndiff) against new (SequenceMatcher opcodes), under CPython.

The case that hurt: a rewrite where every line changes a little (ndiff compares every pair of lines of a
replaced block, then each similar pair character by character). Sizes: 800 and 1,600 replaced lines (refused
in Propose mode: more than DIFF_LINES diff lines), the largest rewrite allowed (DIFF_LINES / 2 lines replaced,
DIFF_LINES diff lines), and a DIFF_LINES-line cell with one line edited. Figures are milliseconds, the best of
``--runs`` runs (one run for anything over 5 s). "refused" is what Propose mode now spends on a change too big
to show: the linear size check (diff_lines_at_least) and nothing else.

    python bench/diffs.py
    python bench/diffs.py --runs 5 --skip-slow   # leaves out ndiff on 1,600 lines (about a minute)
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py_src"))

from webmcp_bridge.propose.proposals import DIFF_LINES, diff_lines_at_least, source_diff  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "lite" / "content" / "pytudes-euler.ipynb"


def code_lines() -> list[str]:
    """The non-blank code lines of the Project Euler notebook the site ships (real, varied Python)."""
    cells = json.loads(CORPUS.read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells if c["cell_type"] == "code")
    return [line for line in text.splitlines() if line.strip()]


def rewritten(n: int) -> tuple[str, str]:
    """``n`` real code lines, each rewritten a little (a name renamed, a comment added): an agent's refactor."""
    pool = code_lines()
    lines = [pool[i % len(pool)] for i in range(n)]
    return "\n".join(lines), "\n".join(line.replace("n", "num", 1) + "  # checked" for line in lines)


def one_edit(n: int) -> tuple[str, str]:
    lines = [f"row_{i} = value({i})" if i % 7 else "" for i in range(n)]
    edited = list(lines)
    edited[n // 2] = "row_changed = value(-1)"
    return "\n".join(lines), "\n".join(edited)


def old_diff(before: str, after: str) -> list[list[str]]:
    return [[line[0], line[2:]] for line in difflib.ndiff(before.splitlines(), after.splitlines()) if not line.startswith("? ")]


def junk_diff(before: str, after: str) -> list[list[str]]:
    a, b = before.splitlines(), after.splitlines()
    out: list[list[str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        out.extend([" " if tag == "equal" else "-", x] for x in a[i1:i2])
        if tag != "equal":
            out.extend(["+", x] for x in b[j1:j2])
    return out


def best_ms(fn, runs: int) -> tuple[float, int]:
    best, size = float("inf"), 0
    for _ in range(runs):
        start = time.perf_counter()
        size = len(fn())
        took = (time.perf_counter() - start) * 1000
        best = min(best, took)
        if took > 5000:
            break
    return best, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-slow", action="store_true", help="skip ndiff on 1,600 replaced lines")
    args = parser.parse_args()
    cases = [("800 lines replaced", rewritten(800)), ("1,600 lines replaced", rewritten(1600)),
             (f"{DIFF_LINES // 2} lines replaced (largest allowed)", rewritten(DIFF_LINES // 2)),
             (f"{DIFF_LINES}-line cell, one line edited", one_edit(DIFF_LINES))]
    print(f"Python {sys.version.split()[0]}; DIFF_LINES = {DIFF_LINES}; best of {args.runs} runs, ms")
    print(f"{'case':44} {'ndiff (old)':>12} {'opcodes (new)':>14} {'autojunk on':>12} {'refused':>9} {'lines':>7}")
    for name, (before, after) in cases:
        slow = args.skip_slow and name.startswith("1,600")
        old = "skipped" if slow else f"{best_ms(lambda b=before, a=after: old_diff(b, a), args.runs)[0]:.1f}"
        new, lines = best_ms(lambda b=before, a=after: source_diff(b, a, max_lines=None), args.runs)
        junk, _ = best_ms(lambda b=before, a=after: junk_diff(b, a), args.runs)
        too_big = diff_lines_at_least(before, after) > DIFF_LINES
        check = f"{best_ms(lambda b=before, a=after: [diff_lines_at_least(b, a)], args.runs)[0]:.2f}" if too_big else "-"
        print(f"{name:44} {old:>12} {new:>14.1f} {junk:>12.1f} {check:>9} {lines:>7}")


if __name__ == "__main__":
    main()
