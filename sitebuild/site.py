"""The demo site, built the way a site author builds theirs: ``jupyter lite build`` of the repository's
``jupyter-lite.json``, the contents of ``lite/content/``, and the product's wheel as a federated extension.

The author's steps (README): ``pip install jupyterlab-webmcp-bridge`` and ``jupyter lite build``. Here the
wheel is handed to the build with ``LiteBuildConfig.federated_extensions=<the wheel>`` (JupyterLite extracts
the labextension from it, as it does from an installed one), and ``ignore_sys_prefix`` keeps the build from
copying the developer's other installed labextensions: the site holds exactly the bridge and the Pyodide
kernel (``verify_output`` checks it). What the demo adds to a plain site is the offline runtime: the npm
Pyodide in the Lite dir's ``static/pyodide/`` (the kernel's own pyodide addon copies it and points
``pyodideUrl`` at it) with a pyodide-lock.json rewritten for exactly the wheels served (``sitebuild.lock``;
the kernel's ``--pyodide-lock`` addon fails on this runtime's lock, see docs/hosting.md).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import sys
import time
import zipfile
from pathlib import Path

from sitebuild.bytecode import STDLIB_ZIP, compiled
from sitebuild.extension import EXTENSION_NAME
from sitebuild.lock import rewrite_lock
from sitebuild.package import build_wheel
from sitebuild.patches import KERNEL_EXTENSION, patch_kernel_drive, patch_kernel_messaging, patch_kernel_transfer
from sitebuild.pins import check_jupyterlite, read_pins
from sitebuild.runtime import PYODIDE_FILES, fetch_pyodide
from sitebuild.serve import HEADERS
from sitebuild.snapshot import make_snapshot
from sitebuild.util import (
    CACHE,
    CONTENT,
    OUTPUT,
    ROOT,
    BuildError,
    hash_inputs,
    run,
    sha256_file,
    step,
    sync_file,
    tree_files,
    write_if_changed,
)
from sitebuild.wheels import fetch_wheels

KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
PYODIDE_URL = "./static/pyodide/pyodide.mjs"
#: the demo site's configuration, kept in the repository as a JupyterLite site keeps it
SITE_CONFIG = ROOT / "jupyter-lite.json"
#: the Pyodide kernel's labextension as jupyterlite-pyodide-kernel installs it (handed to the build by path,
#: since the build ignores the environment's labextensions)
KERNEL_EXTENSION_DIR = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / KERNEL_EXTENSION

#: JupyterLite apps the site ships
APPS = ("lab", "notebooks", "tree")


def extension_names(path: Path) -> list[str]:
    """The labextension names a federated-extension folder (its package.json) or a wheel (its
    ``*.data/data/share/jupyter/labextensions/<name>/package.json`` entries) provides."""
    if path.is_dir():
        return [json.loads((path / "package.json").read_text(encoding="utf-8"))["name"]]
    names = []
    with zipfile.ZipFile(path) as whl:
        for entry in whl.namelist():
            parts = entry.split("/")
            if entry.endswith("/package.json") and "labextensions" in parts:
                rest = parts[parts.index("labextensions") + 1 : -1]
                if rest and (len(rest) == 1 or rest[0].startswith("@")) and len(rest) <= 2:
                    names.append(json.loads(whl.read(entry))["name"])
    if not names:
        raise BuildError(f"{path.name} holds no labextension")
    return names


def stage_lite_dir(
    pyodide_pkg: Path,
    lock: dict,
    wheels: dict[str, Path],
    lite_dir: Path = CACHE / "lite-dir",
    mcp_b: bool = False,
    stdlib: Path | None = None,
) -> Path:
    """Assemble the Lite dir (in the cache): the repository's jupyter-lite.json and static/pyodide/ (runtime, wheels,
    lock). ``stdlib``: the standard library zip to serve instead of the runtime's own (its byte-compiled copy)."""
    static = lite_dir / "static" / "pyodide"
    static.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        sync_file(stdlib if (stdlib is not None and name == STDLIB_ZIP) else pyodide_pkg / name, static / name)
    for path in wheels.values():
        sync_file(path, static / path.name)
    keep = set(PYODIDE_FILES) | {p.name for p in wheels.values()} | {"pyodide-lock.json"}
    for stale in static.iterdir():
        if stale.name not in keep:
            stale.unlink()
    write_if_changed(static / "pyodide-lock.json", json.dumps(lock, indent=1, sort_keys=True) + "\n")
    if (
        mcp_b
    ):  # the site option a site author sets by hand (docs/hosting.md): the MCP-B runtime where WebMCP is not native
        config = json.loads(SITE_CONFIG.read_text(encoding="utf-8"))
        config["jupyter-config-data"]["webmcpBridgePolyfill"] = True
        write_if_changed(lite_dir / "jupyter-lite.json", json.dumps(config, indent=2) + "\n")
    else:
        sync_file(SITE_CONFIG, lite_dir / "jupyter-lite.json")
    return lite_dir


