"""What the bridge's Python runtime adds to a page's JS heap, step by step, on a page with nothing else.

Usage: python bench/memory_steps.py

Needs the bench site of ``bench/run.py`` (``.cache/bench/ours``). Opens a plain file of that site (no JupyterLab)
in the benchmark's Chromium (precise memory info, ``gc()`` exposed) and repeats the loader's start-up steps with
the same files (``extensions/jupyterlab-webmcp-bridge/static/bridge.json``: the shipped Pyodide, the dependency wheels,
the bridge's wheel), then imports the bridge's modules the way its start-up does. After each step: two ``gc()`` calls,
then ``performance.memory.usedJSHeapSize`` and the size of Pyodide's wasm memory. Prints one row per step, in MB.
"""

from __future__ import annotations

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

STEPS = """async () => {
  const base = new URL('/extensions/jupyterlab-webmcp-bridge/static/', location.href);
  const manifest = await (await fetch(new URL('bridge.json', base))).json();
  const rows = [];
  let pyodide = null;
  const mark = async (name) => {
    for (let i = 0; i < 2; i++) { gc(); await new Promise(r => setTimeout(r, 50)); }
    rows.push([name, performance.memory.usedJSHeapSize, pyodide ? pyodide._module.HEAP8.length : 0]);
  };
  await mark('blank page');
  const module = await import(new URL(manifest.pyodide, base).href);
  await mark('runtime module imported');
  pyodide = await module.loadPyodide({ indexURL: new URL('.', new URL(manifest.pyodide, base)).href });
  await mark('loadPyodide');
  const quiet = { messageCallback: () => {}, errorCallback: () => {} };
  await pyodide.loadPackage(manifest.wheels.map(w => new URL(w, base).href), quiet);
  await mark('dependency wheels (pydantic, pydantic-core, ...)');
  await pyodide.loadPackage(new URL(manifest.wheel, base).href, quiet);
  await mark("the bridge's wheel");
  pyodide.runPython('import pydantic, pydantic_core');
  await mark('pydantic imported');
  pyodide.runPython('import webmcp_bridge.lab.session');
  await mark("the bridge's modules imported");
  return rows;
}"""


def main() -> int:
    folder = sites.BENCH / "ours"
    if not (folder / "lab" / "index.html").exists():
        sys.exit(f"{folder} is not built: run `python bench/run.py --quick` first")
    servers, urls = bench.serve({"ours": folder})
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS, *bench.BENCH_ARGS]
            )
            try:
                page = browser.new_page()
                page.goto(f"{urls['ours']}/extensions/jupyterlab-webmcp-bridge/static/bridge.json")
                rows = page.evaluate(STEPS)
            finally:
                browser.close()
    finally:
        for server in servers:
            server.shutdown()
    mb = 1024 * 1024
    print("| step | JS heap (MB) | added (MB) | wasm memory (MB) |\n|---|---|---|---|")
    previous = rows[0][1]
    for name, heap, wasm in rows:
        print(f"| {name} | {heap / mb:.1f} | {(heap - previous) / mb:+.1f} | {wasm / mb:.1f} |")
        previous = heap
    print(f"| in all | | {(rows[-1][1] - rows[0][1]) / mb:+.1f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
