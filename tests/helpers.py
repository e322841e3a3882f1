"""Shared helpers of the CPython test suite of webmcp_bridge (imported by the tests; the fixtures are in conftest.py).

The tests drive the real tool registry (the ``notebooks`` toolset) over the in-memory host
(:class:`host_memory.MemoryWorkspace`), fed with the real notebook corpus. Every call goes
through :meth:`Bridge.call`, which checks the envelope invariants that hold for every tool call (one
JSON text block equal to ``structuredContent``, ``isError`` a bool, error codes from the closed list,
the whole result under the result cap), so each test gets those checks for free.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, cast

from mcp.types import CallToolResult

from host_memory import MemoryWorkspace
from host_remote import RemoteHost, loopback_host
from host_wire import WireServer
from webmcp_bridge.calls.registry import Toolset
from webmcp_bridge.contrib.builtin import builtin_contributions
from webmcp_bridge.core.errors import ErrorCode
from webmcp_bridge.core.limits import DEFAULT_LIMITS, PANEL_PREVIEW_BYTES, Limits, preview
from webmcp_bridge.host.protocol import NotebookHost
from webmcp_bridge.lab.ui.i18n import Text, _
from webmcp_bridge.review.threads import Review
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import files_toolset, notebooks_toolset

REPO = Path(__file__).resolve().parents[1]
ERROR_CODES = {c.value for c in ErrorCode}


#: the notebooks the tests read: the site's demo notebooks plus the test-only ones, both in the repository
#: (sources and licences in each folder's LICENSES.md); nothing outside the checkout is consulted
CORPUS_DIRS = (REPO / "tests" / "notebooks", REPO / "lite" / "content")


@cache
def builtin_toolsets() -> list[Toolset]:
    """The built-in toolsets, in registration order (the toolsets of the built-in contributions)."""
    return [toolset for contribution in builtin_contributions() for toolset in contribution.toolsets]


def tool_definitions(limits: Limits = DEFAULT_LIMITS) -> list[dict[str, Any]]:
    """The WebMCP definitions of every built-in tool, every toolset on (no host needed)."""
    return build_bridge(cast(NotebookHost, None), limits=limits).registry.definitions()


def corpus_text(name: str) -> str:
    """The exact text of one corpus notebook.

    Raises FileNotFoundError (the test errors, it never skips) when ``name`` is in neither folder of
    :data:`CORPUS_DIRS`.
    """
    for folder in CORPUS_DIRS:
        path = folder / name
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"test notebook {name} is in neither tests/notebooks nor lite/content")


def corpus_json(name: str) -> dict[str, Any]:
    return json.loads(corpus_text(name))


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else "".join(value)


#: how the tests' bridges reach their MemoryWorkspace: "direct" (in-process, as in the page today) or "wire" (every
#: host call as JSON messages: RemoteHost over a loopback to a WireServer, docs/WORKER.md); set per test by the
#: ``host_route`` fixture (conftest.py)
HOST_ROUTE = {"route": "direct"}


class Bridge:
    """A registry over a MemoryWorkspace, with a synchronous ``call`` that checks the envelope.

    The registry holds the workspace itself, or (route "wire", :data:`HOST_ROUTE`) a
    :class:`~host_remote.RemoteHost` over the wire to it (``remote``; None on the direct route). A
    test acts as the person on ``ws`` either way (the main thread's side)."""

    def __init__(
        self, files: dict[str, str], limits: Limits = DEFAULT_LIMITS, toolsets: Sequence[Toolset] | None = None
    ) -> None:
        self.ws = MemoryWorkspace(files)
        self.limits = limits
        self.remote: RemoteHost | None = None
        host: Any = self.ws
        if HOST_ROUTE["route"] == "wire":
            self.remote = loopback_host(WireServer(self.ws, self.ws.dialogs))
            host = self.remote.as_host()
        # the core tools of the contract: the notebooks toolset, and the files toolset with jupyter_export_notebook
        self.reg = build_bridge(
            host, limits=limits, toolsets=list(toolsets or [notebooks_toolset(), files_toolset()])
        ).registry

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        result = asyncio.run(self.reg.call(name, arguments))
        check_envelope(result, self.limits)
        return result

    def ok(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """Call and assert success; returns ``structuredContent``."""
        result = self.call(name, arguments)
        assert result["isError"] is False, result["structuredContent"]
        return result["structuredContent"]

    def nb(self, path: str):
        return self.ws.open[path]

    def person(self, path: str) -> Review:
        """The review threads of the open notebook at ``path`` as the person's panel acts on them: signed and judged
        with this session's page secret (the key the tools judge with)."""
        return Review(self.ws.open[path], key=self.reg.context.page_secret())

    def open(self, path: str) -> dict[str, Any]:
        return self.ok("jupyter_open_notebook", {"path": path})

    def state(self) -> tuple[dict[str, str], dict[str, str]]:
        """Everything a failing call must not change: each open notebook's JSON and the files."""
        notebooks = {p: json.dumps(nb.nb, sort_keys=True) for p, nb in self.ws.open.items()}
        return notebooks, dict(self.ws.files)

    def fails(self, name: str, arguments: Any, code: str) -> dict[str, Any]:
        """Call, assert it fails with ``code`` and that no open notebook and no file changed."""
        before_nbs, before_files = self.state()
        revisions = {p: nb.revision() for p, nb in self.ws.open.items()}
        result = self.call(name, arguments)
        payload = result["structuredContent"]
        assert result["isError"] is True, payload
        assert payload["error"] == code, payload
        after_nbs, after_files = self.state()
        for path, text in before_nbs.items():
            assert after_nbs[path] == text, f"{name} failed with {code} but changed {path}"
            assert self.ws.open[path].revision() == revisions[path]
        assert after_files == before_files, f"{name} failed with {code} but changed workspace files"
        return payload


def check_envelope(result: dict[str, Any], limits: Limits) -> None:
    """The invariants of every CallToolResult the registry returns, first as the MCP SDK's own model reads it
    (``mcp.types.CallToolResult``: a key or block it does not know, or one it reads differently, fails)."""
    assert set(result) >= {"content", "structuredContent", "isError"}
    assert set(result) <= {"content", "structuredContent", "isError", "_meta"}, sorted(result)
    parsed = CallToolResult.model_validate(result)
    assert parsed.is_error is result["isError"] and parsed.structured_content == result["structuredContent"]
    assert [b.model_dump(by_alias=True, exclude_none=True, mode="json") for b in parsed.content] == result["content"]
    assert isinstance(result["isError"], bool)
    content = result["content"]
    assert content and content[0]["type"] == "text"
    text = content[0]["text"]
    assert json.loads(text) == result["structuredContent"]
    assert len(text.encode("utf-8")) <= limits.result_bytes  # strict UTF-8: no lone surrogates either
    for block in content[1:]:
        assert block["type"] == "image" and set(block) == {"type", "data", "mimeType"}
    payload = result["structuredContent"]
    if result["isError"]:
        assert payload["error"] in ERROR_CODES, payload
        assert isinstance(payload["message"], str) and payload["message"]


def make_bridge(
    notebooks: dict[str, str], extra_files: dict[str, str] | None = None, limits: Limits = DEFAULT_LIMITS
) -> Bridge:
    """A Bridge whose workspace holds ``{workspace path: corpus file name}`` plus ``extra_files`` texts."""
    files = {path: corpus_text(name) for path, name in notebooks.items()}
    files.update(extra_files or {})
    return Bridge(files, limits)


def find_cell(bridge: Bridge, path: str, predicate) -> dict[str, Any]:
    """The first snapshot (from jupyter_get_cells with outputs) matching ``predicate``."""
    start = 0
    while True:
        payload = bridge.ok(
            "jupyter_get_cells",
            {"notebookPath": path, "includeOutputs": True, "startIndex": start, "endIndex": start + 40},
        )
        for cell in payload["cells"]:
            if predicate(cell):
                return cell
        if not payload["cells"] or payload["cells"][-1]["index"] + 1 >= payload["cellCount"]:
            raise AssertionError("no matching cell")
        start = payload["cells"][-1]["index"] + 1


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A published ``outputSchema`` with every declared object closed: ``additionalProperties: false`` on each object
    schema with ``properties`` that does not say otherwise, and ``unevaluatedProperties: false`` at the root (whose
    ``properties`` and ``anyOf`` branches together declare a payload's keys). A real result with a key its schema
    does not declare then fails, so the models cannot drift from the payloads."""

    def close(node: Any, root_branch: bool = False) -> Any:
        if isinstance(node, dict):
            out = {k: close(v) if k not in ("properties", "anyOf") else node[k] for k, v in node.items()}
            if "properties" in node:
                out["properties"] = {name: close(sub) for name, sub in node["properties"].items()}
            if "anyOf" in node:
                out["anyOf"] = [close(branch) for branch in node["anyOf"]]
            if "properties" in node and "additionalProperties" not in node and not root_branch:
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [close(v) for v in node]
        return node

    closed = {k: v for k, v in schema.items() if k != "anyOf"}
    closed["properties"] = {name: close(sub) for name, sub in schema.get("properties", {}).items()}
    closed["anyOf"] = [close(branch, root_branch=True) for branch in schema["anyOf"]]
    closed["unevaluatedProperties"] = False
    return closed


_VALIDATORS: dict[int, Any] = {}
#: tool name -> successful results checked against the tool's outputSchema in this test session (conftest.py)
CHECKED_OUTPUTS: dict[str, int] = {}


def check_output_schema(tool: Any, result: dict[str, Any]) -> None:
    """A successful result of ``tool`` (a registry Tool with an output model) is valid against its ``outputSchema``,
    closed (:func:`closed_schema`); checked on the JSON text the agent reads. Fails naming the tool, the key path and
    the reason."""
    import jsonschema

    # keyed by id but holding the tool too: an id is only unique while its object lives, and a collected tool's id
    # may be reused by another tool (which would then be checked against the wrong schema)
    kept, validator = _VALIDATORS.get(id(tool), (None, None))
    if kept is not tool or validator is None:
        schema = closed_schema(tool.output_schema())
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        _VALIDATORS[id(tool)] = (tool, validator)
    payload = json.loads(result["content"][0]["text"])
    problems = sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
    if problems:
        best = jsonschema.exceptions.best_match(problems)
        raise AssertionError(
            f"{tool.name}: the result does not match its outputSchema at {list(best.absolute_path)}: "
            f"{best.message[:500]}\npayload: {json.dumps(payload)[:1500]}"
        )


def run_node(script: str, *args: str) -> dict[str, Any]:
    """Run the JavaScript ``script`` (text) under Node with ``args`` and return the JSON its last stdout line prints.

    Fails the test (never skips) when Node is missing or the script exits non-zero (its stderr in the message).
    Used by the tests of the JS halves, which run them against stand-ins for JupyterLab's objects."""
    node = shutil.which("node")
    if node is None:
        import pytest

        pytest.fail(
            "node is needed to run the JS halves (apt-get install -y nodejs; .ci/run installs npm, which brings it)"
        )
    done = subprocess.run([node, "-e", script, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


#: notebook.js, the live notebooks' JS half, for its tests under Node (:func:`run_notebook_js`)
NOTEBOOK_JS = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab" / "notebook.js"

#: what every Node test of notebook.js starts with: the half evaluated as ``live`` and configured as lab/notebook.py
#: configures it (ANSI escapes pattern, no hidden MIME types, the metadata key, bounds), and ``signal()``, a stand-in
#: for a Lumino signal (``connect``, ``disconnect``, ``emit``; its listeners in ``slots``)
NOTEBOOK_JS_PRELUDE = r"""
const fs = require("fs");
const live = eval(fs.readFileSync(process.argv[1], "utf8"));
live.configure("\\x1b\\[[0-9;]*m", "[]", "webmcp_bridge", 100, 200);
const signal = () => {
  const slots = [];
  return { slots, connect(fn) { slots.push(fn); },
           disconnect(fn) { const i = slots.indexOf(fn); if (i >= 0) slots.splice(i, 1); },
           emit(...args) { for (const fn of [...slots]) fn(...args); } };
};
"""


def run_notebook_js(script: str) -> dict[str, Any]:
    """Run ``script`` under Node after :data:`NOTEBOOK_JS_PRELUDE` (``live``, ``signal``) and return the JSON its last
    stdout line prints (:func:`run_node`)."""
    return run_node(NOTEBOOK_JS_PRELUDE + script, str(NOTEBOOK_JS))


class StandInProxy:
    """Stands in for a Pyodide proxy (lab/ffi.py ``Proxies``' factories) under CPython: calls the function it was made
    of until ``destroy()``, after which a call raises TypeError (None is not callable), as a destroyed proxy fails."""

    def __init__(self, fn: Any) -> None:
        self.fn: Any = fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def destroy(self) -> None:
        self.fn = None


def first_line(source: str, max_bytes: int = PANEL_PREVIEW_BYTES) -> Text:
    """The first non-blank line of a source, bounded (``(empty)`` for an empty cell), as the panel's cell rows say
    it: the stand-ins' version of what ``notebook.js`` reads for ``OpenNotebooks.cells``."""
    for line in source.splitlines():
        if line.strip():
            return preview(line.strip(), max_bytes)
    return _("(empty)")
