"""The prebuilt labextension the product's wheel carries under
``share/jupyter/labextensions/jupyterlab-webmcp-bridge/``.

No Node bundler: the container (``lite/extension/static/remoteEntry.js``) is hand-written, and this step adds what a
bundler's build would: ``package.json`` (from ``lite/extension/package.json``, its version set to the project's),
``install.json`` (how JupyterLab tells a person to uninstall it), the Settings Editor schema
(``schemas/jupyterlab-webmcp-bridge/plugin.json``, generated from the settings' pydantic model,
``webmcp_bridge.session.settings_model``; the source tree keeps no copy), and in ``static/``: the bridge's own
pure-Python wheel, ``tools.json`` (the tool definitions generated from the bridge's pydantic models and each
toolset's tool names, so the loader registers the tools a page's URL chooses before Python starts), ``bridge.json``
(what the loader loads, and the numbers it applies: ``core/limits.py`` ``LOADER_BOUNDS``) and ``pyodide/`` (the
runtime the loader falls back to when the page offers none it can use: the npm package's runtime files, its standard
library byte-compiled (which the loader starts Python from whichever runtime it uses), the wheels of the bridge's
closure (pydantic, byte-compiled: ``sitebuild/bytecode.py``) and a pyodide-lock.json for them, and
``kernel-lock.json``: the lock of every
pinned wheel, the Pyodide kernel's closure (micropip, ipython, ...) included, with each file's sha256). A
JupyterLite site that turns on the kernel-runtime addon points its kernel's ``pyodideUrl`` here and serves the whole
of Python from its own origin: the addon fetches the kernel's wheels at build time, checked against that lock, so
the wheel does not carry them for every other site. And ``mcp-b/``: the MCP-B runtime (npm ``@mcp-b/global``,
pinned, its MIT licence beside it), which the loader runs only on a site that opts in (docs/hosting.md) in a browser
without native WebMCP.

The layout follows JupyterLab's federated-extension format: JupyterLab (server) serves the folder at
``<base>/lab/extensions/<name>/`` and ``jupyter lite build`` copies it into the site's ``extensions/<name>/``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from sitebuild.bytecode import STDLIB_ZIP, compiled
from sitebuild.lock import rewrite_lock
from sitebuild.pins import read_pins
from sitebuild.runtime import RUNTIME_FILES, fetch_mcp_b, fetch_pyodide
from sitebuild.util import CACHE, EXTENSION_SRC, PY_SRC, BuildError, sync_file, tree_files, write_if_changed
from sitebuild.wheels import fetch_wheels, write_bridge_wheel

#: the labextension's name (package.json), the plugin id's prefix (`jupyterlab-webmcp-bridge:plugin`) and the folder
#: name
EXTENSION_NAME = "jupyterlab-webmcp-bridge"
#: where the product's wheel puts the labextension (PEP 427 data scheme, relative to the environment's prefix)
SHARE_PATH = f"share/jupyter/labextensions/{EXTENSION_NAME}"
#: the lock of every pinned wheel, beside the runtime's own lock (which lists the bridge's closure only); the
#: kernel-runtime addon reads it under this name (webmcp_bridge_jupyter.lite_addon.KERNEL_LOCK ends with it)
KERNEL_LOCK = "kernel-lock.json"
#: the worker's scripts (py_src/webmcp_bridge/lab/), copied into static/: the page's side, the worker's entry
WORKER_SCRIPTS = ("worker.js", "worker_boot.js")
#: the bridge's one crossing counter (py_src/webmcp_bridge/lab/), copied into static/: the loader imports it from
#: beside itself and worker.js from beside itself
CROSSINGS_SCRIPT = "crossings.js"
#: the page's side of the remote halves (py_src/webmcp_bridge/lab/halves.js), copied into static/ beside worker.js
HALVES_SCRIPT = "halves.js"
#: the kernel model's page half (py_src/webmcp_bridge/lab/kernel_trust.js), copied into static/: the loader imports
#: it before JupyterLab activates the plugin
KERNEL_TRUST_SCRIPT = "kernel_trust.js"
#: where static/ holds the JS halves' sources for halves.js to fetch: HALVES_DIR/<package path>/<file>.js, every .js
#: of the package webmcp_bridge.lab and its subpackages but the scripts above
HALVES_DIR = "halves"


GENERATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import webmcp_bridge.calls.pending as pending
import webmcp_bridge.core.errors as errors
import webmcp_bridge.core.limits as limits
import webmcp_bridge.lab.ui.panel as panel
import webmcp_bridge.session.bridge as app
import webmcp_bridge.session.settings as settings
import webmcp_bridge.session.settings_model as model
for module in (app, limits, settings, model, pending, panel, errors):
    assert module.__file__.startswith(sys.argv[1]), module.__file__
print(json.dumps({"tools": app.tools_manifest(), "loader": limits.LOADER_BOUNDS, "plugin": settings.PLUGIN_ID,
                  "schema": model.schema_text(),
                  "startPending": {"message": pending.START_PENDING_MESSAGE, "collect": "jupyter_wait_for_result"},
                  "watchdog": {"error": errors.ErrorCode.TIMEOUT.value, "message": errors.WATCHDOG_MESSAGE},
                  "panel": {"id": panel.WIDGET_ID, "label": panel.LABEL, "caption": panel.CAPTION,
                            "rank": panel.RANK}}, ensure_ascii=False))
"""


