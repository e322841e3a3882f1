#!/usr/bin/env python3
"""Build the webmcp_bridge JupyterLite site into ``_output/``, and optionally serve it.

The site works with no other origin: the Pyodide runtime (from the npm package) and every wheel the kernel and
the bridge load are served from ``static/pyodide/``, next to a ``pyodide-lock.json`` rewritten to describe exactly
those wheels. The bridge's own wheel and its loader (``lite/extension/``, a hand-written federated extension)
ship as the ``webmcp-bridge`` extension.

Every version comes from ``pyproject.toml``: the JupyterLite pins in the ``dev`` extra and the in-browser pins in
``[tool.webmcp_bridge.site]``. Downloads are cached in ``.cache/`` by pin, and ``jupyter lite build`` is skipped
when a stamp of its inputs is unchanged, so a second build with nothing changed takes seconds.

    python build.py                 # build (incrementally)
    python build.py serve [--port N]  # build, then serve _output/ on 127.0.0.1 with the COOP/COEP headers
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent
PYPROJECT = ROOT / "pyproject.toml"
OUTPUT = ROOT / "_output"
CACHE = ROOT / ".cache"
CONTENT = ROOT / "lite" / "content"
EXTENSION_SRC = ROOT / "lite" / "extension"
PY_SRC = ROOT / "py_src"

EXTENSION_NAME = "webmcp-bridge"
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
PYODIDE_URL = "./static/pyodide/pyodide.mjs"
#: where bridge.json sits in the site: extensions/webmcp-bridge/static/; this is the runtime relative to it
PYODIDE_FROM_EXTENSION = "../../../static/pyodide/pyodide.mjs"
#: the files of the npm package the site needs (the rest are docs, typings and a demo console)
PYODIDE_FILES = (
    "package.json",
    "pyodide.mjs",
    "pyodide.mjs.map",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
)
#: JupyterLite apps the site ships
APPS = ("lab", "notebooks", "tree")
#: response headers the site needs on every response: COOP/COEP (SharedArrayBuffer for the kernel's stdin),
#: and a Content-Security-Policy that keeps every load on the site's own origin, so a notebook's remote
#: images or a kernel output's script cannot make the page contact another host.
HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "credentialless",
    "Content-Security-Policy": "default-src 'self' data: blob: 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'",
}
MIME_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".json": "application/json",
    ".ipynb": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".webmanifest": "application/manifest+json",
}


# --------------------------------------------------------------------------------------------- helpers


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
    return sorted(
        p for p in root.rglob("*") if p.is_file() and not skip.intersection(p.relative_to(root).parts)
    )


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


# ------------------------------------------------------------------------------------------------ pins


def read_pins() -> dict:
    """Read every pin from pyproject.toml: the site table and the JupyterLite pins of the dev extra."""
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    try:
        site = data["tool"]["webmcp_bridge"]["site"]
    except KeyError as exc:
        raise BuildError("pyproject.toml has no [tool.webmcp_bridge.site] table") from exc
    lite_pins = {}
    for spec in data["project"]["optional-dependencies"]["dev"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        if name in ("jupyterlite-core", "jupyterlite-pyodide-kernel"):
            pinned = [s.version for s in req.specifier if s.operator == "=="]
            if not pinned:
                raise BuildError(f"the dev extra must pin {name} with ==, found {spec!r}")
            lite_pins[name] = pinned[0]
    return {
        "pyodide": site["pyodide"],
        "bridge_packages": list(site.get("bridge-packages", ["pydantic"])),
        "wheels": {canonicalize_name(k): v for k, v in site["wheels"].items()},
        "jupyterlite": lite_pins,
    }


def check_jupyterlite(pins: dict) -> None:
    """Fail clearly unless the installed jupyterlite-core / -pyodide-kernel equal the pinned versions."""
    for name, wanted in pins["jupyterlite"].items():
        try:
            found = metadata.version(name)
        except metadata.PackageNotFoundError:
            found = None
        if found != wanted:
            raise BuildError(
                f"{name} {wanted} is pinned in pyproject.toml but {found or 'nothing'} is installed: "
                f'run  python -m pip install -e ".[dev]"'
            )
    print(f"[build] JupyterLite pins ok: {pins['jupyterlite']}")


# --------------------------------------------------------------------------------------------- pyodide


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


# ------------------------------------------------------------------------------------ pyodide-lock.json


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


def emscripten_environment(lock: dict) -> dict:
    """A PEP 508 marker environment for this Pyodide runtime."""
    env = default_environment()
    full = lock["info"]["python"]
    env.update(
        python_version=".".join(full.split(".")[:2]), python_full_version=full,
        implementation_name="cpython", implementation_version=full,
        platform_python_implementation="CPython", platform_system="Emscripten",
        platform_machine="wasm32", sys_platform="emscripten", os_name="posix", extra="",
    )
    return env


def rewrite_lock(lock: dict, wheels: dict[str, Path]) -> dict:
    """Return a pyodide-lock.json describing exactly the shipped wheels.

    For each wheel: file_name, version and sha256 of the file served; ``imports`` from the wheel; ``depends``
    = the upstream lock's depends (if the package was there) plus the wheel's own Requires-Dist for this
    platform. Entries for wheels the site does not serve are dropped, so nothing points at a missing file.
    Fails if a dependency is not shipped or a pinned version does not satisfy a requirement.
    """
    env = emscripten_environment(lock)
    upstream = {canonicalize_name(k): v for k, v in lock["packages"].items()}
    versions = {name: wheel_name_version(path)[1] for name, path in wheels.items()}
    packages, problems = {}, []
    for name, path in sorted(wheels.items()):
        meta = wheel_metadata(path)
        old = upstream.get(name, {})
        depends = {canonicalize_name(d) for d in old.get("depends", [])}
        for spec in meta.get_all("Requires-Dist") or []:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            dep = canonicalize_name(req.name)
            depends.add(dep)
            if dep in versions and not req.specifier.contains(versions[dep], prereleases=True):
                problems.append(f"{name} requires {spec}, but {dep} is pinned at {versions[dep]}")
        for dep in sorted(depends):
            if dep not in wheels:
                problems.append(f"{name} depends on {dep}, which has no pin in [tool.webmcp_bridge.site.wheels]")
        packages[name] = {
            "name": meta["Name"],
            "version": meta["Version"],
            "file_name": path.name,
            "install_dir": "site",
            "sha256": sha256_file(path),
            "package_type": "package",
            "imports": wheel_imports(path),
            "depends": sorted(depends),
            "unvendored_tests": False,
        }
    if problems:
        raise BuildError("the wheel pins do not form a closed set:\n  " + "\n  ".join(problems))
    return {**lock, "packages": packages}


# ----------------------------------------------------------------------------------------- lite inputs


def stage_lite_dir(pyodide_pkg: Path, lock: dict, wheels: dict[str, Path], lite_dir: Path = CACHE / "lite-dir") -> Path:
    """Assemble the Lite dir (in the cache): jupyter-lite.json and static/pyodide/ (runtime, wheels, lock)."""
    static = lite_dir / "static" / "pyodide"
    static.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        sync_file(pyodide_pkg / name, static / name)
    for path in wheels.values():
        sync_file(path, static / path.name)
    keep = set(PYODIDE_FILES) | {p.name for p in wheels.values()} | {"pyodide-lock.json"}
    for stale in static.iterdir():
        if stale.name not in keep:
            stale.unlink()
    write_if_changed(static / "pyodide-lock.json", json.dumps(lock, indent=1, sort_keys=True) + "\n")
    config = {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "webmcp_bridge",
            # window.jupyterapp, as JupyterLab's own UI tests (Galata) use it: the end-to-end tests act as the
            # person on the live model through it. It gives a page script nothing it could not already reach.
            "exposeAppInBrowser": "true",
            "litePluginSettings": {
                KERNEL_PLUGIN: {
                    "pyodideUrl": PYODIDE_URL,
                    # every package comes from the site: never fall back to a public package index
                    "disablePyPIFallback": True,
                }
            },
        },
    }
    write_if_changed(lite_dir / "jupyter-lite.json", json.dumps(config, indent=2) + "\n")
    return lite_dir


GENERATE_DEFINITIONS = """
import json, sys
sys.path.insert(0, sys.argv[1])
import webmcp_bridge.session.bridge as app
assert app.__file__.startswith(sys.argv[1]), app.__file__
print(json.dumps(app.tool_definitions(), indent=1, ensure_ascii=False))
"""


def tool_definitions() -> str:
    """The bridge's WebMCP tool definitions as JSON text, generated from its pydantic models in py_src/
    (in a child Python, so an installed copy of the package cannot stand in for the sources)."""
    done = subprocess.run([sys.executable, "-c", GENERATE_DEFINITIONS, str(PY_SRC)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"generating the tool definitions failed:\n{done.stderr[-2000:]}")
    return done.stdout


def stage_extension(bridge_wheel: Path, pins: dict) -> Path:
    """Assemble the webmcp-bridge federated extension: the loader, the bridge wheel, bridge.json and
    tools.json (the tool definitions, so the loader can register the tools before Python starts)."""
    ext = CACHE / "extension" / EXTENSION_NAME
    wanted = {}
    for path in tree_files(EXTENSION_SRC):
        wanted[path.relative_to(EXTENSION_SRC).as_posix()] = path
    for rel, src in wanted.items():
        sync_file(src, ext / rel)
    sync_file(bridge_wheel, ext / "static" / bridge_wheel.name)
    manifest = {
        "wheel": bridge_wheel.name,
        "packages": pins["bridge_packages"],
        "pyodide": PYODIDE_FROM_EXTENSION,
        "tools": "tools.json",
    }
    write_if_changed(ext / "static" / "bridge.json", json.dumps(manifest, indent=2) + "\n")
    write_if_changed(ext / "static" / "tools.json", tool_definitions())
    keep = set(wanted) | {f"static/{bridge_wheel.name}", "static/bridge.json", "static/tools.json"}
    for path in tree_files(ext):
        if path.relative_to(ext).as_posix() not in keep:
            path.unlink()
    return ext


# ------------------------------------------------------------------------------------ jupyter lite build


def lite_build(lite_dir: Path, output: Path, contents: list[Path], extensions: list[Path], pins: dict,
               force: bool) -> None:
    """Run `jupyter lite build` of `contents` and `extensions` into `output` unless its inputs' stamp is unchanged.

    A changed input rebuilds from an empty output folder, so nothing stale survives and no incremental
    patch step can drop settings.
    """
    inputs = tree_files(lite_dir / "static") + [lite_dir / "jupyter-lite.json"] + [Path(__file__).resolve()]
    for folder in [*contents, *extensions]:
        inputs += tree_files(folder)
    key = hash_inputs(inputs, {"jupyterlite": pins["jupyterlite"], "apps": APPS,
                               "folders": [str(f) for f in [*contents, *extensions]]})
    stamp = lite_dir.with_name(lite_dir.name + ".stamp")  # one stamp per staging folder, so per output
    if not force and stamp.exists() and stamp.read_text().strip() == key and (output / "jupyter-lite.json").exists():
        print("[build] jupyter lite build: inputs unchanged, skipped")
        return
    with step("jupyter lite build"):
        stamp.unlink(missing_ok=True)
        shutil.rmtree(output, ignore_errors=True)
        shutil.rmtree(lite_dir / ".cache", ignore_errors=True)
        for db in lite_dir.glob(".jupyterlite.doit.db*"):
            db.unlink()
        cmd = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", lite_dir, "--output-dir", output,
               "--no-sourcemaps"]
        for folder in contents:
            cmd += ["--contents", folder]
        for folder in extensions:
            cmd += [f"--LiteBuildConfig.federated_extensions={folder}"]
        for app in APPS:
            cmd += ["--apps", app]
        run(cmd, cwd=lite_dir)
    stamp.write_text(key + "\n")


#: The pinned kernel's main-thread messaging (the `coincident` library bundled in the pyodide-kernel extension)
#: waits for each reply from the kernel's worker with ``Atomics.waitAsync(buffer, 0)`` (expected value 0) and calls
#: ``.value.then`` on the result. When the worker has already written the reply, as happens when it answers
#: before the main thread starts waiting, ``waitAsync`` returns ``{async: false, value: "not-equal"}`` (ECMA-262,
#: Atomics.waitAsync), the ``.then`` throws ``A(...).value.then is not a function``, and the kernel's execute
#: reply is lost: JupyterLab keeps the cell running forever. The patch wraps that one call so a synchronous
#: result becomes a resolved promise, exactly what the asynchronous path gives a moment later. The text is
#: the pinned build's (jupyterlite-pyodide-kernel in the dev extra); a new pin must be re-checked, and the
#: build fails if the text is gone.
KERNEL_EXTENSION = "@jupyterlite/pyodide-kernel-extension"
KERNEL_WAIT_BUGGY = "A=(e,t)=>e?c(t,0):"
KERNEL_WAIT_FIXED = "A=(e,t)=>e?(x=>x.async?x:{value:Promise.resolve(x.value)})(c(t,0)):"


def patch_kernel_messaging(output: Path = OUTPUT) -> Path:
    """Apply the ``KERNEL_WAIT_FIXED`` patch to the built kernel extension's chunk; return the patched file.

    Idempotent: a chunk already patched is left as it is. Raises BuildError unless exactly one chunk of
    ``extensions/@jupyterlite/pyodide-kernel-extension/static/`` holds the unpatched or the patched text once.
    """
    static = output / "extensions" / KERNEL_EXTENSION / "static"
    found = []
    for chunk in sorted(static.glob("*.js")):
        text = chunk.read_text(encoding="utf-8")
        buggy, fixed = text.count(KERNEL_WAIT_BUGGY), text.count(KERNEL_WAIT_FIXED)
        if buggy or fixed:
            found.append((chunk, text, buggy, fixed))
    if len(found) != 1 or found[0][2] + found[0][3] != 1:
        raise BuildError(f"the kernel's Atomics.waitAsync call was not found exactly once in {static} "
                         f"({[(c.name, b, f) for c, _, b, f in found]}); re-check KERNEL_WAIT_BUGGY for this pin")
    chunk, text, buggy, _ = found[0]
    if buggy:
        write_if_changed(chunk, text.replace(KERNEL_WAIT_BUGGY, KERNEL_WAIT_FIXED))
        print(f"[build] patched the kernel's reply wait in extensions/{KERNEL_EXTENSION}/static/{chunk.name}")
    return chunk


def verify_output(lock: dict, output: Path = OUTPUT, extension_names: tuple[str, ...] = (EXTENSION_NAME,)) -> None:
    """Check the built site; fix pyodideUrl back in if a build step dropped it, and fail loudly otherwise."""
    config_path = output / "jupyter-lite.json"
    if not config_path.exists():
        raise BuildError("the build produced no jupyter-lite.json")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    data = config.setdefault("jupyter-config-data", {})
    settings = data.setdefault("litePluginSettings", {}).setdefault(KERNEL_PLUGIN, {})
    if settings.get("pyodideUrl") != PYODIDE_URL or settings.get("disablePyPIFallback") is not True:
        print(f"[build] WARNING: the built jupyter-lite.json had pyodideUrl={settings.get('pyodideUrl')!r}; "
              "restoring the site's own runtime")
        settings.update(pyodideUrl=PYODIDE_URL, disablePyPIFallback=True)
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        config = json.loads(config_path.read_text(encoding="utf-8"))
        got = config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN].get("pyodideUrl")
        if got != PYODIDE_URL:
            raise BuildError("could not set pyodideUrl in the built jupyter-lite.json")
    names = [e.get("name") for e in data.get("federated_extensions", [])]
    missing = [name for name in extension_names if name not in names]
    if missing or (EXTENSION_NAME in names and EXTENSION_NAME not in extension_names):
        raise BuildError(f"the built jupyter-lite.json lists the extensions {names}, wanted {list(extension_names)}")
    static = output / "static" / "pyodide"
    built_lock = json.loads((static / "pyodide-lock.json").read_text(encoding="utf-8"))
    if built_lock != lock:
        raise BuildError("the built pyodide-lock.json differs from the staged one")
    for name, entry in built_lock["packages"].items():
        wheel = static / entry["file_name"]
        if not wheel.exists() or sha256_file(wheel) != entry["sha256"]:
            raise BuildError(f"static/pyodide/{entry['file_name']} is missing or does not match the lock ({name})")
    if EXTENSION_NAME in extension_names:
        manifest = json.loads((output / "extensions" / EXTENSION_NAME / "static" / "bridge.json").read_text())
        if not (output / "extensions" / EXTENSION_NAME / "static" / manifest["wheel"]).exists():
            raise BuildError(f"the bridge wheel {manifest['wheel']} is not in the built extension")
        # the settings schema of the loader's plugin (lite/extension/schemas/), served to the Settings Editor
        federated = output / "build" / "schemas" / "all_federated.json"
        ids = [s.get("id") for s in json.loads(federated.read_text(encoding="utf-8"))] if federated.exists() else []
        if f"{EXTENSION_NAME}:plugin" not in ids:
            raise BuildError(f"build/schemas/all_federated.json lacks the settings schema {EXTENSION_NAME}:plugin (found {ids})")
    write_root_files(output)
    print(f"[build] verified: pyodideUrl={PYODIDE_URL}, {len(built_lock['packages'])} wheels match the lock, "
          f"extensions {list(extension_names)} listed, _headers written")


def write_root_files(output: Path = OUTPUT) -> None:
    """Add the files a static host looks for at the site root: `_headers` and a favicon."""
    headers = "/*\n" + "".join(f"  {k}: {v}\n" for k, v in HEADERS.items())
    write_if_changed(output / "_headers", headers)
    icon = output / "lab" / "favicon.ico"
    if icon.exists():
        sync_file(icon, output / "favicon.ico")  # browsers ask for /favicon.ico; answer it, not with a 404


def build(force: bool = False, *, output: Path = OUTPUT, extra_content: tuple[Path, ...] = (),
          extensions: tuple[Path, ...] | None = None) -> Path:
    """Build the whole site incrementally; return the output folder.

    The keywords exist for the benchmark's twin sites (``bench/run.py``); their defaults build the demo site.
    ``output``: the folder to build into (another folder gets its own staging folder and stamp in the cache).
    ``extra_content``: folders whose files are added to the site's contents after ``lite/content/``.
    ``extensions``: federated-extension folders (each with its ``package.json``) to ship *instead of* the
    bridge's loader; ``None`` ships the bridge, ``()`` ships no extension. Everything else (JupyterLite, the
    offline Pyodide runtime, the wheels and the kernel settings) is the same whatever the keywords.
    """
    started = time.perf_counter()
    output = Path(output).resolve()
    pins = read_pins()
    check_jupyterlite(pins)
    pyodide_pkg = fetch_pyodide(pins["pyodide"])
    upstream_lock = json.loads((pyodide_pkg / "pyodide-lock.json").read_text(encoding="utf-8"))
    wheels = fetch_wheels(pins, upstream_lock)
    lock = rewrite_lock(upstream_lock, wheels)
    staging = CACHE / ("lite-dir" if output == OUTPUT else f"lite-dir-{output.name}")
    lite_dir = stage_lite_dir(pyodide_pkg, lock, wheels, staging)
    if extensions is None:
        extensions = (stage_extension(build_bridge_wheel(), pins),)
    extensions = [Path(e).resolve() for e in extensions]
    names = tuple(json.loads((e / "package.json").read_text(encoding="utf-8"))["name"] for e in extensions)
    contents = [CONTENT, *(Path(c).resolve() for c in extra_content)]
    lite_build(lite_dir, output, contents, extensions, pins, force)
    patch_kernel_messaging(output)
    verify_output(lock, output, names)
    try:
        shown = output.relative_to(ROOT)
    except ValueError:
        shown = output
    print(f"[build] site ready in {shown}/ ({time.perf_counter() - started:.1f} s)")
    return output


# ------------------------------------------------------------------------------------------------ serve


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with the site's cross-origin isolation headers and correct MIME types."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    quiet = False

    def end_headers(self):
        """Add the COOP/COEP headers (and no-cache, so a rebuild is seen at once) to every response."""
        for key, value in HEADERS.items():
            self.send_header(key, value)
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        """Log requests unless the server is quiet."""
        if not self.quiet:
            super().log_message(format, *args)


class SiteServer(ThreadingHTTPServer):
    """A threaded server that stays quiet when a browser drops a connection mid-response (page reloads)."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def make_server(directory: Path = OUTPUT, port: int = 0, host: str = "127.0.0.1", quiet: bool = False):
    """A threaded HTTP server for `directory` on host:port (port 0 picks a free one); call serve_forever()."""
    handler = type("Handler", (SiteHandler,), {"quiet": quiet})

    def factory(*args, **kwargs):
        return handler(*args, directory=str(directory), **kwargs)

    return SiteServer((host, port), factory)


def serve(port: int) -> None:
    """Serve _output/ until interrupted."""
    server = make_server(OUTPUT, port)
    host, bound = server.server_address[:2]
    print(f"[serve] http://{host}:{bound}/lab/index.html  (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    """Command line: `build.py [--force]` builds; `build.py serve [--port N]` builds and serves."""
    parser = argparse.ArgumentParser(description="Build (and serve) the webmcp_bridge JupyterLite site.")
    parser.add_argument("--force", action="store_true", help="rerun jupyter lite build even if inputs are unchanged")
    sub = parser.add_subparsers(dest="command")
    serve_parser = sub.add_parser("serve", help="build, then serve _output/ on 127.0.0.1")
    serve_parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    serve_parser.add_argument("--force", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        build(force=args.force)
    except BuildError as exc:
        print(f"[build] FAILED: {exc}", file=sys.stderr)
        return 1
    if args.command == "serve":
        serve(args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
