"""A site's own tools (webmcp_bridge.contrib): contributions, extensions by name, failure isolation, discovery order,
observers; and the demo course's real contribution module (lite/content/.webmcp/course_tools.py) over the
in-memory host."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from helpers import REPO, builtin_toolsets, check_envelope, corpus_text, tool_definitions
from host_memory import MemoryWorkspace
from webmcp_bridge.calls.toolsets import words_of_query
from webmcp_bridge.contrib import (
    Annotations,
    CallContext,
    CallEvent,
    Contribution,
    Extension,
    KernelRun,
    NotebookInput,
    Tool,
    ToolInput,
    Toolset,
)
from webmcp_bridge.contrib.builtin import builtin_contributions
from webmcp_bridge.contrib.config import parse_entries
from webmcp_bridge.contrib.loading import SiteLoader
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.limits import DEFAULT_LIMITS, TOOL_BUDGET
from webmcp_bridge.session.bridge import Bridge, build_bridge

COURSE_MODULE = REPO / "lite" / "content" / ".webmcp" / "course_tools.py"
COURSE_NOTEBOOK = "course/word-counts.ipynb"
EULER = "demo/euler.ipynb"


def call(bridge: Bridge, name: str, arguments: Any = None) -> dict[str, Any]:
    result = asyncio.run(bridge.registry.call(name, arguments))
    check_envelope(result, bridge.limits)
    return result


def ok(bridge: Bridge, name: str, arguments: Any = None) -> dict[str, Any]:
    result = call(bridge, name, arguments)
    assert result["isError"] is False, result["structuredContent"]
    return result["structuredContent"]


def error(bridge: Bridge, name: str, arguments: Any, code: str) -> dict[str, Any]:
    result = call(bridge, name, arguments)
    assert result["isError"] is True and result["structuredContent"]["error"] == code, result["structuredContent"]
    return result["structuredContent"]


# -- a small contribution of our own, as a site author writes one ------------------------------------------


class ReadFirstLineInput(NotebookInput):
    cell_id: Annotated[str, Field(description="The cell.", min_length=1, max_length=256)]


async def read_first_line(ctx: CallContext, args: ReadFirstLineInput) -> dict[str, Any]:
    nb = await ctx.notebook(args.notebook_path)
    cell = nb.find_cell(args.cell_id)
    return {"cellId": cell.id, "firstLine": cell.source.split("\n", 1)[0]}


class EchoInput(ToolInput):
    text: Annotated[str, Field(description="Anything.", max_length=200_000)]
    times: Annotated[int, Field(description="How many copies.", ge=1, le=100)] = 1


async def echo(ctx: CallContext, args: EchoInput) -> dict[str, Any]:
    return {"text": args.text * args.times}


def site_contribution(name: str = "site", *extensions: Extension, **observers: Any) -> Contribution:
    return Contribution(
        name,
        toolsets=(
            Toolset(
                name,
                "A site's tools.",
                (
                    Tool(
                        f"{name}_first_line",
                        "First line",
                        "The first line of one cell.",
                        ReadFirstLineInput,
                        read_first_line,
                        Annotations(read_only=True),
                    ),
                    Tool(f"{name}_echo", "Echo", "Echo a text.", EchoInput, echo, Annotations(read_only=True)),
                ),
            ),
        ),
        extensions=extensions,
        **observers,
    )


def euler_workspace() -> MemoryWorkspace:
    return MemoryWorkspace({EULER: corpus_text("pytudes-euler.ipynb")})


def hide_cell(ws: MemoryWorkspace, path: str, index: int) -> str:
    """Give the cell at ``index`` the person's level ``none``; returns its id."""
    cell = ws.open[path].nb["cells"][index]
    cell.setdefault("metadata", {})["webmcp_bridge"] = {"access": "none"}
    return cell["id"]


# -- the bridge's own families are contributions ---------------------------------------------------------


