"""Calls of the bridge now and at an earlier commit, paired: both sites open side by side in one browser, the
figures of ``bench/run.py``'s call table measured in alternating blocks, so that a load on the machine that changes
during the run weighs on both sides alike.

Usage: python bench/paired_calls.py [--rounds R] [--block K] [--cells 10,100,1000,large] [--thread main|worker]

Needs the sites ``bench/run.py --before REV`` built (``.cache/bench/ours``, ``.cache/bench/before/site``). For each
notebook: open it on both sides (each in its own browser context: a page, its kernel and its bridge), wait for
every cell to render, then for each figure (get_cells, get_cells with outputs, update_cell, export: the arguments of
``bench/run.py``'s ``call_specs``) run R rounds of K timed calls on one side then K on the other, the side going
first alternating by round, after untimed warm-up calls. Prints, per figure, the p50 and p95 of every call of each
side (ms, timed in the page by ``bench/page.js``), their ratio (now / before), the median over the rounds of
the ratio of the two blocks' medians with its quartiles (a paired figure whose spread says how much of a
difference the machine's noise alone makes), and the p50 of the time inside each extension's own ``execute``
(``bench/profile_calls.py``'s timer: the bridge's part of a call, without the browser's ``executeTool`` and the
page's other tasks between). Writes ``bench/results-paired.json``.

This is a measurement, not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

import notebooks  # noqa: E402
import run as bench  # noqa: E402
import sites  # noqa: E402
from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402
from profile_calls import EXECUTE_TIMER  # noqa: E402

RESULTS = HERE / "results-paired.json"
SIDES = ("ours", "before")


def open_side(browser, url: str, path: str, cells: int, init_script: str, query: str = ""):
    """A page of one site with ``path`` open, every cell rendered and the page quiet; returns (context, page).
    ``query`` is added to the page's URL (``&webmcpBridgeThread=...``)."""
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(EXECUTE_TIMER)
    page.add_init_script(init_script)
    page.goto(f"{url}/lab/index.html?path={bench.LOAD_NOTEBOOK}{query}")
    page.wait_for_function("() => window.webmcpBridge?.status.state === 'ready'", timeout=bench.LOAD_TIMEOUT_MS)
    bench.open_notebook(page, path, cells)
    bench.rendered(page, path)
    bench.settle(page)
    return context, page


def block(page, tool: str, args: dict, n: int, sources: list[str] | None) -> tuple[list[float], list[float]]:
    """n timed calls: (ms of each call as the page timed it, ms of each inside the extension's own ``execute``);
    an update starts from the cell's current hash. Raises if a call failed."""
    if sources:
        args = {**args, "expectedSourceHash": bench.current_hash(page, args["notebookPath"], args["cellId"])}
    page.evaluate("() => { window.__executeMs = []; }")
    rows = page.evaluate("spec => window.__bench.calls(spec)", {"name": tool, "args": args, "n": n, "sources": sources})
    errors = [r["errorText"] for r in rows if r["error"]]
    if errors:
        raise RuntimeError(f"{tool}: {len(errors)} of {len(rows)} calls failed, first: {errors[0]}")
    return [r["ms"] for r in rows], list(page.evaluate("() => window.__executeMs"))


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile) of values (at least one)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[1], q[2]


