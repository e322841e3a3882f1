#!/usr/bin/env python3
"""jupyter_search against patterns that backtrack without end: how long one call takes and what it answers, under
CPython, through the real tool over the in-memory host (tests/helpers.py), for this checkout or another one.

The workspace holds the Project Euler notebook (tests/notebooks) and a text file whose one long line is that
notebook's JSON text written on one line, cut to ``--line`` characters (real text: code, prose, numbers, no NUL).
Each case runs in a process of its own, stopped after ``--timeout`` seconds (then reported as "> N s"): the code
before the deadline inside the match ran the attack for minutes.

    python bench/search_regex.py                             # this checkout
    python bench/search_regex.py --src /path/to/other/py_src # another checkout's bridge, same cases

Figures: wall seconds of the call, and its answer (the error code, or the number of hits and windowChars).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CASES = [
    r"(?:.|..){20}\x00",
    r"(?:.|..){24}\x00",
    r"(?:.|..){30}\x00",
    r"(a+)+$",
    r"(a|aa)*b",
    r"(.*a){20}",
    r"(x+x+)+y",
    r"def euler_\d+\(",
    r"\w+\(",
]

CHILD = r"""
import json, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from helpers import corpus_json, make_bridge
from webmcp_bridge.tools import search_toolset
line = json.dumps(corpus_json("pytudes-euler.ipynb"), ensure_ascii=False)[: int(sys.argv[4])]
b = make_bridge({"demo/euler.ipynb": "pytudes-euler.ipynb"}, {"notes/one-line.json": line + "\n"})
b.reg.add_toolset(search_toolset())
began = time.perf_counter()
result = b.call("jupyter_search", {"query": sys.argv[3], "regex": True, "limit": 100})
spent = time.perf_counter() - began
payload = result.get("structuredContent") or json.loads(result["content"][0]["text"])
if "error" in payload:
    answer = payload["error"]
else:
    answer = f"{len(payload['hits'])} hits, windowChars {payload['windowChars']}"
print(json.dumps([spent, answer]))
"""


def run_case(src: Path, pattern: str, line: int, timeout: float) -> tuple[str, str]:
    """``(seconds, answer)`` of one call in a child process, or ``("> timeout", "")`` when it ran out."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(src), str(ROOT / "tests"), pattern, str(line)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f}", "(stopped)"
    spent, answer = json.loads(done.stdout.strip().splitlines()[-1])
    return f"{spent:.3f}", answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, default=ROOT / "py_src", help="the py_src folder whose bridge runs")
    parser.add_argument("--line", type=int, default=5000, help="characters of the long line")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case is stopped")
    args = parser.parse_args()
    print(f"bridge: {args.src}  long line: {args.line} characters  Python {sys.version.split()[0]}")
    print(f"{'pattern':26} {'seconds':>10}  answer")
    for pattern in CASES:
        spent, answer = run_case(args.src.resolve(), pattern, args.line, args.timeout)
        print(f"{pattern:26} {spent:>10}  {answer}", flush=True)


if __name__ == "__main__":
    main()
