#!/usr/bin/env python3
"""Where the JS heap the bridge adds to the page's main thread comes from: the heap after load on four pages.

Each page is the bench's own (bench/run.py's sites, so `python bench/run.py --quick` must have built them): opened
cold, reloaded, the loaded notebook rendered, the page quiet for 2 s, then its JS heap after two forced garbage
collections (`performance.memory.usedJSHeapSize`, as run.py's "JS heap added"). The pages:

- ``none``: the site without an extension (another build: its figure is shown, the differences are taken from the
  next);
- ``bridge blocked``: the bridge's own site with its loader (``remoteEntry.js``) answered 404: the same page without
  the bridge, the one every other page is compared with;
- ``worker``: the bridge's site, its default (the bridge's Python in a worker);
- ``main``: the bridge's site with ``?webmcpBridgeThread=main`` (Pyodide on the page's main thread);
- ``no python``: the bridge's site on the main thread with ``pyodide.mjs`` answered 404, so the bridge's Python
  never starts (status ``failed``): what the loader alone keeps (its scripts, the tools registered from
  tools.json, the status), against which ``worker`` shows what the Python side makes on the page (the JS halves,
  the Agent panel and cell markers, the crossings).

    python bench/heap.py            # 3 rounds, the pages in turn
    python bench/heap.py --runs 5

Prints each page's heap (MB) per round and the median over the rounds, added to ``bridge blocked``'s. bench/run.py
records the same difference per run ("JS heap added after load (the same site, its extension present vs blocked)").
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "playwright-tests"), str(HERE.parent)]

from playwright.sync_api import sync_playwright  # noqa: E402

import run as bench  # noqa: E402
import sites  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402

#: page -> (bench site, a URL pattern answered 404 or None, the query added to the page's URL)
PAGES = {
    "none": ("baseline", None, ""),
    "bridge blocked": ("ours", bench.EXTENSION_SCRIPT["ours"], ""),
    "worker": ("ours", None, ""),
    "main": ("ours", None, "&webmcpBridgeThread=main"),
    "no python": ("ours", "**/pyodide/pyodide.mjs", "&webmcpBridgeThread=main"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    folders = {side: sites.BENCH / side for side in ("ours", "baseline")}
    for folder in folders.values():
        if not (folder / "lab" / "index.html").exists():
            sys.exit(f"{folder} is not built: run `python bench/run.py --quick` first")
    servers, urls = bench.serve(folders)
    init_script = (HERE / "page.js").read_text(encoding="utf-8")
    found: dict[str, list[tuple[int, str]]] = {name: [] for name in PAGES}
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS, *bench.BENCH_ARGS]
            )
            try:
                for _ in range(opts.runs):
                    for name, (side, blocked, query) in PAGES.items():
                        found[name].append(
                            bench.heap_after_load(browser, urls[side], side, blocked, init_script, query)
                        )
            finally:
                browser.close()
    finally:
        for server in servers:
            server.shutdown()
    none = statistics.median(heap for heap, _ in found["bridge blocked"])
    print(
        f"JS heap after load (MB; medians of {opts.runs}; added = the median minus the same site's, bridge blocked)\n"
    )
    print("| page | median | added | each round | bridge state |\n|---|---|---|---|---|")
    for name, rows in found.items():
        median = statistics.median(heap for heap, _ in rows)
        rounds = ", ".join(f"{heap / 2**20:.1f}" for heap, _ in rows)
        states = ", ".join(sorted({state for _, state in rows}))
        print(f"| {name} | {median / 2**20:.1f} | {(median - none) / 2**20:+.1f} | {rounds} | {states} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
