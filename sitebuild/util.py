"""Paths of the repository and the small helpers every build step uses: errors, steps, hashing, copying."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
OUTPUT = ROOT / "_output"
CACHE = ROOT / ".cache"
CONTENT = ROOT / "lite" / "content"
EXTENSION_SRC = ROOT / "lite" / "extension"
PY_SRC = ROOT / "py_src"


class BuildError(RuntimeError):
    """A build step failed in a way the person running the build must fix."""


@contextmanager
def step(title: str):
    """Print a build step's title, then its duration when it ends."""
    print(f"[build] {title} ...", flush=True)
    started = time.perf_counter()
    yield
    print(f"[build]   done in {time.perf_counter() - started:.1f} s", flush=True)


def run(cmd: list[str], cwd: Path | None = None) -> None:
    """Run a command (a list, never a shell string), echoing it; raise BuildError if it fails."""
    print("[build]   $ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], cwd=cwd)
    if result.returncode != 0:
        raise BuildError(f"exit code {result.returncode} from: {' '.join(str(c) for c in cmd[:4])} ...")


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_files(root: Path) -> list[Path]:
    """All files under root (sorted, skipping caches), for hashing and copying."""
    skip = {"__pycache__", ".ipynb_checkpoints", "node_modules"}
    return sorted(p for p in root.rglob("*") if p.is_file() and not skip.intersection(p.relative_to(root).parts))


def hash_inputs(paths: list[Path], extra: dict | None = None) -> str:
    """One sha256 over files (their path relative to the repo or cache, and bytes) and extra JSON data."""
    digest = hashlib.sha256(json.dumps(extra or {}, sort_keys=True).encode())
    for path in paths:
        try:
            label = path.relative_to(ROOT).as_posix()
        except ValueError:
            label = path.name
        digest.update(label.encode() + b"\0" + sha256_file(path).encode() + b"\n")
    return digest.hexdigest()


def write_if_changed(path: Path, data: bytes | str) -> bool:
    """Write a file only when its bytes differ (keeps mtimes stable); return True if it was written."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def sync_file(src: Path, dest: Path) -> None:
    """Copy src to dest unless dest already has the same size and bytes."""
    if dest.exists() and dest.stat().st_size == src.stat().st_size and sha256_file(dest) == sha256_file(src):
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)