def test_the_builtin_families_are_contributions_registered_like_any_other() -> None:
    contributions = builtin_contributions()
    assert [c.name for c in contributions] == [f"webmcp_bridge.{t.name}" for t in builtin_toolsets()]
    bridge = build_bridge(MemoryWorkspace({}))
    assert [t.name for t in bridge.registry.toolsets()] == [
        "notebooks",
        "calls",
        "access",
        "review",
        "files",
        "batch",
        "code",
        "variables",
        "search",
        "toolsets",
    ]
    assert len(bridge.registry.tools()) == 41
    assert [d["name"] for d in tool_definitions()] == [t.name for t in bridge.registry.tools()]
    assert len(bridge.diagnostics.entries) == 0


def test_a_site_tool_gets_validation_bounds_and_the_envelope() -> None:
    ws = euler_workspace()
    bridge = build_bridge(ws, contributions=[site_contribution()])
    assert [t.name for t in bridge.registry.toolsets()][-1] == "site"
    ok(bridge, "jupyter_open_notebook", {"path": EULER})
    first = ws.open[EULER].nb["cells"][0]
    assert (
        ok(bridge, "site_first_line", {"cellId": first["id"]})["firstLine"] == "".join(first["source"]).split("\n")[0]
    )
    problems = error(bridge, "site_first_line", {"cellId": first["id"], "cell_id": "x"}, "INVALID_ARGUMENT")["problems"]
    assert "cell_id" in problems[0]["msg"], problems
    error(bridge, "site_echo", {"text": "x", "times": "2"}, "INVALID_ARGUMENT")  # strict: no coercion
    error(bridge, "site_echo", {"text": "x" * (DEFAULT_LIMITS.input_bytes + 1)}, "TOO_LARGE")
    big = call(
        bridge, "site_echo", {"text": "é" * 150_000, "times": 1}
    )  # 300 kB of payload: cut under the cap by the registry
    assert len(big["content"][0]["text"].encode()) <= DEFAULT_LIMITS.result_bytes


class TreeNode(BaseModel):
    name: Annotated[str, Field(description="The node's name.", max_length=100)]
    children: Annotated[list[TreeNode], Field(description="Its children.", max_length=10)] = []


class TreeInput(ToolInput):
    root: Annotated[TreeNode, Field(description="A tree of names.")]


async def count_nodes(ctx: CallContext, args: TreeInput) -> dict[str, Any]:
    def size(node: TreeNode) -> int:
        return 1 + sum(size(child) for child in node.children)

    return {"nodes": size(args.root)}


