#!/usr/bin/env python3
"""Propose mode's source diff: how long the largest diffs the limits allow take, under CPython and in Pyodide.

The diff runs on the page's main thread (Pyodide), so no case may come near 50 ms. Cases, each at most
DIFF_LINES lines a side (the size Propose mode checks before any diff):

- real code: the Project Euler notebook's code cells as they are (blank lines kept), each line rewritten a
  little (an agent's refactor), and the same with every other line rewritten;
- the shapes that made difflib's SequenceMatcher (autojunk off) slow: blank lines between rewritten
  statements, many repeated ``pass`` lines with some lines changed, 400 x "ab" against alternating "ab"/"ba",
  400 unique lines with every other one changed;
- one edited line in a DIFF_LINES-line cell; and, for the record, the old ``difflib.ndiff`` and the unbounded
  matcher on the same inputs (``--skip-slow`` leaves out the ones that take seconds).

Figures are milliseconds, the best of ``--runs`` runs, wall time and CPU time (``time.process_time``: what
the diff itself costs, less sensitive to other processes on a busy machine; in Pyodide it is wall time too); "steps" is
the matcher's step count (see proposals._Matcher: the budget is MATCH_STEPS_BASE + MATCH_STEPS_PER_LINE x lines, spent
at most twice); "lines" the diff's length (a diff over DIFF_LINES is then refused with TOO_LARGE; it was still
computed).

    python bench/diffs.py                 # CPython
    python bench/diffs.py --pyodide       # also in the built site's Pyodide, in Chromium (python build.py first)
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "py_src"), str(HERE.parent), str(HERE.parent / "playwright-tests")]

from webmcp_bridge.propose import proposals  # noqa: E402
from webmcp_bridge.propose.proposals import DIFF_LINES, source_diff  # noqa: E402

CORPUS = HERE.parent / "lite" / "content" / "pytudes-euler.ipynb"


def code_lines() -> list[str]:
    """The code lines of the Project Euler notebook the site ships (real, varied Python), blank lines kept."""
    cells = json.loads(CORPUS.read_text(encoding="utf-8"))["cells"]
    text = "\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "code"
    )
    return text.splitlines()


def real(n: int, every: int) -> tuple[str, str]:
    """``n`` real code lines; every ``every``-th non-blank one rewritten a little (a name renamed, a comment)."""
    lines = code_lines()[:n]
    return "\n".join(lines), "\n".join(
        line.replace("n", "num", 1) + "  # checked" if line.strip() and k % every == 0 else line
        for k, line in enumerate(lines)
    )


def cases() -> list[tuple[str, str, str]]:
    n = DIFF_LINES
    statements = [f"value_{i} = compute({i}, scale=1.0)" for i in range(n // 2)]
    return [
        (f"real code, {n} lines, all rewritten", *real(n, 1)),
        (f"real code, {n} lines, every other rewritten", *real(n, 2)),
        (
            f"{n // 2} statements rewritten, blank lines between",
            "\n".join(x for s in statements for x in (s, "")),
            "\n".join(x for s in statements for x in (s.replace("1.0", "2.0"), "")),
        ),
        (
            "blank lines between, every other rewritten",
            "\n".join(x for s in statements for x in (s, "")),
            "\n".join(x for k, s in enumerate(statements) for x in (s.replace("1.0", "2.0") if k % 2 else s, "")),
        ),
        (
            f"{n} x 'pass', every third changed",
            "\n".join(["pass"] * n),
            "\n".join("pass" if i % 3 else "x = 1" for i in range(n)),
        ),
        (
            f"{n} x 'ab' vs alternating 'ab'/'ba'",
            "\n".join(["ab"] * n),
            "\n".join("ab" if i % 2 == 0 else "ba" for i in range(n)),
        ),
        (
            f"{n} unique lines, every other changed",
            "\n".join(f"x_{i} = {i}" for i in range(n)),
            "\n".join(f"x_{i} = {i}" if i % 2 else f"y_{i} = {i}" for i in range(n)),
        ),
        (
            f"{n}-line cell, one line edited",
            "\n".join(f"row_{i} = value({i})" if i % 7 else "" for i in range(n)),
            "\n".join(
                "row_changed = value(-1)" if i == n // 2 else f"row_{i} = value({i})" if i % 7 else "" for i in range(n)
            ),
        ),
    ]


def ndiff(before: str, after: str) -> list[list[str]]:
    return [
        [line[0], line[2:]]
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if not line.startswith("? ")
    ]


def unbounded(before: str, after: str) -> list[tuple]:
    return difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).get_opcodes()


def best_ms(fn: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The best of ``runs`` timings of ``fn`` in milliseconds, by ``clock`` (wall time by default)."""
    best = float("inf")
    for _ in range(runs):
        start = clock()
        fn()
        took = (clock() - start) * 1000
        best = min(best, took)
        if took > 3000:
            break
    return best


