"""The bridge worker's memory snapshot in a built site: Python after every start-up import, made once per build inputs
in Chromium, restored by the worker instead of starting Python (docs/loader.md, "A memory snapshot").

A snapshot is the runtime's whole wasm memory: it fits only the exact runtime, wheels and side modules it was made with,
and only the engine that made it (one made under Node crashes in Chromium: the call trampoline differs by engine). So
the build makes it with the product's own worker (``lab/worker_boot.js``'s ``make`` mode) in the Debian Chromium the
tests use, driven by Playwright (both dev dependencies; without them the site is built without a snapshot and the worker
starts Python normally). Each wheel's native modules (pydantic-core's) are extracted beside it: the worker loads them
before the runtime starts, at the same addresses, when it makes the snapshot and when it restores it.

Written into the built site's ``extensions/jupyterlab-webmcp-bridge/static/snapshot/`` (never into the product's wheel:
a snapshot holds the build's memory, addresses and hash seeds, so no two are byte-identical, and a site's runtime is the
site's): ``snapshot.json`` ``{memory: "memory.bin.gz", bytes: its size unpacked, sideModules: [{path: in site-packages,
file: relative to snapshot.json}], wheels: {file name: sha256}}`` (the worker checks the wheels it fetches against it),
the memory (gzip) and ``side/<module>.so``. Cached in ``.cache/snapshot/<key>/`` by the sha256 of everything it depends
on (bridge.json, the worker's script, the runtime's files, the wheels).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sitebuild.util import CACHE, BuildError, sha256_file, step, sync_file

#: the folder beside bridge.json, and its index (the loader's ``SNAPSHOT`` names it)
SNAPSHOT_DIR = "snapshot"
INDEX = "snapshot.json"
MEMORY = "memory.bin.gz"
#: how long the worker may take to make it (seconds; a loaded 2-core machine)
MAKE_SECONDS = 600
#: Chromium's flags for a headless run on a build machine (as playwright-tests/lite_site.py's)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

#: in the page (same origin as the site): start the worker in its make mode, then hand its memory over as a download
MAKE = """async ({workerUrl, manifestUrl, sideModules}) => {
    const worker = new Worker(workerUrl, {type: 'module', name: 'webmcp-bridge-snapshot'});
    const bytes = await new Promise((resolve, reject) => {
        worker.onmessage = event => {
            if (event.data.type === 'snapshot') resolve(event.data.bytes);
            else if (event.data.type === 'failed') reject(new Error(event.data.message));
        };
        worker.onerror = event => reject(new Error(event.message || 'the worker failed'));
        worker.postMessage({type: 'start', manifestUrl, make: {sideModules}});
    });
    worker.terminate();
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([bytes]));
    link.download = 'memory.bin';
    document.documentElement.appendChild(link);
    link.click();
}"""


def chromium() -> str | None:
    """The Debian Chromium binary (its ``bin`` wrapper runs this one), or None."""
    for candidate in ("/usr/lib/chromium/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def _wheels(static: Path, manifest: dict) -> list[Path]:
    return [static / name for name in (*manifest["wheels"], manifest["wheel"])]


def side_modules(static: Path, manifest: dict) -> list[tuple[Path, str]]:
    """``(wheel, member)`` of each native module (``.so``) of the wheels bridge.json names, in its order."""
    found = []
    for wheel in _wheels(static, manifest):
        with zipfile.ZipFile(wheel) as archive:
            found += [(wheel, name) for name in sorted(archive.namelist()) if name.endswith(".so")]
    return found


def snapshot_key(static: Path, manifest: dict) -> str:
    """The sha256 of everything a snapshot depends on: bridge.json, the worker's script, the runtime's files, the
    wheels."""
    digest = hashlib.sha256()
    runtime = static / "pyodide"
    files = [static / "bridge.json", static / "worker_boot.js", *_wheels(static, manifest)]
    files += [runtime / name for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")]
    for path in files:
        digest.update(path.name.encode() + b"\0" + sha256_file(path).encode() + b"\n")
    return digest.hexdigest()[:24]


def make_snapshot(site: Path, extension: str) -> Path | None:
    """Make (or take from the cache) the worker's snapshot for the built ``site`` and write it beside the extension's
    bridge.json; return its folder, or None when this machine cannot make one (no Playwright, no Chromium: said on the
    console; the site then starts Python normally). Raises BuildError when the worker fails to make it."""
    static = site / "extensions" / extension / "static"
    manifest = json.loads((static / "bridge.json").read_text(encoding="utf-8"))
    cached = CACHE / "snapshot" / snapshot_key(static, manifest)
    sides = side_modules(static, manifest)
    if not (cached / INDEX).exists():
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            print("[build] no memory snapshot: Playwright is not installed (the dev extra); Python starts normally")
            return None
        binary = chromium()
        if binary is None:
            print("[build] no memory snapshot: Chromium is not installed; Python starts normally")
            return None
        with step("making the worker's memory snapshot in Chromium"):
            # a thread of its own: Playwright's sync API refuses a thread with a running event loop (a test process
            # whose own sync Playwright is running builds a site)
            with ThreadPoolExecutor(1) as pool:
                pool.submit(_make, site, static, manifest, sides, cached, sync_playwright, binary).result()
    out = static / SNAPSHOT_DIR
    for path in sorted(cached.rglob("*")):
        if path.is_file():
            sync_file(path, out / path.relative_to(cached))
    return out


def _make(site: Path, static: Path, manifest: dict, sides: list, cached: Path, sync_playwright, binary: str) -> None:
    from sitebuild.serve import make_server

    tmp = cached.with_name(cached.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    entries = []
    for wheel, member in sides:
        file = f"side/{Path(member).name}"
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(member)
        for folder in (tmp, static / SNAPSHOT_DIR):  # the worker fetches them from the site while it makes it
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / file).write_bytes(data)
        entries.append({"path": member, "file": file})
    server = make_server(site, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    static_url = f"{base}/{static.relative_to(site).as_posix()}"
    made_by = [{"path": e["path"], "file": f"{SNAPSHOT_DIR}/{e['file']}"} for e in entries]  # relative to bridge.json
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=binary, headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_context(accept_downloads=True).new_page()
                page.goto(f"{static_url}/bridge.json")
                with page.expect_download(timeout=MAKE_SECONDS * 1000) as download:
                    page.evaluate(
                        MAKE,
                        {
                            "workerUrl": f"{static_url}/worker_boot.js",
                            "manifestUrl": f"{static_url}/bridge.json",
                            "sideModules": made_by,
                        },
                    )
                memory = tmp / "memory.bin"
                download.value.save_as(memory)
            finally:
                browser.close()
    except Exception as exc:  # Playwright's errors: the worker's failure is in the message
        raise BuildError(f"the worker did not make its memory snapshot: {str(exc)[:1500]}") from exc
    finally:
        server.shutdown()
    data = memory.read_bytes()
    (tmp / MEMORY).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
    memory.unlink()
    index = {
        "memory": MEMORY,
        "bytes": len(data),
        "sideModules": entries,
        "wheels": {path.name: sha256_file(path) for path in _wheels(static, manifest)},
    }
    (tmp / INDEX).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(cached, ignore_errors=True)
    tmp.rename(cached)