def test_a_site_tool_whose_input_model_refers_to_itself_is_served_with_its_definitions_kept() -> None:
    tree_tool = Tool("site_tree", "Tree", "Count a tree's nodes.", TreeInput, count_nodes, Annotations(read_only=True))
    contribution = Contribution("site", toolsets=(Toolset("site", "A site's tools.", (tree_tool,)),))
    bridge = build_bridge(MemoryWorkspace({}), contributions=[contribution])
    assert len(bridge.diagnostics.entries) == 0, bridge.diagnostics
    definition = bridge.registry.definitions("site")[0]
    schema = definition["inputSchema"]
    assert schema["properties"]["root"]["$ref"] == "#/$defs/TreeNode"
    assert schema["$defs"]["TreeNode"]["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}, {"name": "d"}]}
    assert ok(bridge, "site_tree", {"root": tree}) == {"nodes": 4}
    error(bridge, "site_tree", {"root": {"children": []}}, "INVALID_ARGUMENT")


def test_a_site_tool_cannot_see_a_hidden_cell() -> None:
    ws = euler_workspace()
    bridge = build_bridge(ws, contributions=[site_contribution()])
    ok(bridge, "jupyter_open_notebook", {"path": EULER})
    secret = hide_cell(ws, EULER, 1)
    hidden = error(bridge, "site_first_line", {"cellId": secret}, "CELL_NOT_FOUND")
    unknown = error(bridge, "site_first_line", {"cellId": "no-such-cell"}, "CELL_NOT_FOUND")
    assert hidden == {**unknown, "cellId": secret, "message": unknown["message"].replace("no-such-cell", secret)}
    source = "".join(ws.open[EULER].nb["cells"][1]["source"])
    assert source.split("\n")[0] not in json.dumps(hidden)


# -- extending by name --------------------------------------------------------------------------------


def _recording(log: list[str], label: str):
    async def around(ctx: Any, args: Any, call_next: Any) -> dict[str, Any]:
        log.append(f"{label}>")
        result = await call_next(ctx, args)
        log.append(f"<{label}")
        return {**result, "via": [*result.get("via", []), label]}

    return around


def test_extensions_apply_in_their_declared_order_whatever_the_load_order() -> None:
    log: list[str] = []
    a = site_contribution(
        "a", Extension("b_echo", order=20, description="Echo, described by a.", around=_recording(log, "a"))
    )
    b = site_contribution("b")
    c = Contribution(
        "c",
        extensions=(
            Extension("b_echo", order=10, description="Echo, described by c.", around=_recording(log, "c")),
            Extension("b_echo", order=20, title="Echo (c)"),
        ),
    )
    outcomes = set()
    for permutation in itertools.permutations([a, b, c]):
        log.clear()
        bridge = build_bridge(MemoryWorkspace({}), contributions=list(permutation))
        definition = next(d for d in bridge.registry.definitions() if d["name"] == "b_echo")
        payload = ok(bridge, "b_echo", {"text": "hi"})
        assert [d["name"] for d in bridge.registry.definitions()].count("b_echo") == 1  # one tool, not two
        outcomes.add((definition["description"], definition["title"], tuple(payload["via"]), tuple(log)))
    # order 10 (c) wraps first, then order 20: a before c (names break the tie): a's wrap is outermost
    assert outcomes == {("Echo, described by a.", "Echo (c)", ("c", "a"), ("a>", "c>", "<c", "<a"))}


def test_a_narrowed_builtin_tool_is_one_tool_that_refuses_what_it_no_longer_takes() -> None:
    class NotesOnly(ToolInput):
        path: Annotated[str, Field(description="Under notes/.", pattern=r"^notes/[^/]+$", max_length=100)]
        content: Annotated[str, Field(description="The text.")]

    narrow = Contribution(
        "narrow",
        extensions=(Extension("jupyter_write_file", input_model=NotesOnly, description="Write under notes/ only."),),
    )
    ws = MemoryWorkspace({"notes/a.md": "a", "b.md": "b"})
    bridge = build_bridge(ws, contributions=[narrow])
    definitions = [d for d in bridge.registry.definitions() if d["name"] == "jupyter_write_file"]
    assert len(definitions) == 1 and len(bridge.registry.tools()) == 41
    assert set(definitions[0]["inputSchema"]["properties"]) == {"path", "content"}
    assert definitions[0]["description"] == "Write under notes/ only."
    error(bridge, "jupyter_write_file", {"path": "elsewhere.md", "content": "x"}, "INVALID_ARGUMENT")
    error(bridge, "jupyter_write_file", {"path": "notes/c.md", "content": "x", "overwrite": True}, "INVALID_ARGUMENT")
    assert "elsewhere.md" not in ws.files
    assert ok(bridge, "jupyter_write_file", {"path": "notes/c.md", "content": "x"})["created"] is True
    assert ws.files["notes/c.md"] == "x"
    error(
        bridge, "jupyter_write_file", {"path": "notes/a.md", "content": "y"}, "PATH_EXISTS"
    )  # the tool's own rules still hold


def two_cells(first: str, second: str) -> MemoryWorkspace:
    """A workspace with ``nb.ipynb``: two code cells, ids ``a`` and ``b``."""
    return MemoryWorkspace(
        {
            "nb.ipynb": json.dumps(
                {
                    "cells": [
                        {
                            "cell_type": "code",
                            "id": "a",
                            "metadata": {},
                            "outputs": [],
                            "execution_count": None,
                            "source": first,
                        },
                        {
                            "cell_type": "code",
                            "id": "b",
                            "metadata": {},
                            "outputs": [],
                            "execution_count": None,
                            "source": second,
                        },
                    ],
                    "metadata": {},
                    "nbformat": 4,
                    "nbformat_minor": 5,
                }
            )
        }
    )


def test_fixed_values_leave_the_schema_and_are_forced() -> None:
    ws = two_cells("1/0", "print('b ran')")
    keep_going = Contribution("keep-going", extensions=(Extension("jupyter_run_cells", fixed={"stopOnError": False}),))
    bridge = build_bridge(ws, contributions=[keep_going])
    schema = next(d for d in bridge.registry.definitions() if d["name"] == "jupyter_run_cells")["inputSchema"]
    assert "stopOnError" not in schema["properties"] and "cellIds" in schema["properties"]
    ok(bridge, "jupyter_open_notebook", {"path": "nb.ipynb"})
    error(bridge, "jupyter_run_cells", {"stopOnError": True}, "INVALID_ARGUMENT")
    statuses = [c["status"] for c in ok(bridge, "jupyter_run_cells", {})["results"]]
    assert statuses == ["error", "ok"], statuses  # without the fixed value the second cell is skipped


def test_extending_a_tool_that_is_not_there_does_nothing_but_say_so() -> None:
    ghost = Contribution(
        "ghost",
        extensions=(
            Extension("jupyter_no_such_tool", description="Nothing."),
            Extension("site_echo", fixed={"noSuchArgument": 1}),
            Extension("site_echo", title="Echo!"),
        ),
    )
    bridge = build_bridge(MemoryWorkspace({}), contributions=[ghost, site_contribution()])
    assert [(d.name, d.kind) for d in bridge.diagnostics.entries] == [("ghost", "extension"), ("ghost", "extension")]
    assert "jupyter_no_such_tool" in bridge.diagnostics.entries[0].reason
    assert "noSuchArgument" in bridge.diagnostics.entries[1].reason
    assert next(d for d in bridge.registry.definitions() if d["name"] == "site_echo")["title"] == "Echo!"
    assert ok(bridge, "site_echo", {"text": "x"}) == {"text": "x"}
    assert [d for d in bridge.diagnostics.entries if d.severity == "error"] == []


def test_a_contribution_that_does_not_fit_contributes_nothing_and_the_others_load() -> None:
    duplicate_tool = Contribution(
        "dup",
        toolsets=(
            Toolset(
                "dup",
                "Dup.",
                (Tool("jupyter_get_context", "Again", "A second tool of a taken name.", EchoInput, echo),),
            ),
        ),
    )

    class NotStrict:  # not a ToolInput
        pass

    bad_model = Contribution(
        "bad-model",
        toolsets=(
            Toolset("bad-model", "Bad.", (Tool("bad_tool", "Bad", "Its model is no ToolInput.", NotStrict, echo),)),
        ),  # type: ignore[arg-type]
        extensions=(Extension("jupyter_get_context", description="Never applied."),),
    )
    bridge = build_bridge(
        MemoryWorkspace({}),
        contributions=[duplicate_tool, site_contribution("site"), bad_model, site_contribution("site")],
    )
    assert [(d.name, d.kind) for d in bridge.diagnostics.entries] == [
        ("dup", "build"),
        ("bad-model", "build"),
        ("site", "build"),
    ]
    assert "jupyter_get_context" in bridge.diagnostics.entries[0].reason
    names = [t.name for t in bridge.registry.tools()]
    assert names.count("jupyter_get_context") == 1 and "bad_tool" not in names and "site_echo" in names
    assert (
        next(d for d in bridge.registry.definitions() if d["name"] == "jupyter_get_context")["description"]
        != "Never applied."
    )
    assert ok(bridge, "jupyter_get_context")["diagnostics"] == bridge.diagnostics.to_json()
    with pytest.raises(ValueError):  # the bridge's own base is never silently cut
        build_bridge(MemoryWorkspace({}), toolsets=[builtin_toolsets()[0], builtin_toolsets()[0]])


# -- observers -----------------------------------------------------------------------------------------


def test_observers_see_every_call_and_kernel_run_and_one_that_raises_is_reported_once() -> None:
    calls: list[CallEvent] = []
    runs: list[KernelRun] = []

    def broken(event: CallEvent) -> None:
        raise RuntimeError("telemetry endpoint down")

    watcher = Contribution("watcher", on_call=(calls.append, broken), on_run=(runs.append, broken))
    bridge = build_bridge(two_cells("x = 6 * 7", "x"), contributions=[watcher])
    ok(bridge, "jupyter_open_notebook", {"path": "nb.ipynb"})
    ok(bridge, "jupyter_run_cells", {"cellIds": ["a"]})
    ok(bridge, "jupyter_run_code", {"code": "print(6 * 7)"})
    error(bridge, "jupyter_get_cells", {"cellIds": ["nope"]}, "CELL_NOT_FOUND")
    assert [(e.tool, e.outcome) for e in calls] == [
        ("jupyter_open_notebook", "ok"),
        ("jupyter_run_cells", "ok"),
        ("jupyter_run_code", "ok"),
        ("jupyter_get_cells", "CELL_NOT_FOUND"),
    ]
    assert all(e.duration is not None and e.duration >= 0 for e in calls)
    assert '"cellIds": ["nope"]' in calls[-1].arguments
    assert [(r.kind, r.cell_id, r.tool, r.status) for r in runs] == [
        ("cell", "a", "jupyter_run_cells", "ok"),
        ("code", None, "jupyter_run_code", "ok"),
    ]
    assert [r.call_id for r in runs] == [calls[1].call_id, calls[2].call_id]
    assert [(d.name, d.kind) for d in bridge.diagnostics.entries] == [
        (
            "watcher: "
            "test_observers_see_every_call_and_kernel_run_and_one_that_raises_is_reported_once.<locals>.broken",
            "hook",
        )
    ]
    assert "telemetry endpoint down" in bridge.diagnostics.entries[0].reason


# -- the site's configuration and its files --------------------------------------------------------------


def test_discovery_is_sorted_deduplicated_and_skips_what_is_not_usable() -> None:
    page = [
        "tools/b.py",
        "tools/a.py",
        "./tools/b.py",
        "../x.py",
        "/abs.py",
        "tools/c.txt",
        3,
        "tools/def.py",
        "w/site_tools-1.0-py3-none-any.whl",
        "w/fast-1.0-cp314-cp314-pyemscripten_2026_0_wasm32.whl",
    ]
    settings = ["other/a.py", "tools/a.py", "z.py"]
    one, problems_one = parse_entries(("page config", page), ("settings", settings))
    two, problems_two = parse_entries(("settings", list(reversed(settings))), ("page config", list(reversed(page))))
    assert one == two
    assert [(e.path, e.kind, e.module) for e in one] == [
        ("other/a.py", "module", "a"),
        ("tools/b.py", "module", "b"),
        ("w/site_tools-1.0-py3-none-any.whl", "wheel", "site_tools"),
        ("z.py", "module", "z"),
    ]
    reasons = " | ".join(reason for _name, reason in problems_one)
    for bad in (
        "'..'",
        "absolute",
        "neither a Python module",
        "not a path",
        "not an importable module name",
        "not a pure-Python wheel",
        "already the one of other/a.py",
    ):
        assert bad in reasons, (bad, problems_one)
    assert parse_entries(("page config", "tools/a.py"))[1] == [("page config", "is not a list of paths; ignored")]


@pytest.fixture
def loader(tmp_path: Path):
    """A SiteLoader over a dict of site files; modules it imported are forgotten afterwards."""
    files: dict[str, bytes] = {}

    async def fetch(path: str) -> bytes:
        if path not in files:
            raise FileNotFoundError(f"404 for files/{path}")
        return files[path]

    diagnostics = Diagnostics()
    site = SiteLoader(fetch, tmp_path / "site", diagnostics)
    site.files = files  # type: ignore[attr-defined]
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path))]