@dataclass(frozen=True)
class FromSources:
    """What the build takes from the bridge's sources: ``tools`` (tools.json's text), ``loader`` (bridge.json's
    ``bounds``), ``plugin`` (the settings plugin's id, ``<package name>:<schema file stem>``), ``schema`` (that
    plugin's Settings Editor schema, plugin.json's text), ``start_pending`` (bridge.json's ``startPending``: the
    message of a call the loader answers pending while Python starts, and the tool that collects it), ``panel``
    (bridge.json's ``panel``: the Agent panel's id, label, caption and rank, for the loader's placeholder) and
    ``watchdog`` (bridge.json's ``watchdog``: the error code and message of a call its watchdog ended)."""

    tools: str
    loader: dict
    plugin: str
    schema: str
    start_pending: dict
    panel: dict
    watchdog: dict


def from_sources() -> FromSources:
    """What the build takes from the bridge's sources in py_src/, in a child Python (so an installed copy of the
    package cannot stand in for the sources): the loader's tools.json as JSON text
    (``webmcp_bridge.session.bridge.tools_manifest``: the WebMCP tool definitions generated from its pydantic
    models, and the toolsets as data), the loader's bounds (``webmcp_bridge.core.limits.LOADER_BOUNDS``), and the
    Settings Editor's schema (``webmcp_bridge.session.settings_model.schema_text``, generated from the settings'
    pydantic model) with its plugin id."""
    done = subprocess.run([sys.executable, "-c", GENERATE, str(PY_SRC)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"reading the bridge's sources failed:\n{done.stderr[-2000:]}")
    data = json.loads(done.stdout)
    return FromSources(
        tools=json.dumps(data["tools"], indent=1, ensure_ascii=False) + "\n",
        loader=data["loader"],
        plugin=data["plugin"],
        schema=data["schema"],
        start_pending=data["startPending"],
        panel=data["panel"],
        watchdog=data["watchdog"],
    )


def schema_path(package: dict, plugin: str) -> str:
    """Where the labextension holds the settings plugin's schema: ``<schemaDir>/<stem>.json`` of
    lite/extension/package.json's ``jupyterlab.schemaDir``, ``stem`` the part of the plugin id after ``:``
    (JupyterLab names a federated extension's plugin ``<package name>:<schema file stem>``). Raises BuildError when
    the id does not start with the package's name or no schemaDir is declared."""
    name, _, stem = plugin.partition(":")
    folder = package.get("jupyterlab", {}).get("schemaDir")
    if name != package["name"] or not stem or not folder:
        raise BuildError(
            f"the settings plugin {plugin!r} cannot be served by {package['name']!r} (schemaDir {folder!r})"
        )
    return f"{folder.strip('/')}/{stem}.json"


def closure(lock: dict, roots: list[str]) -> list[str]:
    """The canonical names of ``roots`` and everything they depend on in a pyodide-lock.json, sorted."""
    packages = lock["packages"]
    seen: set[str] = set()
    todo = [canonicalize_name(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            raise BuildError(f"{name} is not in the lock (a pin is missing in [tool.webmcp_bridge.site.wheels])")
        seen.add(name)
        todo += packages[name]["depends"]
    return sorted(seen)


#: the one range form the loader's share-scope lookup understands (remoteEntry.js, ``inRange``)
CARET_RANGE = re.compile(r"^\^\d+\.\d+\.\d+$")


def shared_ranges(package: dict) -> dict[str, str]:
    """The loader's share-scope ranges, ``{package: "^X.Y.Z"}``: lite/extension/package.json's ``dependencies``,
    each of which must be a caret range and be listed in ``jupyterlab.sharedPackages`` as not bundled (the loader
    bundles nothing). Raises BuildError naming the first that is not."""
    dependencies = package.get("dependencies") or {}
    listed = package.get("jupyterlab", {}).get("sharedPackages", {})
    if not dependencies:
        raise BuildError(
            "lite/extension/package.json declares no dependencies (the JupyterLab packages the loader uses)"
        )
    for name, spec in dependencies.items():
        if not CARET_RANGE.match(spec):
            raise BuildError(
                f"lite/extension/package.json: {name} {spec!r} is not a caret range ^X.Y.Z (remoteEntry.js reads only "
                "those)"
            )
        if listed.get(name, {}).get("bundled", True):
            raise BuildError(
                f"lite/extension/package.json: {name} is missing from jupyterlab.sharedPackages as bundled: false"
            )
    return dict(dependencies)


def stage_labextension(dest: Path, pins: dict | None = None) -> Path:
    """Write the complete labextension folder into ``dest`` (created or brought up to date); return ``dest``.

    Files that are not part of it are removed, so ``dest`` holds exactly what the wheel ships. Fetches the
    pinned Pyodide runtime (npm) and wheels (pip) into the cache the first time. Raises BuildError.
    """
    pins = pins or read_pins()
    dest = Path(dest)
    keep: set[str] = set()

    def put(rel: str, data: bytes | str | Path) -> None:
        keep.add(rel)
        if isinstance(data, Path):
            sync_file(data, dest / rel)
        else:
            write_if_changed(dest / rel, data)

    package = json.loads((EXTENSION_SRC / "package.json").read_text(encoding="utf-8"))
    if package["name"] != EXTENSION_NAME:
        raise BuildError(f"lite/extension/package.json names {package['name']!r}, expected {EXTENSION_NAME!r}")
    shared = shared_ranges(package)
    package["version"] = pins["project"]["version"]
    put("package.json", json.dumps(package, indent=2) + "\n")
    distribution = pins["project"]["name"]
    put(
        "install.json",
        json.dumps(
            {
                "packageManager": "python",
                "packageName": distribution,
                "uninstallInstructions": "Use your Python package manager (pip, conda, etc.) to uninstall the "
                f"package {distribution}",
            },
            indent=2,
        )
        + "\n",
    )
    sources = from_sources()
    schema = schema_path(package, sources.plugin)
    for path in tree_files(EXTENSION_SRC):
        rel = path.relative_to(EXTENSION_SRC).as_posix()
        if rel == schema:
            raise BuildError(
                f"lite/extension/{rel} is generated from webmcp_bridge.session.settings_model: remove the file"
            )
        if rel != "package.json":
            put(rel, path)

    pyodide_pkg = fetch_pyodide(pins["pyodide"])
    upstream_lock = json.loads((pyodide_pkg / "pyodide-lock.json").read_text(encoding="utf-8"))
    wheels = fetch_wheels(pins, upstream_lock)
    needed = closure(rewrite_lock(upstream_lock, wheels), pins["bridge_packages"])
    # what the bridge's Python loads, byte-compiled by the runtime's own Python (sitebuild/bytecode.py): the standard
    # library, the bridge's closure and its own wheel, so the page imports them without compiling
    stdlib = pyodide_pkg / STDLIB_ZIP
    plain_bridge_wheel = write_bridge_wheel(CACHE / "bridge-wheel", pins["project"])
    byte = compiled(pyodide_pkg, [stdlib, *(wheels[name] for name in needed), plain_bridge_wheel])
    bridge_wheels = {name: byte[wheels[name]] for name in needed}
    full_lock = rewrite_lock(upstream_lock, {**wheels, **bridge_wheels})
    for name in RUNTIME_FILES:
        put(f"static/pyodide/{name}", byte[stdlib] if name == STDLIB_ZIP else pyodide_pkg / name)
    for path in bridge_wheels.values():  # the bridge's closure only: the kernel's wheels are fetched on opt-in
        put(f"static/pyodide/{path.name}", path)
    put(
        "static/pyodide/pyodide-lock.json",
        json.dumps(rewrite_lock(upstream_lock, bridge_wheels), indent=1, sort_keys=True) + "\n",
    )
    # every pinned wheel (the kernel's closure and the bridge's) with its sha256: the kernel-runtime addon, turned on,
    # fetches the wheels this folder lacks and makes this the runtime's lock (webmcp_bridge_jupyter/lite_addon.py)
    put(f"static/pyodide/{KERNEL_LOCK}", json.dumps(full_lock, indent=1, sort_keys=True) + "\n")

    mcp_b = fetch_mcp_b(pins["mcp_b_global"])
    put("static/mcp-b/global.iife.js", mcp_b / "dist" / "index.iife.js")
    put("static/mcp-b/LICENSE", mcp_b / "LICENSE")

    # the bridge's worker (docs/WORKER.md): its two scripts must be URLs the page can start before Python runs, so
    # they are served beside the loader as well as carried in the bridge wheel with the other lab/ halves
    lab = PY_SRC / "webmcp_bridge" / "lab"
    scripts = (*WORKER_SCRIPTS, CROSSINGS_SCRIPT, HALVES_SCRIPT, KERNEL_TRUST_SCRIPT)
    for name in scripts:
        put(f"static/{name}", lab / name)
    # the JS halves, for the worker's remote halves (halves.js evaluates them on the page, fetched from here)
    for path in sorted(lab.rglob("*.js")):
        if path.parent != lab or path.name not in scripts:
            put(f"static/{HALVES_DIR}/{path.relative_to(PY_SRC).as_posix()}", path)
    put(f"static/{plain_bridge_wheel.name}", byte[plain_bridge_wheel])
    put("static/tools.json", sources.tools)
    # the Settings Editor's schema, generated from the settings' model (session/settings_model.py)
    put(schema, sources.schema)
    manifest = {
        # the Pyodide version the shipped wheels are built for: a page's own runtime is used only if it is this one
        "pyodideVersion": pins["pyodide"],
        # the runtime shipped here, relative to this file: used when the page offers none of that version
        "pyodide": "pyodide/pyodide.mjs",
        # wheels to install before the bridge, in order, relative to this file (the bridge's dependency closure)
        "wheels": [f"pyodide/{wheels[name].name}" for name in needed],
        "wheel": plain_bridge_wheel.name,
        # the standard library with its bytecode (the shipped runtime's own): the loader starts Python from it whichever
        # runtime it uses, so the page's own runtime of the same version (sources only) is started without compiling
        "stdlib": f"pyodide/{STDLIB_ZIP}",
        "tools": "tools.json",
        # the MCP-B runtime (@mcp-b/global), loaded only when the site opts in and WebMCP is not native
        "polyfill": "mcp-b/global.iife.js",
        # the bridge's worker: the page's side (an ES module) and the worker's entry, relative to this file
        "worker": WORKER_SCRIPTS[0],
        "workerBoot": WORKER_SCRIPTS[1],
        # the page's side of the worker's JS halves (an ES module) and the folder of the halves' sources
        "halves": HALVES_SCRIPT,
        "halvesSources": f"{HALVES_DIR}/",
        # the numbers the loader applies (webmcp_bridge/core/limits.py LOADER_BOUNDS): recent calls listed, characters
        # of a failure's and of a refused registration's reason shown, the waits before Python starts
        "bounds": sources.loader,
        # a call the loader answers pending while the bridge's Python starts: its message ({tool}, {step}) and the tool
        # that collects it (webmcp_bridge/calls/pending.py START_PENDING_MESSAGE)
        "startPending": sources.start_pending,
        # the Agent panel's id, label, caption and rank (webmcp_bridge/lab/ui/panel.py): the loader's placeholder,
        # drawn from JupyterLab's start, which the panel takes over
        "panel": sources.panel,
        # the error the loader answers for the calls running when its watchdog stopped the worker: its code and message
        # ({tool}, {tools}, {seconds}; webmcp_bridge/core/errors.py WATCHDOG_MESSAGE)
        "watchdog": sources.watchdog,
        # the version range of each JupyterLab package the loader takes from the page's share scope
        # (package.json's dependencies): a version outside it is never used
        "shared": shared,
    }
    put("static/bridge.json", json.dumps(manifest, indent=2) + "\n")
    for path in tree_files(dest):
        if path.relative_to(dest).as_posix() not in keep:
            path.unlink()
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            shutil.rmtree(folder)
    return dest
