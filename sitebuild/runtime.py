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


def fetch_pyodide(version: str) -> Path:
    """`npm pack pyodide@version` into the cache (once) and extract it; return the package folder."""
    npm_dir = CACHE / "npm"
    tarball = npm_dir / f"pyodide-{version}.tgz"
    extracted = CACHE / f"pyodide-{version}"
    if (extracted / "package" / "pyodide-lock.json").exists():
        return extracted / "package"
    with step(f"fetching the Pyodide runtime {version} (npm pack)"):
        if not tarball.exists():
            npm = shutil.which("npm")
            if npm is None:
                raise BuildError("npm is needed once, to fetch the Pyodide runtime (npm pack pyodide)")
            npm_dir.mkdir(parents=True, exist_ok=True)
            run([npm, "pack", f"pyodide@{version}", "--pack-destination", npm_dir], cwd=npm_dir)
        tmp = extracted.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        shutil.rmtree(extracted, ignore_errors=True)
        tmp.rename(extracted)
    return extracted / "package"


def fetch_mcp_b(version: str) -> Path:
    """`npm pack @mcp-b/global@version` into the cache (once) and extract it; return the package folder
    (``dist/index.iife.js`` is the self-contained script, ``LICENSE`` its MIT licence)."""
    extracted = CACHE / f"mcp-b-global-{version}"
    if (extracted / "package" / "dist" / "index.iife.js").exists():
        return extracted / "package"
    npm_dir = CACHE / "npm"
    tarball = npm_dir / f"mcp-b-global-{version}.tgz"
    with step(f"fetching the MCP-B runtime @mcp-b/global {version} (npm pack)"):
        if not tarball.exists():
            npm = shutil.which("npm")
            if npm is None:
                raise BuildError("npm is needed once, to fetch @mcp-b/global (npm pack)")
            npm_dir.mkdir(parents=True, exist_ok=True)
            run([npm, "pack", f"@mcp-b/global@{version}", "--pack-destination", npm_dir], cwd=npm_dir)
        tmp = extracted.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        shutil.rmtree(extracted, ignore_errors=True)
        tmp.rename(extracted)
    return extracted / "package"
