"""Print how long the built site takes from navigation to the bridge's tools being registered.

Usage: python bench/startup.py [--runs N] [--notebook NAME]

Builds the site (incrementally), serves it on 127.0.0.1, opens it N times in Debian Chromium with native
WebMCP, cold (a fresh browser context: empty HTTP cache and storage) and warm (a reload in the same
context), and prints the median and range of the loader's own timings (ms since navigation start): tools
registered, JupyterLab restored, Python started (once the page is idle), Pyodide ready, bridge ready. A figure
printer, not a test; bench/run.py compares the page with and without the bridge.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable, open_notebook  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402

KEYS = ("toolsRegistered", "restored", "pythonStart", "pyodideReady", "bridgeReady")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--notebook", default="jupyterlite-demo-python.ipynb")
    args = parser.parse_args()
    server = make_server(build_site(), port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    url = f"http://{host}:{port}"
    samples: dict[str, dict[str, list[float]]] = {"cold": {k: [] for k in KEYS}, "warm": {k: [] for k in KEYS}}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS]
        )
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
    server.shutdown()
    print(f"navigation -> milestone, ms (median [min-max] of {args.runs} runs, {args.notebook})")
    for kind, figures in samples.items():
        row = "  ".join(f"{k} {statistics.median(v):.0f} [{min(v):.0f}-{max(v):.0f}]" for k, v in figures.items())
        print(f"{kind:5} {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
