"""Benchmark the bridge against the published reference extension (jupyterlite-webmcp 0.1.1) and against no extension.

Usage: python bench/run.py [--runs N] [--calls N] [--quick] [--before REV] [--thread main|worker]
[--table [RESULTS_JSON]]

Builds three sites that differ only in the extension (bench/sites.py: same JupyterLite, same offline Pyodide,
same content plus the notebooks of bench/notebooks.py): ours (the bridge), theirs (the reference) and baseline
(no extension). Serves them on 127.0.0.1 and drives them in one Debian Chromium with native WebMCP; every figure
of a run comes from the same browser, and the order of the sites alternates between runs. The in-page half is
bench/page.js (installed before navigation): call timing with performance.now(), long tasks, long animation
frames (the scripts that ran in them), the moment the page is usable. Per run:

1. Opening the page, cold (a fresh browser context) and warm (a reload), on each site: navigation -> usable
   (JupyterLab's shell restored and the file browser listing its entries), -> every tool registered (ours,
   theirs), the longest main-thread task until usable; for ours the bridge's start-up (the loader's steps) and
   its longest task.
2. The first call's answer (ours, theirs), cold and warm: a jupyter_get_cells made the moment the tool is listed
   (retried while it answers an error), timed from navigation.
3. Memory after load, the loaded notebook rendered on every site (JS heap after GC minus the no-extension site's;
   the bridge's Pyodide wasm memory) and its growth over 1,000 read calls (get_context, get_cells with and without
   outputs, export).
4. Calls on bench-10/-100/-1000/-large once JupyterLab has rendered every cell: get_cells (sources; with
   outputs) of cells [0, min(N, 100)) -- 100 is the reference's cap per call, so both return the same cells
   --, update_cell on a middle cell, export (markdown with outputs): p50/p95 ms, main-thread CPU ms per call
   (Chrome's ThreadTime, robust to a busy machine), the longest task during a call, result bytes.
5. Opening the notebooks of bench/notebooks.py OPENED (large images, a 16 MB stream, 3,000 cells, nbformat 4.4,
   an unknown MIME type) with JupyterLab's own command, on each site: the longest task until every cell is
   rendered (+2 s), and the longest script run of the extension itself (long animation frames attribute each
   script to its URL: ours is the loader and the main-thread Pyodide, theirs its extension folder); then for
   ours and theirs the longest task during a first get_cells with outputs and a first export on it.
6. A person's print loop (bench/prints.py: a cell printing 250 and 1,000 lines, run by JupyterLab's run command)
   on ours and on baseline, both pages open, the loops alternating (two of each count per site and run): seconds
   as the page saw them, and the longest task during the loop.

Prints a table (medians over runs; ratio = ours / theirs, or ours / no extension for the page and the print loop)
and writes bench/results.json after every run. --quick: one run, bench-10 and -100, two small notebooks opened,
5 calls a figure, 100 calls for the memory growth, the print loop at 250 lines (a smoke check that still prints
every kind of figure). --table reprints the table of the last results.json.

--before REV adds a fourth site, "before": the bridge as commit REV built it (bench/sites.py before_site: a git
worktree of REV built by its own build code), driven in the same browser and runs exactly as ours (the page,
memory, the call series, the notebooks opened, the first call); the table gains "Calls: now and before REV" (p50,
p95 and CPU of ours and of before side by side, ratio = now / before), and results.json its figures under
"before" (meta.plan.before names the commit).

--thread main|worker opens the bridge's pages (ours) with ``?webmcpBridgeThread=`` (docs/loader.md, "The worker
mode"): the bridge's Python on the page's main thread or in its dedicated worker; without it, the page's default.
meta.plan.thread records it. The other sites' pages are opened as they are.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import re
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "playwright-tests")]

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

import mcp_first_call  # noqa: E402
import notebooks  # noqa: E402
import prints  # noqa: E402
import sites  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402

RESULTS = HERE / "results.json"
#: tools each site registers when it is fully up (a site registering fewer never counts as loaded)
TOOL_COUNTS = {"ours": 0, "theirs": 22, "baseline": 0, "before": 0}  # ours, before: counted in their tools.json
SIDES = ("ours", "theirs")
ALL_SITES = ("ours", "theirs", "baseline")
#: the sites that run the bridge (its start-up timings, its scripts): ours, and the earlier commit of --before
BRIDGES = ("ours", "before")
#: the scripts of each extension, by URL, in long-animation-frame attribution (on the main thread, a Pyodide
#: runtime is only ever the bridge's: the kernel's runs in a worker)
OWN_SCRIPTS = {
    "ours": re.compile(r"/extensions/jupyterlab-webmcp-bridge/|^jupyterlab-webmcp-bridge/|/pyodide(\.asm)?\.m?js"),
    "theirs": re.compile(r"/extensions/jupyterlite-webmcp/"),
    "baseline": None,
}
OWN_SCRIPTS["before"] = OWN_SCRIPTS["ours"]
BENCH_ARGS = ["--enable-precise-memory-info", "--js-flags=--expose-gc"]
LOAD_NOTEBOOK = notebooks.name_for(10)
MEMORY_NOTEBOOK = notebooks.name_for(100)
LOAD_TIMEOUT_MS = 180_000
OPEN_TIMEOUT_S = 240
RENDER_TIMEOUT_MS = 60_000
WARMUP = 2  # untimed calls before each timed series
TARGETS = {
    "usable_ratio": 1.05,
    "tools_ratio": 1.0,
    "p50_ratio": 0.5,
    "p50_ratio_small": 1.0,
    "p95_ratio": 1.0,
    "longest_task_ms": 50,
    "heap_added_bytes": 5 * 1024 * 1024,
    "growth_bytes": 1024 * 1024,
    "prints_ratio": 1.05,
}


# ------------------------------------------------------------------------------------------------ page


class Metrics:
    """Chrome's own counters of one page (CDP Performance.getMetrics): ThreadTime is the CPU time of the page's
    main thread in seconds, which a busy machine does not inflate the way it stretches wall time."""

    def __init__(self, page: Page) -> None:
        self.session = page.context.new_cdp_session(page)
        self.session.send("Performance.enable")

    def thread_ms(self) -> float:
        metrics = {m["name"]: m["value"] for m in self.session.send("Performance.getMetrics")["metrics"]}
        return metrics["ThreadTime"] * 1000


#: site URL -> what its pages' query adds (``&webmcpBridgeThread=...`` for ours under --thread)
EXTRA_QUERY: dict[str, str] = {}


def goto(page: Page, url: str, reload: bool = False) -> None:
    if reload:
        page.reload()
    else:
        page.goto(f"{url}/lab/index.html?path={LOAD_NOTEBOOK}{EXTRA_QUERY.get(url, '')}")


def bench_state(page: Page) -> dict:
    return page.evaluate("""() => ({usable: __bench.usable, restored: __bench.restored, listed: __bench.listed,
        toolTimes: __bench.toolTimes, firstCall: __bench.firstCall, longtasks: __bench.longtasks,
        status: window.webmcpBridge ? JSON.parse(JSON.stringify(window.webmcpBridge.status)) : null})""")


def longest_in(tasks: list, t0: float, t1: float) -> float:
    """The longest long task overlapping [t0, t1] (0: none; the API reports tasks of 50 ms or more)."""
    return max((d for s, d in tasks if s < t1 and s + d > t0), default=0.0)


def own_scripts(page: Page, side: str, t0: float, t1: float) -> dict:
    """The longest script run of the side's own extension among the long animation frames overlapping [t0, t1]:
    {ms, url, invoker} (ms 0 when none of its scripts ran 5 ms or more in a long frame)."""
    pattern = OWN_SCRIPTS[side]
    best = {"ms": 0.0, "url": "", "invoker": ""}
    if pattern is None:
        return best
    for frame in page.evaluate("([a, b]) => __bench.loafsBetween(a, b)", [t0, t1]):
        for script in frame["scripts"]:
            if pattern.search(script["url"]) and script["duration"] > best["ms"]:
                best = {
                    "ms": script["duration"],
                    "url": script["url"].rsplit("/", 1)[-1],
                    "invoker": script["invoker"][:80],
                }
    return best


def load(page: Page, url: str, side: str, reload: bool = False) -> dict:
    """Navigate (or reload); wait until the page is usable, every tool is registered and, for ours, the bridge
    has started. Returns {usable, tools, longest_until_usable, tbt_until_usable} (ms since navigation) and, for
    ours, {startup: the loader's timings, startup_longest, startup_own}."""
    goto(page, url, reload)
    page.wait_for_function("() => __bench.usable !== null", timeout=LOAD_TIMEOUT_MS)
    want = TOOL_COUNTS[side]
    if want:
        page.wait_for_function(
            "n => __bench.toolTimes.some(([, count]) => count >= n)", arg=want, timeout=LOAD_TIMEOUT_MS
        )
    if side in BRIDGES:
        page.wait_for_function(
            "() => ['ready', 'failed'].includes(window.webmcpBridge.status.state)", timeout=LOAD_TIMEOUT_MS
        )
    page.wait_for_timeout(1000)
    state = bench_state(page)
    usable = state["usable"]
    out = {
        "usable": usable,
        "tools": next((at for at, count in state["toolTimes"] if count >= want), None) if want else None,
        "longest_until_usable": longest_in(state["longtasks"], 0, usable),
        "tbt_until_usable": sum(
            max(0.0, min(s + d, usable) - max(s, 0) - 50) for s, d in state["longtasks"] if s < usable
        ),
    }
    if side in BRIDGES:
        timings = state["status"]["timings"]
        began, ready = timings.get("pythonStart", 0), timings.get("bridgeReady", 0)
        out["startup"] = timings
        out["startup_longest"] = longest_in(state["longtasks"], began, ready)
        out["startup_own"] = own_scripts(page, side, began, ready)
    return out


def first_call(browser, url: str, side: str, init_script: str) -> dict:
    """Navigation -> the first successful jupyter_get_cells result, made the moment the tool is listed (a `pending`
    answer collected with jupyter_wait_for_result, as an agent does; ``<kind>_answer`` is when the first answer came,
    ``<kind>_pending`` whether it was pending); cold (a fresh context) and warm (a reload)."""
    context = browser.new_context()
    spec = {"name": "jupyter_get_cells", "args": {"notebookPath": LOAD_NOTEBOOK, "startIndex": 0, "endIndex": 10}}
    context.add_init_script(script=f"window.__benchFirstCall = {json.dumps(spec)};")
    context.add_init_script(script=init_script)
    page = context.new_page()
    out = {}
    try:
        for kind in ("cold", "warm"):
            goto(page, url, reload=kind == "warm")
            page.wait_for_function("() => __bench.firstCall !== null", timeout=LOAD_TIMEOUT_MS)
            answer = page.evaluate("() => __bench.firstCall")
            out[kind] = answer["at"]
            out[f"{kind}_attempts"] = answer["attempts"]
            first_answer = page.evaluate("() => __bench.firstAnswer")
            out[f"{kind}_answer"] = first_answer["at"]  # the first answer: the result, or `pending` before it
            out[f"{kind}_pending"] = first_answer["pending"]
            if side in BRIDGES:
                out[f"{kind}_start_reason"] = page.evaluate("() => window.webmcpBridge.status.timings.startReason")
            page.wait_for_timeout(1000)
    finally:
        context.close()
    return out


def call(page: Page, name: str, args: dict) -> dict:
    """One untimed call; its parsed CallToolResult (raises on a tool error), with ``structuredContent`` filled from
    its text where the result carries its payload only there (the bridge on native WebMCP)."""
    result = page.evaluate("([name, args]) => window.__bench.call(name, args)", [name, args])
    if result.get("isError"):
        raise RuntimeError(f"{name} {args}: {json.dumps(result)[:400]}")
    if "structuredContent" not in result:
        result["structuredContent"] = json.loads(result["content"][0]["text"])
    return result


def open_notebook(page: Page, path: str, cells: int) -> None:
    """Open a notebook through the shared jupyter_open_notebook tool and wait until its model has every cell."""
    call(page, "jupyter_open_notebook", {"path": path})
    last = {"notebookPath": path, "cellIds": [f"c{cells - 1:04d}"]}
    deadline = time.monotonic() + OPEN_TIMEOUT_S
    while time.monotonic() < deadline:
        if not page.evaluate("args => window.__bench.call('jupyter_get_cells', args)", last).get("isError"):
            return
        time.sleep(0.5)
    raise RuntimeError(f"{path} did not open with {cells} cells within {OPEN_TIMEOUT_S} s")


def rendered(page: Page, path: str, timeout_ms: int = RENDER_TIMEOUT_MS) -> bool:
    """Wait until JupyterLab has rendered every cell of the open notebook `path` (it renders a long notebook's
    cells in idle callbacks after opening it). False if it had not within timeout_ms."""
    try:
        page.wait_for_function("path => __bench.rendered(path)", arg=path, timeout=timeout_ms, polling=250)
    except PlaywrightTimeout:
        return False
    return True


def settle(page: Page, quiet_ms: int = 2000, timeout_ms: int = 20_000) -> bool:
    """Wait until the page has had no long task for quiet_ms (False if not within timeout_ms: a busy machine
    stretches every task past 50 ms; the run goes on and records it)."""
    try:
        page.wait_for_function(
            """quiet => { const b = window.__bench; const last = b.longtasks.length ? b.longtasks.at(-1) : [0, 0];
                          return performance.now() - (last[0] + last[1]) > quiet; }""",
            arg=quiet_ms,
            timeout=timeout_ms,
            polling=500,
        )
    except PlaywrightTimeout:
        return False
    return True


def series(
    page: Page, name: str, args: dict, n: int, sources: list[str] | None = None, metrics: Metrics | None = None
) -> tuple[list[dict], float | None]:
    """n timed calls (after WARMUP untimed ones) in the page; raises if any call returned an error. Returns the
    rows and the main-thread CPU ms per timed call (None without metrics)."""
    page.evaluate("spec => window.__bench.calls(spec)", {"name": name, "args": args, "n": WARMUP, "sources": sources})
    if sources:  # the warm-up wrote the cell: start from its current hash
        args = {**args, "expectedSourceHash": current_hash(page, args["notebookPath"], args["cellId"])}
    before = metrics.thread_ms() if metrics else None
    rows = page.evaluate("spec => window.__bench.calls(spec)", {"name": name, "args": args, "n": n, "sources": sources})
    cpu = (metrics.thread_ms() - before) / n if metrics and before is not None else None
    errors = [r["errorText"] for r in rows if r["error"]]
    if errors:
        raise RuntimeError(f"{name}: {len(errors)} of {len(rows)} calls failed, first: {errors[0]}")
    return rows, cpu


def current_hash(page: Page, path: str, cell_id: str) -> str:
    return call(page, "jupyter_get_cells", {"notebookPath": path, "cellIds": [cell_id]})["structuredContent"]["cells"][
        0
    ]["sourceHash"]


# --------------------------------------------------------------------------------------------- figures


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def summarize(rows: list[dict], cpu: float | None) -> dict:
    """One series' figures: p50/p95 ms, CPU ms per call, the longest task, result bytes, the Python-side p50."""
    ms = [r["ms"] for r in rows]
    python = [r["python"] for r in rows if r["python"] is not None]
    return {
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "cpu": cpu,
        "longest_task": max(r["longest"] for r in rows),
        "calls_with_long_task": sum(1 for r in rows if r["longest"] > 0),
        "bytes": statistics.median(r["bytes"] for r in rows),
        "python_p50": percentile(python, 50) if python else None,
        "calls": len(rows),
    }


def call_specs(path: str, cells: int, target: dict) -> list[tuple[str, str, dict, list[str] | None]]:
    """(figure, tool, args, update sources) for one notebook; target is the cell update_cell rewrites."""
    window = {"notebookPath": path, "startIndex": 0, "endIndex": min(cells, 100)}
    edited = [target["source"] + "\n# edited by the benchmark", target["source"]]
    return [
        ("get_cells", "jupyter_get_cells", {**window, "includeOutputs": False}, None),
        ("get_cells+outputs", "jupyter_get_cells", {**window, "includeOutputs": True}, None),
        (
            "update_cell",
            "jupyter_update_cell",
            {"notebookPath": path, "cellId": target["id"], "expectedSourceHash": target["sourceHash"]},
            edited,
        ),
        (
            "export",
            "jupyter_export_notebook",
            {"notebookPath": path, "format": "markdown", "includeOutputs": True},
            None,
        ),
    ]


def target_cell(page: Page, path: str, cells: int) -> dict:
    """The cell update_cell rewrites: a code cell in the middle (the 20 MB output's cell in the large one)."""
    cell_id = "c0001" if cells < 10 or path == notebooks.name_for("large") else f"c{cells // 2 + 1:04d}"
    cell = call(page, "jupyter_get_cells", {"notebookPath": path, "cellIds": [cell_id]})["structuredContent"]["cells"][
        0
    ]
    return {"id": cell_id, "source": cell["source"], "sourceHash": cell["sourceHash"]}


def memory(page: Page) -> dict:
    return page.evaluate("() => window.__bench.memory()")


#: each extension's loader script: answered 404, the same site runs without its extension (JupyterLite goes on without
#: a federated extension whose script fails)
EXTENSION_SCRIPT = {
    "ours": "**/extensions/jupyterlab-webmcp-bridge/static/remoteEntry.js",
    "theirs": "**/extensions/jupyterlite-webmcp/static/remoteEntry*.js",
}
EXTENSION_SCRIPT["before"] = EXTENSION_SCRIPT["ours"]


def heap_after_load(browser, url: str, side: str, blocked: str | None, init_script: str, query: str = "") -> tuple:
    """One page of ``side``'s site at ``url``, cold then reloaded, its loaded notebook rendered and the page quiet for
    2 s: ``(its JS heap after two forced collections, in bytes; the bridge's status state or "-")``. ``blocked``: a URL
    pattern answered 404 (an extension's loader: the same site without it). The service worker is blocked (JupyterLite
    works without it) so that ``blocked`` reaches the page's route; the pages compared are all opened so."""
    context = browser.new_context(service_workers="block")
    context.add_init_script(script=init_script)
    if blocked:
        context.route(blocked, lambda route: route.fulfill(status=404, body="blocked by the benchmark"))
    EXTRA_QUERY[url], before = query, EXTRA_QUERY.get(url, "")
    try:
        page = context.new_page()
        load(page, url, side if not blocked else "baseline")
        load(page, url, side if not blocked else "baseline", reload=True)
        rendered(page, LOAD_NOTEBOOK)
        settle(page)
        state = page.evaluate("() => window.webmcpBridge ? window.webmcpBridge.status.state : '-'")
        return memory(page)["heap"], state
    finally:
        EXTRA_QUERY[url] = before
        context.close()


def same_site_heap(browser, url: str, side: str, init_script: str) -> dict:
    """The JS heap the extension adds to its own site: {with, without} in bytes, the same site with its loader present
    and answered 404, fully rendered (:func:`heap_after_load`), alternating."""
    query = EXTRA_QUERY.get(url, "")
    without, _ = heap_after_load(browser, url, side, EXTENSION_SCRIPT[side], init_script, query)
    with_it, _ = heap_after_load(browser, url, side, None, init_script, query)
    return {"with": with_it, "without": without}


def new_page(browser, init_script: str) -> tuple:
    context = browser.new_context()
    context.add_init_script(script=init_script)
    return context, context.new_page()


def opening(page: Page, side: str, path: str, calls: bool) -> dict:
    """Open `path` with JupyterLab's own command; the longest task until its cells are rendered (+2 s) and the
    extension's longest script run then; with `calls`, the longest task during a first get_cells with outputs
    and a first export on it. Closes it after."""
    t0 = page.evaluate("() => performance.now()")
    page.evaluate("path => __bench.open(path)", path)
    done = rendered(page, path)
    page.wait_for_timeout(2000)
    t1 = page.evaluate("() => performance.now()")
    state = bench_state(page)
    out = {
        "rendered": done,
        "seconds": (t1 - t0 - 2000) / 1000,
        "longest": longest_in(state["longtasks"], t0, t1),
        "own": own_scripts(page, side, t0, t1),
    }
    if calls:
        for figure, tool, args in (
            (
                "get_cells+outputs",
                "jupyter_get_cells",
                {"notebookPath": path, "startIndex": 0, "endIndex": 100, "includeOutputs": True},
            ),
            ("export", "jupyter_export_notebook", {"notebookPath": path, "format": "markdown", "includeOutputs": True}),
        ):
            rows = page.evaluate(
                "spec => window.__bench.calls(spec)", {"name": tool, "args": args, "n": 1, "sources": None}
            )
            if rows[0]["error"]:
                raise RuntimeError(f"{tool} on {path}: {rows[0]['errorText']}")
            out[figure] = {"ms": rows[0]["ms"], "longest": rows[0]["longest"]}
    page.evaluate("path => __bench.close(path)", path)
    page.wait_for_timeout(500)
    return out


def run_side(browser, url: str, side: str, plan: dict, init_script: str) -> dict:
    """One run of one site: the page cold and warm, memory, then (extensions only) the first call, the call
    series, and the notebooks opened. Returns its figures."""
    out: dict = {"load": {}, "memory": {}, "calls": {}, "opened": {}}
    context, page = new_page(browser, init_script)
    try:
        out["load"]["cold"] = load(page, url, side)
        out["load"]["warm"] = load(page, url, side, reload=True)
        # every page with the notebook of ?path= open and rendered before its memory is read: the page without an
        # extension is usable (and load() returns) before JupyterLab has opened it, the bridge's page waits for the
        # bridge's start, by which time it has
        rendered(page, LOAD_NOTEBOOK)
        settle(page)
        out["memory"]["after_load"] = memory(page)
        if side != "baseline":
            metrics = Metrics(page)
            # memory growth over read-only calls (writes grow JupyterLab's own undo history, not the extension's)
            open_notebook(page, MEMORY_NOTEBOOK, 100)
            rendered(page, MEMORY_NOTEBOOK)
            reads = [
                ("jupyter_get_context", {}),
                ("jupyter_get_cells", {"notebookPath": MEMORY_NOTEBOOK, "startIndex": 0, "endIndex": 100}),
                (
                    "jupyter_get_cells",
                    {"notebookPath": MEMORY_NOTEBOOK, "startIndex": 0, "endIndex": 100, "includeOutputs": True},
                ),
                (
                    "jupyter_export_notebook",
                    {"notebookPath": MEMORY_NOTEBOOK, "format": "markdown", "includeOutputs": True},
                ),
            ]
            for name, args in reads:
                series(page, name, args, 5)
            before = memory(page)
            for name, args in reads:
                series(page, name, args, plan["memory_calls"] // len(reads))
            after = memory(page)
            out["memory"].update(before_calls=before, after_calls=after, calls=plan["memory_calls"])
            for path, cells in plan["notebooks"]:
                open_notebook(page, path, cells)
                out.setdefault("rendered", {})[path] = rendered(page, path)
                settle(page)
                target = target_cell(page, path, cells)
                for figure, tool, args, sources in call_specs(path, cells, target):
                    rows, cpu = series(page, tool, args, plan["calls"], sources, metrics)
                    out["calls"][f"{figure}@{path}"] = summarize(rows, cpu)
        for key in plan["opened"]:
            out["opened"][key] = opening(page, side, notebooks.name_for(key), calls=side != "baseline")
    finally:
        context.close()
    if side != "baseline":
        out["first_call"] = first_call(browser, url, side, init_script)
        out["memory"]["same_site"] = same_site_heap(browser, url, side, init_script)
        try:
            # in a thread of its own: the sync Playwright API keeps an event loop running in this one
            with ThreadPoolExecutor(1) as pool:
                out["mcp_first_call"] = pool.submit(asyncio.run, mcp_first_call.measure(url, LOAD_NOTEBOOK)).result()
        except Exception as exc:  # noqa: BLE001 -- recorded; the run keeps its other figures
            print(f"[bench] Playwright MCP's first call failed on {side}: {exc}", flush=True)
            out["mcp_first_call"] = {"error": str(exc)[:500]}
    return out


def print_loop(browser, folders: dict, lines: list[int], queries: dict[str, str]) -> dict:
    """The print loop (bench/prints.py) on ours and on baseline, each page's URL with ``queries[site]`` added (as
    :data:`EXTRA_QUERY` adds it to that site's other pages): {site: [[lines, kernel s, page s, longest task ms]]},
    two loops of each count per site, or {"error": text} when it could not finish (a kernel that did not start on a
    busy machine): the run keeps its other figures. Both pages are open and idle before the first loop, and the
    loops alternate (ours, baseline, baseline, ours), so a drift of the machine's speed falls on both alike: one
    page after the other measured the drift (a later loop on the same page ran up to 2× faster)."""
    pages: dict[str, prints.LoopPage] = {}
    try:
        for key in ("ours", "baseline"):
            pages[key] = prints.LoopPage(browser, folders[key], queries.get(key, ""))
        found: dict[str, list] = {key: [] for key in pages}
        for n in lines:
            for key in ("ours", "baseline", "baseline", "ours"):
                found[key].append(list(pages[key].loop(n)))
        return found
    except Exception as exc:  # noqa: BLE001 -- reported in results.json and on the console, never fatal
        print(f"[bench] print loop failed: {exc}", flush=True)
        return {"error": str(exc)[:500]}
    finally:
        for page in pages.values():
            page.close()


# ------------------------------------------------------------------------------------------------ table


def median_of(runs: list[dict], *keys) -> float | None:
    values = []
    for run in runs:
        node = run
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            values.append(node)
    return statistics.median(values) if values else None


def combine(runs: list[dict]) -> dict:
    """Medians over runs of every figure, per site."""
    summary: dict = {}
    base = [r["baseline"] for r in runs]
    for side in (s for s in (*ALL_SITES, "before") if s in runs[0]):
        per = [r[side] for r in runs]
        s: dict = {"load": {}, "opened": {}, "calls": {}}
        for kind in ("cold", "warm"):
            for key in ("usable", "tools", "longest_until_usable", "tbt_until_usable", "startup_longest"):
                s["load"][f"{key}_{kind}"] = median_of(per, "load", kind, key)
            s["load"][f"startup_own_{kind}"] = median_of(per, "load", kind, "startup_own", "ms")
            s["load"][f"first_call_{kind}"] = median_of(per, "first_call", kind)
            s["load"][f"first_answer_{kind}"] = median_of(per, "first_call", f"{kind}_answer")
            for key in ("listed", "answer", "result"):
                s["load"][f"mcp_{key}_{kind}"] = median_of(per, "mcp_first_call", kind, key)
            if side in BRIDGES:
                timings = [p["load"][kind]["startup"] for p in per]
                s["load"][f"python_start_{kind}"] = statistics.median(t.get("pythonStart", 0) for t in timings)
                s["load"][f"bridge_ready_{kind}"] = statistics.median(t.get("bridgeReady", 0) for t in timings)
                s["load"][f"steps_{kind}"] = {
                    name: statistics.median(
                        [e - b for t in timings for n, b, e in t.get("steps", []) if n == name] or [0]
                    )
                    for name in ("runtime", "loadPyodide", "dependencies", "bridge")
                }
                s["load"][f"python_steps_{kind}"] = timings[0].get("python", {})
        heap_added = [
            p["memory"]["after_load"]["heap"] - b["memory"]["after_load"]["heap"]
            for p, b in zip(per, base, strict=True)
        ]
        s["heap_added_bytes"] = statistics.median(heap_added)
        same = [p["memory"]["same_site"] for p in per if "same_site" in p["memory"]]
        if same:
            s["same_site_heap_added_bytes"] = statistics.median(m["with"] - m["without"] for m in same)
        s["wasm_bytes"] = median_of(per, "memory", "after_load", "wasm")
        if side != "baseline":

            def delta(p: dict, key: str) -> float:
                return p["memory"]["after_calls"][key] - p["memory"]["before_calls"][key]

            s["growth_bytes"] = statistics.median(delta(p, "heap") + delta(p, "wasm") for p in per)
            s["growth_heap_bytes"] = statistics.median(delta(p, "heap") for p in per)
            s["growth_wasm_bytes"] = statistics.median(delta(p, "wasm") for p in per)
            for key in per[0]["calls"]:
                s["calls"][key] = {
                    stat: median_of([p["calls"][key] for p in per], stat)
                    for stat in ("p50", "p95", "cpu", "longest_task", "calls_with_long_task", "bytes", "python_p50")
                }
        for key in per[0]["opened"]:
            entry = {
                "longest": median_of(per, "opened", key, "longest"),
                "own": median_of(per, "opened", key, "own", "ms"),
                "seconds": median_of(per, "opened", key, "seconds"),
            }
            for figure in ("get_cells+outputs", "export"):
                entry[figure] = median_of(per, "opened", key, figure, "longest")
                entry[f"{figure}_ms"] = median_of(per, "opened", key, figure, "ms")
            s["opened"][key] = entry
        summary[side] = s
    prints_runs = [r["prints"] for r in runs if r.get("prints") and "error" not in r["prints"]]
    if prints_runs:
        summary["prints"] = {}
        for key in ("ours", "baseline"):
            by_lines: dict[int, list] = {}
            for pr in prints_runs:
                for lines, kernel, page_s, longest in pr[key]:
                    by_lines.setdefault(lines, []).append((kernel, page_s, longest))
            summary["prints"][key] = {
                str(n): {
                    "kernel": statistics.median(v[0] for v in vals),
                    "page": statistics.median(v[1] for v in vals),
                    "longest": statistics.median(v[2] for v in vals),
                }
                for n, vals in by_lines.items()
            }
    return summary


def fmt_ms(v):
    return "-" if v is None else (f"{v:.0f}" if v >= 10 else f"{v:.1f}")


def fmt_task(v):
    return "-" if v is None else ("< 50" if v == 0 else f"{v:.0f}")


def fmt_mb(v):
    return "-" if v is None else f"{v / 1048576:.1f} MB"


def ratio(a, b):
    return None if a is None or not b or a <= 0 or b <= 0 else a / b


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}×"


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("met" if ok else "**missed**")


def table(summary: dict, plan: dict, runs: int) -> str:
    """Every figure as Markdown tables (medians over runs)."""
    ours, theirs, base = summary["ours"], summary["theirs"], summary["baseline"]
    out = [
        f"Medians of {runs} run(s); per-call figures over {plan['calls']} calls a run. Wall-clock figures depend on "
        "the machine's load; ratios are taken within the same run's medians. CPU = main-thread CPU time (Chrome's "
        "ThreadTime).",
        "",
    ]

    out += [
        "### Opening the page (ms from navigation)",
        "",
        "| figure | ours | reference | no extension | ours / none | reference / none | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in ("cold", "warm"):
        a, b, c = ours["load"][f"usable_{kind}"], theirs["load"][f"usable_{kind}"], base["load"][f"usable_{kind}"]
        r = ratio(a, c)
        out.append(
            f"| usable (shell restored, files listed), {kind} | {fmt_ms(a)} | {fmt_ms(b)} | {fmt_ms(c)} | "
            f"{fmt_ratio(r)} | {fmt_ratio(ratio(b, c))} | ≤ {TARGETS['usable_ratio']}×: "
            f"{verdict(None if r is None else r <= TARGETS['usable_ratio'])} |"
        )
    for kind in ("cold", "warm"):
        out.append(
            f"| longest task until usable, {kind} | {fmt_task(ours['load'][f'longest_until_usable_{kind}'])} | "
            f"{fmt_task(theirs['load'][f'longest_until_usable_{kind}'])} | "
            f"{fmt_task(base['load'][f'longest_until_usable_{kind}'])} | | | |"
        )
        out.append(
            f"| blocking time until usable (Σ task − 50 ms), {kind} | "
            f"{fmt_ms(ours['load'][f'tbt_until_usable_{kind}'])} | "
            f"{fmt_ms(theirs['load'][f'tbt_until_usable_{kind}'])} | "
            f"{fmt_ms(base['load'][f'tbt_until_usable_{kind}'])} | | | |"
        )
    out += ["", "| figure | ours | reference | ratio | target |", "|---|---|---|---|---|"]
    for kind in ("cold", "warm"):
        a, b = ours["load"][f"tools_{kind}"], theirs["load"][f"tools_{kind}"]
        r = ratio(a, b)
        out.append(
            f"| tools registered, {kind} | {fmt_ms(a)} | {fmt_ms(b)} | {fmt_ratio(r)} | ≤ 1.0×: "
            f"{verdict(None if r is None else r <= TARGETS['tools_ratio'])} |"
        )
    for kind in ("cold", "warm"):
        a, b = ours["load"][f"first_call_{kind}"], theirs["load"][f"first_call_{kind}"]
        r = ratio(a, b)
        out.append(
            f"| first call's result (get_cells, in the page), {kind} | {fmt_ms(a)} | {fmt_ms(b)} | {fmt_ratio(r)} | "
            f"≤ 1.0×: {verdict(None if r is None else r <= 1.0)} |"
        )
        a, b = ours["load"].get(f"first_answer_{kind}"), theirs["load"].get(f"first_answer_{kind}")
        out.append(
            f"| first call's first answer (the result, or pending), {kind} | {fmt_ms(a)} | {fmt_ms(b)} | "
            f"{fmt_ratio(ratio(a, b))} | reported |"
        )
    for kind in ("cold", "warm"):  # through Playwright MCP: seconds from the navigation's request
        for key, label in (("listed", "tools listed"), ("answer", "first answer"), ("result", "first result")):
            a, b = ours["load"].get(f"mcp_{key}_{kind}"), theirs["load"].get(f"mcp_{key}_{kind}")
            a_ms, b_ms = (None if v is None else v * 1000 for v in (a, b))
            target = "answer ≤ 15 s" if key == "answer" else ("≤ 1.0×" if key == "result" else "reported")
            met = {
                "answer": a is not None and a <= 15,
                "result": ratio(a_ms, b_ms) is not None and ratio(a_ms, b_ms) <= 1.0,
            }
            out.append(
                f"| Playwright MCP: {label} (get_cells), {kind} | {fmt_ms(a_ms)} | {fmt_ms(b_ms)} | "
                f"{fmt_ratio(ratio(a_ms, b_ms))} | {target}" + (f": {verdict(met[key])}" if key in met else "") + " |"
            )
    for kind in ("cold", "warm"):
        steps = ours["load"].get(f"steps_{kind}", {})
        out.append(
            f"| bridge start-up, {kind}: Python started → ready | {fmt_ms(ours['load'][f'python_start_{kind}'])} → "
            f"{fmt_ms(ours['load'][f'bridge_ready_{kind}'])} "
            f"({', '.join(f'{k} {fmt_ms(v)}' for k, v in steps.items())}) | - | | |"
        )
        lt = ours["load"][f"startup_longest_{kind}"]
        out.append(
            f"| longest task of the bridge's start-up, {kind} (its own script) | {fmt_task(lt)} "
            f"({fmt_ms(ours['load'][f'startup_own_{kind}'])}) | - | | < 50 ms: "
            f"{verdict(None if lt is None else lt < TARGETS['longest_task_ms'])} |"
        )

    out += [
        "",
        "### Calls (ms; CPU = main-thread CPU ms per call)",
        "",
        "| notebook | figure | ours p50 | ref p50 | ratio | ours p95 | ref p95 | ratio | ours CPU | ref CPU | ratio | "
        "longest task ours / ref | bytes ours / ref | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in ours["calls"]:
        figure, path = key.split("@")
        nb = path.removeprefix("bench-").removesuffix(".ipynb")
        a, b = ours["calls"][key], theirs["calls"][key]
        r50, r95 = ratio(a["p50"], b["p50"]), ratio(a["p95"], b["p95"])
        limit = TARGETS["p50_ratio_small"] if nb == "10" else TARGETS["p50_ratio"] if nb in ("100", "1000") else None
        checks = []
        if limit is not None and r50 is not None:
            checks.append(f"p50 ≤ {limit}×: {verdict(r50 <= limit)}")
        if r95 is not None:
            checks.append(f"p95 ≤ 1.0×: {verdict(r95 <= TARGETS['p95_ratio'])}")
        checks.append(f"task < 50: {verdict(a['longest_task'] < TARGETS['longest_task_ms'])}")
        out.append(
            f"| {nb} | {figure} | {fmt_ms(a['p50'])} | {fmt_ms(b['p50'])} | {fmt_ratio(r50)} | {fmt_ms(a['p95'])} | "
            f"{fmt_ms(b['p95'])} | {fmt_ratio(r95)} | {fmt_ms(a['cpu'])} | {fmt_ms(b['cpu'])} | "
            f"{fmt_ratio(ratio(a['cpu'], b['cpu']))} | {fmt_task(a['longest_task'])} / {fmt_task(b['longest_task'])} "
            f"| {a['bytes']:,.0f} / {b['bytes']:,.0f} | {'; '.join(checks)} |"
        )

    out += [
        "",
        "### Opening notebooks (longest main-thread task, ms; own = the extension's longest script run)",
        "",
        "| notebook | ours | ours own | reference | ref own | no extension | first get_cells+outputs ours / ref | "
        "first export ours / ref | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in ours["opened"]:
        a, b, c = ours["opened"][key], theirs["opened"][key], base["opened"][key]
        worst = max(v or 0 for v in (a["own"], a["get_cells+outputs"], a["export"]))
        out.append(
            f"| {notebooks.OPENED.get(key, key)} | {fmt_task(a['longest'])} | {fmt_ms(a['own'])} | "
            f"{fmt_task(b['longest'])} | {fmt_ms(b['own'])} | {fmt_task(c['longest'])} | "
            f"{fmt_task(a['get_cells+outputs'])} / {fmt_task(b['get_cells+outputs'])} | {fmt_task(a['export'])} / "
            f"{fmt_task(b['export'])} | ours < 50: {verdict(worst < TARGETS['longest_task_ms'])} |"
        )

    if "before" in summary:
        out += before_table(ours, summary["before"], plan.get("before", "before"))

    if "prints" in summary:
        out += [
            "",
            "### A person's print loop (seconds as the page saw them; longest task during the loop, ms)",
            "",
            "| lines | with the bridge | no extension | ratio | longest task with / without | target |",
            "|---|---|---|---|---|---|",
        ]
        for n, a in summary["prints"]["ours"].items():
            c = summary["prints"]["baseline"].get(n)
            r = ratio(a["page"], c["page"]) if c else None
            out.append(
                f"| {n} | {a['page']:.2f} | {c['page']:.2f} | {fmt_ratio(r)} | {fmt_task(a['longest'])} / "
                f"{fmt_task(c['longest'])} | ≤ {TARGETS['prints_ratio']}×: "
                f"{verdict(None if r is None else r <= TARGETS['prints_ratio'])} |"
            )

    out += ["", "### Memory", "", "| figure | ours | reference | target |", "|---|---|---|---|"]
    same = ours.get("same_site_heap_added_bytes")
    out += [
        f"| JS heap added after load (vs the no-extension site) | {fmt_mb(ours['heap_added_bytes'])} | "
        f"{fmt_mb(theirs['heap_added_bytes'])} | reported |",
        f"| JS heap added after load (the same site, its extension present vs blocked) | {fmt_mb(same)} | "
        f"{fmt_mb(theirs.get('same_site_heap_added_bytes'))} | ≤ 5 MB: "
        f"{verdict(None if same is None else same <= TARGETS['heap_added_bytes'])} |",
    ]
    out.append(f"| the bridge's Pyodide wasm memory after load | {fmt_mb(ours['wasm_bytes'])} | - | reported |")
    out.append(
        f"| growth after {plan['memory_calls']} calls (heap + wasm) | {fmt_mb(ours['growth_bytes'])} | "
        f"{fmt_mb(theirs['growth_bytes'])} | < 1 MB: {verdict(ours['growth_bytes'] < TARGETS['growth_bytes'])} |"
    )
    out.append(
        f"|   of which JS heap / wasm | {fmt_mb(ours['growth_heap_bytes'])} / {fmt_mb(ours['growth_wasm_bytes'])} | "
        f"{fmt_mb(theirs['growth_heap_bytes'])} | |"
    )

    out += [
        "",
        "Python-side p50 of our calls (the registry's own measure, ms; the rest is the dispatch, JSON and the page):",
        "",
    ]
    out.append(
        "; ".join(
            f"{key.removesuffix('.ipynb').replace('@bench-', ' ')} {fmt_ms(a['python_p50'])} of {fmt_ms(a['p50'])}"
            for key, a in ours["calls"].items()
        )
    )
    return "\n".join(out)


def before_table(ours: dict, before: dict, commit: str) -> list[str]:
    """The lines of the table "Calls: now and before": p50, p95 and main-thread CPU ms of every call figure on ours
    and on the site of the earlier commit (--before), side by side; ratio = now / before (above 1: slower now)."""
    out = [
        "",
        f"### Calls: now and before {commit[:12]} (ms; ratio = now / before)",
        "",
        "| notebook | figure | now p50 | before p50 | ratio | now p95 | before p95 | ratio | now CPU | before CPU | "
        "ratio | longest task now / before |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, a in ours["calls"].items():
        b = before["calls"].get(key)
        if b is None:
            continue
        figure, path = key.split("@")
        nb = path.removeprefix("bench-").removesuffix(".ipynb")
        out.append(
            f"| {nb} | {figure} | {fmt_ms(a['p50'])} | {fmt_ms(b['p50'])} | {fmt_ratio(ratio(a['p50'], b['p50']))} | "
            f"{fmt_ms(a['p95'])} | {fmt_ms(b['p95'])} | {fmt_ratio(ratio(a['p95'], b['p95']))} | {fmt_ms(a['cpu'])} | "
            f"{fmt_ms(b['cpu'])} | {fmt_ratio(ratio(a['cpu'], b['cpu']))} | {fmt_task(a['longest_task'])} / "
            f"{fmt_task(b['longest_task'])} |"
        )
    a, b = ours["load"], before["load"]
    for kind in ("cold", "warm"):
        out.append(
            f"| page | first call answered (get_cells), {kind} | {fmt_ms(a[f'first_call_{kind}'])} | "
            f"{fmt_ms(b[f'first_call_{kind}'])} | {fmt_ratio(ratio(a[f'first_call_{kind}'], b[f'first_call_{kind}']))}"
            " | | | | | | | |"
        )
    return out


# ------------------------------------------------------------------------------------------------- main


def serve(folders: dict) -> tuple[list, dict]:
    servers, urls = [], {}
    for key, folder in folders.items():
        server = make_server(folder, port=0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        host, port = server.server_address[:2]
        urls[key] = f"http://{host}:{port}"
    return servers, urls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20, help="timed calls per figure and run (default 20)")
    parser.add_argument("--quick", action="store_true", help="1 run, small notebooks, few calls: a smoke check")
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also benchmark the bridge as git commit REV built it (a worktree of REV, its own build), side by side",
    )
    parser.add_argument(
        "--thread",
        choices=("main", "worker"),
        help="the thread of the bridge's Python in ours' pages (?webmcpBridgeThread=); default: the page's default",
    )
    parser.add_argument(
        "--table",
        nargs="?",
        const=str(RESULTS),
        metavar="RESULTS_JSON",
        help="only reprint the table of bench/results.json (or of the results file given)",
    )
    args = parser.parse_args()
    if args.table:
        saved = json.loads(Path(args.table).read_text(encoding="utf-8"))
        print(table(saved["summary"], saved["meta"]["plan"], saved["meta"]["runs_done"]))
        return 0
    sizes = (10, 100) if args.quick else notebooks.SIZES
    opened = notebooks.OPENED_QUICK if args.quick else tuple(notebooks.OPENED)
    plan = {
        "runs": 1 if args.quick else args.runs,
        "calls": 5 if args.quick else args.calls,
        "memory_calls": 100 if args.quick else 1000,
        "opened": list(opened),
        "print_lines": [250] if args.quick else [250, 1000],
        "thread": args.thread,
    }
    content = sites.BENCH / "content"
    names = notebooks.write_notebooks(content, sizes, large=not args.quick, opened=opened)
    plan["notebooks"] = [(notebooks.name_for(n), n) for n in sizes]
    if not args.quick:
        plan["notebooks"].append((notebooks.name_for("large"), notebooks.IMAGES + 2))
    folders = sites.build_sites(content)
    folders["baseline"] = build_site(output=sites.BENCH / "baseline", extra_content=(content,), extensions=())
    order_of_sites = ALL_SITES
    if args.before:
        folders["before"], plan["before"] = sites.before_site(args.before, content)
        order_of_sites = ("ours", "before", "theirs", "baseline")  # the two bridges next to each other
    for side in BRIDGES:
        if side in folders:
            TOOL_COUNTS[side] = default_tools(folders[side])
    servers, urls = serve(folders)
    if args.thread:
        EXTRA_QUERY[urls["ours"]] = f"&webmcpBridgeThread={args.thread}"
    init_script = (HERE / "page.js").read_text(encoding="utf-8")
    runs: list[dict] = []
    started = time.perf_counter()
    text = ""
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS, *BENCH_ARGS]
        )
        try:
            for i in range(plan["runs"]):
                run: dict = {}
                order = order_of_sites if i % 2 == 0 else order_of_sites[::-1]  # alternate against drift
                for side in order:
                    t = time.perf_counter()
                    run[side] = run_side(browser, urls[side], side, plan, init_script)
                    print(f"[bench] run {i + 1}/{plan['runs']} {side}: {time.perf_counter() - t:.0f} s", flush=True)
                meta = {"chromium": browser.version, "quick": args.quick, "notebooks": names}
                runs.append(run)
                write_results(runs, plan, {**meta, "seconds": round(time.perf_counter() - started)})
                t = time.perf_counter()
                run["prints"] = print_loop(
                    browser, folders, plan["print_lines"], {key: EXTRA_QUERY.get(url, "") for key, url in urls.items()}
                )
                print(f"[bench] run {i + 1}/{plan['runs']} print loop: {time.perf_counter() - t:.0f} s", flush=True)
                text = write_results(runs, plan, {**meta, "seconds": round(time.perf_counter() - started)})
        finally:
            browser.close()
            for server in servers:
                server.shutdown()
    print(text)
    print(f"[bench] wrote {RESULTS.relative_to(HERE.parent)} ({time.perf_counter() - started:.0f} s)")
    return 0


def default_tools(site: Path) -> int:
    """How many tools the bridge of the built ``site`` registers on a default page, at activation (its tools.json:
    the toolsets of the "default" alias and the always-on ones)."""
    tools_json = site / "extensions" / "jupyterlab-webmcp-bridge" / "static" / "tools.json"
    manifest = json.loads(tools_json.read_text(encoding="utf-8"))
    return len(
        {tool for name in (*manifest["aliases"]["default"], *manifest["always"]) for tool in manifest["toolsets"][name]}
    )


def write_results(runs: list[dict], plan: dict, meta: dict) -> str:
    """Write bench/results.json from the runs so far (so an interrupted benchmark keeps what finished); the table."""
    summary = combine(runs)
    text = table(summary, plan, len(runs))
    meta = {
        "date": datetime.date.today().isoformat(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "reference": sites.REFERENCE,
        "plan": plan,
        "runs_done": len(runs),
        "targets": TARGETS,
        **meta,
    }
    RESULTS.write_text(
        json.dumps({"meta": meta, "summary": summary, "runs": runs, "table": text}, indent=1) + "\n", encoding="utf-8"
    )
    return text


if __name__ == "__main__":
    raise SystemExit(main())