def lite_build(
    lite_dir: Path,
    output: Path,
    contents: list[Path],
    extensions: list[Path],
    pins: dict,
    force: bool,
    kernel_runtime: bool = False,
) -> None:
    """Run `jupyter lite build` of `contents` and `extensions` into `output` unless its inputs' stamp is unchanged.

    A changed input rebuilds from an empty output folder, so nothing stale survives and no incremental
    patch step can drop settings. ``kernel_runtime``: turn on the bridge's kernel-runtime addon the way a site
    author does (``WebmcpBridgeKernelRuntimeAddon.enabled`` in the Lite dir's jupyter_lite_config.json; only
    when the bridge is among ``extensions``, or the addon fails the build). The demo's own ``static/pyodide/``
    then keeps the kernel's ``pyodideUrl`` (a site's own runtime wins), which ``verify_output`` checks.
    """
    inputs = tree_files(lite_dir / "static") + [lite_dir / "jupyter-lite.json"] + [*tree_files(ROOT / "sitebuild")]
    for folder in [*contents, *extensions]:
        inputs += tree_files(folder) if folder.is_dir() else [folder]
    key = hash_inputs(
        inputs,
        {"jupyterlite": pins["jupyterlite"], "apps": APPS, "folders": [str(f) for f in [*contents, *extensions]]},
    )
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
        cmd = [
            sys.executable,
            "-m",
            "jupyterlite_core",
            "build",
            "--lite-dir",
            lite_dir,
            "--output-dir",
            output,
            "--no-sourcemaps",
        ]
        for folder in contents:
            cmd += ["--contents", folder]
        # exactly these extensions: none of the environment's (sys.prefix) labextensions is copied
        # ContentsManager.allow_hidden: the site's own tools live in contents/.webmcp/ (README, "Add your own tool"),
        # a folder the agent's file tools neither list nor read; the build indexes it only with this
        build_config = {
            "LiteBuildConfig": {
                "ignore_sys_prefix": ["federated_extensions"],
                "federated_extensions": [str(e) for e in extensions],
            },
            "ContentsManager": {"allow_hidden": True},
        }
        if kernel_runtime:
            build_config["WebmcpBridgeKernelRuntimeAddon"] = {"enabled": True}
        write_if_changed(lite_dir / "jupyter_lite_config.json", json.dumps(build_config, indent=2) + "\n")
        for app in APPS:
            cmd += ["--apps", app]
        run(cmd, cwd=lite_dir)
    stamp.write_text(key + "\n")