def load(site: SiteLoader, *paths: str) -> list[Contribution]:
    entries, problems = parse_entries(("page config", list(paths)))
    assert problems == []
    return asyncio.run(site.load(entries))


GOOD_MODULE = """
from typing import Annotated
from pydantic import Field
from webmcp_bridge.contrib import Annotations, Contribution, Tool, ToolInput, Toolset

class HelloInput(ToolInput):
    name: Annotated[str, Field(description="Who.", max_length=50)]

async def hello(ctx, args):
    return {"greeting": "Hello, " + args.name}

CONTRIBUTIONS = [Contribution("hello", toolsets=(Toolset("hello", "Greetings.", (
    Tool("site_hello", "Hello", "Greets.", HelloInput, hello, Annotations(read_only=True)),)),))]
"""


def test_a_contribution_that_fails_to_import_or_build_is_reported_and_the_others_load(loader: SiteLoader) -> None:
    loader.files.update(
        {  # type: ignore[attr-defined]
            "site/a_raises.py": b"x = 1\nraise RuntimeError('no network here')\n",
            "site/b_syntax.py": b"def broken(:\n    pass\n",
            "site/c_nothing.py": b"TOOLS = []\n",
            "site/d_good.py": GOOD_MODULE.encode(),
            "site/json.py": b"CONTRIBUTIONS = []\n",
            "site/f_wrong.py": b"CONTRIBUTIONS = ['site_hello']\n",
        }
    )
    contributions = load(
        loader,
        "site/a_raises.py",
        "site/b_syntax.py",
        "site/c_nothing.py",
        "site/d_good.py",
        "site/e_missing.py",
        "site/f_wrong.py",
        "site/json.py",
    )
    assert [c.name for c in contributions] == ["hello"]
    found = [(d.name, d.kind, d.reason) for d in loader.diagnostics.entries]
    assert [(n, k) for n, k, _r in found] == [
        ("site/a_raises.py", "import"),
        ("site/b_syntax.py", "import"),
        ("site/c_nothing.py", "build"),
        ("site/e_missing.py", "fetch"),
        ("site/f_wrong.py", "build"),
        ("site/json.py", "import"),
    ]
    assert "RuntimeError: no network here (line 2)" in found[0][2]
    assert "SyntaxError" in found[1][2] and "(line 1)" in found[1][2] and "broken" not in found[1][2]
    assert (
        "already taken" in found[5][2]
        and sys.modules["json"].__name__ == "json"
        and hasattr(sys.modules["json"], "dumps")
    )
    bridge = build_bridge(MemoryWorkspace({}), contributions=contributions, diagnostics=loader.diagnostics)
    assert ok(bridge, "site_hello", {"name": "Ada"}) == {"greeting": "Hello, Ada"}
    assert ok(bridge, "jupyter_list_workspace")["entries"] == []
    assert [d["kind"] for d in ok(bridge, "jupyter_get_context")["diagnostics"]] == [
        "import",
        "import",
        "build",
        "fetch",
        "build",
        "import",
    ]


