"""Every version the build uses, read from pyproject.toml, and the check that the installed JupyterLite matches."""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from sitebuild.util import PY_SRC, PYPROJECT, BuildError

#: the one place the version is written (pyproject.toml's [tool.hatch.version] reads the same line)
VERSION_FILE = PY_SRC / "webmcp_bridge" / "__init__.py"
#: hatchling's default pattern for a version file (its regex version source)
VERSION_LINE = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.M)


def project_version() -> str:
    """The project's version: ``__version__`` in ``py_src/webmcp_bridge/__init__.py`` (the wheel's dynamic version
    comes from the same line). Raises BuildError when the line is missing."""
    found = VERSION_LINE.search(VERSION_FILE.read_text(encoding="utf-8"))
    if not found:
        raise BuildError(f'{VERSION_FILE.relative_to(PY_SRC.parent)} has no __version__ = "..." line')
    return found.group(1)


#: environment variables that replace a pin for one build (the canary, .ci/canary: the next versions of the
#: runtime and of JupyterLite), never set by the gate: {variable: the pin it replaces}. The default pins stay in
#: pyproject.toml; a build with an override set prints it, and its outputs are cached apart (``overrides``).
PIN_OVERRIDES = {
    "WEBMCP_BRIDGE_PYODIDE": "pyodide",
    "WEBMCP_BRIDGE_JUPYTERLITE_CORE": "jupyterlite-core",
    "WEBMCP_BRIDGE_JUPYTERLITE_PYODIDE_KERNEL": "jupyterlite-pyodide-kernel",
}


def overrides() -> dict[str, str]:
    """The pins replaced from the environment (``PIN_OVERRIDES``): ``{pin: version}``, empty in a normal build.
    Raises BuildError for a value that is not a version (PEP 440)."""
    from packaging.version import InvalidVersion, Version

    found = {}
    for variable, pin in PIN_OVERRIDES.items():
        value = os.environ.get(variable, "").strip()
        if value:
            try:
                Version(value)
            except InvalidVersion as exc:
                raise BuildError(f"{variable}={value!r} is not a version") from exc
            found[pin] = value
    return found


def read_pins() -> dict:
    """Read every pin from pyproject.toml: the site table, the JupyterLite pins of the dev extra, the project.

    Returns ``{"pyodide": version, "mcp_b_global": version, "bridge_packages": [names], "wheels": {canonical name:
    version}, "jupyterlite": {name: version}, "project": {"name", "version", "dependencies"}}``: ``bridge_packages`` are
    the names of the site table's ``bridge-requires``, and the project's ``dependencies`` are those requirements (the
    bridge's in the page, not the CPython wheel's); raises BuildError when the site table is missing or a
    JupyterLite pin is not ``==``. The variables of ``PIN_OVERRIDES`` replace the Pyodide and JupyterLite pins.
    """
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    try:
        site = data["tool"]["webmcp_bridge"]["site"]
    except KeyError as exc:
        raise BuildError("pyproject.toml has no [tool.webmcp_bridge.site] table") from exc
    bridge_requires = list(site["bridge-requires"])
    lite_pins = {}
    for spec in data["project"]["optional-dependencies"]["dev"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        if name in ("jupyterlite-core", "jupyterlite-pyodide-kernel"):
            pinned = [s.version for s in req.specifier if s.operator == "=="]
            if not pinned:
                raise BuildError(f"the dev extra must pin {name} with ==, found {spec!r}")
            lite_pins[name] = pinned[0]
    replaced = overrides()
    for name in lite_pins:
        lite_pins[name] = replaced.get(name, lite_pins[name])
    if replaced:
        print(f"[build] pins replaced from the environment (canary): {replaced}")
    return {
        "pyodide": replaced.get("pyodide", site["pyodide"]),
        "mcp_b_global": site["mcp-b-global"],
        "bridge_packages": [Requirement(spec).name for spec in bridge_requires],
        "wheels": {canonicalize_name(k): v for k, v in site["wheels"].items()},
        "jupyterlite": lite_pins,
        "project": {"name": data["project"]["name"], "version": project_version(), "dependencies": bridge_requires},
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
