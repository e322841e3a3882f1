"""Where a call's main-thread time goes: Chrome's sampling CPU profiler over a series of one tool's calls, on the
bench sites of ``bench/run.py`` (ours and the reference), attributed by script and by function.

Usage: python bench/profile_calls.py [--cells 10|100|1000|large] [--calls N] [--outputs] [--tool
get_cells|export|update_cell] [--before] [--allocations] [--python]

Needs the sites ``bench/run.py`` built (``.cache/bench/ours``, ``.cache/bench/theirs``; run it once, ``--quick``
is enough for 10 and 100 cells). With ``--before``, the bridge's site as ``bench/run.py --before REV`` last built it
(``.cache/bench/before/site``) takes the reference's place, so the columns are now and before. For each site:
open the notebook, wait for the tools and for JupyterLab to render
every cell, make 3 untimed calls, then profile N calls (the profiler samples every 100 µs) and print the
self time of the profiled stretch divided by the number of calls, grouped by where it ran: the bridge's Python
(Pyodide's wasm; a package's own wasm module apart), Pyodide's JavaScript glue, the bridge's loader and JS halves,
the extension's own script (the reference), JupyterLab, garbage collection, and the profiler's "(program)" (the
browser's native work: style, layout, paint, tasks) and "(idle)". The stretch includes the short waits between
calls (one task each) and the page's work during them, so a group's figure is per call, not inside a call. Then
the p50 of each call as the page timed it and of the extension's own ``execute`` (the rest of a call is the
browser's ``executeTool`` and the event loop), then the top functions.

With ``--allocations``, V8's sampling heap profiler runs over the same stretch (a sample every
:data:`ALLOCATION_SAMPLE_BYTES` bytes allocated, objects collected since kept in the profile), so the garbage
collector's time can be traced to what allocated the garbage: the JS heap allocated per call (KB) by the same
groups and by function.

With ``--python``, Python's own profiler (``cProfile``, in the bridge's Pyodide) runs over the same calls and the
functions with the most cumulative time are printed per side: what the bridge's Python does in a call, and how long
it waits in the page's JS halves (e.g. ``set_source``, where JupyterLab reacts to the change synchronously). The
bridge never exposes its Pyodide to the page; for this the loader is served with one more statement that puts it on
``window.__benchPyodide`` (a Playwright route of this page only: the built site is not changed).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "playwright-tests"))
sys.path.insert(0, str(HERE.parent))

from playwright.sync_api import sync_playwright  # noqa: E402

import notebooks  # noqa: E402
import run as bench  # noqa: E402
import sites  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402

SAMPLE_US = 100
ALLOCATION_SAMPLE_BYTES = 4096
#: the loader's statement that starts its Pyodide, and what --python appends to it
LOADER_PYODIDE = "const pyodide = await step('loadPyodide',"
PYTHON_PROFILE_TOP = 80


def expose_pyodide(page) -> None:
    """Serve this page's bridge loader with its Pyodide put on ``window.__benchPyodide`` (``--python``); raises
    RuntimeError when the loader no longer has the statement it is appended to."""

    def patch(route) -> None:
        response = route.fetch()
        text = response.text()
        at = text.find(LOADER_PYODIDE)
        if at < 0:
            raise RuntimeError("the loader no longer starts Pyodide as profile_calls.py expects")
        end = text.index(";", text.index("}));", at)) + 1
        route.fulfill(response=response, body=f"{text[:end]} window.__benchPyodide = pyodide;{text[end:]}")

    page.route("**/jupyterlab-webmcp-bridge/static/remoteEntry.js", patch)


PYTHON_START = "import cProfile\n__bench_profile = cProfile.Profile()\n__bench_profile.enable()"
PYTHON_STOP = f"""__bench_profile.disable()
import io, pstats
__bench_out = io.StringIO()
pstats.Stats(__bench_profile, stream=__bench_out).sort_stats("cumulative").print_stats({PYTHON_PROFILE_TOP})
__bench_out.getvalue()"""
#: installed before the page's scripts: times each tool's own ``execute`` (the extension's part of a call), so a
#: call splits into the extension's part and the rest (the browser's executeTool, the event loop's turns)
EXECUTE_TIMER = """
(() => {
  window.__executeMs = [];
  const wrap = () => {
    const mc = document.modelContext;
    if (!mc || mc.__timed) return;
    mc.__timed = true;
    const register = mc.registerTool.bind(mc);
    mc.registerTool = (tool, options) => register({ ...tool, execute: async (input, opts) => {
      const t0 = performance.now();
      try { return await tool.execute(input, opts); } finally { window.__executeMs.push(performance.now() - t0); }
    } }, options);
  };
  wrap();
  document.addEventListener('DOMContentLoaded', wrap);
})();
"""


def where(url: str, name: str) -> str:
    """The group of one profile node: by script URL, then by the profiler's own names for the browser's work."""
    if re.fullmatch(r"[0-9a-f]{8}", url) or (url.startswith("wasm://") and "pyodide" not in url):
        return "Python extension modules (wasm)"  # a wasm module Pyodide loaded for a package (pydantic-core)
    if "pyodide.asm.wasm" in url or url.startswith("wasm://"):
        return "Pyodide wasm (Python)"
    if re.search(r"/pyodide(\.asm)?\.m?js", url):  # not the kernel extension's own scripts (pyodide-kernel-extension)
        return "Pyodide JS glue"
    if url.startswith("webmcp-bridge/"):  # the JS halves Python evaluates (lab/ffi.py load_half)
        return f"bridge JS half {url.rsplit('/', 1)[-1]}"
    if "/extensions/jupyterlab-webmcp-bridge/" in url:
        return "bridge loader (JS)"
    if "/extensions/jupyterlite-webmcp/" in url:
        return "reference extension (JS)"
    if url:
        return "JupyterLab and other page scripts"
    if name in ("(garbage collector)",):
        return "garbage collection"
    if name in ("(idle)", "(program)", "(root)"):
        return name
    return f"browser: {name}"


def start_profiler(context, page):
    """Chrome's sampling CPU profiler started on ``page`` (every :data:`SAMPLE_US` µs); returns the CDP session, whose
    ``Profiler.stop`` gives the profile."""
    cdp = context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": SAMPLE_US})
    cdp.send("Profiler.start")
    return cdp


def start_allocations(cdp) -> None:
    """V8's sampling heap profiler started on ``cdp``'s page, keeping the samples of objects already collected (the
    garbage is what this measures)."""
    cdp.send("HeapProfiler.enable")
    cdp.send(
        "HeapProfiler.startSampling",
        {
            "samplingInterval": ALLOCATION_SAMPLE_BYTES,
            "includeObjectsCollectedByMajorGC": True,
            "includeObjectsCollectedByMinorGC": True,
        },
    )


def allocated(profile: dict) -> tuple[collections.Counter, collections.Counter]:
    """Bytes allocated in a sampling heap profile (``HeapProfiler.stopSampling``'s ``profile``), by :func:`where` and
    by function (``name  [script]``)."""
    groups: collections.Counter = collections.Counter()
    functions: collections.Counter = collections.Counter()
    stack = [profile["head"]]
    while stack:
        node = stack.pop()
        stack.extend(node.get("children", ()))
        size = node.get("selfSize", 0)
        if not size:
            continue
        frame = node["callFrame"]
        group = where(frame["url"], frame["functionName"])
        groups[group] += size
        name = frame["functionName"] or "(anonymous)"
        functions[f"{name}  [{frame['url'].rsplit('/', 1)[-1] or group}]"] += size
    return groups, functions


def self_ms(profile: dict, by_script: bool = False) -> collections.Counter:
    """Self milliseconds of a CPU profile by :func:`where` it ran; ``by_script``: page scripts one row per file
    (the same builds on each site)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    groups: collections.Counter = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        frame = nodes[sample]["callFrame"]
        group = where(frame["url"], frame["functionName"])
        if by_script and group == "JupyterLab and other page scripts":
            group = f"script {frame['url'].rsplit('/', 1)[-1].split('?')[0]}"
        groups[group] += delta / 1000
    return groups


def profile_side(
    browser,
    url: str,
    side: str,
    tool: str,
    args: dict,
    calls: int,
    sources: list[str] | None,
    init_script: str,
    allocations: bool = False,
    python: bool = False,
) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(EXECUTE_TIMER)
    page.add_init_script(init_script)
    if python and side in bench.BRIDGES:
        expose_pyodide(page)
    path, cells = args["notebookPath"], args.pop("_cells")
    page.goto(f"{url}/lab/index.html?path={path}")
    if side in bench.BRIDGES:
        page.wait_for_function("() => window.webmcpBridge?.status.state === 'ready'", timeout=bench.LOAD_TIMEOUT_MS)
    else:
        page.wait_for_function(
            "n => __bench.toolTimes.some(([, count]) => count >= n)",
            arg=bench.TOOL_COUNTS[side],
            timeout=bench.LOAD_TIMEOUT_MS,
        )
    bench.open_notebook(page, path, cells)
    bench.rendered(page, path)
    bench.settle(page)
    if sources:
        target = bench.target_cell(page, path, cells)
        args = {**args, "cellId": target["id"]}
    page.evaluate("spec => window.__bench.calls(spec)", {"name": tool, "args": args, "n": 3, "sources": sources})
    if sources:
        args = {**args, "expectedSourceHash": bench.current_hash(page, path, args["cellId"])}
    page.evaluate("() => { window.__executeMs = []; }")
    cdp = start_profiler(context, page)
    if allocations:
        start_allocations(cdp)
    profiled = python and side in bench.BRIDGES
    if profiled:
        page.evaluate("code => window.__benchPyodide.runPython(code)", PYTHON_START)
    rows = page.evaluate(
        "spec => window.__bench.calls(spec)", {"name": tool, "args": args, "n": calls, "sources": sources}
    )
    python_stats = page.evaluate("code => window.__benchPyodide.runPython(code)", PYTHON_STOP) if profiled else None
    profile = cdp.send("Profiler.stop")["profile"]
    heap = allocated(cdp.send("HeapProfiler.stopSampling")["profile"]) if allocations else None
    inside = sorted(page.evaluate("() => window.__executeMs"))
    context.close()
    errors = [r["errorText"] for r in rows if r["error"]]
    if errors:
        raise RuntimeError(f"{side} {tool}: {errors[0]}")
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        deltas[sample] += delta
    groups: collections.Counter = collections.Counter()
    functions: collections.Counter = collections.Counter()
    for node_id, us in deltas.items():
        frame = nodes[node_id]["callFrame"]
        group = where(frame["url"], frame["functionName"])
        groups[group] += us
        if group not in ("(idle)", "(program)", "(root)"):
            name = frame["functionName"] or "(anonymous)"
            functions[f"{name}  [{frame['url'].rsplit('/', 1)[-1] or group}]"] += us
    ms = sorted(r["ms"] for r in rows)
    return {
        "p50": ms[len(ms) // 2],
        "execute_p50": inside[len(inside) // 2] if inside else None,
        "groups": groups,
        "functions": functions,
        "calls": calls,
        "heap": heap,
        "python": python_stats,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cells",
        default="10",
        choices=[*map(str, notebooks.SIZES), "large"],
        help="the bench notebook: bench-<N>.ipynb, or bench-large.ipynb (the 20 MB output and 50 images)",
    )
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--tool", default="get_cells", choices=("get_cells", "export", "update_cell"))
    parser.add_argument("--outputs", action="store_true", help="get_cells with includeOutputs")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--allocations", action="store_true", help="also sample the JS heap allocated (what the GC collects)"
    )
    parser.add_argument("--python", action="store_true", help="also profile the bridge's Python (cProfile)")
    parser.add_argument(
        "--before",
        action="store_true",
        help="ours against the site `bench/run.py --before REV` built",
    )
    opts = parser.parse_args()
    sides = ("ours", "before") if opts.before else bench.SIDES
    folders = {side: sites.BENCH / side for side in sides}
    if opts.before:
        folders["before"] = sites.BENCH / "before" / "site"
    for folder in folders.values():
        if not (folder / "lab" / "index.html").exists():
            sys.exit(f"{folder} is not built: run `python bench/run.py --quick` first")
    path = notebooks.name_for(opts.cells)
    count = notebooks.IMAGES + 2 if opts.cells == "large" else int(opts.cells)  # as bench/run.py counts the large one
    tool = {
        "get_cells": "jupyter_get_cells",
        "export": "jupyter_export_notebook",
        "update_cell": "jupyter_update_cell",
    }[opts.tool]
    args: dict = {"notebookPath": path, "_cells": count}
    sources = None
    if opts.tool == "get_cells":
        args.update(startIndex=0, endIndex=min(count, 100), includeOutputs=opts.outputs)
    elif opts.tool == "export":
        args.update(format="markdown", includeOutputs=True)
    else:
        sources = ["x = 1\nprint(x)", "x = 2\nprint(x)"]
    servers, urls = bench.serve(folders)
    init_script = (HERE / "page.js").read_text(encoding="utf-8")
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS, *bench.BENCH_ARGS]
            )
            try:
                found = {
                    side: profile_side(
                        browser,
                        urls[side],
                        side,
                        tool,
                        dict(args),
                        opts.calls,
                        sources,
                        init_script,
                        opts.allocations,
                        opts.python,
                    )
                    for side in sides
                }
            finally:
                browser.close()
    finally:
        for server in servers:
            server.shutdown()
    label = f"{opts.tool}{' +outputs' if opts.outputs else ''} on {path}, {opts.calls} calls"
    print(f"## {label}: main-thread self time of the profiled stretch ÷ calls (ms), sampled every {SAMPLE_US} µs\n")
    other = sides[1]
    print(f"| where | ours | {'before' if opts.before else 'reference'} |\n|---|---|---|")
    names = sorted(
        set(found["ours"]["groups"]) | set(found[other]["groups"]), key=lambda g: -found["ours"]["groups"].get(g, 0)
    )
    for group in names:
        cells = [found[s]["groups"].get(group, 0) / 1000 / found[s]["calls"] for s in sides]
        if max(cells) >= 0.05:
            print(f"| {group} | {cells[0]:.2f} | {cells[1]:.2f} |")
    print(f"| p50 of the calls, as timed in the page | {found['ours']['p50']:.2f} | {found[other]['p50']:.2f} |")
    inside = [found[s]["execute_p50"] for s in sides]
    print(
        "| p50 of the extension's own execute | " + " | ".join("-" if v is None else f"{v:.2f}" for v in inside) + " |"
    )
    for side in sides:
        print(f"\n### top functions, {side} (self ms per call)\n")
        for name, us in found[side]["functions"].most_common(opts.top):
            print(f"- {us / 1000 / found[side]['calls']:.3f}  {name}")
    if opts.allocations:
        print(f"\n## JS heap allocated per call (KB), sampled every {ALLOCATION_SAMPLE_BYTES} bytes\n")
        print(f"| where | ours | {'before' if opts.before else 'reference'} |\n|---|---|---|")
        heaps = {s: found[s]["heap"] for s in sides}
        groups = sorted(set(heaps["ours"][0]) | set(heaps[other][0]), key=lambda g: -heaps["ours"][0].get(g, 0))
        for group in groups:
            cells = [heaps[s][0].get(group, 0) / 1024 / found[s]["calls"] for s in sides]
            if max(cells) >= 1:
                print(f"| {group} | {cells[0]:.0f} | {cells[1]:.0f} |")
        for side in sides:
            print(f"\n### top allocating functions, {side} (KB per call)\n")
            for name, size in heaps[side][1].most_common(opts.top):
                print(f"- {size / 1024 / found[side]['calls']:.1f}  {name}")
    for side in sides:
        if found[side]["python"]:
            print(f"\n### the bridge's Python, {side} ({opts.calls} calls, cProfile, by cumulative time)\n")
            print(found[side]["python"])
    print(json.dumps({s: {"p50": found[s]["p50"], "execute_p50": found[s]["execute_p50"]} for s in sides}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
