"""Wheels: the pinned in-browser wheels (pip download for the runtime's platform), the bridge's own wheel, and
what a wheel declares (its metadata and import names)."""

from __future__ import annotations

import base64
import email.parser
import hashlib
import sys
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from sitebuild.util import CACHE, PY_SRC, BuildError, run, step, tree_files


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
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--disable-pip-version-check",
                    "--only-binary=:all:",
                    "--no-deps",
                    *wheel_target(lock),
                    "--dest",
                    wheel_dir,
                    *missing,
                ]
            )
        have = cached_wheels()
        still = [n for n in pins["wheels"] if wanted[n] not in have]
        if still:
            raise BuildError(f"pip left no wheel for: {', '.join(still)}")
    return {name: have[key] for name, key in wanted.items()}


#: a fixed time for every entry of the bridge wheel, so the same sources give the same bytes (and sha256)
WHEEL_ENTRY_TIME = (2020, 1, 1, 0, 0, 0)


def bridge_wheel_files() -> list[Path]:
    """The files of the import package that go into the bridge wheel: py_src/webmcp_bridge/ (.py, .js, .json, .css,
    .svg)."""
    package = PY_SRC / "webmcp_bridge"
    return [p for p in tree_files(package) if p.suffix in (".py", ".js", ".json", ".css", ".svg")]


def write_bridge_wheel(dest_dir: Path, project: dict) -> Path:
    """Write the bridge's own pure-Python wheel (the import package ``webmcp_bridge``) into dest_dir; return it.

    This is the wheel the main-thread Pyodide installs in the page (``loadPackage`` of its URL). It is written
    directly (a zip with ``.dist-info/METADATA``, ``WHEEL`` and ``RECORD``, PEP 427) rather than by a build
    backend, because the backend that makes the product's wheel runs this very step: building through it
    would recurse. Entries are sorted and dated WHEEL_ENTRY_TIME, so equal sources give an equal file.
    ``project``: ``{"name", "version", "dependencies"}`` from pyproject.toml. The wheel is named after the
    import package (``webmcp_bridge-<version>-py3-none-any.whl``): it only ever lives in the page.
    """
    name = "webmcp_bridge"  # the import package: in the page it is installed as itself, never published
    version = project["version"]
    dist_info = f"{name}-{version}.dist-info"
    entries: list[tuple[str, bytes]] = []
    for path in bridge_wheel_files():
        entries.append((path.relative_to(PY_SRC).as_posix(), path.read_bytes()))
    metadata_lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        "Summary: The webmcp_bridge package, as the page's Pyodide installs it",
    ]
    metadata_lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    entries.append((f"{dist_info}/METADATA", ("\n".join(metadata_lines) + "\n").encode()))
    entries.append(
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: sitebuild\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    )
    entries.append((f"{dist_info}/top_level.txt", b"webmcp_bridge\n"))
    record = []
    for arcname, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    dest_dir.mkdir(parents=True, exist_ok=True)
    wheel = dest_dir / f"{name}-{version}-py3-none-any.whl"
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in sorted(entries[:-1]) + entries[-1:]:
            info = zipfile.ZipInfo(arcname, date_time=WHEEL_ENTRY_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    if wheel.exists() and wheel.read_bytes() == tmp.read_bytes():
        tmp.unlink()
    else:
        tmp.replace(wheel)
    return wheel


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
