"""The interface between the bridge's Python and the page, ``lab/interface.py`` ``HALVES``, held on both sides.

- JavaScript: each half, evaluated by Node as ``load_half`` evaluates it (one expression, no ctx), offers exactly the
  declared methods (``attach`` aside): a method added to a half, or dropped from it, without the declaration fails.
- Python: every method name the modules of ``lab/`` call on a half is declared: a camelCase attribute call (the JS
  halves' names are camelCase, Python's snake_case) and a name handed to ``LabNotebook``'s ``_call`` /
  ``_call_async``. And every declared method is named somewhere in ``lab/``'s Python: none is declared that Python
  never calls.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import run_node
from webmcp_bridge.lab.interface import HALVES

LAB = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab"
#: the page's own functions some modules of lab/ call directly (not halves): the fetch's body, a URL's escaping,
#: and the loader's counter (lab/ffi.py, lab/contributions.py)
PAGE_FUNCTIONS = {"arrayBuffer", "encodeURIComponent", "countCalls"}
#: the functions that take a half's method name as their first argument
BY_NAME = {"_call", "_call_async"}

KEYS = r"""
const fs = require("fs");
const out = {};
for (const file of process.argv.slice(1)) {
  const half = eval(fs.readFileSync(file, "utf8"));
  const names = new Set();
  for (let o = half; o && o !== Object.prototype; o = Object.getPrototypeOf(o))
    for (const key of Object.getOwnPropertyNames(o))
      if (key !== "constructor" && typeof half[key] === "function") names.add(key);
  out[file] = [...names].sort();
}
console.log(JSON.stringify(out));
"""


def test_each_half_offers_exactly_the_declared_methods():
    files = [str(LAB / name) for name in HALVES]
    offered = run_node(KEYS, *files)
    for name, methods in HALVES.items():
        assert sorted(set(offered[str(LAB / name)]) - {"attach"}) == sorted(methods), name


def _python_names() -> tuple[set[str], set[str]]:
    """(names lab/'s Python calls as a half's method, every attribute and string named in lab/'s Python)."""
    called: set[str] = set()
    named: set[str] = set()
    for path in LAB.rglob("*.py"):
        if path.name == "interface.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                named.add(node.attr)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named.add(node.value)
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and re.search("[A-Z]", func.attr):
                called.add(func.attr)
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in BY_NAME and node.args and isinstance(node.args[0], ast.Constant):
                called.add(str(node.args[0].value))
    return called - PAGE_FUNCTIONS, named


def test_every_method_python_calls_on_a_half_is_declared():
    declared = {method for methods in HALVES.values() for method in methods}
    called, _ = _python_names()
    assert sorted(called - declared) == []


def test_every_declared_method_is_named_by_python():
    _, named = _python_names()
    unused = {name: [m for m in methods if m not in named] for name, methods in HALVES.items()}
    assert {name: methods for name, methods in unused.items() if methods} == {}
