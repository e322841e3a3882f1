"""Where the main thread's time goes while a page opens: Chrome's sampling CPU profiler from navigation until the
page is usable (JupyterLab's shell restored and the file browser listing its entries, as ``bench/run.py`` defines
it), on the bench sites with the bridge, with the reference and with no extension, grouped by script.

Usage: python bench/profile_load.py [--runs N] [--warm] [--startup] [--open NOTEBOOK]

Needs the sites ``bench/run.py`` built (``.cache/bench/ours``, ``theirs``, ``baseline``). Each run opens each site
in a fresh browser context (``--warm``: then reloads it, and profiles the reload), and prints, per site, the
median over runs of the milliseconds until usable and of the self time of each group up to then. ``--startup``:
the bridge's site only, profiled on until its status is ready (the bridge's Python start-up included), with the
longest task of that stretch. ``--open bench-3000.ipynb``: on each site, once the page is up (for the bridge, once
its Python is ready) and quiet, the opening of that bench notebook with JupyterLab's own command, profiled until its
cells are rendered and 2 s more (as ``bench/run.py`` times it), with the longest task of that stretch.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "playwright-tests"))
sys.path.insert(0, str(HERE.parent))

from playwright.sync_api import sync_playwright  # noqa: E402

import run as bench  # noqa: E402
import sites  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402
from profile_calls import self_ms, start_profiler  # noqa: E402


def profile_load(browser, url: str, init_script: str, warm: bool) -> tuple[float, collections.Counter]:
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(init_script)
    if warm:
        bench.goto(page, url)
        page.wait_for_function("() => __bench.usable !== null", timeout=bench.LOAD_TIMEOUT_MS)
        page.wait_for_timeout(3000)
    cdp = start_profiler(context, page)
    bench.goto(page, url, reload=warm)
    page.wait_for_function("() => __bench.usable !== null", timeout=bench.LOAD_TIMEOUT_MS, polling=20)
    profile = cdp.send("Profiler.stop")["profile"]
    usable = page.evaluate("() => __bench.usable")
    context.close()
    return usable, self_ms(profile, by_script=True)


def profile_startup(browser, url: str, init_script: str) -> tuple[float, float, collections.Counter]:
    """(ready ms, longest task ms from Python's start to ready, self ms by group) of the bridge's site from navigation
    to its status ready."""
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(init_script)
    cdp = start_profiler(context, page)
    bench.goto(page, url)
    page.wait_for_function(
        "() => ['ready', 'failed'].includes(window.webmcpBridge?.status.state)",
        timeout=bench.LOAD_TIMEOUT_MS,
        polling=20,
    )
    profile = cdp.send("Profiler.stop")["profile"]
    timings = page.evaluate("() => window.webmcpBridge.status.timings")
    ready = timings["bridgeReady"]
    longest = bench.longest_in(page.evaluate("() => __bench.longtasks"), timings["pythonStart"], ready)
    context.close()
    return ready, longest, self_ms(profile)


def profile_open(browser, url: str, side: str, init_script: str, name: str) -> tuple[float, float, collections.Counter]:
    """(seconds until rendered, longest task ms, self ms by group and script) of opening bench notebook ``name``."""
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(init_script)
    bench.goto(page, url)
    page.wait_for_function("() => __bench.usable !== null", timeout=bench.LOAD_TIMEOUT_MS)
    if side == "ours":
        page.wait_for_function("() => window.webmcpBridge?.status.state === 'ready'", timeout=bench.LOAD_TIMEOUT_MS)
    bench.settle(page)
    cdp = start_profiler(context, page)
    t0 = page.evaluate("() => performance.now()")
    page.evaluate("path => __bench.open(path)", name)
    bench.rendered(page, name)
    t_rendered = page.evaluate("() => performance.now()")
    page.wait_for_timeout(2000)
    t1 = page.evaluate("() => performance.now()")
    profile = cdp.send("Profiler.stop")["profile"]
    longest = bench.longest_in(page.evaluate("() => __bench.longtasks"), t0, t1)
    context.close()
    return (t_rendered - t0) / 1000, longest, self_ms(profile, by_script=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm", action="store_true", help="profile a reload (the browser's caches warm)")
    parser.add_argument("--startup", action="store_true", help="the bridge's site until its Python is up")
    parser.add_argument(
        "--open", metavar="NOTEBOOK", help="profile opening this bench notebook (e.g. bench-3000.ipynb)"
    )
    opts = parser.parse_args()
    names = ("ours",) if opts.startup else bench.ALL_SITES
    folders = {side: sites.BENCH / side for side in names}
    for folder in folders.values():
        if not (folder / "lab" / "index.html").exists():
            sys.exit(f"{folder} is not built: run `python bench/run.py --quick` first")
    servers, urls = bench.serve(folders)
    init_script = (HERE / "page.js").read_text(encoding="utf-8")
    found: dict[str, list] = {side: [] for side in names}
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS, *bench.BENCH_ARGS]
            )
            try:
                for i in range(opts.runs):
                    if opts.open:
                        for side in names if i % 2 == 0 else names[::-1]:
                            found[side].append(profile_open(browser, urls[side], side, init_script, opts.open))
                        continue
                    if opts.startup:
                        found["ours"].append(profile_startup(browser, urls["ours"], init_script))
                        continue
                    for side in names if i % 2 == 0 else names[::-1]:
                        found[side].append(profile_load(browser, urls[side], init_script, opts.warm))
            finally:
                browser.close()
    finally:
        for server in servers:
            server.shutdown()
    if opts.startup:
        runs = found["ours"]
        print(f"## The bridge's site from navigation until its Python is up (cold; medians of {opts.runs} runs)\n")
        print(
            f"ready at {statistics.median(r for r, _, _ in runs):.0f} ms; longest task "
            f"{statistics.median(t for _, t, _ in runs):.0f} ms\n"
        )
        print("| where | self ms |\n|---|---|")
        for group in sorted(
            {g for _, _, c in runs for g in c}, key=lambda g: -statistics.median(c.get(g, 0) for _, _, c in runs)
        ):
            value = statistics.median(c.get(group, 0) for _, _, c in runs)
            if value >= 5:
                print(f"| {group} | {value:.0f} |")
        return 0
    if opts.open:
        print(
            f"## Opening {opts.open} with JupyterLab's command: self ms until rendered + 2 s (medians of {opts.runs} "
            "runs)\n"
        )
        print("| where | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
        print(
            "| seconds until rendered | "
            + " | ".join(f"{statistics.median(r[0] for r in found[s]):.2f}" for s in names)
            + " |"
        )
        print(
            "| longest task (ms) | "
            + " | ".join(f"{statistics.median(r[1] for r in found[s]):.0f}" for s in names)
            + " |"
        )
        groups = sorted(
            {g for s in names for r in found[s] for g in r[2]},
            key=lambda g: -statistics.median(r[2].get(g, 0) for r in found["ours"]),
        )
        for group in groups:
            row = [statistics.median(r[2].get(group, 0) for r in found[s]) for s in names]
            if max(row) >= 10:
                print(f"| {group} | " + " | ".join(f"{v:.0f}" for v in row) + " |")
        return 0
    kind = "warm (a reload)" if opts.warm else "cold (a fresh context)"
    print(f"## Opening the page, {kind}: main-thread self time until usable (ms, medians of {opts.runs} runs)\n")
    print("| where | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    print(
        "| usable (ms from navigation) | "
        + " | ".join(f"{statistics.median(u for u, _ in found[s]):.0f}" for s in names)
        + " |"
    )
    groups = sorted(
        {g for s in names for _, c in found[s] for g in c},
        key=lambda g: -statistics.median(c.get(g, 0) for _, c in found["ours"]),
    )
    for group in groups:
        row = [statistics.median(c.get(group, 0) for _, c in found[s]) for s in names]
        if max(row) >= 5:
            print(f"| {group} | " + " | ".join(f"{v:.0f}" for v in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
