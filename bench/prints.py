#!/usr/bin/env python3
"""A person's print loop with the bridge and without it: how long a cell printing N lines takes to run.

Each figure is a cell `for i in range(N): print(i, 'persisted ✓ 日本')` run from JupyterLab's own run command
(as a person's Shift+Enter) in a visible notebook, timed in the kernel (`time.time()` around the loop, seconds)
and in the page (run command to the cell's new execution count, seconds). Two sites built by build_site() that
differ only in the extension: the demo site (the bridge) and `.cache/bench/prints-baseline` (no extension; not
run.py's baseline, which holds the bench notebooks too). Every page is opened and idle before the first loop; the
loops of one round run on each page in turn, the order reversed each round, so a drift of the machine's speed
falls on every site alike.

    python bench/prints.py                 # N = 250, 500, 1000; one run each
    python bench/prints.py --lines 2000 --runs 2
    python bench/prints.py --thread worker main   # the bridge's pages in each thread, then the baseline

What it showed (docs/PERFORMANCE.md): the time grows with the square of N on both sites, because JupyterLab
re-renders the whole visible stream output on every stream message; interleaved over 5 rounds, the bridge's pages
were within the machine's noise of the page without it (2026-12-06: 1.02x / 0.87x of none at 250 / 1,000 lines in
the worker mode, 0.91x / 0.98x on the main thread), while one page after the other measured the machine's drift.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

import profile_calls  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402
from sitebuild.util import CACHE  # noqa: E402

NOTEBOOK = "jupyterlite-empty.ipynb"
SET_SOURCE = "code => window.jupyterapp.shell.currentWidget.content.activeCell.model.sharedModel.setSource(code)"
RUN = (
    "() => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = 0; "
    "window.jupyterapp.commands.execute('notebook:run-cell'); }"
)
#: the bridge settled (ready, unavailable or failed; a page without the bridge at once): the loop measures the
#: bridge's work for a person's outputs, not its start-up's share of the machine (measured by run.py's start-up
#: figures)
BRIDGE_SETTLED = (
    "() => !window.webmcpBridge || ['ready', 'unavailable', 'failed'].includes(window.webmcpBridge.status.state)"
)
KERNEL_READY = "() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'"
DONE = "count => window.jupyterapp.shell.currentWidget.content.widgets[0].model.executionCount === count"
KERNEL_SECONDS = (
    "() => window.jupyterapp.shell.currentWidget.content.widgets[0].model.outputs.toJSON().map(o => o.text || "
    "'').join('').match(/kernel (\\S+)/)[1]"
)


def code(lines: int) -> str:
    """The cell's source: a loop of ``lines`` prints, then one line ``kernel <seconds>`` timed in the kernel."""
    return (
        f"import time\nt = time.time()\nfor i in range({lines}):\n    print(i, 'persisted ✓ 日本')\n"
        "print('kernel', round(time.time() - t, 2))"
    )


#: records the page's long tasks (tasks of 50 ms or more) from its first task on
LONG_TASKS = """window.__longtasks = []; try { new PerformanceObserver(list => { for (const e of list.getEntries())
  window.__longtasks.push([e.startTime, e.duration]); }).observe({ type: 'longtask', buffered: true });
    } catch (e) {}"""
LONGEST = "t0 => Math.max(0, ...window.__longtasks.filter(([s, d]) => s + d > t0).map(([, d]) => d))"
#: Chrome's trace categories whose RunTask events give each thread's busy time, and which name each worker's script
TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline"]


def thread_label(name: str, script: str) -> str:
    """A row of :func:`thread_cpu`: a thread by Chrome's thread name, a worker by its script's file name."""
    if name == "CrRendererMain":
        return "the page's main thread"
    if "webmcp-bridge" in script or "worker_boot" in script:
        return "the bridge's worker"
    if "coincident.worker" in script or "pyodide-kernel" in script:
        return "the kernel's worker (runs the loop)"
    if script:
        return f"worker {script.rsplit('/', 1)[-1].split('?')[0]}"
    return name


def thread_cpu(trace: bytes) -> collections.Counter:
    """Busy milliseconds per thread in a Chrome trace (Browser.stop_tracing's JSON, :data:`TRACE_CATEGORIES`): the
    sum of each thread's top-level RunTask durations, rows by :func:`thread_label`."""
    data = json.loads(trace)
    events = data["traceEvents"] if isinstance(data, dict) else data
    names: dict[tuple[int, int], str] = {}
    scripts: dict[int, str] = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("name") == "TracingSessionIdForWorker":
            worker = e.get("args", {}).get("data", {})
            scripts[worker.get("workerThreadId", -1)] = str(worker.get("url", ""))
    busy: collections.Counter = collections.Counter()
    for e in events:
        if e.get("name") == "RunTask" and e.get("ph") == "X":
            name = names.get((e["pid"], e["tid"]), "?")
            busy[thread_label(name, scripts.get(e["tid"], ""))] += e.get("dur", 0) / 1000
    return busy


