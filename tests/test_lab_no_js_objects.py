"""The live-notebook host code holds no JupyterLab JS object (docs/WORKER.md, "Handles instead of JS objects").

``lab/notebook.py``, ``lab/host.py`` and ``lab/ui/notebooks.py`` talk to the page only through their JS halves
(``notebook.js``, ``host.js``, ``tabs.js``), which receive the page's objects once (``attach(ctx)``) and afterwards
take primitives and JSON text and answer primitives, JSON text or promises of them; a notebook panel is a handle.
That is what lets this Python run in a worker while the halves stay on the page's main thread. This test parses
the three modules (no import, so it runs under CPython) and fails on what would break it:

- importing ``js`` (the page's global scope) in any form;
- importing from ``pyodide`` (``pyodide.ffi``, ``pyodide.code``, ...) any name outside :data:`ALLOWED_PYODIDE`.
  None is allowed today: failures of the page's asynchronous work come back from the halves as data, and a
  "no such notebook" answer is recognised by its text (``lab/notebook.py`` ``is_gone``), so no module needs
  ``JsException`` to translate errors; a future need must be added here with its reason;
- naming a converter or proxy maker that builds or hands over JS objects: ``to_js``, ``js_object`` (lab/ffi.py's
  ``to_js`` of a dict), ``create_proxy``, ``create_once_callable``, ``run_js`` (Python callables go to JS only as
  event sinks through :class:`webmcp_bridge.lab.ffi.Proxies`);
- reading an attribute JupyterLab's objects have and the bridge's Python objects do not
  (:data:`JUPYTERLAB_ATTRIBUTES`: ``panel.context``, ``panel.sessionContext``, ``app.serviceManager``,
  ``ctx.docManager``, ``tracker.currentWidget``...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab"
MODULES = ("notebook.py", "host.py", "ui/notebooks.py")

#: names these modules may import from pyodide (none: see the module docstring)
ALLOWED_PYODIDE: frozenset[str] = frozenset()

#: names that build a JS object from Python data or hand a Python callable to JS outside lab/ffi.py's Proxies
FORBIDDEN_NAMES = frozenset({"to_js", "js_object", "create_proxy", "create_once_callable", "run_js"})

#: attributes of JupyterLab's objects (panels, contexts, sessions, the application, the loader's context) that
#: a JS half reads instead
JUPYTERLAB_ATTRIBUTES = frozenset(
    {
        "context",
        "sessionContext",
        "serviceManager",
        "serverSettings",
        "contents",
        "docManager",
        "tracker",
        "currentWidget",
        "widgetAdded",
        "currentChanged",
        "activeCellChanged",
        "disposed",
        "node",
        "content",
        "model",
        "sharedModel",
        "contentsModel",
        "commands",
        "modules",
        "ready",
        "addEventListener",
        "removeEventListener",
        "connect",
        "disconnect",
    }
)


def problems(source: str) -> list[str]:
    """What in ``source`` (a module's text) makes it hold or build JS objects: ``"line N: ..."`` per finding."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "js" or alias.name.startswith(("js.", "pyodide")):
                    found.append(f"{where}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == "js" or module.startswith("js."):
                found.append(f"{where}: from {module} import ...")
            elif module.startswith("pyodide"):
                found += [
                    f"{where}: from {module} import {a.name}" for a in node.names if a.name not in ALLOWED_PYODIDE
                ]
            found += [f"{where}: imports {a.name}" for a in node.names if a.name in FORBIDDEN_NAMES]
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            found.append(f"{where}: uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES | JUPYTERLAB_ATTRIBUTES:
            found.append(f"{where}: reads .{node.attr}")
    return found


@pytest.mark.parametrize("module", MODULES)
def test_the_live_notebook_host_code_holds_no_js_object(module):
    found = problems((LAB / module).read_text(encoding="utf-8"))
    assert not found, f"lab/{module} reaches JS objects directly (move it into its JS half): {found}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import js", "import js"),
        ("from js import document", "from js import ..."),
        ("from pyodide.ffi import JsException", "from pyodide.ffi import JsException"),
        ("import pyodide.ffi", "import pyodide.ffi"),
        ("from pyodide.ffi import to_js", "imports to_js"),
        ("from webmcp_bridge.lab.ffi import js_object", "imports js_object"),
        ("x = js_object({})", "uses js_object"),
        ("path = panel.context.path", "reads .context"),
        ("s = nb.sessionContext", "reads .sessionContext"),
        ("tracker.widgetAdded.connect(f)", "reads .widgetAdded"),
    ],
)
def test_the_check_finds_each_kind_of_reach(source, expected):
    assert any(expected in p for p in problems(source)), problems(source)


def test_the_check_passes_data_only_code():
    source = "import json\nfrom webmcp_bridge.lab.ffi import Proxies\nx = json.loads(str(live.cells(handle)))\n"
    assert problems(source) == []
