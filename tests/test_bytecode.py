"""Bytecode made at build time by the pinned Pyodide's own Python (sitebuild/bytecode.py): the runtime imports it
instead of compiling the sources, and the same archive always gives the same bytes. Runs the pinned Pyodide under
Node, as the build does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.bytecode import compiled  # noqa: E402
from sitebuild.extension import closure as bridge_closure  # noqa: E402
from sitebuild.lock import rewrite_lock  # noqa: E402
from sitebuild.pins import read_pins  # noqa: E402
from sitebuild.runtime import fetch_pyodide  # noqa: E402
from sitebuild.wheels import fetch_wheels, write_bridge_wheel  # noqa: E402

NODE = shutil.which("node") or "node"  # the build needs it too: a machine without it fails here as the build would

#: imports the page's Python as the loader starts it (the shipped standard library, the shipped wheels), then
#: reports for each module where its code came from
PROBE = r"""
import { pathToFileURL } from 'node:url';
const [folder, stdlib, ...wheels] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${folder}/pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL: `${folder}/`, stdLibURL: stdlib });
await pyodide.loadPackage(wheels, { messageCallback: () => {} });
process.stdout.write(pyodide.runPython(`
import importlib, json, pathlib, sys
# the sources of the bridge's own modules are made unreadable as Python: only their bytecode can import them
for name in ("webmcp_bridge/core/limits.py", "webmcp_bridge/core/errors.py"):
    (pathlib.Path(sys.prefix) / "lib/python3.14/site-packages" / name).write_text("raise SystemExit('source read')")
found = {}
for name in ("json", "asyncio", "zipfile", "pydantic.main", "webmcp_bridge.core.limits", "webmcp_bridge.core.errors"):
    module = importlib.import_module(name)
    found[name] = {"cached": module.__spec__.cached, "loader": type(module.__spec__.loader).__name__}
found["limit"] = sys.modules["webmcp_bridge.core.limits"].DEFAULT_LIMITS.result_bytes
json.dumps(found)
`));
"""


@pytest.fixture(scope="module")
def runtime() -> Path:
    return fetch_pyodide(read_pins()["pyodide"])


def test_the_page_python_imports_the_bytecode_made_at_build_time(runtime, tmp_path):
    """The standard library and the wheels the loader installs are imported from their build-time bytecode: the
    zip's ``.pyc`` beside each source, and the wheels' ``__pycache__`` (PEP 552 unchecked: a bridge module whose
    source was replaced still imports as built)."""
    pins = read_pins()
    upstream = json.loads((runtime / "pyodide-lock.json").read_text(encoding="utf-8"))
    wheels = fetch_wheels(pins, upstream)
    closure = [wheels[name] for name in bridge_closure(rewrite_lock(upstream, wheels), pins["bridge_packages"])]
    bridge = write_bridge_wheel(tmp_path, pins["project"])
    stdlib = runtime / "python_stdlib.zip"
    byte = compiled(runtime, [stdlib, *closure, bridge])
    probe = tmp_path / "probe.mjs"
    probe.write_text(PROBE)
    done = subprocess.run(
        [NODE, str(probe), str(runtime), str(byte[stdlib]), *(str(byte[w]) for w in [*closure, bridge])],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["limit"] == 50 * 1024  # the bridge's module ran from its bytecode, though its source now exits
    for name in ("json", "asyncio", "zipfile"):
        assert found[name] == {"cached": f"/lib/python314.zip/{name}/__init__.pyc", "loader": "zipimporter"}, found
    assert found["pydantic.main"]["cached"].endswith("pydantic/__pycache__/main.cpython-314.pyc"), found


def test_every_source_gets_bytecode_and_the_same_archive_gives_the_same_bytes(runtime, tmp_path, monkeypatch):
    """Each compilable ``.py`` of a wheel gets its ``__pycache__`` entry, listed in RECORD; a source that does not
    compile for this Python keeps none; compiling the same wheel again (no cache) gives the same bytes."""
    import sitebuild.bytecode as bytecode

    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    files = {
        "demo/__init__.py": "VALUE = 42\n",
        "demo/sub/mod.py": "def f():\n    return 'x'\n",
        "demo/template.py": "def broken(:\n",
        "demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        "demo-1.0.dist-info/RECORD": "demo/__init__.py,,\ndemo-1.0.dist-info/RECORD,,\n",
    }
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), text)
    made = []
    for round_ in ("first", "second"):
        monkeypatch.setattr(bytecode, "CACHE", tmp_path / round_)
        made.append(compiled(runtime, [wheel])[wheel].read_bytes())
    assert made[0] == made[1]
    with zipfile.ZipFile(compiled(runtime, [wheel])[wheel]) as archive:
        names = archive.namelist()
        record = archive.read("demo-1.0.dist-info/RECORD").decode()
    assert "demo/__pycache__/__init__.cpython-314.pyc" in names
    assert "demo/sub/__pycache__/mod.cpython-314.pyc" in names
    assert not any(name.startswith("demo/__pycache__/template") for name in names)
    assert names[-1] == "demo-1.0.dist-info/RECORD"
    assert "demo/sub/__pycache__/mod.cpython-314.pyc,sha256=" in record
    assert record.rstrip().endswith("demo-1.0.dist-info/RECORD,,")
