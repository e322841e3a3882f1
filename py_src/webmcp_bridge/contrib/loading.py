"""Importing a site's contribution files into this Python, each on its own: one that fails leaves the others.

Each :class:`~webmcp_bridge.contrib.config.Entry` is fetched from the site (at most
:data:`~webmcp_bridge.core.limits.CONTRIBUTION_FILE_BYTES`), refused when its module name is another module's (a
site file never shadows one the page runs on), written under ``workdir`` (appended to ``sys.path``, never first; a
pure-Python wheel imports as a zip) and imported for its ``CONTRIBUTIONS``. A failure is one diagnostic (``fetch``,
``import``, ``build``: type, message and line, never a traceback or the file's text). Imports run the site's code
on the main thread: the caller yields between entries.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
import traceback
import zipfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from webmcp_bridge.contrib.api import Contribution
from webmcp_bridge.contrib.config import Entry
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.limits import CONTRIBUTION_FILE_BYTES, preview

#: ``await fetch(path)``: the site's file's bytes; raises FetchError (or any exception) when it cannot be read
Fetch = Callable[[str], Awaitable[bytes]]
#: the attribute a contribution module defines
CONTRIBUTIONS_ATTRIBUTE = "CONTRIBUTIONS"


class FetchError(Exception):
    """A contribution file could not be read from the site (the message says why, in one sentence)."""


def _reason(exc: BaseException, filename: str) -> str:
    """One sentence for a failed import: type, message and the line of the contribution's file it came from."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    line = next((f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__)) if f.filename == filename), None)
    where = f" (line {line})" if line is not None else ""
    return f"{type(exc).__name__}: {preview(str(exc), 200)}{where}"


class SiteLoader:
    """Loads contribution files into this interpreter; ``workdir``: a folder only the loader writes."""

    def __init__(self, fetch: Fetch, workdir: Path, diagnostics: Diagnostics) -> None:
        self.fetch = fetch
        self.workdir = workdir
        self.diagnostics = diagnostics

    async def load(
        self, entries: Sequence[Entry], pause: Callable[[], Awaitable[None]] | None = None
    ) -> list[Contribution]:
        """The contributions of ``entries``, in order; never raises for an entry."""
        found: list[Contribution] = []
        for entry in entries:
            found.extend(await self._load_one(entry))
            if pause is not None:
                await pause()
        return found

    def _ours(self, origin: Any) -> bool:
        return isinstance(origin, str) and Path(origin).is_relative_to(self.workdir)

    def _taken(self, module: str) -> str | None:
        """Where another module of this name comes from, or None when the name is free (or was ours)."""
        loaded = sys.modules.get(module)
        if loaded is not None:
            origin = getattr(loaded, "__file__", None)
            return None if self._ours(origin) else str(origin or "built in")
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        if spec is None or self._ours(spec.origin):
            return None
        return str(spec.origin or "built in")

    def _forget(self, module: str) -> None:
        """Drop an earlier import of ``module`` by this loader (a restarted session imports it afresh)."""
        for name in [n for n in sys.modules if n == module or n.startswith(module + ".")]:
            if self._ours(getattr(sys.modules[name], "__file__", None)):
                del sys.modules[name]
        for item in [
            p for p in sys.path if self._ours(p) and Path(p).suffix == ".whl" and Path(p).name.split("-")[0] == module
        ]:
            sys.path.remove(item)
        shutil.rmtree(self.workdir / "__pycache__", ignore_errors=True)

    def _place(self, entry: Entry, data: bytes) -> str:
        """Write the file where the import finds it; returns the file name tracebacks use for its code."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if entry.kind == "module":
            target = self.workdir / f"{entry.module}.py"
            target.write_bytes(data)
            if str(self.workdir) not in sys.path:
                sys.path.append(str(self.workdir))
            return str(target)
        target = self.workdir / entry.path.rsplit("/", 1)[-1]
        target.write_bytes(data)
        if not zipfile.is_zipfile(target):
            raise ValueError("the file is not a wheel (not a zip archive)")
        with zipfile.ZipFile(target) as wheel:
            names = set(wheel.namelist())
        if f"{entry.module}/__init__.py" not in names and f"{entry.module}.py" not in names:
            raise ValueError(f"the wheel holds no top-level module {entry.module!r}")
        sys.path.append(str(target))
        return (
            str(target / entry.module / "__init__.py")
            if f"{entry.module}/__init__.py" in names
            else str(target / f"{entry.module}.py")
        )

    async def _load_one(self, entry: Entry) -> list[Contribution]:
        try:
            data = await self.fetch(entry.path)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, FetchError) else f"{type(exc).__name__}: {exc}"
            self.diagnostics.add(entry.path, "fetch", f"could not be read from the site: {preview(reason, 200)}")
            return []
        if len(data) > CONTRIBUTION_FILE_BYTES:
            self.diagnostics.add(
                entry.path,
                "fetch",
                f"is {len(data)} bytes; a contribution file may be at most {CONTRIBUTION_FILE_BYTES}",
            )
            return []
        taken = self._taken(entry.module)
        if taken is not None:
            self.diagnostics.add(
                entry.path,
                "import",
                f"the module name {entry.module!r} is already taken by another module "
                f"of the page ({preview(taken, 120)}); rename the file",
            )
            return []
        self._forget(entry.module)
        try:
            filename = self._place(entry, data)
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            self.diagnostics.add(entry.path, "import", f"could not be installed: {preview(str(exc), 200)}")
            return []
        importlib.invalidate_caches()
        try:
            module = importlib.import_module(entry.module)
        except (Exception, SystemExit) as exc:
            self.diagnostics.add(entry.path, "import", f"failed to import: {_reason(exc, filename)}")
            traceback.print_exc()
            return []
        offered = getattr(module, CONTRIBUTIONS_ATTRIBUTE, None)
        if not isinstance(offered, (list, tuple)) or not all(isinstance(c, Contribution) for c in offered):
            what = (
                "defines no CONTRIBUTIONS"
                if offered is None
                else "has a CONTRIBUTIONS that is not a list of Contribution"
            )
            self.diagnostics.add(entry.path, "build", f"{what}; it contributed nothing")
            return []
        return list(offered)