def test_a_pure_python_wheel_is_a_contribution_too(loader: SiteLoader, tmp_path: Path) -> None:
    wheel = tmp_path / "greet_tools-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("greet_tools/__init__.py", GOOD_MODULE)
        archive.writestr(
            "greet_tools-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: greet-tools\nVersion: 1.0\n"
        )
    loader.files["wheels/greet_tools-1.0-py3-none-any.whl"] = wheel.read_bytes()  # type: ignore[attr-defined]
    loader.files["wheels/empty-1.0-py3-none-any.whl"] = b"not a zip"  # type: ignore[attr-defined]
    contributions = load(loader, "wheels/greet_tools-1.0-py3-none-any.whl", "wheels/empty-1.0-py3-none-any.whl")
    assert [c.name for c in contributions] == ["hello"]
    assert [(d.name, d.kind) for d in loader.diagnostics.entries] == [("wheels/empty-1.0-py3-none-any.whl", "import")]
    bridge = build_bridge(MemoryWorkspace({}), contributions=contributions)
    assert ok(bridge, "site_hello", {"name": "wheel"}) == {"greeting": "Hello, wheel"}


# -- the demo course (the shipped contribution module, as the site serves it) -----------------------------


@pytest.fixture
def course(loader: SiteLoader):
    loader.files[".webmcp/course_tools.py"] = COURSE_MODULE.read_bytes()  # type: ignore[attr-defined]
    contributions = load(loader, ".webmcp/course_tools.py")
    notebook = (REPO / "lite" / "content" / COURSE_NOTEBOOK).read_text(encoding="utf-8")
    ws = MemoryWorkspace({COURSE_NOTEBOOK: notebook, "course/answers/README.md": "answers"})
    runs: list[KernelRun] = []
    bridge = build_bridge(ws, contributions=[*contributions, Contribution("runs", on_run=(runs.append,))])
    bridge.runs = runs  # type: ignore[attr-defined]
    ok(bridge, "jupyter_open_notebook", {"path": COURSE_NOTEBOOK})
    return bridge, ws


