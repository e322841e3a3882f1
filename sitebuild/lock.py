"""pyodide-lock.json rewritten to describe exactly the wheels a site serves."""

from __future__ import annotations

from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from sitebuild.util import BuildError, sha256_file
from sitebuild.wheels import wheel_imports, wheel_metadata, wheel_name_version


def emscripten_environment(lock: dict) -> dict:
    """A PEP 508 marker environment for this Pyodide runtime."""
    env = default_environment()
    full = lock["info"]["python"]
    env.update(
        python_version=".".join(full.split(".")[:2]),
        python_full_version=full,
        implementation_name="cpython",
        implementation_version=full,
        platform_python_implementation="CPython",
        platform_system="Emscripten",
        platform_machine="wasm32",
        sys_platform="emscripten",
        os_name="posix",
        extra="",
    )
    return env


#: the fields of a package entry that rewrite_lock writes itself
OWN_FIELDS = frozenset(
    ("name", "version", "file_name", "install_dir", "sha256", "package_type", "imports", "depends", "unvendored_tests")
)


def rewrite_lock(lock: dict, wheels: dict[str, Path]) -> dict:
    """Return a pyodide-lock.json describing exactly the shipped wheels.

    For each wheel: file_name, version and sha256 of the file served; ``imports`` from the wheel; ``depends``
    = the upstream lock's depends (if the package was there) plus the wheel's own Requires-Dist for this
    platform. Entries for wheels the site does not serve are dropped, so nothing points at a missing file.
    Fails if a dependency is not shipped or a pinned version does not satisfy a requirement. A field of the
    upstream entries this function does not write (Pyodide 314.0.7 added ``tool``) is kept: the package's own value,
    else the empty value of that field's type in the upstream lock's entries, so the lock keeps the runtime's shape.
    """
    env = emscripten_environment(lock)
    upstream = {canonicalize_name(k): v for k, v in lock["packages"].items()}
    versions = {name: wheel_name_version(path)[1] for name, path in wheels.items()}
    sample = next(iter(upstream.values()), {})
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
        kept = {key: old.get(key, type(value)()) for key, value in sample.items() if key not in OWN_FIELDS}
        packages[name] = kept | {
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