def verify_output(lock: dict, output: Path = OUTPUT, extension_names: tuple[str, ...] = (EXTENSION_NAME,)) -> None:
    """Check the built site; fix pyodideUrl back in if a build step dropped it, and fail loudly otherwise.

    The site must list exactly ``extension_names`` plus the Pyodide kernel as federated extensions (no
    labextension of the build's environment leaks in), serve every wheel of its lock with the lock's sha256,
    and, when it ships the bridge, the bridge's wheels, runtime and settings schema.
    """
    config_path = output / "jupyter-lite.json"
    if not config_path.exists():
        raise BuildError("the build produced no jupyter-lite.json")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    data = config.setdefault("jupyter-config-data", {})
    settings = data.setdefault("litePluginSettings", {}).setdefault(KERNEL_PLUGIN, {})
    if settings.get("pyodideUrl") != PYODIDE_URL or settings.get("disablePyPIFallback") is not True:
        print(
            f"[build] WARNING: the built jupyter-lite.json had pyodideUrl={settings.get('pyodideUrl')!r}; "
            "restoring the site's own runtime"
        )
        settings.update(pyodideUrl=PYODIDE_URL, disablePyPIFallback=True)
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        config = json.loads(config_path.read_text(encoding="utf-8"))
        got = config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN].get("pyodideUrl")
        if got != PYODIDE_URL:
            raise BuildError("could not set pyodideUrl in the built jupyter-lite.json")
    names = sorted(e.get("name") for e in data.get("federated_extensions", []))
    wanted = sorted({*extension_names, KERNEL_EXTENSION})
    if names != wanted:
        raise BuildError(f"the built jupyter-lite.json lists the extensions {names}, wanted exactly {wanted}")
    on_disk = sorted(
        p.parent.relative_to(output / "extensions").as_posix() for p in (output / "extensions").glob("**/package.json")
    )
    if on_disk != wanted:
        raise BuildError(f"the built extensions/ folder holds {on_disk}, wanted exactly {wanted}")
    static = output / "static" / "pyodide"
    built_lock = json.loads((static / "pyodide-lock.json").read_text(encoding="utf-8"))
    if built_lock != lock:
        raise BuildError("the built pyodide-lock.json differs from the staged one")
    for name, entry in built_lock["packages"].items():
        wheel = static / entry["file_name"]
        if not wheel.exists() or sha256_file(wheel) != entry["sha256"]:
            raise BuildError(f"static/pyodide/{entry['file_name']} is missing or does not match the lock ({name})")
    if EXTENSION_NAME in extension_names:
        ext_static = output / "extensions" / EXTENSION_NAME / "static"
        manifest = json.loads((ext_static / "bridge.json").read_text(encoding="utf-8"))
        for rel in [
            manifest["wheel"],
            manifest["pyodide"],
            manifest["tools"],
            manifest["polyfill"],
            *manifest["wheels"],
        ]:
            if not (ext_static / rel).is_file():
                raise BuildError(
                    f"extensions/{EXTENSION_NAME}/static/{rel} (named by bridge.json) is not in the built site"
                )
        # the settings schema of the loader's plugin (generated from session/settings_model.py), served to the
        # Settings Editor
        federated = output / "build" / "schemas" / "all_federated.json"
        ids = [s.get("id") for s in json.loads(federated.read_text(encoding="utf-8"))] if federated.exists() else []
        if f"{EXTENSION_NAME}:plugin" not in ids:
            raise BuildError(
                f"build/schemas/all_federated.json lacks the settings schema {EXTENSION_NAME}:plugin (found {ids})"
            )
    write_root_files(output)
    print(
        f"[build] verified: pyodideUrl={PYODIDE_URL}, {len(built_lock['packages'])} wheels match the lock, "
        f"extensions {list(extension_names)} listed, _headers written"
    )


def write_root_files(output: Path = OUTPUT) -> None:
    """Add the files a static host looks for at the site root: `_headers` and a favicon."""
    headers = "/*\n" + "".join(f"  {k}: {v}\n" for k, v in HEADERS.items())
    write_if_changed(output / "_headers", headers)
    icon = output / "lab" / "favicon.ico"
    if icon.exists():
        sync_file(icon, output / "favicon.ico")  # browsers ask for /favicon.ico; answer it, not with a 404


