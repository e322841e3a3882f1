"""The npm packages the page runs: the Pyodide runtime and the MCP-B runtime, each fetched once into the cache."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

from sitebuild.util import CACHE, BuildError, run, step

#: the files of the npm package the site needs (the rest are docs, typings and a demo console)
PYODIDE_FILES = (
    "package.json",
    "pyodide.mjs",
    "pyodide.mjs.map",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
)
#: the files the labextension ships as its own runtime: the ones Pyodide loads to start (no map, no docs)
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")


def npm_package(spec: str, name: str, marker: str) -> Path:
    """`npm pack <spec>` into the cache's ``npm/`` (once) and extract it into ``.cache/<name>/``; return the
    package folder. ``marker`` is a file inside the package whose presence means the extraction is complete.
    Raises BuildError when npm is missing (it is needed once per pin)."""
    npm_dir = CACHE / "npm"
    tarball = npm_dir / f"{name}.tgz"
    extracted = CACHE / name
    if (extracted / "package" / marker).exists():
        return extracted / "package"
    with step(f"fetching {spec} (npm pack)"):
        if not tarball.exists():
            npm = shutil.which("npm")
            if npm is None:
                raise BuildError(f"npm is needed once, to fetch {spec} (npm pack)")
            npm_dir.mkdir(parents=True, exist_ok=True)
            run([npm, "pack", spec, "--pack-destination", npm_dir], cwd=npm_dir)
        tmp = extracted.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        shutil.rmtree(extracted, ignore_errors=True)
        tmp.rename(extracted)
    return extracted / "package"


def fetch_pyodide(version: str) -> Path:
    """The Pyodide runtime ``pyodide@version`` (npm), fetched once; return its package folder."""
    return npm_package(f"pyodide@{version}", f"pyodide-{version}", "pyodide-lock.json")


def fetch_mcp_b(version: str) -> Path:
    """`npm pack @mcp-b/global@version` into the cache (once) and extract it; return the package folder
    (``dist/index.iife.js`` is the self-contained script, ``LICENSE`` its MIT licence)."""
    return npm_package(f"@mcp-b/global@{version}", f"mcp-b-global-{version}", "dist/index.iife.js")
