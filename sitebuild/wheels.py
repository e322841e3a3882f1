"""Wheels: the pinned in-browser wheels (pip download for the runtime's platform), the bridge's own wheel, and
what a wheel declares (its metadata and import names)."""

from __future__ import annotations

import email.parser
import shutil
import sys
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from sitebuild.util import CACHE, PY_SRC, PYPROJECT, ROOT, BuildError, hash_inputs, run, step, tree_files


def wheel_target(lock: dict) -> list[str]:
    """pip download options selecting wheels for this Pyodide (its Python version, ABI and platform)."""
    info = lock["info"]
    py = ".".join(info["python"].split(".")[:2])
    abi = "cp" + py.replace(".", "")
    platform = f"pyemscripten_{info['abi_version']}_{info['arch']}"
    return ["--python-version", py, "--implementation", "cp", "--abi", abi, "--platform", platform]


def wheel_name_version(path: Path) -> tuple[str, str]:
    """The canonical project name and version from a wheel's file name."""
    name, version = path.name.split("-")[:2]
    return canonicalize_name(name), version


def cached_wheels() -> dict[tuple[str, str], Path]:
    """The wheels already in the cache, keyed by (canonical name, normalised version)."""
    wheel_dir = CACHE / "wheels"
    found = {}
    for path in wheel_dir.glob("*.whl"):
        name, version = wheel_name_version(path)
        found[(name, str(Version(version)))] = path
    return found


def fetch_wheels(pins: dict, lock: dict) -> dict[str, Path]:
    """pip download each pinned wheel into the cache (only those not there yet); return name -> wheel path."""
    wheel_dir = CACHE / "wheels"
    wheel_dir.mkdir(parents=True, exist_ok=True)
    wanted = {name: (name, str(Version(version))) for name, version in pins["wheels"].items()}
    have = cached_wheels()
    missing = [f"{n}=={v}" for n, v in pins["wheels"].items() if wanted[n] not in have]
    if missing:
        with step(f"downloading {len(missing)} wheel(s) with pip"):
            run(
                [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
                 "--no-deps", *wheel_target(lock), "--dest", wheel_dir, *missing]
            )
        have = cached_wheels()
        still = [n for n in pins["wheels"] if wanted[n] not in have]
        if still:
            raise BuildError(f"pip left no wheel for: {', '.join(still)}")
    return {name: have[key] for name, key in wanted.items()}


def build_bridge_wheel() -> Path:
    """Build the bridge's own wheel from the repo (pip wheel . --no-deps), cached by a hash of its sources."""
    sources = [p for p in [PYPROJECT, *tree_files(PY_SRC)] if ".egg-info" not in p.as_posix()]
    sources += [p for pattern in ("README*", "LICENSE*") for p in ROOT.glob(pattern) if p.is_file()]
    key = hash_inputs(sources)[:16]
    out = CACHE / "bridge" / key
    wheels = sorted(out.glob("webmcp_bridge-*.whl"))
    if wheels:
        return wheels[0]
    with step("building the bridge wheel (pip wheel . --no-deps)"):
        tmp = out.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        # build from a fresh copy of the sources: setuptools' in-tree build/ folder can keep deleted modules
        src = CACHE / "bridge-src"
        shutil.rmtree(src, ignore_errors=True)
        for path in sources:
            dest = src / path.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-deps", "-q",
             "--wheel-dir", tmp, src])
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
        for old in (CACHE / "bridge").iterdir():
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    wheels = sorted(out.glob("webmcp_bridge-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one webmcp_bridge wheel in {out.name}, found {len(wheels)}")
    return wheels[0]


def wheel_metadata(path: Path):
    """The parsed METADATA of a wheel."""
    with zipfile.ZipFile(path) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return email.parser.Parser().parsestr(whl.read(name).decode("utf-8"))


def wheel_imports(path: Path) -> list[str]:
    """Top-level importable names of a wheel (top_level.txt if present, else its top-level entries)."""
    with zipfile.ZipFile(path) as whl:
        names = whl.namelist()
        top = [n for n in names if n.endswith(".dist-info/top_level.txt") and n.count("/") == 1]
        if top:
            found = [line.strip() for line in whl.read(top[0]).decode().splitlines() if line.strip()]
        else:
            found = set()
            for entry in names:
                head = entry.split("/")[0]
                if head.endswith((".dist-info", ".data")):
                    continue
                if "/" in entry:
                    found.add(head)
                elif entry.endswith(".py"):
                    found.add(entry[:-3])
                elif entry.endswith(".so"):
                    found.add(entry.split(".")[0])
    return sorted(found)