def hidden_checks() -> list[str]:
    namespace: dict[str, Any] = {}
    exec(compile(COURSE_MODULE.read_text(encoding="utf-8"), str(COURSE_MODULE), "exec"), namespace)
    return [check for _function, tests in namespace["EXERCISES"].values() for _name, _hint, check in tests]


def test_check_exercise_gives_a_verdict_and_never_the_hidden_tests(course) -> None:
    bridge, ws = course
    nb = ws.open[COURSE_NOTEBOOK]
    namespace_before, revision = set(nb._namespace), nb.revision()
    result = call(bridge, "check_exercise", {"exercise": "word-counts"})
    verdict = result["structuredContent"]
    assert verdict["status"] == "checked" and verdict["cellId"] == "answer"
    assert "outputSchema" in next(
        d for d in bridge.registry.definitions() if d["name"] == "check_exercise"
    )  # results checked against it (conftest)
    assert [(t["name"], t["passed"]) for t in verdict["tests"]] == [
        ("counts repeated words", True),
        ("ignores case", False),
        ("ignores punctuation around words", False),
        ("empty text", True),
    ]
    assert (verdict["passed"], verdict["total"], verdict["allPassed"]) == (2, 4, False)
    text = json.dumps(result)
    for check in hidden_checks():
        assert check not in text and check.split("==")[0].strip() not in text
    assert (
        set(nb._namespace) - {"__builtins__"} == namespace_before and nb.revision() == revision
    )  # nothing left in the kernel or notebook
    assert [(r.tool, r.kind, r.status) for r in bridge.runs] == [("check_exercise", "code", "ok")]
    nb.nb["cells"][1]["source"] = (
        "import string\n\ndef word_counts(text):\n    counts = {}\n    for word in text.lower().split():\n"
        "        word = word.strip(string.punctuation)\n        if word:\n"
        "            counts[word] = counts.get(word, 0) + 1\n    return counts\n"
    )
    assert ok(bridge, "check_exercise", {"exercise": "word-counts", "cellId": "answer"})["allPassed"] is True
    nb.nb["cells"][1]["source"] = "print('noise ' * 10000)\ndef word_counts(text):\n    raise ValueError('no')\n"
    failing = ok(bridge, "check_exercise", {"exercise": "word-counts", "cellId": "answer"})
    assert failing["passed"] == 0 and all("raised an exception" in t["hint"] for t in failing["tests"])
    assert "noise" not in json.dumps(failing)


