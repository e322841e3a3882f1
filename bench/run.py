"""Benchmark the bridge against the published reference extension (jupyterlite-webmcp 0.1.1), side by side.

Usage: python bench/run.py [--runs N] [--calls N] [--quick] [--table]

Builds two twin sites (bench/sites.py: same JupyterLite, same offline Pyodide, same content plus the bench
notebooks of bench/notebooks.py; only the extension differs) and a third with no extension (the memory
baseline), serves them on 127.0.0.1, and drives all of them in one Debian Chromium with native WebMCP. Every
call is timed in the page (bench/page.js: performance.now() around document.modelContext.executeTool, one
call per task, long tasks from a PerformanceObserver installed before navigation). Per run and site:

1. navigation -> all tools registered, cold (fresh browser context) and warm (reload);
2. memory after load (JS heap after GC, minus the no-extension site's; plus the bridge's Pyodide wasm memory)
   and its growth over 1,000 read calls (get_context, get_cells with and without outputs, export);
3. for each bench notebook, once JupyterLab has rendered it (no long task for 3 s): get_cells (sources; with outputs) of cells [0, min(N, 100)) -- 100 is the
   reference's cap per call, so both return the same cells --, update_cell on a middle cell, and export
   (markdown with outputs): latency p50/p95, the longest main-thread task during a call, result bytes.

Prints a table (medians over runs; ratio = ours / theirs) and writes bench/results.json. --quick: one run,
the 10- and 100-cell notebooks only, 5 calls a figure and 100 calls for the memory growth (a smoke check).
--table reprints the table of the last results.json. A full run (5 runs) takes about 8 minutes here.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "playwright-tests")]

from playwright.sync_api import Page, sync_playwright  # noqa: E402

import notebooks  # noqa: E402
import sites  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402

RESULTS = HERE / "results.json"
#: tools each site registers when it is fully up (checked: a site registering fewer never counts as loaded)
TOOL_COUNTS = {"ours": 18, "theirs": 22}
SIDES = ("ours", "theirs")
BENCH_ARGS = ["--enable-precise-memory-info", "--js-flags=--expose-gc"]
LOAD_NOTEBOOK = notebooks.name_for(10)
MEMORY_NOTEBOOK = notebooks.name_for(100)
LOAD_TIMEOUT_MS = 120_000
OPEN_TIMEOUT_S = 240
WARMUP = 2  # untimed calls before each timed series
TARGETS = {"warm_load_ratio": 1.0, "p50_ratio_1000": 0.5, "longest_task_ms": 50, "growth_bytes": 5 * 1024 * 1024}


# ------------------------------------------------------------------------------------------------ page


def load(page: Page, url: str, side: str, reload: bool = False) -> float:
    """Navigate (or reload) and wait for every tool; return ms from navigation start to the last registration."""
    if reload:
        page.reload()
    else:
        page.goto(f"{url}/lab/index.html?path={LOAD_NOTEBOOK}")
    want = TOOL_COUNTS[side]
    page.wait_for_function("n => window.__bench.toolTimes.some(([, count]) => count >= n)", arg=want,
                           timeout=LOAD_TIMEOUT_MS)
    return page.evaluate("n => window.__bench.toolTimes.find(([, count]) => count >= n)[0]", want)


def call(page: Page, name: str, args: dict) -> dict:
    """One untimed call; its parsed CallToolResult (raises on a tool error)."""
    result = page.evaluate("([name, args]) => window.__bench.call(name, args)", [name, args])
    if result.get("isError"):
        raise RuntimeError(f"{name} {args}: {json.dumps(result)[:400]}")
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


def settle(page: Page, quiet_ms: int = 3000, timeout_ms: int = 60_000) -> None:
    """Wait until the page has had no long task for quiet_ms: after a notebook opens, JupyterLab renders its cells
    in idle callbacks (tasks of ~55 ms for 1,000 cells); the calls are timed once that one-off work is over."""
    page.wait_for_function(
        """quiet => { const b = window.__bench; const last = b.longtasks.length ? b.longtasks.at(-1) : [0, 0];
                      return performance.now() - (last[0] + last[1]) > quiet; }""",
        arg=quiet_ms, timeout=timeout_ms, polling=500)


def series(page: Page, name: str, args: dict, n: int, sources: list[str] | None = None) -> list[dict]:
    """n timed calls (after WARMUP untimed ones) in the page; raises if any call returned an error."""
    rows = page.evaluate("spec => window.__bench.calls(spec)",
                         {"name": name, "args": args, "n": n + WARMUP, "sources": sources})[WARMUP:]
    errors = [r["errorText"] for r in rows if r["error"]]
    if errors:
        raise RuntimeError(f"{name}: {len(errors)} of {len(rows)} calls failed, first: {errors[0]}")
    return rows


# --------------------------------------------------------------------------------------------- figures


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def summarize(rows: list[dict]) -> dict:
    """One series' figures: p50/p95 ms, the longest task, result bytes, and the Python-side p50 if reported."""
    ms = [r["ms"] for r in rows]
    python = [r["python"] for r in rows if r["python"] is not None]
    return {
        "p50": percentile(ms, 50), "p95": percentile(ms, 95), "longest_task": max(r["longest"] for r in rows),
        "calls_with_long_task": sum(1 for r in rows if r["longest"] > 0), "bytes": statistics.median(r["bytes"] for r in rows),
        "python_p50": percentile(python, 50) if python else None, "calls": len(rows),
    }