class LoopPage:
    """One site's page, ready for print loops: opened in a fresh browser context with ``query`` added to the URL
    (e.g. ``&webmcpBridgeThread=main``), once its kernel is idle (a first cell run, untimed, started it) and the
    bridge (if the site has it) has settled. Raises Playwright's TimeoutError after 300 s. :meth:`close` frees it."""

    def __init__(self, browser, folder: Path, query: str = "") -> None:
        self.browser = browser
        self.server = make_server(folder, port=0, quiet=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        host, port = self.server.server_address[:2]
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.add_init_script(script=LONG_TASKS)
        try:
            page = self.page = self.context.new_page()
            page.goto(f"http://{host}:{port}/lab/index.html?path={NOTEBOOK}{query}")
            page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=300_000)
            page.wait_for_function(KERNEL_READY, timeout=300_000)
            page.wait_for_function(BRIDGE_SETTLED, timeout=300_000)
            page.evaluate(SET_SOURCE, "1")
            page.evaluate(RUN)  # start the kernel, untimed
            page.wait_for_function(DONE, arg=1, timeout=300_000)
        except BaseException:
            self.close()
            raise
        self.count = 1

    def loop(
        self, lines: int, profile: collections.Counter | None = None, threads: collections.Counter | None = None
    ) -> tuple[int, float, float, float]:
        """Run the cell printing ``lines`` lines once: ``(lines, kernel seconds, page seconds, longest task ms)``, the
        loop as timed by the kernel, from the run command to the cell's new execution count as seen by the page,
        and the longest main-thread task of the page meanwhile (0: none of 50 ms or more). ``profile``: a Counter
        that gains the page main thread's self milliseconds during the loop (Chrome's sampling profiler, grouped by
        profile_calls.where, page scripts one row per file); ``threads``: one that gains each thread's busy
        milliseconds (:func:`thread_cpu`, a Chrome trace of the loop). Raises TimeoutError after 900 s."""
        page = self.page
        page.evaluate(SET_SOURCE, code(lines))
        self.count += 1
        cdp = profile_calls.start_profiler(self.context, page) if profile is not None else None
        if threads is not None:
            self.browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
        started = time.monotonic()
        t0 = page.evaluate("() => performance.now()")
        page.evaluate(RUN)
        page.wait_for_function(DONE, arg=self.count, timeout=900_000, polling=100)
        seconds = time.monotonic() - started
        if threads is not None:
            threads.update(thread_cpu(self.browser.stop_tracing()))
        if cdp is not None and profile is not None:
            profile.update(profile_calls.self_ms(cdp.send("Profiler.stop")["profile"], by_script=True))
            cdp.detach()
        return lines, float(page.evaluate(KERNEL_SECONDS)), seconds, float(page.evaluate(LONGEST, t0))

    def close(self) -> None:
        self.context.close()
        self.server.shutdown()


def print_counters(title: str, counters: dict[str, collections.Counter], rows: int, per: int = 1) -> None:
    """One table of milliseconds: a column per site, the ``rows`` groups largest on any site first, each divided
    by ``per``."""
    groups = sorted({g for c in counters.values() for g in c}, key=lambda g: -max(c[g] for c in counters.values()))
    print(f"\n{title}")
    print(f"{'':>44}" + "".join(f"{key:>16}" for key in counters))
    for g in groups[:rows]:
        print(f"{g[:44]:<44}" + "".join(f"{c[g] / per:>16.0f}" for c in counters.values()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--runs", type=int, default=1, help="rounds: each round runs every site's loops in turn")
    parser.add_argument(
        "--thread",
        nargs="+",
        default=[""],
        help="the bridge's pages opened with each ?webmcpBridgeThread= (worker, main)",
    )
    parser.add_argument("--profile", action="store_true", help="also the main thread's CPU by script during the loops")
    parser.add_argument("--threads", action="store_true", help="also each thread's busy time (a Chrome trace)")
    args = parser.parse_args()
    bridge, baseline = build_site(), build_site(output=CACHE / "bench" / "prints-baseline", extensions=())
    sites = {f"bridge {t}".strip(): (bridge, f"&webmcpBridgeThread={t}" if t else "") for t in args.thread}
    sites["baseline"] = (baseline, "")
    profiles: dict[str, collections.Counter] = {key: collections.Counter() for key in sites}
    busy: dict[str, collections.Counter] = {key: collections.Counter() for key in sites}
    results: dict[str, list[tuple[int, float, float, float]]] = {key: [] for key in sites}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS]
        )
        pages: dict[str, LoopPage] = {}
        try:
            for key, (folder, query) in sites.items():  # every page open and idle before the first loop
                pages[key] = LoopPage(browser, folder, query)
            for round_ in range(args.runs):  # interleaved, the order turned each round: drift hits every site alike
                order = list(pages) if round_ % 2 == 0 else list(pages)[::-1]
                for n in args.lines:
                    for key in order:
                        results[key].append(
                            pages[key].loop(
                                n, profiles[key] if args.profile else None, busy[key] if args.threads else None
                            )
                        )
        finally:
            for site in pages.values():
                site.close()
        version = browser.version
        browser.close()
    print(f"\nChromium {version}; a cell printing N lines, run by JupyterLab's run command (seconds)")
    print(f"{'N':>6} {'site':>14} {'kernel s':>9} {'page s':>8} {'longest task ms':>16}")
    for key, rows in results.items():
        for n, kernel, wall, longest in rows:
            print(f"{n:>6} {key:>14} {kernel:>9.2f} {wall:>8.2f} {longest:>16.0f}")
    print(f"\nmedians of {args.runs} (page s), and each site's over the baseline's")
    for n in args.lines:
        base = statistics.median(w for m, _, w, _ in results["baseline"] if m == n)
        cells = []
        for key, rows in results.items():
            median = statistics.median(w for m, _, w, _ in rows if m == n)
            cells.append(f"{key} {median:.2f} s ({median / base:.2f}x)")
        print(f"{n:>6}  " + "  ".join(cells))
    if args.profile:
        print_counters("the page's main thread during the loops, self ms (Chrome's sampling profiler)", profiles, 25)
    if args.threads:
        loops = len(args.lines) * args.runs
        title = f"each thread's busy time per loop, ms (mean of {loops}; Chrome's trace, top-level tasks)"
        print_counters(title, busy, 10, loops)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
