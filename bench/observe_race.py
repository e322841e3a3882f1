#!/usr/bin/env python3
"""Repeat the steps of test_safety's planted-notebook tests on the built site, with the bridge and without it,
and count the page errors, with their stacks.

The steps (playwright-tests/test_safety.py ``open_planted``): open ``jupyterlite-empty.ipynb`` in a fresh
browser context, write a new notebook with ``serviceManager.contents.save``, load
``lab/index.html?path=<new>`` (JupyterLab restores the empty notebook's tab and opens the new one), bring the
new one to the front. Without the bridge the site is the same ``_output/`` with the bridge's entry removed from
``federated_extensions`` in its ``jupyter-lite.json`` (so its loader never runs), served with the same headers.

    python bench/observe_race.py --runs 20 [--without-bridge] [--settle 1.5]

Prints one line per run and a summary: how many runs raised a page error, and each distinct error's stack.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "playwright-tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable  # noqa: E402
from sitebuild.extension import EXTENSION_NAME  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.util import OUTPUT  # noqa: E402

CELLS = [
    {
        "cell_type": "code",
        "id": "frozen",
        "metadata": {"editable": False},
        "source": "answer = 42",
        "outputs": [],
        "execution_count": None,
    },
    {"cell_type": "markdown", "id": "kept", "metadata": {"deletable": False}, "source": "# Keep me"},
    {"cell_type": "code", "id": "free", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None},
]
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
PLANT = """async ({path, content}) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
}"""
TO_FRONT = """async path => {
  const app = window.jupyterapp;
  await app.restored;
  if (app.shell.currentWidget?.context?.path !== path) await app.commands.execute('docmanager:open', {path});
}"""
#: --trace: for every notebook panel created, log (console.debug, "trace:" prefix) its attach/detach messages,
#: disposal and cell-list changes, with milliseconds since navigation
TRACE = """(() => {
  const t = () => performance.now().toFixed(0);
  const watch = factory => factory.widgetCreated.connect((_, panel) => {
    const path = () => panel.context.path;
    const nb = panel.content;
    const original = nb.processMessage.bind(nb);
    nb.processMessage = msg => {
      if (/attach|detach/.test(msg.type)) console.debug(`trace: ${t()} ${path()} ${msg.type}`);
      return original(msg);
    };
    panel.disposed.connect(() => console.debug(`trace: ${t()} ${path()} disposed`));
    nb.modelChanged.connect(() => nb.model && nb.model.cells.changed.connect((_, c) =>
      console.debug(`trace: ${t()} ${path()} cells.changed ${c.type} attached=${nb.isAttached}`)));
    console.debug(`trace: ${t()} ${path()} created`);
  });
  const hook = app => {
    try {
      const registry = app.docRegistry;
      const existing = registry.getWidgetFactory('Notebook');
      if (existing) return watch(existing);
      const add = registry.addWidgetFactory.bind(registry);
      registry.addWidgetFactory = factory => { const r = add(factory); if (factory.name === 'Notebook') watch(factory);
        return r; };
    } catch (e) { console.debug('trace: hook failed ' + e); }
  };
  let value;
  Object.defineProperty(window, 'jupyterapp', {configurable: true, get: () => value, set: v => { value = v; hook(v);
    }});
})()"""
IS_FRONT = (
    "path => { const w = window.jupyterapp?.shell?.currentWidget;"
    " return w?.context?.path === path && !!w.node.querySelector('.jp-Notebook .jp-Cell'); }"
)


def site_copy(without_bridge: bool) -> Path:
    """The built site, or a copy of it whose jupyter-lite.json no longer lists the bridge's labextension."""
    if not without_bridge:
        return OUTPUT
    folder = Path(tempfile.mkdtemp(prefix="site-without-bridge-")) / "site"
    shutil.copytree(OUTPUT, folder, symlinks=True)
    config_path = folder / "jupyter-lite.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    data = config["jupyter-config-data"]
    data["federated_extensions"] = [e for e in data["federated_extensions"] if e["name"] != EXTENSION_NAME]
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder


def open_at(page, base: str, path: str) -> None:
    """Load JupyterLab on ``path`` and wait until it is the current widget with its cells shown."""
    page.goto(f"{base}/lab/index.html?path={path}")
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=90_000)
    page.evaluate(TO_FRONT, path)
    page.wait_for_function(IS_FRONT, arg=path, timeout=90_000)


def one_run(browser, base: str, settle_s: float, with_bridge: bool, trace: bool = False) -> list[dict]:
    """The steps once in a fresh context; the page errors raised (message and stack); with ``trace``, each
    error carries the trace lines logged before it."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[dict] = []
    lines: list[str] = []
    if trace:
        page.add_init_script(TRACE)
        page.on(
            "framenavigated", lambda frame: frame == page.main_frame and lines.append(f"-- navigated to {frame.url}")
        )
        page.on("console", lambda msg: msg.text.startswith("trace:") and lines.append(msg.text))
    page.on(
        "pageerror",
        lambda error: errors.append({"message": error.message, "stack": error.stack or "", "trace": list(lines)}),
    )
    try:
        open_at(page, base, "jupyterlite-empty.ipynb")
        if with_bridge:
            page.wait_for_function(
                "() => ['ready','unavailable','failed'].includes(window.webmcpBridge?.status?.state)", timeout=90_000
            )
        content = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": KERNELSPEC}, "cells": CELLS}
        page.evaluate(PLANT, {"path": "locked.ipynb", "content": content})
        open_at(page, base, "locked.ipynb")
        time.sleep(settle_s)
    finally:
        context.close()
    return errors


#: the race alone, in plain JupyterLab: a change to the cell list queues a frame callback that observes every cell
#: with the notebook's content-visibility IntersectionObserver; closing the notebook (or detaching it) before
#: that frame sets the observer to null, and the callback then throws
MINIMAL = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.model.sharedModel.insertCell(0, {cell_type: 'code', source: ''});
  panel.dispose();
  await new Promise(resolve => setTimeout(resolve, 500));
}"""


def minimal_run(browser, base: str) -> list[dict]:
    """The minimal reproduction once in a fresh context; the page errors raised."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[dict] = []
    page.on("pageerror", lambda error: errors.append({"message": error.message, "stack": error.stack or ""}))
    try:
        open_at(page, base, "jupyterlite-empty.ipynb")
        page.evaluate(MINIMAL)
    finally:
        context.close()
    return errors


def main() -> int:
    """Command line; exit status 0 (the counts are the result)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--without-bridge", action="store_true")
    parser.add_argument("--settle", type=float, default=1.5, help="seconds to wait after the new notebook is in front")
    parser.add_argument("--trace", action="store_true", help="log each notebook's attach/detach and cell changes")
    parser.add_argument("--minimal", action="store_true", help="the minimal reproduction instead of the test's steps")
    args = parser.parse_args()
    folder = site_copy(args.without_bridge)
    server = make_server(folder, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://{}:{}".format(*server.server_address[:2])
    stacks: Counter[str] = Counter()
    failed = 0
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=[WEBMCP_FLAG, *BASE_ARGS]
        )
        for run in range(args.runs):
            started = time.monotonic()
            errors = (
                minimal_run(browser, base)
                if args.minimal
                else one_run(browser, base, args.settle, with_bridge=not args.without_bridge, trace=args.trace)
            )
            failed += bool(errors)
            for error in errors:
                stacks[error["stack"] or error["message"]] += 1
            print(
                f"run {run + 1}: {len(errors)} page error(s) in {time.monotonic() - started:.1f} s"
                + "".join(f"\n    {e['message']}" for e in errors),
                flush=True,
            )
            if errors and args.trace:
                print("\n".join(f"      {line}" for line in errors[0]["trace"]), flush=True)
        browser.close()
    server.shutdown()
    print(
        f"\n{'without' if args.without_bridge else 'with'} the bridge: {failed} of {args.runs} runs raised a page error"
    )
    for stack, count in stacks.most_common():
        print(f"\n{count}x\n{stack}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
