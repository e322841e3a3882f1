"""The worker spike: the bridge's Python on the page's main thread (today) against a dedicated worker, measured.

Usage (from the repository root, after ``python build.py``): ``python bench/worker_spike/run.py [--runs N]``

Serves the built demo site (``_output/``) on 127.0.0.1 with the site's headers (COOP/COEP: cross-origin isolated)
and this folder under ``/_spike/``, so every file (Pyodide, the wheels, the spike's page) comes from one origin.
Drives one Debian Chromium (a fresh browser context per run, all pages of a run in it). Each page
(``page.html?mode=...``, spike.mjs) starts the same runtime and wheels as the bridge's loader (from the site's
``bridge.json``), imports the product's start-up steps (``webmcp_bridge.lab.session.STEPS``), builds the bridge over
an in-memory 100-cell notebook with every schema generated, and then measures crossings and calls. Modes:

- ``main``: Pyodide on the page's main thread, one import per task as the product does today;
- ``worker``: the same in a dedicated module worker;
- ``main-snapshot`` / ``worker-snapshot``: started from a Pyodide memory snapshot (``_makeSnapshot`` /
  ``makeMemorySnapshot`` / ``_loadSnapshot`` of the pinned Pyodide) made by a ``make-*`` page earlier in the same
  context and kept in IndexedDB; variant ``bare`` (the interpreter, the unpacked wheels) and ``imports`` (also every
  start-up import);
- ``worker`` on a server with no COOP/COEP headers (the hosts that cannot set them): no SharedArrayBuffer, so only
  asynchronous crossings (one run).

Per page: main-thread long tasks (PerformanceObserver ``longtask``) from the start until Python is ready, the time
to ready, the main thread's JS heap added (``performance.memory`` after ``gc()``), Pyodide's wasm memory, and then
(the page otherwise idle) the cost of one crossing into the main thread from Python (main: a plain FFI call; worker:
synchronous through a SharedArrayBuffer and ``Atomics.wait``, asynchronous by message) for three answer sizes, a
main -> worker -> main round trip, and one ``jupyter_get_cells`` (100 cells with outputs) from the main thread.
The medians over runs are printed and written to ``bench/worker_spike/results.json``. The machine is shared:
absolute times are noisy; compare the modes of one run (the order of the modes rotates between runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TESTS = ROOT / "tests"
sys.path[:0] = [str(ROOT), str(ROOT / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from lite_site import BASE_ARGS, chromium_executable  # noqa: E402
from sitebuild.serve import HEADERS, SiteHandler, SiteServer  # noqa: E402
from sitebuild.util import OUTPUT  # noqa: E402

RESULTS = HERE / "results.json"
SPIKE_PREFIX = "/_spike/"
PAGE_TIMEOUT_S = 180
MEASURED = ("main", "worker", "main-snapshot", "worker-snapshot")


def serve(headers: dict[str, str] | None) -> tuple[SiteServer, str]:
    """The built site on a free port, with ``/_spike/`` mapped to this folder; returns (server, base URL).
    ``headers``: as :func:`sitebuild.serve.make_server` (None: the site's, ``{}``: none)."""

    class Handler(SiteHandler):
        quiet = True
        site_headers = HEADERS if headers is None else dict(headers)

        def translate_path(self, path: str) -> str:  # the spike's own files, from this folder
            if path.startswith(SPIKE_PREFIX):
                name = path[len(SPIKE_PREFIX) :].split("?", 1)[0]
                if "/" not in name and (HERE / name).is_file():
                    return str(HERE / name)
                harness = name.removeprefix("harness/")  # the test harness's in-memory host (workload.HARNESS)
                if harness != name and "/" not in harness and harness.endswith(".py") and (TESTS / harness).is_file():
                    return str(TESTS / harness)
            return super().translate_path(path)

    server = SiteServer(("127.0.0.1", 0), lambda *args, **kwargs: Handler(*args, directory=str(OUTPUT), **kwargs))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


def open_mode(context, base: str, mode: str, variant: str = "bare") -> dict:
    """Open the spike's page in ``mode`` and return its ``window.__spike`` once done."""
    page = context.new_page()
    page.goto(f"{base}{SPIKE_PREFIX}page.html?mode={mode}&variant={variant}")
    deadline = time.monotonic() + PAGE_TIMEOUT_S
    result: dict = {}
    while time.monotonic() < deadline:
        result = page.evaluate("window.__spike || {}")
        if result.get("done"):
            break
        time.sleep(0.25)
    else:
        result["error"] = "timed out"
    page.close()
    return result


def one_run(browser, base: str, order: list[str], variants: tuple[str, ...]) -> dict[str, dict]:
    """One fresh context: the snapshots are made first (they also fill the HTTP cache), then every mode; the
    snapshot modes once per variant."""
    context = browser.new_context()
    results: dict[str, dict] = {}
    for variant in variants:
        for maker in ("make-worker", "make-main"):
            results[f"{maker}/{variant}"] = open_mode(context, base, maker, variant)
    for mode in order:
        results[mode] = open_mode(context, base, mode)
        if mode.endswith("-snapshot") and "imports" in variants:
            results[f"{mode}/imports"] = open_mode(context, base, mode, "imports")
    context.close()
    return results


def median_of(runs: list[dict], path: list[str]) -> float | None:
    values = []
    for run in runs:
        value: object = run
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            values.append(value)
    return statistics.median(values) if values else None


def table(runs: list[dict[str, dict]], fallback: dict | None) -> list[str]:
    """The printed figures: medians over runs, and each mode against main."""
    keys = sorted({key for run in runs for key in run})
    rows = [f"medians of {len(runs)} runs (ms unless stated; heap and wasm in MB)"]
    rows.append(
        f"{'page':28} {'ready':>7} {'longest':>8} {'tasks':>6} {'heap+':>7} {'wasm':>6} {'call p50':>9} {'snap MB':>8}"
    )
    for key in keys:
        per = [run[key] for run in runs if key in run]
        errors = [r["error"].splitlines()[0][:110] for r in per if r.get("error")]
        if errors:
            rows.append(f"{key:28} error: {errors[0]}")
            continue

        def m(*path: str, per: list[dict] = per) -> float | None:
            return median_of(per, list(path))

        heap, wasm, snap = m("heapAddedBytes"), m("wasmBytes"), m("snapshotBytes")
        ready, longest, tasks, call = (
            m("readyMs"),
            m("startTasks", "longestMs"),
            m("startTasks", "count"),
            m("call", "p50"),
        )

        def f(value: float | None, scale: float = 1.0, digits: int = 0) -> str:
            return "-" if value is None else f"{value / scale:.{digits}f}"

        rows.append(
            f"{key:28} {f(ready):>7} {f(longest):>8} {f(tasks):>6} {f(heap, 1e6, 1):>7} {f(wasm, 1e6):>6}"
            f" {f(call, 1, 2):>9} {f(snap, 1e6, 1):>8}"
        )
    rows.append("")
    rows.append("one crossing into the main thread from Python, ms per call (p50 / p95), medians of runs")
    for key in ("main", "worker"):
        crossings = sorted({name for run in runs for name in (run.get(key, {}).get("crossings") or {})})
        for name in crossings:
            p50 = median_of([run[key] for run in runs], ["crossings", name, "p50"])
            p95 = median_of([run[key] for run in runs], ["crossings", name, "p95"])
            rows.append(f"  {key:8} {name:14} {p50:8.3f} / {p95:8.3f}")
        if key == "worker":
            p50 = median_of([run[key] for run in runs], ["roundTrip", "p50"])
            rows.append(f"  {key:8} {'main->worker->main':14} {p50 if p50 is not None else float('nan'):8.3f} (p50)")
    rows.append("")
    rows.append("ratios in each run (worker / main): ready, longest start task, heap added, call p50")
    for index, run in enumerate(runs, 1):
        main, worker = run.get("main", {}), run.get("worker", {})

        def ratio(*path: str, main: dict = main, worker: dict = worker) -> str:
            a, b = median_of([worker], list(path)), median_of([main], list(path))
            return "-" if a is None or not b else f"{a / b:.2f}"

        rows.append(
            f"  run {index}: ready {ratio('readyMs')}  longest {ratio('startTasks', 'longestMs')}"
            f"  heap {ratio('heapAddedBytes')}  call {ratio('call', 'p50')}"
        )
    if fallback is not None:
        rows.append("")
        rows.append("no COOP/COEP headers (one run): the worker without SharedArrayBuffer")
        if fallback.get("error"):
            rows.append(f"  error: {fallback['error'].splitlines()[0][:110]}")
        else:
            tasks, call = fallback.get("startTasks") or {}, fallback.get("call") or {}
            rows.append(
                f"  crossOriginIsolated={fallback.get('isolated')}: ready {fallback.get('readyMs')} ms,"
                f" longest main-thread"
                f" task {tasks.get('longestMs')} ms, call p50 {call.get('p50')} ms"
            )
            for name, figures in sorted((fallback.get("crossings") or {}).items()):
                rows.append(f"  worker   {name:14} {figures['p50']:8.3f} / {figures['p95']:8.3f}")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    if not (OUTPUT / "extensions" / "jupyterlab-webmcp-bridge" / "static" / "bridge.json").is_file():
        print("no built site: run `python build.py` first", file=sys.stderr)
        return 2
    runs: list[dict[str, dict]] = []
    fallback = None
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium_executable(),
            args=[*BASE_ARGS, "--enable-precise-memory-info", "--js-flags=--expose-gc"],
        )
        server, base = serve(None)
        for index in range(options.runs):
            order = list(MEASURED[index % len(MEASURED) :] + MEASURED[: index % len(MEASURED)])
            print(f"run {index + 1}: {' '.join(order)}", flush=True)
            # the snapshot of every start-up import is tried in the first run only (see docs/WORKER.md)
            runs.append(one_run(browser, base, order, ("bare", "imports") if index == 0 else ("bare",)))
            RESULTS.write_text(json.dumps({"runs": runs, "fallback": fallback}, indent=1) + "\n")
        server.shutdown()
        plain, plain_base = serve({})
        context = browser.new_context()
        open_mode(context, plain_base, "make-worker")  # fills the HTTP cache, as in the isolated runs
        fallback = open_mode(context, plain_base, "worker")
        context.close()
        plain.shutdown()
        browser.close()
    RESULTS.write_text(json.dumps({"runs": runs, "fallback": fallback}, indent=1) + "\n")
    print("\n".join(table(runs, fallback)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
