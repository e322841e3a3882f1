"""Print how long the built site takes from navigation to the bridge's tools being registered, and (``--cpu``) what
the bridge's start costs its worker in CPU time.

Usage: python bench/startup.py [--runs N] [--notebook NAME] [--site DIR ...] [--cpu]

Builds the site (incrementally; ``--site`` serves built sites instead, several compared run by run, interleaved),
serves it on 127.0.0.1, opens it N times in Debian Chromium with native WebMCP, cold (a fresh browser context: empty
HTTP cache and storage) and warm (a reload in the same context), and prints the median and range of the loader's own
timings (ms since navigation start): tools registered, JupyterLab restored, Python started (once the page is idle),
Pyodide ready, bridge ready.

``--cpu``: the cold loads only, JupyterLab's shell without a notebook (so the kernel's worker does not start), traced
with Chrome's tracing: the CPU time (``tdur`` of the thread's top-level trace events: its tasks and microtask
checkpoints) of the bridge's worker thread in each loader step (``status.timings.steps``, moved to the trace's clock
by the page's ``navigationStart``; a task spanning two steps shared by its overlap with each) and in the session's
start (``pyodideReady`` to ``bridgeReady``: the bridge's imports and build, ``status.timings.python``), beside the
step's wall time. CPU, unlike wall time, is not stretched by
other work on a busy machine; the wasm compilation runs on the browser's pool threads and is not in it. A figure
printer, not a test; bench/run.py compares the page with and without the bridge.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable, open_notebook, wait_for_bridge  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402

KEYS = ("toolsRegistered", "restored", "pythonStart", "pyodideReady", "bridgeReady")
#: trace categories: the threads' top-level tasks and microtask checkpoints (with their CPU time), the page's
#: navigationStart mark
CATEGORIES = ["toplevel", "blink.user_timing", "v8.execute"]


def top_level_cpu(events: list[dict]) -> list[tuple[float, float, float]]:
    """``(start µs, end µs, CPU ms)`` of each top-level complete event of one thread (an event inside another of the
    same thread is counted by its parent), in order."""
    spans = sorted((e["ts"], e["ts"] + e.get("dur", 0), e.get("tdur", 0) / 1000) for e in events)
    top: list[tuple[float, float, float]] = []
    for start, end, cpu in spans:
        if top and start < top[-1][1]:
            continue
        top.append((start, end, cpu))
    return top


def worker_cpu(trace: dict, status: dict) -> dict[str, float]:
    """CPU ms of the bridge's worker thread (the renderer's one dedicated worker: no notebook is open) per loader step
    and in the session's start (``session``), from a Chrome trace of the page's load."""
    events = trace["traceEvents"]
    names = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"
    }
    navigation = min(
        e["ts"] for e in events if e.get("name") == "navigationStart" and e.get("cat") == "blink.user_timing"
    )
    workers = {key for key, name in names.items() if name == "DedicatedWorker thread"}
    spans = [e for e in events if e.get("ph") == "X" and "tdur" in e and (e["pid"], e["tid"]) in workers]
    if len({(e["pid"], e["tid"]) for e in spans}) != 1:
        raise SystemExit(f"expected the bridge's worker alone, found {len(workers)} dedicated worker threads")
    top = top_level_cpu(spans)
    timings = status["timings"]
    windows = [(name, began, ended) for name, began, ended in timings["steps"]]
    windows.append(("session", timings["pyodideReady"], timings["bridgeReady"]))
    out = {}
    for name, began, ended in windows:
        low, high = navigation + began * 1000, navigation + ended * 1000
        # a task that spans two steps is shared between them by its overlap with each
        out[name] = sum(
            cpu * (min(end, high) - max(start, low)) / max(end - start, 1)
            for start, end, cpu in top
            if start < high and end > low
        )
        out[f"{name} wall"] = ended - began
    return out


def cpu_run(browser, url: str) -> dict[str, float]:
    context = browser.new_context()
    page = context.new_page()
    browser.start_tracing(page=page, categories=CATEGORIES)
    page.goto(f"{url}/lab/index.html")
    status = wait_for_bridge(page, 180_000)
    trace = json.loads(browser.stop_tracing())
    context.close()
    assert status["state"] == "ready", status
    return worker_cpu(trace, status)


def serve_site(folder: Path):
    server = make_server(folder, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--notebook", default="jupyterlite-demo-python.ipynb")
    parser.add_argument("--site", type=Path, nargs="*", help="built sites to serve (default: build the demo site)")
    parser.add_argument("--cpu", action="store_true", help="the bridge's worker CPU per start-up step (traced)")
    args = parser.parse_args()
    folders = args.site or [build_site()]
    served = [serve_site(folder) for folder in folders]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS]
        )
        if args.cpu:
            cpu: dict[Path, list[dict[str, float]]] = {folder: [] for folder in folders}
            for _ in range(args.runs):
                for folder, (_server, url) in zip(folders, served, strict=True):
                    cpu[folder].append(cpu_run(browser, url))
            browser.close()
            print(f"the bridge's worker thread, CPU ms (wall ms) per start-up step, median of {args.runs} cold loads")
            for folder, runs in cpu.items():
                steps = [key for key in runs[0] if not key.endswith(" wall")]
                median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                row = "  ".join(f"{k} {median[k]:.0f} ({median[k + ' wall']:.0f})" for k in steps)
                print(f"{folder}: {row}")
            return 0
        url = served[0][1]
        samples: dict[str, dict[str, list[float]]] = {"cold": {k: [] for k in KEYS}, "warm": {k: [] for k in KEYS}}
        for _ in range(args.runs):
            context = browser.new_context()
            page = context.new_page()
            for kind in ("cold", "warm"):
                if kind == "warm":
                    page.reload()
                status = open_notebook(page, url, args.notebook)
                assert status["state"] == "ready", status
                for key in KEYS:
                    samples[kind][key].append(status["timings"][key])
            context.close()
        browser.close()
    for server, _url in served:
        server.shutdown()
    print(f"navigation -> milestone, ms (median [min-max] of {args.runs} runs, {args.notebook})")
    for kind, figures in samples.items():
        row = "  ".join(f"{k} {statistics.median(v):.0f} [{min(v):.0f}-{max(v):.0f}]" for k, v in figures.items())
        print(f"{kind:5} {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