def test_check_exercise_goes_through_the_guard_and_propose_mode(course) -> None:
    bridge, ws = course
    hide_cell(ws, COURSE_NOTEBOOK, 1)
    error(bridge, "check_exercise", {"exercise": "word-counts", "cellId": "answer"}, "CELL_NOT_FOUND")
    error(
        bridge, "check_exercise", {"exercise": "word-counts"}, "CELL_NOT_FOUND"
    )  # the hidden answer is not found either
    assert bridge.runs == []
    ws.open[COURSE_NOTEBOOK].nb["cells"][1]["metadata"] = {}
    bridge.proposals.set_mode("propose")

    async def denied() -> dict[str, Any]:
        task = asyncio.ensure_future(bridge.registry.call("check_exercise", {"exercise": "word-counts"}))
        while not bridge.proposals.waiting():
            await asyncio.sleep(0.01)
        proposal = bridge.proposals.waiting()[0]
        # a site author's tool that is not read-only is held as a whole, showing its arguments, before it runs
        assert (proposal.tool, proposal.kind, proposal.scope, proposal.cell_id) == (
            "check_exercise",
            "site_tool",
            "workspace",
            None,
        )
        assert any("word-counts" in line for _op, line in proposal.diff or [])
        bridge.proposals.deny(proposal.id, "not now")
        return await task

    result = asyncio.run(denied())
    assert result["isError"] is False and result["structuredContent"]["status"] == "denied", result
    assert bridge.runs == []  # nothing ran in the kernel

    async def accepted() -> dict[str, Any]:
        task = asyncio.ensure_future(bridge.registry.call("check_exercise", {"exercise": "word-counts"}))
        while not bridge.proposals.waiting():
            await asyncio.sleep(0.01)
        [proposal] = bridge.proposals.waiting()
        bridge.proposals.accept(proposal.id)
        return await task

    result = asyncio.run(accepted())  # accepted as a whole: its own proposal is not asked again
    assert result["isError"] is False and result["structuredContent"]["status"] == "checked", result
    assert len(bridge.runs) == 1