def steps_of(before: str, after: str) -> int:
    """The matcher steps one source_diff takes (both attempts), counted by wrapping _Matcher."""
    taken = []
    original = proposals._Matcher.find_longest_match

    def counting(self, *args):
        try:
            return original(self, *args)
        finally:
            taken.append(self)

    proposals._Matcher.find_longest_match = counting  # type: ignore[method-assign]
    try:
        source_diff(before, after, max_lines=None)
    finally:
        proposals._Matcher.find_longest_match = original  # type: ignore[method-assign]
    return sum(m.steps for m in {id(m): m for m in taken}.values())


def measure(runs: int, skip_slow: bool) -> list[dict]:
    rows = []
    for name, before, after in cases():
        diff = lambda b=before, a=after: source_diff(b, a, max_lines=None)  # noqa: E731
        row = {
            "case": name,
            "ms": best_ms(diff, runs),
            "cpu_ms": best_ms(diff, runs, time.process_time),
            "steps": steps_of(before, after),
            "lines": len(source_diff(before, after, max_lines=None)),
        }
        if not skip_slow:
            row["unbounded_ms"] = best_ms(lambda b=before, a=after: unbounded(b, a), 1)
            row["ndiff_ms"] = best_ms(lambda b=before, a=after: ndiff(b, a), 1)
        rows.append(row)
    return rows


def print_rows(title: str, rows: list[dict]) -> None:
    print(title)
    print(f"{'case':52} {'wall ms':>8} {'cpu ms':>7} {'steps':>6} {'lines':>6} {'unbounded':>10} {'ndiff':>9}")
    for r in rows:
        slow = [f"{r[k]:.1f}" if k in r else "-" for k in ("unbounded_ms", "ndiff_ms")]
        print(
            f"{r['case']:52} {r['ms']:8.1f} {r['cpu_ms']:7.1f} {r['steps']:6d} {r['lines']:6d} {slow[0]:>10} "
            f"{slow[1]:>9}"
        )
    print(f"slowest: {max(r['ms'] for r in rows):.1f} ms wall, {max(r['cpu_ms'] for r in rows):.1f} ms cpu")


def pyodide_rows(runs: int) -> list[dict]:
    """Run :func:`measure` in the built site's own Pyodide (a page of the site, in Debian Chromium), with the
    bridge wheel the site ships."""
    import threading

    from playwright.sync_api import sync_playwright

    import build
    from lite_site import BASE_ARGS, chromium_executable

    site = build.build()
    server = build.make_server(site, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    base = f"http://{host}:{port}"
    source = Path(__file__).read_text(encoding="utf-8")
    corpus = CORPUS.read_text(encoding="utf-8")
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium_executable(), headless=True, args=BASE_ARGS)
            page = browser.new_page()
            manifest_url = f"{base}/extensions/jupyterlab-webmcp-bridge/static/bridge.json"
            page.goto(manifest_url)  # a plain page of the site: nothing else runs on its main thread
            text = page.evaluate(
                """async ({manifestUrl, source, corpus, runs}) => {
              const manifest = await (await fetch(manifestUrl)).json();
              const runtime = new URL(manifest.pyodide, manifestUrl);
              const { loadPyodide } = await import(runtime.href);
              const py = await loadPyodide({ indexURL: new URL('.', runtime).href });
              await py.loadPackage(manifest.wheels.map((w) => new URL(w, manifestUrl).href));
              await py.loadPackage(new URL(manifest.wheel, manifestUrl).href);
              // the repository's layout rebuilt in Pyodide's in-memory file system (/repo is a name there, no machine
              // path)
              py.FS.mkdirTree('/repo/lite/content');
              py.FS.writeFile('/repo/lite/content/pytudes-euler.ipynb', corpus);
              py.globals.set('BENCH', source);
              py.runPython(`exec(compile(BENCH, "/repo/bench/diffs.py", "exec"),
                                     ns := {"__name__": "bench", "__file__": "/repo/bench/diffs.py"})`);
              return py.runPython(`import json; json.dumps(ns["measure"](${runs}, True))`);
            }""",
                {"manifestUrl": manifest_url, "source": source, "corpus": corpus, "runs": runs},
            )
            browser.close()
    finally:
        server.shutdown()
    return json.loads(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-slow", action="store_true", help="leave out ndiff and the unbounded matcher")
    parser.add_argument("--pyodide", action="store_true", help="also run in the built site's Pyodide (Chromium)")
    args = parser.parse_args()
    print(
        f"DIFF_LINES = {DIFF_LINES}; step budget per attempt = {proposals.match_steps(DIFF_LINES, DIFF_LINES)}; best "
        f"of {args.runs} runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times grow with "
        "it; cpu times much less)"
    )
    print_rows(f"CPython {sys.version.split()[0]}", measure(args.runs, args.skip_slow))
    if args.pyodide:
        print()
        print_rows("Pyodide (the site's runtime, main thread of a Chromium page)", pyodide_rows(args.runs))


if __name__ == "__main__":
    main()
