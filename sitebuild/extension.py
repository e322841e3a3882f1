"""The webmcp-bridge labextension: the hand-written loader, the bridge wheel, bridge.json and tools.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sitebuild.util import CACHE, EXTENSION_SRC, PY_SRC, BuildError, sync_file, tree_files, write_if_changed

EXTENSION_NAME = "webmcp-bridge"

#: where bridge.json sits in the site: extensions/webmcp-bridge/static/; this is the runtime relative to it
PYODIDE_FROM_EXTENSION = "../../../static/pyodide/pyodide.mjs"


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
