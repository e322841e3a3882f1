"""The demo course's own tools: a site author's contribution, loaded by the bridge from the site's files.

The site names this file in its ``jupyter-lite.json`` (``webmcpBridgeContributions``); the bridge fetches it from
the site's own ``files/.webmcp/course_tools.py`` and imports it in the page's Python. It offers:

- ``check_exercise`` (toolset ``course``): reads the answer cell of an exercise through the access guard and
  runs the exercise's hidden tests against it in the notebook's kernel. The agent gets a verdict only: each
  test's name, passed or not, and for a failed one the hint written below. The tests' code is never in the
  result, in the notebook, in the kernel's input history or in its traceback cache (see ``HARNESS``); the
  answer's own printing is swallowed. (Known limit: the answer's code runs in the same kernel as the tests, so an answer written to
  inspect its caller could see the test it is called from; grading that must resist this runs on a server.)
- an extension of the built-in ``jupyter_write_file``: the course's folder is the teacher's, so the agent may
  write in ``course/`` only under ``course/answers/`` (any other path in ``course/`` is refused with INVALID_PATH
  before anything is looked at; the rest of the workspace is unchanged), and the tool's description says so.

This folder starts with "." so the agent's file tools neither list nor read it.
"""

from __future__ import annotations

import base64
import json
import secrets
from typing import Annotated, Any, Literal

from pydantic import Field

from webmcp_bridge.contrib import (
    Annotations,
    CallContext,
    Contribution,
    DeniedPayload,
    ErrorCode,
    Extension,
    NotebookInput,
    Payload,
    Tool,
    ToolError,
    Toolset,
    Wire,
    normalize_path,
    sometimes,
)

#: exercise -> (the function the answer defines, [(test name, hint shown when it fails, hidden check)]); a check
#: is a Python expression about ``f`` (the answer's function) that must be True
EXERCISES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "word-counts": ("word_counts", [
        ("counts repeated words", "Each distinct word should map to how many times it occurs.",
         "f('to be or not to be') == {'to': 2, 'be': 2, 'or': 1, 'not': 1}"),
        ("ignores case", "Words that differ only in upper/lower case are the same word (use lower case keys).",
         "f('The cat saw the Cat') == {'the': 2, 'cat': 2, 'saw': 1}"),
        ("ignores punctuation around words", "Punctuation such as . , ; : ! ? at the start or end of a word is not part of it.",
         "f('Stop! Stop, thief.') == {'stop': 2, 'thief': 1}"),
        ("empty text", "A text with no words gives an empty dict.", "f('   ') == {}"),
    ]),
}

#: run in the kernel in a fresh namespace (nothing is left in the person's); ``__marker__`` is a per-call nonce. The
#: request is small code carrying the tests as base64; after the run it blanks every copy of that request the kernel
#: keeps: the traceback cache (linecache) and the input history (In/_ih, _i/_ii/_iii/_iN, the history manager's
#: lists: JupyterLite's Pyodide kernel stores every request, even one sent with store_history false)
HARNESS = """
import base64 as _b, contextlib as _c, io as _io, json as _j, linecache as _l
_data = _j.loads(_b.b64decode(__payload__))
_results = []
_sink = _io.StringIO()
with _c.redirect_stdout(_sink), _c.redirect_stderr(_sink):
    try:
        _ns = {"__name__": "__exercise__"}
        exec(compile(_data["source"], "<answer>", "exec"), _ns)
        _f = _ns.get(_data["function"])
    except BaseException:
        _f = None
    for _check in _data["checks"]:
        if not callable(_f):
            _results.append("missing")
            continue
        try:
            _results.append("pass" if eval(compile(_check, "<hidden>", "eval"), {"f": _f}) is True else "fail")
        except BaseException:
            _results.append("error")
for _k in [k for k, v in list(_l.cache.items()) if __marker__ in "".join(v[2] if len(v) > 2 and v[2] else [])]:
    del _l.cache[_k]
try:
    _ip = get_ipython()
except NameError:
    _ip = None
if _ip is not None:
    _hit = lambda text: isinstance(text, str) and __marker__ in text
    _ns, _hm = _ip.user_ns, getattr(_ip, "history_manager", None)
    for _entries in [getattr(_hm, "input_hist_parsed", None), getattr(_hm, "input_hist_raw", None), _ns.get("In"), _ns.get("_ih")]:
        if isinstance(_entries, list):
            _entries[:] = ["" if _hit(text) else text for text in _entries]
    for _name in [k for k, v in list(_ns.items()) if k.startswith("_i") and _hit(v)]:
        _ns[_name] = ""
    for _name in ("_i", "_ii", "_iii", "_i00"):
        if _hit(getattr(_hm, _name, None)):
            setattr(_hm, _name, "")
    _cache = getattr(_hm, "db_input_cache", None)
    if isinstance(_cache, list):
        _cache[:] = [e for e in _cache if not (isinstance(e, tuple) and any(_hit(x) for x in e))]
print(__marker__ + _j.dumps(_results))
"""

