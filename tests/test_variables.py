"""jupyter_list_variables and jupyter_inspect_variable: the bridge's fixed inspection program
(core/kernel_inspect.py) run under CPython on real objects (builtins, classes, functions, numpy arrays), in a real
IPython shell (its history and execution count left as they were), and the tools through the whole bridge on the
memory host (whose kernel is Python's exec): names passed as data, the run rule while something is hidden, and
none of the notebook's code run by the inspection (objects planted to leak a secret, patched builtins and
modules)."""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import io
import json
import sys
from typing import Any

import numpy as np
import pytest

from host_memory import MemoryWorkspace
from test_run_consent import notebook, start, waiting_call
from webmcp_bridge.access.run_consent import HIDDEN_CELLS, HIDDEN_NOTEBOOK
from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.kernel_inspect import (
    MARKER,
    PROGRAM,
    check_variable_name,
    inspection_code,
    new_nonce,
    read_answer,
)
from webmcp_bridge.core.limits import Limits
from webmcp_bridge.session.bridge import build_bridge

LIST = {"mode": "list", "offset": 0, "limit": 50, "budget": 40_000, "repr": 200}
INSPECT = {"mode": "inspect", "budget": 40_000, "repr": 200, "detail": 4096, "items": 20}


def run_program(namespace: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Exec the program in ``namespace`` as a kernel would, and read its one answer line from stdout."""
    nonce = new_nonce()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(inspection_code(nonce, arguments), "<inspection>", "exec"), namespace)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(nonce)  # exactly one line: nothing the objects print
    answer = read_answer(out.getvalue(), nonce)
    assert answer is not None
    return answer


class Noisy:
    """An object whose repr prints and warns (what the person's classes may do)."""

    def __init__(self) -> None:
        self.size = 3
        self.label = "box"
        self._private = 1

    def __repr__(self) -> str:
        import warnings

        print("repr called")
        warnings.warn("noisy", stacklevel=1)
        return "Noisy(3)"


class Broken:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def person_namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(
        "import json\n"
        "x = 41\n"
        "text = 'hello ' * 200\n"
        "numbers = list(range(10_000))\n"
        "table = {'a': 1, 'b': [1, 2], 3: 'c'}\n"
        "def area(width, height=2):\n"
        "    '''The area of a rectangle.\n\n    In square units.'''\n"
        "    return width * height\n"
        "_hidden_helper = 5\n",
        ns,
    )
    ns.update(noisy=Noisy(), broken=Broken(), grid=np.arange(12, dtype=np.int32).reshape(3, 4))
    return ns


# -- the pure parts ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["df", "model_2", "_private", "é"])
def test_identifiers_are_taken(name):
    assert check_variable_name(name) == name


@pytest.mark.parametrize("name", ["df.head()", "a b", "x[0]", "import", "1x", "__import__('os').system('id')", ""])
def test_anything_but_an_identifier_is_refused(name):
    with pytest.raises(ToolError) as caught:
        check_variable_name(name)
    assert caught.value.code.value == "INVALID_ARGUMENT"


def test_the_arguments_are_data_in_one_dict_display_never_code():
    nonce = "webmcp-0123456789abcdef"
    code = inspection_code(nonce, {**INSPECT, "name": "x'); import os; ('"})
    assert code.startswith(MARKER + "\n")
    before, call = code.rsplit("\ntry:\n    _webmcp_inspect(", 1)
    assert before == PROGRAM.rsplit("\ntry:\n    _webmcp_inspect(", 1)[0]  # only the argument line differs
    literal = call.split(")\nfinally:", 1)[0]
    assert ast.literal_eval(literal)["name"] == "x'); import os; ('"  # a str literal inside a dict display
    with pytest.raises(TypeError):
        inspection_code(nonce, {**INSPECT, "name": object()})


def test_the_answer_is_found_by_its_nonce_and_a_cut_or_doubled_one_is_none():
    assert read_answer('noise\nwebmcp-1{"a": 1}\nmore', "webmcp-1") == {"a": 1}
    assert read_answer('webmcp-1{"a": 2}\nwebmcp-1{"a": 1}', "webmcp-1") is None  # a second line with the token
    assert read_answer('webmcp-1{"a": ', "webmcp-1") is None
    assert read_answer('webmcp-2{"a": 1}', "webmcp-1") is None
    assert read_answer("webmcp-1[1]", "webmcp-1") is None


# -- the program, under CPython on real objects -------------------------------------------------------------
def test_the_list_gives_names_types_sizes_and_short_reprs_and_leaves_nothing_behind():
    ns = person_namespace()
    names_before = set(ns)
    answer = run_program(ns, LIST)
    assert set(ns) == names_before  # the program's function is gone, nothing imported into the namespace
    by_name = {v["name"]: v for v in answer["variables"]}
    assert list(by_name) == sorted(by_name)  # name order
    assert set(by_name) == {"area", "broken", "grid", "noisy", "numbers", "table", "text", "x"}  # no module, no _
    assert by_name["x"] == {"name": "x", "type": "int", "repr": "41", "reprTruncated": False}
    assert by_name["numbers"]["length"] == 10_000 and len(by_name["numbers"]["repr"]) < 200
    assert by_name["text"]["length"] == 1200 and len(by_name["text"]["repr"].encode()) <= 200
    assert by_name["grid"]["type"] == "numpy.ndarray" and by_name["grid"]["shape"] == [3, 4]
    assert by_name["grid"]["dtype"] == "int32" and by_name["grid"]["repr"].startswith("array([[0, 1, 2, 3], [4,")
    assert by_name["noisy"]["repr"] == "<test_variables.Noisy object>"  # its own __repr__ is not run
    assert by_name["broken"]["repr"] == "<test_variables.Broken object>"
    assert by_name["table"]["repr"] == "{'a': 1, 'b': [1, 2], 3: 'c'}"  # a builtin container, written by the program
    assert by_name["area"]["type"] == "function" and by_name["area"]["repr"] == "<function area>"
    assert answer["total"] == 8 and answer["offset"] == 0 and answer["nextOffset"] is None


def test_the_list_pages_and_stops_before_its_byte_budget():
    ns = {f"v{i:03d}": "x" * 150 for i in range(120)}
    first = run_program(ns, {**LIST, "limit": 50})
    assert [v["name"] for v in first["variables"]] == [f"v{i:03d}" for i in range(50)] and first["nextOffset"] == 50
    last = run_program(ns, {**LIST, "offset": 100, "limit": 50})
    assert len(last["variables"]) == 20 and last["nextOffset"] is None and last["total"] == 120
    small = run_program(ns, {**LIST, "limit": 100, "budget": 2000})
    assert 0 < len(small["variables"]) < 15 and small["nextOffset"] == len(small["variables"])


def test_one_variable_in_detail_by_kind():
    ns = person_namespace()
    grid = run_program(ns, {**INSPECT, "name": "grid"})
    assert grid["defined"] is True and grid["shape"] == [3, 4] and grid["dtype"] == "int32"
    assert (grid["ndim"], grid["size"], grid["nbytes"]) == (2, 12, 48) and grid["repr"].startswith("array([[0,")
    table = run_program(ns, {**INSPECT, "name": "table"})
    assert table["length"] == 3 and table["items"][1] == {"key": "'b'", "type": "list", "repr": "[1, 2]"}
    numbers = run_program(ns, {**INSPECT, "name": "numbers", "items": 3})
    assert numbers["items"] == [{"type": "int", "repr": str(i)} for i in range(3)]
    area = run_program(ns, {**INSPECT, "name": "area"})
    assert area["signature"] == "(width, height=2)" and area["doc"] == "The area of a rectangle."
    noisy = run_program(ns, {**INSPECT, "name": "noisy"})
    assert noisy["type"] == "test_variables.Noisy" and noisy["attributeCount"] == 2
    assert noisy["attributes"] == [{"name": "size", "type": "int"}, {"name": "label", "type": "str"}]
    private = run_program(ns, {**INSPECT, "name": "_hidden_helper"})
    assert private["defined"] is True and private["repr"] == "5"  # not listed, but a name the person gave it
    assert run_program(ns, {**INSPECT, "name": "missing"}) == {"name": "missing", "defined": False}
    assert run_program(ns, {**INSPECT, "name": "_webmcp_inspect"}) == {"name": "_webmcp_inspect", "defined": False}


def test_a_huge_repr_is_cut_to_its_bound():
    ns = {"blob": "é" * 100_000, "nested": [[["x" * 5000] * 50] * 50] * 50}
    answer = run_program(ns, {**INSPECT, "name": "blob", "detail": 1000})
    assert answer["reprTruncated"] is True and len(answer["repr"].encode()) <= 1000 and answer["length"] == 100_000
    nested = run_program(ns, {**INSPECT, "name": "nested", "detail": 1000})
    assert len(nested["repr"].encode()) <= 1000 and nested["length"] == 50


# -- none of the notebook's code runs ------------------------------------------------------------------------
SECRET = "TOP-SECRET: the hidden notebook's text"
PLANTED = """
ran = []

def leak(what):
    ran.append(what)
    return SECRET

class ReprLeak:
    def __repr__(self):
        return leak("__repr__")
    def __str__(self):
        return leak("__str__")
    def __format__(self, spec):
        return leak("__format__")
    def __len__(self):
        leak("__len__")
        return 7
    def __eq__(self, other):
        leak("__eq__")
        return False
    def __hash__(self):
        return 1

class AttributeLeak:
    def __init__(self):
        self.visible = 1
    @property
    def shape(self):
        return leak("property shape")
    def __getattr__(self, name):
        return leak("__getattr__ " + name)
    def __getattribute__(self, name):
        return leak("__getattribute__ " + name)

class ClassProperty:
    @property
    def __class__(self):
        leak("__class__ property")
        return int
    @property
    def __dict__(self):
        leak("__dict__ property")
        return {"x": SECRET}

class Meta(type):
    def __repr__(cls):
        return leak("metaclass __repr__")
    def __getattribute__(cls, name):
        if name not in ("__dict__", "__mro__"):
            leak("metaclass __getattribute__ " + name)
        return type.__getattribute__(cls, name)
    def __eq__(cls, other):
        leak("metaclass __eq__")
        return False
    __hash__ = type.__hash__

class Sneaky(metaclass=Meta):
    pass

class Key:
    # planted in the namespace with the hash of a real name: a look-up of that name would call __eq__
    def __init__(self, name):
        self.h = hash(name)
    def __hash__(self):
        return self.h
    def __eq__(self, other):
        leak("planted key __eq__")
        return False

class FakeArray(np.ndarray):
    def __repr__(self):
        return leak("ndarray subclass __repr__")
    @property
    def shape(self):
        return leak("ndarray subclass shape")

def uses_default(a, b=ReprLeak(), *rest, c=ReprLeak(), **more):
    'A function whose defaults are planted objects.'

reprs = ReprLeak()
attributes = AttributeLeak()
class_property = ClassProperty()
sneaky_class = Sneaky
sneaky_instance = Sneaky()
nested = [1, {"k": ReprLeak(), ReprLeak(): "v"}, (ReprLeak(),), {ReprLeak()}]
fake = np.arange(4).view(FakeArray)
real = np.arange(6.0).reshape(2, 3)
globals()[Key("reprs")] = 1
globals()[Key("nested")] = 2
keyed_class = type("Keyed", (), {Key("__module__"): 1, Key("__dict__"): 2})  # type's own getter would compare
keyed = keyed_class()
keyed.size = 3
"""


def planted() -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__", "SECRET": SECRET, "np": np}
    exec(PLANTED, ns)
    ns["ran"].clear()  # planting the keys called their __eq__ once each (the insertion compared them)
    return ns


def test_objects_planted_to_leak_a_secret_are_described_without_running_any_of_their_code():
    ns = planted()
    names = ["reprs", "attributes", "class_property", "sneaky_class", "sneaky_instance", "nested", "fake", "real",
             "uses_default", "leak", "keyed", "keyed_class"]  # fmt: skip
    out = [run_program(ns, LIST)] + [run_program(ns, {**INSPECT, "name": n}) for n in names]
    assert ns["ran"] == []  # no __repr__, __len__, property, __getattr__, metaclass method or key __eq__ ran
    text = json.dumps(out)
    assert "TOP-SECRET" not in text.replace(json.dumps(SECRET)[1:-1], "", 1)  # only SECRET's own value is listed
    by_name = {v["name"]: v for v in out[0]["variables"]}
    assert by_name["SECRET"]["repr"] == repr(SECRET)  # a str the namespace holds is shown: it is a plain value
    detail = dict(zip(names, out[1:], strict=True))
    assert detail["reprs"]["repr"] == "<__main__.ReprLeak object>" and "length" not in detail["reprs"]
    assert detail["attributes"]["attributes"] == [{"name": "visible", "type": "int"}]  # from the instance dict
    assert detail["class_property"]["type"] == "__main__.ClassProperty" and "attributes" not in detail["class_property"]
    sneaky = detail["sneaky_class"]
    assert sneaky["repr"] == "<class '__main__.Sneaky'>" and sneaky["type"] == "__main__.Meta"
    assert detail["sneaky_instance"]["repr"] == "<__main__.Sneaky object>"
    assert detail["nested"]["repr"] == (
        "[1, {'k': <__main__.ReprLeak object>, <__main__.ReprLeak object>: 'v'}, (<__main__.ReprLeak object>,), "
        "{<__main__.ReprLeak object>}]"
    )
    assert detail["fake"]["type"] == "__main__.FakeArray" and "shape" not in detail["fake"]  # a subclass: its type
    assert detail["real"]["shape"] == [2, 3] and detail["real"]["dtype"] == "float64"
    assert detail["real"]["repr"] == "array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])"
    assert detail["uses_default"]["signature"] == (
        "(a, b=<__main__.ReprLeak object>, *rest, c=<__main__.ReprLeak object>, **more)"
    )
    assert detail["uses_default"]["doc"] == "A function whose defaults are planted objects."
    assert detail["keyed"]["type"] == "__main__.Keyed" and detail["keyed"]["attributes"] == [
        {"name": "size", "type": "int"}
    ]


def test_before_its_answer_the_program_looks_up_no_name():
    """No global or builtin name is loaded (a builtins entry the agent replaced, or a namespace key planted with a
    name's hash, would run): every code object of the program but the tidying after the answer uses only locals,
    closures and constants; the cell's top level names only the program's function."""
    import dis
    import types

    lookups = {"LOAD_GLOBAL", "LOAD_NAME", "STORE_NAME", "STORE_GLOBAL", "DELETE_NAME", "DELETE_GLOBAL", "IMPORT_NAME"}

    def names(code: types.CodeType, inside: str) -> list[tuple[str, str]]:
        found = [(inside, i.argval) for i in dis.get_instructions(code) if i.opname in lookups]
        for const in code.co_consts:
            if isinstance(const, types.CodeType) and const.co_name != "tidy":
                found += names(const, const.co_name)
        return found

    module = compile(inspection_code(new_nonce(), LIST), "<inspection>", "exec")
    assert set(names(module, "<module>")) == {("<module>", "_webmcp_inspect")}


def test_builtins_and_modules_the_agent_replaced_are_not_used():
    """``repr``, ``len``, ``type``, ``isinstance``, ``getattr``, ``str``, ``sorted`` replaced in ``builtins``, and
    ``json`` and ``numpy.ndarray`` in ``sys.modules``: the program uses none of them and answers as before."""
    ns = planted()
    calls: list[str] = []

    def spy(name: str, real: Any) -> Any:
        def replaced(*args: Any, **kwargs: Any) -> Any:
            if sys._getframe(1).f_code.co_filename == "<inspection>":  # the program's call (not this test's harness)
                calls.append(name)
            return real(*args, **kwargs)

        return replaced

    names = ("repr", "len", "type", "isinstance", "getattr", "str", "sorted", "print", "hasattr", "callable")
    saved = {name: getattr(builtins, name) for name in names}
    fake_json = type(sys)("json")
    fake_json.dumps = fake_json.loads = spy("json", json.dumps)
    real_json, real_ndarray = sys.modules["json"], np.ndarray
    expected = run_program(planted(), {**INSPECT, "name": "real"})
    out, listing, nonce, list_nonce = io.StringIO(), io.StringIO(), new_nonce(), new_nonce()
    code = compile(inspection_code(nonce, {**INSPECT, "name": "real"}), "<inspection>", "exec")
    list_code = compile(inspection_code(list_nonce, LIST), "<inspection>", "exec")
    try:
        for name in names:
            setattr(builtins, name, spy(name, saved[name]))
        sys.modules["json"] = fake_json
        np.ndarray = type("ndarray", (), {"__repr__": lambda self: SECRET})
        with contextlib.redirect_stdout(out):
            exec(code, ns)
        with contextlib.redirect_stdout(listing):
            exec(list_code, ns)
    finally:
        for name, value in saved.items():
            setattr(builtins, name, value)
        sys.modules["json"] = real_json
        np.ndarray = real_ndarray
    assert calls == [] and ns["ran"] == []
    assert read_answer(out.getvalue(), nonce) == expected
    assert {v["name"] for v in read_answer(listing.getvalue(), list_nonce)["variables"]} >= {"real", "reprs"}


def test_a_replaced_import_is_not_called_and_the_program_then_answers_nothing():
    ns = planted()
    called: list[Any] = []
    real_import = builtins.__import__

    def hooked(*args: Any, **kwargs: Any) -> Any:
        called.append(args[0])
        return real_import(*args, **kwargs)

    out = io.StringIO()
    nonce = new_nonce()
    code = compile(inspection_code(nonce, LIST), "<inspection>", "exec")
    builtins.__import__ = hooked
    try:
        with contextlib.redirect_stdout(out):
            exec(code, ns)
    finally:
        builtins.__import__ = real_import
    assert called == [] and out.getvalue() == ""  # the tool then says the kernel gave no answer
    assert "_webmcp_inspect" not in ns


def test_in_a_real_ipython_shell_ipython_names_and_the_history_stay_as_they_were():
    """IPython's own names and the history names answer as not defined; run as the Pyodide kernel runs every
    request (stored in the history, counted), the program takes itself out of both."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("alpha = 1", store_history=True)
        shell.run_cell("beta = [1, 2, 3]", store_history=True)
        shell.run_cell("alpha + 1", store_history=True)
        count, history = shell.execution_count, list(shell.user_ns["In"])
        names = {k: shell.user_ns[k] for k in ("_i", "_ii", "_iii")}
        nonce = new_nonce()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            shell.run_cell(inspection_code(nonce, LIST), store_history=True)  # what the Pyodide kernel does
        answer = read_answer(out.getvalue(), nonce)
        assert answer is not None and {v["name"] for v in answer["variables"]} == {"alpha", "beta"}
        assert shell.execution_count == count and list(shell.user_ns["In"]) == history
        assert {k: shell.user_ns[k] for k in ("_i", "_ii", "_iii")} == names and f"_i{count}" not in shell.user_ns
        assert not any(MARKER in str(e) for e in shell.history_manager.db_input_cache)
        assert "_webmcp_inspect" not in shell.user_ns
        for name in ("In", "Out", "_", "_i", "_ih", "_1", "_i2", "get_ipython", "exit"):
            assert run_ipython(shell, {**INSPECT, "name": name}) == {"name": name, "defined": False}
        shell.run_cell("In = 'mine'", store_history=True)  # a name the person bound again is the person's
        assert run_ipython(shell, {**INSPECT, "name": "In"})["repr"] == "'mine'"
        silent_count = shell.execution_count
        run_ipython(shell, LIST, store_history=False, silent=True)  # what ipykernel does with the bridge's request
        assert shell.execution_count == silent_count and "_webmcp_inspect" not in shell.user_ns
    finally:
        InteractiveShell.clear_instance()


def run_ipython(shell: Any, arguments: dict[str, Any], **how: bool) -> dict[str, Any] | None:
    nonce = new_nonce()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        shell.run_cell(inspection_code(nonce, arguments), **({"store_history": True} | how))
    return read_answer(out.getvalue(), nonce)


# -- the tools through the bridge (memory host) -------------------------------------------------------------
def started(files: dict[str, str], limits: Limits = Limits()) -> Any:
    ws = MemoryWorkspace(files)
    bridge = build_bridge(ws, limits=limits)
    asyncio.run(ws.open_notebook("work.ipynb", True))
    return bridge, ws


def call(bridge: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(bridge.registry.call(name, args))


def test_the_tools_list_and_inspect_what_the_cells_defined_without_touching_the_notebook():
    bridge, ws = started({"work.ipynb": notebook("import math\nradius = 2.5\nnames = ['a', 'b']", "area = 1")})
    assert call(bridge, "jupyter_run_cells", {})["isError"] is False
    nb = ws.open["work.ipynb"]
    before, revision = json.dumps(nb.nb, sort_keys=True), nb.revision()
    listed = call(bridge, "jupyter_list_variables", {})
    assert listed["isError"] is False, listed
    content = listed["structuredContent"]
    assert content["path"] == "work.ipynb" and [v["name"] for v in content["variables"]] == ["area", "names", "radius"]
    assert content["variables"][1] == {"name": "names", "type": "list", "length": 2, "repr": "['a', 'b']",
                                       "reprTruncated": False}  # fmt: skip
    one = call(bridge, "jupyter_inspect_variable", {"name": "radius"})["structuredContent"]
    assert one["defined"] is True and one["type"] == "float" and one["repr"] == "2.5"
    assert call(bridge, "jupyter_inspect_variable", {"name": "nope"})["structuredContent"] == {
        "path": "work.ipynb",
        "name": "nope",
        "defined": False,
    }
    assert json.dumps(nb.nb, sort_keys=True) == before and nb.revision() == revision
    assert bridge.proposals.waiting() == []
    page = call(bridge, "jupyter_list_variables", {"offset": 1, "limit": 1})["structuredContent"]
    assert [v["name"] for v in page["variables"]] == ["names"] and page["nextOffset"] == 2 and page["total"] == 3


def test_an_expression_as_a_name_is_refused_and_nothing_runs():
    bridge, ws = started({"work.ipynb": notebook("x = 1")})
    result = call(bridge, "jupyter_inspect_variable", {"name": "__import__('os').getcwd()"})
    assert result["isError"] is True and result["structuredContent"]["error"] == "INVALID_ARGUMENT"
    assert ws.open["work.ipynb"]._namespace == {}  # nothing ran in the kernel


def test_a_read_only_notebook_allows_it_and_propose_mode_does_not_hold_it():
    bridge, _ = started({"work.ipynb": notebook("x = 1", access="read")})
    bridge.proposals.set_mode("propose")
    result = call(bridge, "jupyter_list_variables", {})
    assert result["isError"] is False and result["structuredContent"]["total"] == 0
    assert bridge.proposals.waiting() == []


def test_while_a_cell_is_hidden_the_person_is_asked_with_the_program_shown():
    bridge, ws = start({"work.ipynb": notebook("secret = 'hunter2'", "x = 1", hidden=(0,))})
    ws.open["work.ipynb"]._namespace.update(secret="hunter2", x=1)  # what the person's runs left in the kernel
    denied, proposal = asyncio.run(waiting_call(bridge, "jupyter_list_variables", {}, "deny"))
    assert denied["structuredContent"]["status"] == "denied" and "hunter2" not in json.dumps(denied)
    assert HIDDEN_CELLS in proposal.summary and proposal.code.startswith(MARKER) and proposal.kind == "run_code"
    accepted, _ = asyncio.run(waiting_call(bridge, "jupyter_inspect_variable", {"name": "secret"}, "accept"))
    assert accepted["structuredContent"]["repr"] == "'hunter2'"  # the person let it through


def test_while_a_notebook_elsewhere_is_hidden_it_is_asked_even_once_asking_is_off_here():
    bridge, ws = start({"work.ipynb": notebook("x = 1"), "private/plans.ipynb": notebook("plans", access="none")})
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_list_variables", {}, "deny"))
    assert HIDDEN_NOTEBOOK in proposal.summary
    bridge.guard.consent.set_asking("work.ipynb", False)  # the person's "Stop asking": this notebook's own cells only
    _, proposal = asyncio.run(waiting_call(bridge, "jupyter_list_variables", {}, "deny"))
    assert HIDDEN_NOTEBOOK in proposal.summary


def test_definitions_are_read_only_reads_of_untrusted_text_in_their_own_toolset():
    bridge = build_bridge(None)  # type: ignore[arg-type]
    definitions = {d["name"]: d for d in bridge.registry.definitions()}
    for name in ("jupyter_list_variables", "jupyter_inspect_variable", "jupyter_rerun_plan"):
        assert definitions[name]["annotations"] == {
            "readOnlyHint": True,
            "untrustedContentHint": True,
            "consequentialHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }
    toolsets = {t.name: [tool.name for tool in t.tools] for t in bridge.registry.toolsets()}
    assert toolsets["variables"] == ["jupyter_list_variables", "jupyter_inspect_variable", "jupyter_rerun_plan"]
    assert "variables" not in bridge.toolsets.default