def test_the_course_is_a_toolset_the_page_turns_on_like_the_bridges_own(course) -> None:
    """A site's toolset is off on the default page (which stays within the budget), listed and turned on by
    jupyter_toolsets, and chosen by the page URL's ?toolsets= like the bridge's own."""
    bridge, _ws = course
    switch = bridge.toolsets
    switch.choose()  # the default page: no ?toolsets=, no setting
    served = {d["name"] for d in bridge.registry.definitions()}
    assert len(served) <= TOOL_BUDGET and "check_exercise" not in served
    assert error(bridge, "check_exercise", {"exercise": "word-counts"}, "UNKNOWN_TOOL")["toolset"] == "course"
    listed = next(t for t in ok(bridge, "jupyter_toolsets")["toolsets"] if t["name"] == "course")
    assert listed["tools"] == ["check_exercise"] and listed["enabled"] is False and listed["description"]
    turned = ok(bridge, "jupyter_toolsets", {"enable": ["course"]})
    assert turned["changed"] == ["course"] and turned["registeredToolCount"] == len(served) + 1
    assert ok(bridge, "check_exercise", {"exercise": "word-counts"})["status"] == "checked"
    switch.query_words = words_of_query(f"?path={COURSE_NOTEBOOK}&toolsets=default,course")
    assert switch.choose() == [] and sorted(switch.on()) == ["calls", "course", "notebooks", "toolsets"]
    switch.query_words = words_of_query("?toolsets=all")
    switch.choose()
    assert {d["name"] for d in bridge.registry.definitions()} == {t.name for t in bridge.registry.tools()}


def test_the_course_narrows_jupyter_write_file_to_its_answers_folder(course) -> None:
    bridge, ws = course
    definitions = [d for d in bridge.registry.definitions() if d["name"] == "jupyter_write_file"]
    assert len(definitions) == 1 and "course/answers/" in definitions[0]["description"]
    before = dict(ws.files)
    error(bridge, "jupyter_write_file", {"path": "course/notes.md", "content": "x"}, "INVALID_PATH")
    error(bridge, "jupyter_write_file", {"path": "./course/answers/../x.md", "content": "x"}, "INVALID_PATH")
    error(bridge, "jupyter_write_file", {"path": "course/answers", "content": "x", "extra": 1}, "INVALID_ARGUMENT")
    assert ws.files == before
    assert ok(bridge, "jupyter_write_file", {"path": "course/answers/mine.md", "content": "x"})["created"] is True
    assert (
        ok(bridge, "jupyter_write_file", {"path": "notes.md", "content": "y"})["created"] is True
    )  # outside the course: as before
    assert {p: t for p, t in ws.files.items() if p not in before} == {"course/answers/mine.md": "x", "notes.md": "y"}


def test_the_readme_example_is_a_working_contribution(loader: SiteLoader) -> None:
    """The module a site author copies from the README ("Add your own tool"), loaded as the page loads it."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Add your own tool") :]
    code = textwrap.dedent(section.split("```python\n", 1)[1].split("```", 1)[0])
    config = json.loads(textwrap.dedent(section.split("```json\n", 1)[1].split("```", 1)[0]))
    [path] = config["jupyter-config-data"]["webmcpBridgeContributions"]
    loader.files[path] = code.encode()  # type: ignore[attr-defined]
    contributions = load(loader, path)
    ws = euler_workspace()
    bridge = build_bridge(ws, contributions=contributions, diagnostics=loader.diagnostics)
    assert len(bridge.diagnostics.entries) == 0 and len(bridge.registry.tools()) == 42
    ok(bridge, "jupyter_open_notebook", {"path": EULER})
    first = ws.open[EULER].nb["cells"][0]
    assert (
        ok(bridge, "site_first_line", {"cellId": first["id"]})["firstLine"] == "".join(first["source"]).split("\n")[0]
    )
    error(bridge, "site_first_line", {"cellId": hide_cell(ws, EULER, 0)}, "CELL_NOT_FOUND")
