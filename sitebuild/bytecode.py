"""Byte-compiled archives for the page's Python: the runtime's standard library zip and the wheels, each with the
bytecode of its sources added at build time, so Pyodide neither compiles its bootstrap at ``loadPyodide`` nor the
bridge's imports on every page load (measured in docs/PERFORMANCE.md, "Byte-compiled at build time").

Bytecode fits only the interpreter that made it: the build's CPython (another version, another magic number) cannot
make it, so the pinned Pyodide itself does, under Node (``sitebuild/bytecode.js``, which runs
``sitebuild/bytecode_runtime.py`` in a fresh interpreter per archive; that module says where the bytecode goes and
why it is PEP 552's unchecked hash-based kind). Node is already a build requirement (``npm pack`` fetches the runtime).

Results are cached in ``.cache/bytecode/<runtime folder>/`` by the sha256 of the archive and of the two scripts, so
an archive is compiled once per pin (the bridge's own wheel once per change of its sources). The same archive gives
the same bytes, so a wheel built twice stays byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from sitebuild.util import CACHE, BuildError, sha256_file, step

RUNNER = Path(__file__).with_name("bytecode.js")
RUNTIME_MODULE = Path(__file__).with_name("bytecode_runtime.py")
#: the runtime's standard library archive (the npm package's file name); every other archive is a wheel
STDLIB_ZIP = "python_stdlib.zip"


def _kind(archive: Path) -> str:
    if archive.name == STDLIB_ZIP:
        return "stdlib"
    if archive.suffix == ".whl":
        return "wheel"
    raise BuildError(f"{archive.name} is neither {STDLIB_ZIP} nor a wheel: no bytecode can be added to it")


def _cached_path(pyodide_pkg: Path, archive: Path) -> Path:
    tools = hashlib.sha256(RUNNER.read_bytes() + b"\0" + RUNTIME_MODULE.read_bytes()).hexdigest()[:12]
    key = f"{sha256_file(archive)[:24]}-{tools}"
    return CACHE / "bytecode" / pyodide_pkg.parent.name / key / archive.name


def compiled(pyodide_pkg: Path, archives: list[Path]) -> dict[Path, Path]:
    """The byte-compiled copy of each archive (``python_stdlib.zip`` of the runtime in ``pyodide_pkg``, or a wheel),
    keyed by the archive given; compiled by that runtime's Python under Node, once per archive's content (cached).
    The standard library, when among ``archives``, is compiled first and the later interpreters boot from its
    compiled copy. Raises BuildError when Node is missing or an archive cannot be compiled."""
    wanted = {archive: _cached_path(pyodide_pkg, archive) for archive in archives}
    missing = sorted((a for a, dest in wanted.items() if not dest.exists()), key=lambda a: _kind(a) != "stdlib")
    if missing:
        node = shutil.which("node")
        if node is None:
            raise BuildError("node is needed to byte-compile the runtime's archives (the pinned Pyodide runs under it)")
        stdlib = next((wanted[a] for a in archives if _kind(a) == "stdlib"), None)
        jobs = []
        for archive in missing:
            dest = wanted[archive]
            dest.parent.mkdir(parents=True, exist_ok=True)
            boot = stdlib if (stdlib is not None and _kind(archive) == "wheel") else None
            jobs.append(
                {
                    "source": str(archive.resolve()),
                    "dest": str(dest),
                    "kind": _kind(archive),
                    "stdlib": str(boot) if boot is not None else None,
                }
            )
        with step(f"byte-compiling {len(missing)} archive(s) with Pyodide's own Python (node)"):
            with tempfile.TemporaryDirectory() as tmp:
                jobs_file = Path(tmp) / "jobs.json"
                jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
                done = subprocess.run(
                    [node, str(RUNNER), str(pyodide_pkg), str(RUNTIME_MODULE), str(jobs_file)],
                    capture_output=True,
                    text=True,
                )
            if done.returncode != 0 or not all(dest.exists() for dest in wanted.values()):
                raise BuildError(f"byte-compiling failed:\n{done.stderr[-2000:]}")
    return wanted
