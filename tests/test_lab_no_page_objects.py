"""The modules of ``lab/`` converted for the worker (docs/WORKER.md, "Handles instead of JS objects") hold no
JupyterLab JS object,
read from the source with ``ast`` (no module is imported).

In those modules Python reaches the page only through JS halves (:func:`webmcp_bridge.lab.ffi.load_half`, which
hands a half the loader's ``ctx`` once) and :class:`webmcp_bridge.lab.ffi.Proxies` (listeners, whose return values JS
does not use), so that the same Python can run in a worker while the halves stay on the page's main thread. Refused
in them, at any depth (inside functions too):

- ``import js``, ``from js import …`` and ``import pyodide…`` / ``from pyodide… import …`` (``pyodide.ffi``,
  ``pyodide.code``): the page's globals and the FFI's converters;
- the names ``to_js``, ``create_proxy``, ``create_once_callable``, ``run_js`` and ``js_object`` (lab/ffi.py's
  ``to_js``), wherever they appear;
- reading one of the loader context's page objects by attribute (``.app``, ``.tracker``, ``.docManager``,
  ``.modules``, ``.modelContext``, ``.serviceManager``, ``.commands``, ``.contextMenu``, ``.shell``, ``.document``,
  ``.window``, ``.localStorage``), or any attribute of a name ``ctx`` or ``loader`` (the context is only handed on).

Justified exceptions (:data:`ALLOWED_JS`): ``lab/contributions.py`` fetches the site's own files with the global
``fetch`` (and ``URL``, ``encodeURIComponent``, ``location``, ``Uint8Array``, and ``JSON`` to make fetch's options),
which a worker has as the page does (docs/WORKER.md, "What moves to the worker"), and ``lab/server_root.py`` asks
the server extension with the global ``fetch`` (and ``JSON`` for its options); each may use ``js`` for exactly those
names and no other.

:data:`CONVERTED` lists the converted modules; a module converted later is added to it. The live-notebook host
code (:data:`LIVE_MODULES`: ``notebook.py``, ``host.py``, ``tabs.py``, ``ui/notebooks.py``) is held to more: it also
reads none of the attributes JupyterLab's panels, contexts, sessions and trackers have and the bridge's Python
objects do not (:data:`JUPYTERLAB_ATTRIBUTES`: ``panel.context``, ``panel.sessionContext``,
``tracker.currentWidget``, a signal's ``connect`` ...; a notebook panel is a handle ``notebook.js`` issues). Those
names are not refused everywhere because other converted modules call their own halves' methods of the same names
(``webmcp.js``'s ``connect``). No module imports anything of ``pyodide``: failures of the page's asynchronous work
come back from the halves as data, and ``lab/notebook.py`` recognises a "no such notebook" answer by its text, so no
module needs ``JsException``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab"

#: the modules of lab/ that hold no JS object (paths under lab/)
CONVERTED = (
    "contributions.py",
    "dialogs.py",
    "resources.py",
    "page_secret.py",
    "settings.py",
    "sharing.py",
    "webmcp.py",
    "ui/cell_menu.py",
    "ui/proposals.py",
    "ui/dom.py",
    "ui/panel.py",
    "ui/sections.py",
    "ui/actions.py",
    "ui/markers.py",
    "ui/view.py",
    "ui/comments_view.py",
    "ui/proposal_view.py",
    "notebook.py",
    "host.py",
    "tabs.py",
    "ui/notebooks.py",
    "server_root.py",
    "session.py",
)

#: the live-notebook host code, held to :data:`JUPYTERLAB_ATTRIBUTES` too
LIVE_MODULES = frozenset({"notebook.py", "host.py", "tabs.py", "ui/notebooks.py"})

#: module -> the attributes of ``js`` it may use (see the module docstring for why)
ALLOWED_JS = {
    "contributions.py": {"fetch", "URL", "encodeURIComponent", "location", "Uint8Array", "JSON"},
    "server_root.py": {"fetch", "JSON"},
}

FORBIDDEN_NAMES = {"to_js", "create_proxy", "create_once_callable", "run_js", "js_object"}
PAGE_ATTRIBUTES = {
    "app",
    "tracker",
    "docManager",
    "modules",
    "modelContext",
    "serviceManager",
    "commands",
    "contextMenu",
    "shell",
    "document",
    "window",
    "localStorage",
}
CONTEXT_NAMES = {"ctx", "loader"}
#: attributes of JupyterLab's objects that a JS half reads instead (refused in :data:`LIVE_MODULES`)
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


def problems(source: str, allowed_js: set[str] | None = None, live: bool = False) -> list[str]:
    """What in ``source`` reaches the page other than through a JS half: one line per finding, ``"<line>: …"``.
    ``allowed_js``: the ``js`` attributes the module may use (None: ``js`` may not be imported at all); ``live``:
    refuse :data:`JUPYTERLAB_ATTRIBUTES` too."""
    attributes = PAGE_ATTRIBUTES | JUPYTERLAB_ATTRIBUTES if live else PAGE_ATTRIBUTES
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root == "pyodide" or (root == "js" and allowed_js is None):
                    found.append(f"{line}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if root in ("js", "pyodide"):
                found.append(f"{line}: from {node.module} import …")
            found.extend(f"{line}: imports {alias.name}" for alias in node.names if alias.name in FORBIDDEN_NAMES)
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            found.append(f"{line}: uses {node.id}")
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_NAMES:
                found.append(f"{line}: uses .{node.attr}")
            elif node.attr in attributes:
                found.append(f"{line}: reads .{node.attr}")
            elif isinstance(node.value, ast.Name) and node.value.id in CONTEXT_NAMES:
                found.append(f"{line}: reads {node.value.id}.{node.attr}")
            elif isinstance(node.value, ast.Name) and node.value.id == "js":
                if allowed_js is None or node.attr not in allowed_js:
                    found.append(f"{line}: uses js.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            target = node.args[0] if node.args else None
            if isinstance(target, ast.Name) and target.id in CONTEXT_NAMES:
                found.append(f"{line}: getattr({target.id}, …)")
    return found


@pytest.mark.parametrize("name", CONVERTED)
def test_a_converted_module_holds_no_page_object(name: str) -> None:
    path = LAB / name
    assert path.is_file(), f"{name} is listed as converted but is not in lab/"
    assert problems(path.read_text(encoding="utf-8"), ALLOWED_JS.get(name), name in LIVE_MODULES) == [], name


@pytest.mark.parametrize(
    ("source", "finding"),
    [
        ("import js\n", "1: import js"),
        ("def f():\n    import js\n", "2: import js"),
        ("from js import document\n", "1: from js import …"),
        ("from pyodide.ffi import create_proxy\n", "1: from pyodide.ffi import …"),
        ("import pyodide.code\n", "1: import pyodide.code"),
        ("from webmcp_bridge.lab.ffi import js_object\n", "1: imports js_object"),
        ("x = to_js([1])\n", "1: uses to_js"),
        ("x = ffi.create_proxy(f)\n", "1: uses .create_proxy"),
        ("def f(ctx):\n    return ctx.app\n", "2: reads .app"),
        ("def f(ctx):\n    return ctx.emit\n", "2: reads ctx.emit"),
        ("def f(loader):\n    return getattr(loader, 'setMode', None)\n", "2: getattr(loader, …)"),
        ("def f(x):\n    return x.tracker.currentWidget\n", "2: reads .tracker"),
    ],
)
def test_each_way_of_reaching_the_page_is_found(source: str, finding: str) -> None:
    assert finding in problems(source)


def test_only_the_justified_js_names_pass() -> None:
    source = "import js\n\nasync def f(u):\n    return await js.fetch(u)\n"
    assert problems(source, {"fetch"}) == []
    assert problems(source + "\ndef g():\n    return js.Promise\n", {"fetch"}) == ["7: uses js.Promise"]
    assert problems(source) == ["1: import js", "4: uses js.fetch"]


@pytest.mark.parametrize(
    ("source", "finding"),
    [
        ("path = panel.context.path\n", "1: reads .context"),
        ("s = nb.sessionContext\n", "1: reads .sessionContext"),
        ("tracker.widgetAdded.connect(f)\n", "1: reads .widgetAdded"),
    ],
)
def test_the_live_modules_read_no_jupyterlab_attribute(source: str, finding: str) -> None:
    assert finding in problems(source, live=True)
    assert finding not in problems(source)


def test_data_only_code_passes() -> None:
    source = "import json\nfrom webmcp_bridge.lab.ffi import Proxies\nx = json.loads(str(live.cells(handle)))\n"
    assert problems(source, live=True) == []
