#!/usr/bin/env python3
"""A person's print loop with the bridge and without it: how long a cell printing N lines takes to run.

Each figure is a cell `for i in range(N): print(i, 'persisted ✓ 日本')` run from JupyterLab's own run command
(as a person's Shift+Enter) in a visible notebook, timed in the kernel (`time.time()` around the loop, seconds)
and in the page (run command to the cell's new execution count, seconds). Two sites built by build_site() that
differ only in the extension: the demo site (the bridge) and `.cache/bench/baseline` (no extension).

    python bench/prints.py                 # N = 250, 500, 1000; one run each
    python bench/prints.py --lines 2000 --runs 2

What it showed (docs/PERFORMANCE.md): the time grows with the square of N on both sites, because JupyterLab
re-renders the whole visible stream output on every stream message; the bridge adds 10-30 % on top
(its panel and markers re-rendering while the notebook changes).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

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


def measure(
    browser, folder: Path, lines: list[int], runs: int, query: str = ""
) -> list[tuple[int, float, float, float]]:
    """Run every ``lines`` count ``runs`` times on the site built in ``folder``, in a fresh browser context, its page
    opened with ``query`` added to the URL (e.g. ``&webmcpBridgeThread=main``), once the kernel is idle and the
    bridge (if the site has it) has settled.

    Returns ``[(lines, kernel seconds, page seconds, longest task ms)]``: the loop as timed by the kernel, from the
    run command to the cell's new execution count as seen by the page, and the longest main-thread task of the page
    meanwhile (0: none of 50 ms or more). Raises Playwright's TimeoutError after 900 s.
    """
    server = make_server(folder, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    url = f"http://{host}:{port}"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(script=LONG_TASKS)
    try:
        page = context.new_page()
        page.goto(f"{url}/lab/index.html?path={NOTEBOOK}{query}")
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=300_000)
        page.wait_for_function(KERNEL_READY, timeout=300_000)
        page.wait_for_function(BRIDGE_SETTLED, timeout=300_000)
        page.evaluate(SET_SOURCE, "1")
        page.evaluate(RUN)  # start the kernel, untimed
        page.wait_for_function(DONE, arg=1, timeout=300_000)
        figures, count = [], 1
        for n in lines:
            for _ in range(runs):
                page.evaluate(SET_SOURCE, code(n))
                count += 1
                started = time.monotonic()
                t0 = page.evaluate("() => performance.now()")
                page.evaluate(RUN)
                page.wait_for_function(DONE, arg=count, timeout=900_000, polling=100)
                seconds = time.monotonic() - started
                figures.append((n, float(page.evaluate(KERNEL_SECONDS)), seconds, float(page.evaluate(LONGEST, t0))))
    finally:
        context.close()
        server.shutdown()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sites = {"bridge": build_site(), "baseline": build_site(output=CACHE / "bench" / "baseline", extensions=())}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS]
        )
        results = {key: measure(browser, folder, args.lines, args.runs) for key, folder in sites.items()}
        version = browser.version
        browser.close()
    print(f"\nChromium {version}; a cell printing N lines, run by JupyterLab's run command (seconds)")
    print(f"{'N':>6} {'site':>9} {'kernel s':>9} {'page s':>8} {'longest task ms':>16}")
    for key, rows in results.items():
        for n, kernel, wall, longest in rows:
            print(f"{n:>6} {key:>9} {kernel:>9.2f} {wall:>8.2f} {longest:>16.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