RESULTS = {"pass", "fail", "error", "missing"}
RUN_SECONDS = 30.0


class CheckExerciseInput(NotebookInput):
    """Which exercise, and the cell that holds the answer."""

    exercise: Annotated[Literal["word-counts"], Field(description="The exercise to check.")]
    cell_id: Annotated[str | None, Field(description="The cell holding the answer. Omit to use the first code cell that "
                                                     "defines the exercise's function.", min_length=1, max_length=256)] = None


class TestVerdict(Wire):
    name: str
    passed: bool
    hint: str = sometimes("Why it failed (a failed test only).")


class ExerciseChecked(Payload):
    """The verdict of the hidden tests."""

    exercise: str
    path: str
    cellId: str
    status: Literal["checked"]
    passed: int
    total: int
    allPassed: bool
    tests: list[TestVerdict]


class ExerciseNotChecked(Payload):
    """The tests gave no verdict (they ran out of time, or the answer broke the run)."""

    exercise: str
    path: str
    cellId: str
    status: Literal["timeout", "error"]
    reason: str


def _kernel_code(source: str, function: str, checks: list[str], marker: str) -> str:
    payload = base64.b64encode(json.dumps({"source": source, "function": function, "checks": checks}).encode()).decode()
    harness = base64.b64encode(HARNESS.encode()).decode()
    return (f"exec(__import__('base64').b64decode('{harness}').decode(), "
            f"{{'__payload__': '{payload}', '__marker__': '{marker}'}})")


def _answer_cell(nb: Any, function: str, cell_id: str | None) -> Any:
    if cell_id is not None:
        return nb.find_cell(cell_id)  # through the guard: a hidden cell is CELL_NOT_FOUND, like a missing one
    for cell in nb.read_cells(None, head_bytes=0, max_outputs=0):
        if cell.cell_type == "code" and f"def {function}(" in cell.source:
            return cell
    raise ToolError(ErrorCode.CELL_NOT_FOUND, f"No code cell of this notebook defines {function}(); pass cellId.")


def _verdict(outputs: Any, marker: str, count: int) -> list[str] | None:
    """The results the harness printed, or None when it printed none that fits (an answer that broke the run)."""
    for output in outputs:
        for item in output.items:
            start = item.head.find(marker)
            if start < 0:
                continue
            line = item.head[start + len(marker):].split("\n", 1)[0]
            try:
                results = json.loads(line)
            except ValueError:
                return None
            ok = isinstance(results, list) and len(results) == count and all(r in RESULTS for r in results)
            return results if ok else None
    return None