def measure(
    browser, urls: dict, label: str, rounds: int, size: int, init_script: str, queries: dict[str, str]
) -> list[dict]:
    """Every figure of one notebook (``label``: 10, 100, 1000 or large), paired; one dict per figure. ``queries``:
    what each side's page URL adds."""
    path = notebooks.name_for(label)
    cells = notebooks.IMAGES + 2 if label == "large" else int(label)
    opened = {side: open_side(browser, urls[side], path, cells, init_script, queries.get(side, "")) for side in SIDES}
    pages = {side: opened[side][1] for side in SIDES}
    try:
        target = bench.target_cell(pages["ours"], path, cells)
        before_target = bench.target_cell(pages["before"], path, cells)
        if target["source"] != before_target["source"]:
            raise RuntimeError(f"{path}: the two sites' cell {target['id']} differ")
        figures = []
        for figure, tool, args, sources in bench.call_specs(path, cells, target):
            calls: dict[str, list[float]] = {side: [] for side in SIDES}
            inside: dict[str, list[float]] = {side: [] for side in SIDES}
            ratios = []
            for side in SIDES:
                block(pages[side], tool, args, bench.WARMUP, sources)
            for index in range(rounds):
                order = SIDES if index % 2 == 0 else SIDES[::-1]
                medians = {}
                for side in order:
                    ms, executed = block(pages[side], tool, args, size, sources)
                    calls[side] += ms
                    inside[side] += executed
                    medians[side] = statistics.median(ms)
                ratios.append(medians["ours"] / medians["before"])
            low, mid, high = quartiles(ratios)
            row = {
                "notebook": label,
                "figure": figure,
                **{f"{side}_p50": bench.percentile(calls[side], 50) for side in SIDES},
                **{f"{side}_p95": bench.percentile(calls[side], 95) for side in SIDES},
                **{f"{side}_execute_p50": bench.percentile(inside[side], 50) for side in SIDES},
                "paired_ratio": mid,
                "paired_q1": low,
                "paired_q3": high,
                "calls_per_side": len(calls["ours"]),
            }
            print(
                f"[paired] {label} {figure}: now {row['ours_p50']:.2f} / before {row['before_p50']:.2f} ms, "
                f"paired {mid:.2f}× ({low:.2f}-{high:.2f}); execute {row['ours_execute_p50']:.2f} / "
                f"{row['before_execute_p50']:.2f} ms",
                flush=True,
            )
            figures.append(row)
        return figures
    finally:
        for context, _page in opened.values():
            context.close()


def table(rows: list[dict], rounds: int, size: int) -> str:
    lines = [
        f"| notebook | figure | now p50 | before p50 | ratio | now p95 | before p95 | ratio | paired ratio "
        f"(median of {rounds} rounds of {size}) | its quartiles | execute p50 now / before | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['notebook']} | {r['figure']} | {r['ours_p50']:.2f} | {r['before_p50']:.2f} | "
            f"{r['ours_p50'] / r['before_p50']:.2f}× | {r['ours_p95']:.1f} | {r['before_p95']:.1f} | "
            f"{r['ours_p95'] / r['before_p95']:.2f}× | {r['paired_ratio']:.2f}× | "
            f"{r['paired_q1']:.2f}-{r['paired_q3']:.2f} | {r['ours_execute_p50']:.2f} / "
            f"{r['before_execute_p50']:.2f} | {r['ours_execute_p50'] / r['before_execute_p50']:.2f}× |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="alternating blocks per figure and side (default 10)")
    parser.add_argument("--block", type=int, default=10, help="timed calls per block (default 10)")
    parser.add_argument("--cells", default="10,100,1000,large", help="the notebooks, comma-separated")
    parser.add_argument("--thread", choices=("main", "worker"), help="where the bridge's Python runs on now's pages")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file (JSON)")
    opts = parser.parse_args()
    queries = {"ours": f"&webmcpBridgeThread={opts.thread}"} if opts.thread else {}
    folders = {"ours": sites.BENCH / "ours", "before": sites.BENCH / "before" / "site"}
    for folder in folders.values():
        if not (folder / "lab" / "index.html").exists():
            sys.exit(f"{folder} is not built: run `python bench/run.py --before REV` first")
    labels = [label.strip() for label in opts.cells.split(",") if label.strip()]
    servers, urls = bench.serve(folders)
    init_script = (HERE / "page.js").read_text(encoding="utf-8")
    rows: list[dict] = []
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS, *bench.BENCH_ARGS]
            )
            try:
                for label in labels:
                    rows += measure(browser, urls, label, opts.rounds, opts.block, init_script, queries)
            finally:
                browser.close()
    finally:
        for server in servers:
            server.shutdown()
    print(table(rows, opts.rounds, opts.block))
    meta = {"rounds": opts.rounds, "block": opts.block, "thread": opts.thread, "rows": rows}
    opts.out.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"[paired] wrote {opts.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
