"""Runs inside the pinned Pyodide's own Python, never under the build's CPython: adds to one zip archive (the
runtime's ``python_stdlib.zip`` or a wheel) the bytecode of each of its Python sources, as that interpreter itself
compiles them, so the page's Python imports them without compiling (``sitebuild/bytecode.js`` starts a fresh
Pyodide under Node for each archive and calls :func:`add_bytecode`; ``sitebuild/bytecode.py`` decides which archives).

Bytecode is only valid for the interpreter that made it (its magic number, here Python 3.14's of the pinned Pyodide;
the build's CPython has another), hence this module runs in the runtime. Each ``.pyc`` is a PEP 552 hash-based
*unchecked* one: its header holds the source's hash, and the import system uses it without reading the source or
comparing times (wheels are unpacked with the time of unpacking, not the archive's). Sources stay beside the
bytecode, so tracebacks and ``inspect`` still show the lines.

Where the bytecode goes (the places the import system looks first):
- ``stdlib``: ``name.pyc`` beside ``name.py`` inside the zip (``zipimport`` tries ``.pyc`` before ``.py``), compiled
  with the file name the runtime's zip import gives the module (``/lib/python3XY.zip/<entry>``);
- ``wheel``: ``<folder>/__pycache__/<stem>.<cache tag>.pyc`` (PEP 3147), listed in the wheel's ``RECORD`` with
  its sha256 and size; the ``.dist-info`` and ``.data`` folders are left as they are.

A source that does not compile for this Python (a template, a file of another Python's syntax) keeps no bytecode,
as ``compileall`` does. The entries of the archive keep their order, names, times and attributes; each ``.pyc`` takes
its source's time. The same archive gives the same bytes (a fresh interpreter per archive, fixed times).
"""

from __future__ import annotations

import base64
import hashlib
import importlib._bootstrap_external as bootstrap_external
import importlib.util
import sys
import sysconfig
import warnings
import zipfile


def _bytecode(source: bytes, filename: str) -> bytes | None:
    """The unchecked hash-based ``.pyc`` of ``source`` compiled as ``filename``, or None when it does not compile."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a SyntaxWarning of a third party's source is not the build's to print
            code = compile(source, filename, "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError):
        return None
    return bytes(bootstrap_external._code_to_hash_pyc(code, importlib.util.source_hash(source), False))  # type: ignore[attr-defined]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def add_bytecode(source_path: str, dest_path: str, kind: str) -> int:
    """Write ``dest_path``: the zip at ``source_path`` with the bytecode of its sources added (``kind`` is
    ``"stdlib"`` or ``"wheel"``, see the module docstring). Returns how many ``.pyc`` were added. Raises
    RuntimeError when run by any Python but Pyodide's (its bytecode would not fit the page's runtime), ValueError for
    another ``kind`` or a wheel without a ``RECORD``."""
    if sys.platform != "emscripten":
        raise RuntimeError("add_bytecode runs in the pinned Pyodide only (the page's Python)")
    if kind not in ("stdlib", "wheel"):
        raise ValueError(f"unknown archive kind {kind!r}")
    zip_root = f"/lib/python{sys.version_info.major}{sys.version_info.minor}.zip/"
    site = sysconfig.get_paths()["purelib"].rstrip("/") + "/"
    tag = sys.implementation.cache_tag
    added = 0
    with zipfile.ZipFile(source_path) as src, zipfile.ZipFile(dest_path, "w") as out:
        infos = src.infolist()
        record = None
        if kind == "wheel":
            record = next(
                (i for i in infos if i.filename.count("/") == 1 and i.filename.endswith(".dist-info/RECORD")), None
            )
            if record is None:
                raise ValueError(f"{source_path} has no .dist-info/RECORD")
        extra_lines: list[str] = []
        later: list[tuple[zipfile.ZipInfo, bytes]] = []
        for info in infos:
            if info is record:
                continue
            data = src.read(info)
            out.writestr(info, data)
            name = info.filename
            if not name.endswith(".py") or info.is_dir():
                continue
            top = name.split("/", 1)[0]
            if kind == "wheel" and top.endswith((".dist-info", ".data")):
                continue
            if kind == "stdlib":
                pyc_name, filename = name + "c", zip_root + name
            else:
                folder, _, file = name.rpartition("/")
                pyc_name = f"{folder + '/' if folder else ''}__pycache__/{file[:-3]}.{tag}.pyc"
                filename = site + name
            pyc = _bytecode(data, filename)
            if pyc is None:
                continue
            pyc_info = zipfile.ZipInfo(pyc_name, date_time=info.date_time)
            pyc_info.compress_type = zipfile.ZIP_DEFLATED
            pyc_info.external_attr = 0o644 << 16
            if kind == "stdlib":
                out.writestr(pyc_info, pyc)  # beside its source
            else:
                later.append((pyc_info, pyc))
                extra_lines.append(_record_line(pyc_name, pyc))
            added += 1
        for pyc_info, pyc in later:  # a wheel's bytecode after its files, before RECORD (which comes last)
            out.writestr(pyc_info, pyc)
        if record is not None:
            lines = src.read(record).decode("utf-8").splitlines()
            self_line = [line for line in lines if line.split(",", 1)[0] == record.filename]
            kept = [line for line in lines if line and line not in self_line]
            text = "\n".join([*kept, *extra_lines, *(self_line or [f"{record.filename},,"])]) + "\n"
            out.writestr(record, text.encode("utf-8"))
    return added