def call_specs(path: str, cells: int, target: dict) -> list[tuple[str, str, dict, list[str] | None]]:
    """(figure, tool, args, update sources) for one notebook; target is the cell update_cell rewrites."""
    window = {"notebookPath": path, "startIndex": 0, "endIndex": min(cells, 100)}
    edited = [target["source"] + "\n# edited by the benchmark", target["source"]]
    return [
        ("get_cells", "jupyter_get_cells", {**window, "includeOutputs": False}, None),
        ("get_cells+outputs", "jupyter_get_cells", {**window, "includeOutputs": True}, None),
        ("update_cell", "jupyter_update_cell", {"notebookPath": path, "cellId": target["id"],
                                                "expectedSourceHash": target["sourceHash"]}, edited),
        ("export", "jupyter_export_notebook", {"notebookPath": path, "format": "markdown", "includeOutputs": True}, None),
    ]


def target_cell(page: Page, path: str, cells: int) -> dict:
    """The cell update_cell rewrites: a code cell in the middle (the 20 MB output's cell in the large one)."""
    cell_id = "c0001" if cells < 10 or path == notebooks.name_for("large") else f"c{cells // 2 + 1:04d}"
    cell = call(page, "jupyter_get_cells", {"notebookPath": path, "cellIds": [cell_id]})["structuredContent"]["cells"][0]
    return {"id": cell_id, "source": cell["source"], "sourceHash": cell["sourceHash"]}


def memory(page: Page) -> dict:
    return page.evaluate("() => window.__bench.memory()")


def run_side(browser, url: str, side: str, plan: dict, init_script: str) -> dict:
    """One run of one site: load cold and warm, memory, then every call series. Returns its figures."""
    out: dict = {"load": {}, "memory": {}, "calls": {}}
    context = browser.new_context()
    context.add_init_script(script=init_script)
    page = context.new_page()
    try:
        out["load"]["cold"] = load(page, url, side)
        out["load"]["warm"] = load(page, url, side, reload=True)
        if side == "ours":
            status = page.evaluate("() => JSON.parse(JSON.stringify(window.webmcpBridge.status))")
            out["load"]["bridge_timings"] = status["timings"]
        page.wait_for_timeout(3000)
        out["memory"]["after_load"] = memory(page)
        # memory growth over read-only calls (writes would grow JupyterLab's own undo history, not the extension's)
        open_notebook(page, MEMORY_NOTEBOOK, 100)
        settle(page)
        reads = [("jupyter_get_context", {}),
                 ("jupyter_get_cells", {"notebookPath": MEMORY_NOTEBOOK, "startIndex": 0, "endIndex": 100}),
                 ("jupyter_get_cells", {"notebookPath": MEMORY_NOTEBOOK, "startIndex": 0, "endIndex": 100, "includeOutputs": True}),
                 ("jupyter_export_notebook", {"notebookPath": MEMORY_NOTEBOOK, "format": "markdown", "includeOutputs": True})]
        for name, args in reads:
            series(page, name, args, 5)
        before = memory(page)
        for name, args in reads:
            series(page, name, args, plan["memory_calls"] // len(reads))
        after = memory(page)
        out["memory"].update(before_calls=before, after_calls=after, calls=plan["memory_calls"])
        for path, cells in plan["notebooks"]:
            open_notebook(page, path, cells)
            settle(page)
            target = target_cell(page, path, cells)
            for figure, tool, args, sources in call_specs(path, cells, target):
                rows = series(page, tool, args, plan["calls"], sources)
                out["calls"][f"{figure}@{path}"] = summarize(rows)
    finally:
        context.close()
    return out


def baseline_memory(browser, url: str, init_script: str) -> dict:
    """The no-extension site's memory after load, with the notebook open and the same settling time."""
    context = browser.new_context()
    context.add_init_script(script=init_script)
    page = context.new_page()
    try:
        page.goto(f"{url}/lab/index.html?path={LOAD_NOTEBOOK}")
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=LOAD_TIMEOUT_MS)
        page.wait_for_timeout(3000)  # a reload right away, while the service worker registers, was seen to hang
        page.reload()
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=LOAD_TIMEOUT_MS)
        page.wait_for_timeout(6000)
        return memory(page)
    finally:
        context.close()


