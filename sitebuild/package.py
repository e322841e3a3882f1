"""The product's wheel (``jupyterlab-webmcp-bridge``), built from this checkout as any user's pip would build it.

``pip wheel . --no-deps`` runs the project's own build backend (hatchling, with ``hatch_build.py`` staging the
labextension) in an isolated build environment; the result is cached under ``.cache/dist/<key>/`` by a hash of
every file the wheel is made from, so an unchanged checkout reuses it.
"""

from __future__ import annotations

import fcntl
import shutil
import sys
from pathlib import Path

from sitebuild.util import CACHE, EXTENSION_SRC, PY_SRC, PYPROJECT, ROOT, BuildError, hash_inputs, run, step, tree_files


def wheel_sources() -> list[Path]:
    """Every file the product's wheel is built from (the packages, the loader, the server config, the build code, the
    metadata)."""
    files = [PYPROJECT, ROOT / "hatch_build.py", ROOT / "README.md"]
    for folder in (
        PY_SRC / "webmcp_bridge",
        PY_SRC / "webmcp_bridge_jupyter",
        PY_SRC / "jupyterlab_webmcp_bridge",
        ROOT / "jupyter-config",
        EXTENSION_SRC,
        ROOT / "sitebuild",
    ):
        files += tree_files(folder)
    return files


def _remove(path: Path) -> None:
    """Remove a cache entry, a folder or a stray file (an interrupted build may leave either)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def build_wheel() -> Path:
    """Build (or reuse) the product's wheel; return its path. Raises BuildError if pip fails.

    One build at a time per checkout (an exclusive lock on ``.cache/dist.lock``): two test processes asking at
    once would otherwise stage ``build/labextension/`` and write ``.cache/dist/`` over each other; the second
    then reuses the first one's wheel."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "dist.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_wheel()


def _build_wheel() -> Path:
    from sitebuild.pins import overrides

    replaced = overrides()  # a canary's runtime pin (sitebuild.pins): a wheel of its own, in a folder of its own
    key = hash_inputs(wheel_sources(), replaced or None)[:16]
    dist = CACHE / ("dist-canary" if replaced else "dist")
    out = dist / key
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) == 1:
        return wheels[0]
    with step("building the wheel (pip wheel . --no-deps)"):
        tmp = out.with_suffix(".tmp")
        _remove(tmp)
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--disable-pip-version-check",
                "--no-deps",
                "-q",
                "--wheel-dir",
                tmp,
                ROOT,
            ]
        )
        _remove(out)
        tmp.rename(out)
        for old in dist.iterdir():
            if old != out:
                _remove(old)
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one wheel in .cache/{dist.name}/{key}, found {len(wheels)}")
    print(f"[build]   {wheels[0].name}: {wheels[0].stat().st_size / 1e6:.1f} MB")
    return wheels[0]