def build(
    force: bool = False,
    *,
    output: Path = OUTPUT,
    extra_content: tuple[Path, ...] = (),
    extensions: tuple[Path, ...] | None = None,
    mcp_b: bool = False,
) -> Path:
    """Build the whole site incrementally; return the output folder.

    The keywords exist for the benchmark's twin sites (``bench/run.py``); their defaults build the demo site.
    ``output``: the folder to build into (another folder gets its own staging folder and stamp in the cache).
    ``extra_content``: folders whose files are added to the site's contents after ``lite/content/``.
    ``extensions``: federated extensions (folders with a ``package.json``, or wheels holding labextensions) to
    ship *instead of* the bridge; ``None`` ships the product's wheel (built from this checkout), ``()`` ships
    no extension but the Pyodide kernel. ``mcp_b``: turn on the site option that runs the MCP-B runtime
    (``@mcp-b/global``, shipped in the extension) in browsers without native WebMCP. Everything else (JupyterLite, the
    offline Pyodide runtime, the wheels and the kernel settings) is the same whatever the keywords.
    """
    output = Path(output).resolve()
    CACHE.mkdir(parents=True, exist_ok=True)
    # one build of a given output at a time (two test workers start theirs together; the second waits, then
    # finds the inputs unchanged and skips)
    with (CACHE / f"site-{output.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(force, output, extra_content, extensions, mcp_b)


def _build(
    force: bool, output: Path, extra_content: tuple[Path, ...], extensions: tuple[Path, ...] | None, mcp_b: bool
) -> Path:
    started = time.perf_counter()
    pins = read_pins()
    check_jupyterlite(pins)
    pyodide_pkg = fetch_pyodide(pins["pyodide"])
    upstream_lock = json.loads((pyodide_pkg / "pyodide-lock.json").read_text(encoding="utf-8"))
    # the kernel's runtime byte-compiled as the bridge's is (sitebuild/bytecode.py): the standard library and every
    # wheel, so the person's kernel starts without compiling its imports either
    stdlib = pyodide_pkg / STDLIB_ZIP
    fetched = fetch_wheels(pins, upstream_lock)
    byte = compiled(pyodide_pkg, [stdlib, *fetched.values()])
    wheels = {name: byte[path] for name, path in fetched.items()}
    lock = rewrite_lock(upstream_lock, wheels)
    staging = CACHE / ("lite-dir" if output == OUTPUT else f"lite-dir-{output.name}")
    lite_dir = stage_lite_dir(pyodide_pkg, lock, wheels, staging, mcp_b, stdlib=byte[stdlib])
    if not KERNEL_EXTENSION_DIR.joinpath("package.json").is_file():
        raise BuildError(f'{KERNEL_EXTENSION} is not installed in {sys.prefix}: run  python -m pip install -e ".[dev]"')
    chosen = [build_wheel()] if extensions is None else [Path(e).resolve() for e in extensions]
    names = tuple(name for e in chosen for name in extension_names(e))
    extensions = [KERNEL_EXTENSION_DIR, *chosen]
    contents = [CONTENT, *(Path(c).resolve() for c in extra_content)]
    lite_build(lite_dir, output, contents, extensions, pins, force, kernel_runtime=EXTENSION_NAME in names)
    patch_kernel_messaging(output)
    patch_kernel_drive(output)
    patch_kernel_transfer(output)
    verify_output(lock, output, names)
    if EXTENSION_NAME in names:  # the bridge worker's memory snapshot (sitebuild/snapshot.py), when this machine can
        make_snapshot(output, EXTENSION_NAME)
    try:
        shown = output.relative_to(ROOT)
    except ValueError:
        shown = output
    print(f"[build] site ready in {shown}/ ({time.perf_counter() - started:.1f} s)")
    return output