# ------------------------------------------------------------------------------------------------ table


def median_of(runs: list[dict], *keys) -> float | None:
    values = []
    for run in runs:
        node = run
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            values.append(node)
    return statistics.median(values) if values else None


def combine(runs: list[dict], plan: dict) -> dict:
    """Medians over runs of every figure, per side."""
    summary: dict = {}
    for side in SIDES:
        per = [r[side] for r in runs]
        base = [r["baseline"] for r in runs]
        s = {"load_cold_ms": median_of(per, "load", "cold"), "load_warm_ms": median_of(per, "load", "warm")}
        heap_added = [p["memory"]["after_load"]["heap"] - b["heap"] for p, b in zip(per, base, strict=True)]
        s["heap_added_bytes"] = statistics.median(heap_added)
        s["wasm_bytes"] = median_of(per, "memory", "after_load", "wasm")
        growth = [(p["memory"]["after_calls"]["heap"] + p["memory"]["after_calls"]["wasm"])
                  - (p["memory"]["before_calls"]["heap"] + p["memory"]["before_calls"]["wasm"]) for p in per]
        s["growth_bytes"] = statistics.median(growth)
        s["growth_heap_bytes"] = statistics.median(
            p["memory"]["after_calls"]["heap"] - p["memory"]["before_calls"]["heap"] for p in per)
        s["growth_wasm_bytes"] = statistics.median(
            p["memory"]["after_calls"]["wasm"] - p["memory"]["before_calls"]["wasm"] for p in per)
        s["calls"] = {}
        for key in per[0]["calls"]:
            s["calls"][key] = {stat: median_of([p["calls"][key] for p in per], stat)
                               for stat in ("p50", "p95", "longest_task", "calls_with_long_task", "bytes", "python_p50")}
        summary[side] = s
    return summary


def fmt_ms(v):
    return "-" if v is None else (f"{v:.0f}" if v >= 10 else f"{v:.1f}")


def fmt_mb(v):
    return "-" if v is None else f"{v / 1048576:.1f} MB"


def ratio(a, b):
    return None if a is None or not b else a / b