async def check_exercise(ctx: CallContext, args: CheckExerciseInput) -> dict[str, Any]:
    """Run the hidden tests of ``args.exercise`` on the answer cell; returns the verdict (see the module docstring)."""
    function, tests = EXERCISES[args.exercise]
    nb = await ctx.notebook(args.notebook_path)
    cell = _answer_cell(nb, function, args.cell_id)
    if cell.cell_type != "code":
        raise ToolError(ErrorCode.INVALID_ARGUMENT, f"Cell {cell.id!r} is not a code cell.", cellId=cell.id)
    nb.check_write()  # the tests run in the notebook's kernel: a read-only notebook refuses it
    marker = f"@@check-{secrets.token_hex(8)}@@"
    code = _kernel_code(cell.source, function, [check for _name, _hint, check in tests], marker)
    # the bridge's run rule: while something is hidden from the agent, the person sees the code that runs first (in
    # Direct mode too); otherwise Propose mode asks with the summary alone
    reason = await nb.run_consent()
    await ctx.propose(nb, "check_exercise", "run", cell.id,
                      f"Run the hidden tests of exercise {args.exercise!r} on this cell (the tests are not shown to the agent)"
                      + (f" ({reason})" if reason else ""), code=code if reason else None, always=reason is not None)
    info = await nb.wait_for_kernel(ctx.limits.kernel_wait_seconds)
    if info.status not in ("idle", "busy"):
        raise ToolError(ErrorCode.KERNEL_UNAVAILABLE, f"The kernel is not ready (status {info.status!r}).")
    run = await nb.run_code(code, RUN_SECONDS, head_bytes=4096, max_outputs=5)
    results = _verdict(run.outputs, marker, len(tests))
    payload: dict[str, Any] = {"exercise": args.exercise, "path": nb.path, "cellId": cell.id}
    if results is None:
        reason = "the tests did not finish in time" if run.status == "timeout" else "the check gave no verdict"
        return {**payload, "status": "timeout" if run.status == "timeout" else "error", "reason": reason}
    verdicts = []
    for (name, hint, _check), result in zip(tests, results, strict=True):
        entry: dict[str, Any] = {"name": name, "passed": result == "pass"}
        if result == "missing":
            entry["hint"] = f"The cell does not define {function}() (or defining it raised)."
        elif result == "error":
            entry["hint"] = f"{function}() raised an exception. {hint}"
        elif result == "fail":
            entry["hint"] = hint
        verdicts.append(entry)
    passed = sum(1 for v in verdicts if v["passed"])
    return {**payload, "status": "checked", "passed": passed, "total": len(verdicts), "allPassed": passed == len(verdicts),
            "tests": verdicts}


COURSE_FOLDER = "course/"
ANSWERS_FOLDER = "course/answers/"


async def answers_only(ctx: CallContext, args: Any, call_next: Any) -> Any:
    """Around jupyter_write_file: inside the course's folder, only its answers folder may be written."""
    path = normalize_path(args.path)
    if path.startswith(COURSE_FOLDER) and not path.startswith(ANSWERS_FOLDER):
        raise ToolError(ErrorCode.INVALID_PATH, f"In this course the agent writes in {COURSE_FOLDER!r} only under {ANSWERS_FOLDER!r}.",
                        path=path)
    return await call_next(ctx, args)


CONTRIBUTIONS = [
    Contribution(
        "course",
        toolsets=(Toolset("course", "Check the course's exercises.", (
            Tool("check_exercise", "Check exercise",
                 "Check a course exercise: runs its hidden tests on the answer cell in the notebook's kernel and returns the "
                 "verdict (each test's name, passed or not, and a hint for a failed one). Exercises: 'word-counts' "
                 "(word_counts(text) in course/word-counts.ipynb). Nothing in the notebook changes.",
                 # not read-only: the answer's code runs in the kernel; checking again changes nothing more
                 CheckExerciseInput, check_exercise, Annotations(destructive=False, idempotent=True, open_world=False),
                 ExerciseChecked | ExerciseNotChecked | DeniedPayload),
        )),),
        guidance="On this course site, check a student's exercise with check_exercise (toolset course: turn it on with "
                 "jupyter_toolsets) before you say it is done, and write answers only under course/answers/.",
        extensions=(
            Extension("jupyter_write_file", order=10, around=answers_only,
                      description="Create a text file in the workspace (not a notebook; at most 512 KiB; its folder must exist). In "
                                  "the course's folder 'course/' you may write only under 'course/answers/'. To replace an existing "
                                  "file pass overwrite: true and expectedHash (the hash jupyter_read_file returned); refused with "
                                  "STALE_FILE if it changed since."),
        ),
    ),
]
