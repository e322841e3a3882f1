"""The import direction of the package, read from the source with ``ast`` (no module is imported).

Layers, lowest first; a module may import from its own package and from lower layers only::

    core < host < calls < (propose, review, changes, sharing) < access < tools < contrib < session < lab

The four features share a rank: none imports another. ``core`` imports the standard library only. Only ``lab/`` touches
the browser (``js``, ``pyodide``, ``pyodide_js``), at any depth of a module (inside functions and ``TYPE_CHECKING``
blocks too) and through ``importlib.import_module("...")`` with a literal name. The package's ``__init__`` imports
nothing of its own.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge"
RANKS = {
    "core": 0,
    "host": 1,
    "calls": 2,
    "propose": 3,
    "review": 3,
    "changes": 3,
    "sharing": 3,
    "access": 4,
    "tools": 5,
    "contrib": 6,
    "session": 7,
    "lab": 8,
}
BROWSER = {"js", "pyodide", "pyodide_js"}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``webmcp_bridge.calls.registry`` for ``<root>/calls/registry.py`` (a package's ``__init__`` is the package)."""
    parts = ["webmcp_bridge", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """Every module ``path`` imports, as (line, absolute dotted name), at any depth; relative imports resolved."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "webmcp_bridge" or (node.level and not node.module):  # `from . import x`: x may be a module
                found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
            else:
                found.append((node.lineno, base))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def layer_of(module: str) -> str | None:
    """The layer (first package under webmcp_bridge) of a package module; None for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def violations(root: Path = PACKAGE) -> list[str]:
    """One line per import that breaks the order above: ``<module>:<line> imports <name> (<why>)``."""
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        layer = layer_of(module)
        if layer is not None and layer not in RANKS:
            problems.append(f"{module}: package {layer!r} has no place in the layer order")
            continue
        for line, target in imports_of(path, root):
            top = target.split(".")[0]
            if top in BROWSER and layer != "lab":
                problems.append(f"{module}:{line} imports {target} (only webmcp_bridge.lab may touch the browser)")
            if top != "webmcp_bridge":
                continue
            to = layer_of(target)
            if to is None or to == layer:
                if to is None and layer is None and target != "webmcp_bridge":
                    problems.append(
                        f"{module}:{line} imports {target} (the package's __init__ imports none of its modules)"
                    )
                continue
            if layer is None:
                problems.append(
                    f"{module}:{line} imports {target} (the package's __init__ imports none of its modules)"
                )
            elif to not in RANKS:
                problems.append(f"{module}:{line} imports {target} (package {to!r} has no place in the layer order)")
            elif RANKS[to] >= RANKS[layer]:
                why = "a feature of the same rank" if RANKS[to] == RANKS[layer] else "a higher layer"
                lower = ", ".join(k for k, v in RANKS.items() if v < RANKS[layer])
                problems.append(
                    f"{module}:{line} imports {target} ({why}: {layer} may import only "
                    f"{lower or 'the standard library and third-party packages'})"
                )
    return problems


def test_every_layer_is_present_and_ranked() -> None:
    """The walk sees the real package: every layer folder exists, holds modules, and has a rank."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert folders == set(RANKS)
    for folder in folders:
        assert list((PACKAGE / folder).glob("*.py")), folder


def test_imports_follow_the_layer_order() -> None:
    problems = violations()
    assert not problems, "imports against the layer order:\n" + "\n".join(problems)


def test_core_imports_the_standard_library_only() -> None:
    """core/ is the primitives every layer stands on: nothing third-party (not even pydantic), nothing of ours above."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    found = [
        f"{module_name(p)}:{line} imports {t}"
        for p in sorted((PACKAGE / "core").glob("*.py"))
        for line, t in imports_of(p)
        if t.split(".")[0] not in stdlib and not t.startswith("webmcp_bridge.core")
    ]
    assert not found, found


def test_the_browser_is_imported_only_under_lab() -> None:
    """lab/ does import the browser (so the walk would see one elsewhere), and nothing else does."""
    seen = {module_name(p) for p in PACKAGE.rglob("*.py") if any(t.split(".")[0] in BROWSER for _, t in imports_of(p))}
    assert seen and all(m.startswith("webmcp_bridge.lab") for m in seen), sorted(seen)


@pytest.mark.parametrize(
    ("where", "code", "expected"),
    [
        (
            "core/raw.py",
            "def f():\n    import js\n",
            "webmcp_bridge.core.raw:2 imports js (only webmcp_bridge.lab may touch the browser)",
        ),
        (
            "tools/common.py",
            "from pyodide.ffi import create_proxy\n",
            "webmcp_bridge.tools.common:1 imports pyodide.ffi",
        ),
        (
            "calls/registry.py",
            "from webmcp_bridge.propose.proposals import ProposalDenied\n",
            "webmcp_bridge.calls.registry:1 imports webmcp_bridge.propose.proposals (a higher layer",
        ),
        (
            "review/threads.py",
            "from ..propose import proposals\n",
            "webmcp_bridge.review.threads:1 imports webmcp_bridge.propose (a feature of the same rank",
        ),
        (
            "host/edit_plan.py",
            "import importlib\nimportlib.import_module('webmcp_bridge.session.bridge')\n",
            "webmcp_bridge.host.edit_plan:2 imports webmcp_bridge.session.bridge (a higher layer",
        ),
        (
            "access/guard.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from webmcp_bridge.tools.common import "
            "CallContext\n",
            "webmcp_bridge.access.guard:3 imports webmcp_bridge.tools.common (a higher layer",
        ),
    ],
)
def test_a_bad_import_is_named(tmp_path: Path, where: str, code: str, expected: str) -> None:
    """A copy of the package with one bad import added: the check names the module, the line and the import."""
    root = tmp_path / "webmcp_bridge"
    for path in PACKAGE.rglob("*.py"):
        target = root / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    bad = root / where
    bad.write_text(code + bad.read_text(encoding="utf-8"), encoding="utf-8")
    problems = violations(root)
    assert any(p.startswith(expected) for p in problems), problems
    assert len(problems) == 1, problems


def test_tests_take_shared_helpers_from_a_helpers_module_not_conftest() -> None:
    """conftest.py files hold fixtures only; what tests share is imported from tests/helpers.py or
    playwright-tests/lite_site.py (importing conftest runs it a second time under another name)."""
    repo = PACKAGE.parents[1]
    offenders = [
        f"{path.relative_to(repo)}:{line}"
        for folder in ("tests", "playwright-tests", "bench")
        for path in sorted((repo / folder).glob("*.py"))
        for line, target in imports_of(path, path.parent)
        if target.split(".")[0] == "conftest"
    ]
    assert not offenders, offenders


#: the most lines a module of the package may have: a reader of one file should know its one job, and a module
#: past this size has, so far, always held more than one
MODULE_LINES = 700


def test_no_module_of_the_package_is_over_the_line_bound():
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 50  # the whole package was read
    assert {name: n for name, n in sizes.items() if n > MODULE_LINES} == {}