def table(summary: dict, plan: dict, runs: int) -> str:
    """The figures as a Markdown table (medians over runs)."""
    ours, theirs = summary["ours"], summary["theirs"]
    lines = [f"Medians of {runs} run(s); per-call figures over {plan['calls']} calls a run; ratio = ours / theirs.", "",
             "| figure | ours | theirs | ratio | target |", "|---|---|---|---|---|"]

    def row(label, a, b, fmt, target=""):
        r = ratio(a, b) if (a or 0) > 0 and (b or 0) > 0 else None  # no ratio of "< 50" or of noise around 0
        lines.append(f"| {label} | {fmt(a)} | {fmt(b)} | {'-' if r is None else f'{r:.2f}×'} | {target} |")

    def verdict(ok):
        return "met" if ok else "**missed**"

    row("tools registered, cold (ms)", ours["load_cold_ms"], theirs["load_cold_ms"], fmt_ms)
    warm = ratio(ours["load_warm_ms"], theirs["load_warm_ms"])
    row("tools registered, warm (ms)", ours["load_warm_ms"], theirs["load_warm_ms"], fmt_ms,
        f"≤ 1.0×: {verdict(warm is not None and warm <= TARGETS['warm_load_ratio'])}")
    for key in ours["calls"]:
        figure, path = key.split("@")
        nb = path.removeprefix("bench-").removesuffix(".ipynb")
        a, b = ours["calls"][key], theirs["calls"][key]
        target = ""
        if nb == "1000":
            target = f"p50 ≤ 0.5×: {verdict(ratio(a['p50'], b['p50']) <= TARGETS['p50_ratio_1000'])}"
        row(f"{figure} {nb}: p50 ms", a["p50"], b["p50"], fmt_ms, target)
        row(f"{figure} {nb}: p95 ms", a["p95"], b["p95"], fmt_ms)
        lt = TARGETS["longest_task_ms"]
        row(f"{figure} {nb}: longest task ms", a["longest_task"], b["longest_task"],
            lambda v: "< 50" if v == 0 else fmt_ms(v), f"< {lt} ms: {verdict(a['longest_task'] < lt)}")
        if figure.startswith("get_cells+outputs"):
            row(f"{figure} {nb}: result bytes", a["bytes"], b["bytes"], lambda v: f"{v:,.0f}")
    row("JS heap added after load (vs no extension)", ours["heap_added_bytes"], theirs["heap_added_bytes"], fmt_mb)
    row("Pyodide wasm memory after load", ours["wasm_bytes"], theirs["wasm_bytes"] or None, fmt_mb)
    g = TARGETS["growth_bytes"]
    row(f"growth after {plan['memory_calls']} calls (heap + wasm)", ours["growth_bytes"], theirs["growth_bytes"], fmt_mb,
        f"< 5 MB: {verdict(ours['growth_bytes'] < g)}")
    row("  of which JS heap", ours["growth_heap_bytes"], theirs["growth_heap_bytes"], fmt_mb)
    row("  of which wasm", ours["growth_wasm_bytes"], None, fmt_mb)
    lines.append("")
    lines.append("Python-side p50 of our calls (the registry's own measure; the rest is FFI, JSON and the page):")
    for key, a in ours["calls"].items():
        lines.append(f"- {key}: total {fmt_ms(a['p50'])} ms, Python {fmt_ms(a['python_p50'])} ms")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20, help="timed calls per figure and run (default 20)")
    parser.add_argument("--quick", action="store_true", help="1 run, small notebooks, few calls: a smoke check")
    parser.add_argument("--table", action="store_true", help="only reprint the table of bench/results.json")
    args = parser.parse_args()
    if args.table:
        saved = json.loads(RESULTS.read_text(encoding="utf-8"))
        print(table(saved["summary"], saved["meta"]["plan"], saved["meta"]["runs_done"]))
        return 0
    sizes = (10, 100) if args.quick else notebooks.SIZES
    plan = {"runs": 1 if args.quick else args.runs, "calls": 5 if args.quick else args.calls,
            "memory_calls": 100 if args.quick else 1000}
    content = sites.BENCH / "content"
    names = notebooks.write_notebooks(content, sizes, large=not args.quick)
    plan["notebooks"] = [(notebooks.name_for(n), n) for n in sizes]
    if not args.quick:
        plan["notebooks"].append((notebooks.name_for("large"), notebooks.IMAGES + 2))
    folders = sites.build_sites(content)
    folders["baseline"] = build_site(output=sites.BENCH / "baseline", extra_content=(content,), extensions=())
    servers, urls = [], {}
    for key, folder in folders.items():
        server = make_server(folder, port=0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        urls[key] = "http://%s:%s" % server.server_address[:2]
    init_script = (HERE / "page.js").read_text(encoding="utf-8")
    runs = []
    started = time.perf_counter()
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium_executable(), headless=True,
                                         args=[WEBMCP_FLAG, *BASE_ARGS, *BENCH_ARGS])
        try:
            for i in range(plan["runs"]):
                run = {"baseline": baseline_memory(browser, urls["baseline"], init_script)}
                for side in (SIDES if i % 2 == 0 else SIDES[::-1]):  # alternate the order against drift
                    t = time.perf_counter()
                    run[side] = run_side(browser, urls[side], side, plan, init_script)
                    print(f"[bench] run {i + 1}/{plan['runs']} {side}: {time.perf_counter() - t:.0f} s", flush=True)
                runs.append(run)
                text = write_results(runs, plan, {"chromium": browser.version, "quick": args.quick, "notebooks": names,
                                                  "seconds": round(time.perf_counter() - started)})
        finally:
            browser.close()
            for server in servers:
                server.shutdown()
    print(text)
    print(f"[bench] wrote {RESULTS.relative_to(HERE.parent)} ({time.perf_counter() - started:.0f} s)")
    return 0


def write_results(runs: list[dict], plan: dict, meta: dict) -> str:
    """Write bench/results.json from the runs so far (so an interrupted benchmark keeps what finished); the table."""
    summary = combine(runs, plan)
    text = table(summary, plan, len(runs))
    meta = {"date": datetime.date.today().isoformat(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "reference": sites.REFERENCE, "plan": plan, "runs_done": len(runs), "targets": TARGETS, **meta}
    RESULTS.write_text(json.dumps({"meta": meta, "summary": summary, "runs": runs, "table": text}, indent=1) + "\n",
                       encoding="utf-8")
    return text


if __name__ == "__main__":
    raise SystemExit(main())
