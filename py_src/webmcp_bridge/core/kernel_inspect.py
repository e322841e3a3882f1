"""The bridge's own inspection of a kernel's variables: a fixed program, its arguments as data, its one-line answer.

``jupyter_list_variables`` and ``jupyter_inspect_variable`` (:mod:`webmcp_bridge.tools.variables`) never run code
the agent wrote. They run :data:`PROGRAM` in the notebook's kernel, always the same text but for one line of JSON
arguments (:func:`inspection_code`): the variable's name is checked as a Python identifier
(:func:`check_variable_name`) and travels inside that JSON, read by ``json.loads``; it is never spliced into code.

The program, in the kernel:

- reads the namespace the cells run in (its own function's globals), leaving out what IPython put there itself
  (``user_ns_hidden``: ``In``, ``Out``, ``get_ipython``, ``exit``...; a name the person bound again is the
  person's) and the history names (``_``, ``__``, ``___``, ``_i``, ``_ii``, ``_iii``, ``_i00``, ``_iN``, ``_N``,
  ``_ih``, ``_oh``, ``_dh``): those answer as not defined. The list leaves out modules and names starting with
  ``_`` too;
- describes each variable with its type (``module.Qualname``; builtins without a module), a length for sized
  builtins (str, bytes, list, tuple, dict, set...), ``shape``/``dtype`` for numpy arrays and pandas objects (found
  by ``isinstance`` against the modules already imported: it imports neither), and a ``repr`` cut to a byte bound
  (:mod:`reprlib` for builtin containers, so a long list is never rendered whole);
- for one variable, more: a DataFrame's columns with their dtypes and its first rows as text, a Series' dtype
  and head, an array's ``ndim``/``size``/``nbytes``, a container's first items, a callable's signature and the
  first line of its docstring, an object's public instance attributes (from ``__dict__``, no property is called);
- runs everything it calls on the person's objects (``repr``, ``len``, ``head``...) with ``sys.stdout`` and
  ``sys.stderr`` sent nowhere and warnings silenced, each call guarded (a failure reads ``<repr failed: Error>``);
- prints one line: the call's nonce, then JSON (ASCII only), at most ``budget`` bytes: the list stops adding
  entries before it would pass it and says where to go on (``nextOffset``);
- leaves nothing behind: it defines one function, calls it and deletes it; it removes its own source from
  ``linecache``; and in a kernel that ignores ``store_history: false`` (the Pyodide kernel of JupyterLite 0.8.6,
  which also ignores ``silent``) it takes its own entry out of IPython's input history (``In``, ``_ih``, the
  history manager's lists and write-behind cache, ``_iN``, ``_i``/``_ii``/``_iii``/``_i00``) and gives the count
  back, so the person's next cell gets the number it would have had.

What it cannot avoid: the objects' own ``__repr__``, ``__len__``, ``shape`` or ``head`` run (code the notebook
defined, not the agent), and IPython's ``pre_run_cell``/``post_run_cell`` events fire in the Pyodide kernel, which
has no silent runs (ipykernel's silent run fires neither).
"""

from __future__ import annotations

import json
import keyword
import secrets
from typing import Any

from webmcp_bridge.core.errors import ErrorCode, ToolError

#: the program's first line; the program finds its own entry in a kernel's history by it
MARKER = "# webmcp_bridge: read-only inspection of the kernel's variables (names, types, sizes, short reprs)"


def check_variable_name(name: str) -> str:
    """``name`` when it is a Python identifier that is not a keyword (the only names the inspection takes).

    Raises ToolError(INVALID_ARGUMENT) otherwise (attribute paths, subscripts and expressions included)."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ToolError(
            ErrorCode.INVALID_ARGUMENT,
            "name must be a variable's name (a Python identifier such as df or model_2), not an expression.",
        )
    return name


def new_nonce() -> str:
    """A fresh random token that starts the program's answer line (16 hex digits)."""
    return "webmcp-" + secrets.token_hex(8)


def inspection_code(nonce: str, arguments: dict[str, Any]) -> str:
    """The program with its arguments: :data:`PROGRAM` whose last lines pass ``arguments`` (with ``nonce`` and
    :data:`MARKER` added) as one JSON text, a Python string literal parsed by ``json.loads`` in the kernel.

    ``arguments``: ``{"mode": "list" | "inspect", "budget": bytes of the answer, "repr": bytes of a short repr}``
    and, to list: ``offset``, ``limit`` (variables); to inspect: ``name`` (checked with :func:`check_variable_name`),
    ``detail`` (bytes of the variable's repr and of a head's text), ``items`` (items, columns or attributes
    listed), ``rows`` (rows of a head)."""
    text = json.dumps({**arguments, "nonce": nonce, "marker": MARKER}, ensure_ascii=True)
    return PROGRAM.replace("ARGUMENTS", repr(text))


def read_answer(text: str, nonce: str) -> dict[str, Any] | None:
    """The program's answer in a stdout text: the JSON after the first line that starts with ``nonce``; None when
    there is none, or it is not a JSON object (cut, or something else printed in its place)."""
    for line in text.splitlines():
        if line.startswith(nonce):
            try:
                value = json.loads(line[len(nonce) :])
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


#: The program run in the kernel (see the module docstring); ``ARGUMENTS`` is replaced by :func:`inspection_code`.
PROGRAM = (
    MARKER
    + """
def _webmcp_inspect(text):
    import io, json, linecache, reprlib, sys, warnings
    args = json.loads(text)
    frame_file = sys._getframe().f_code.co_filename
    shell_class = getattr(sys.modules.get("IPython.core.interactiveshell"), "InteractiveShell", None)
    try:
        ip = shell_class.instance() if shell_class is not None and shell_class.initialized() else None
    except Exception:
        ip = None
    ns = globals()
    hidden = getattr(ip, "user_ns_hidden", None) or {}
    absent = object()

    def history_name(name):
        if name in ("_", "__", "___", "_i", "_ii", "_iii", "_i00", "_ih", "_oh", "_dh", "_webmcp_inspect"):
            return True
        digits = name[2:] if name.startswith("_i") else name[1:]
        return name.startswith("_") and digits.isdigit()

    def visible(name):
        return name in ns and not history_name(name) and ns[name] is not hidden.get(name, absent)

    def cut(text, limit):
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= limit:
            return text, False
        return data[: max(0, limit - 3)].decode("utf-8", "ignore") + "...", True

    numpy, pandas = sys.modules.get("numpy"), sys.modules.get("pandas")
    ndarray = getattr(numpy, "ndarray", None)
    frame_type = getattr(pandas, "DataFrame", None)
    series_type = getattr(pandas, "Series", None)
    index_type = getattr(pandas, "Index", None)
    sized = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range)
    module_type = type(sys)

    def type_name(value):
        cls = type(value)
        module = getattr(cls, "__module__", "") or ""
        name = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", "?")
        return name if module == "builtins" else module + "." + name

    def short(value, limit):
        shorter = reprlib.Repr()
        shorter.maxstring = shorter.maxother = max(20, limit)
        shorter.maxlist = shorter.maxtuple = shorter.maxdict = shorter.maxset = shorter.maxfrozenset = 20
        shorter.maxlevel = 3
        try:
            text = shorter.repr(value) if isinstance(value, sized) else repr(value)
        except Exception as exc:
            text = "<repr failed: " + type(exc).__name__ + ">"
        return cut(text if isinstance(text, str) else "<repr is not text>", limit)

    def attempt(fn, default=None):
        try:
            return fn()
        except Exception:
            return default

    def shape_of(value):
        shape = attempt(lambda: value.shape)
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
            return [int(n) for n in shape]
        return None

    def describe(name, value, limit):
        entry = {"name": name, "type": type_name(value)}
        length = attempt(lambda: len(value)) if isinstance(value, sized) else None
        if isinstance(length, int):
            entry["length"] = length
        array_like = (ndarray is not None and isinstance(value, ndarray)) or any(
            t is not None and isinstance(value, t) for t in (frame_type, series_type, index_type))
        if array_like:
            shape = shape_of(value)
            if shape is not None:
                entry["shape"] = shape
            dtype = attempt(lambda: value.dtype)
            if dtype is not None:
                entry["dtype"] = str(dtype)
        entry["repr"], entry["reprTruncated"] = short(value, limit)
        return entry

    def detail(name, value):
        entry = describe(name, value, args["detail"])
        items, limit = args["items"], args["repr"]
        if frame_type is not None and isinstance(value, frame_type):
            dtypes = attempt(lambda: list(value.dtypes.items()), [])
            entry["columnCount"] = len(dtypes)
            entry["columns"] = [{"name": short(c, limit)[0] if not isinstance(c, str) else cut(c, limit)[0],
                                 "dtype": str(d)} for c, d in dtypes[:items]]
            entry["head"], entry["headTruncated"] = cut(attempt(lambda: value.head(args["rows"]).to_string(),
                                                                "<head failed>"), args["detail"])
            entry["index"] = attempt(lambda: type_name(value.index))
        elif series_type is not None and isinstance(value, series_type):
            entry["seriesName"] = short(value.name, limit)[0]
            entry["head"], entry["headTruncated"] = cut(attempt(lambda: value.head(args["rows"]).to_string(),
                                                                "<head failed>"), args["detail"])
        elif ndarray is not None and isinstance(value, ndarray):
            entry["ndim"], entry["size"], entry["nbytes"] = int(value.ndim), int(value.size), int(value.nbytes)
        elif isinstance(value, dict):
            entry["items"] = [{"key": short(k, limit)[0], "type": type_name(v), "repr": short(v, limit)[0]}
                              for k, v in list(value.items())[:items]]
        elif isinstance(value, (list, tuple, set, frozenset)):
            entry["items"] = [{"type": type_name(v), "repr": short(v, limit)[0]} for v in list(value)[:items]]
        elif callable(value) and not isinstance(value, module_type):
            import inspect
            signature = attempt(lambda: str(inspect.signature(value)))
            if signature is not None:
                entry["signature"] = cut(signature, limit)[0]
            doc = attempt(lambda: inspect.getdoc(value))
            if isinstance(doc, str) and doc.strip():
                entry["doc"] = cut(doc.strip().splitlines()[0], limit)[0]
        if not isinstance(value, (type, module_type)) and not callable(value):
            own = attempt(lambda: object.__getattribute__(value, "__dict__"))
            if isinstance(own, dict):
                public = [k for k in own if isinstance(k, str) and not k.startswith("_")]
                entry["attributeCount"] = len(public)
                entry["attributes"] = [{"name": k, "type": type_name(own[k])} for k in public[:items]]
        return entry

    def run():
        if args["mode"] == "inspect":
            name = args["name"]
            if not visible(name):
                return {"name": name, "defined": False}
            return dict(detail(name, ns[name]), defined=True)
        names = sorted(n for n in list(ns) if isinstance(n, str) and not n.startswith("_") and visible(n)
                       and not isinstance(ns[n], module_type))
        offset, limit, budget = args["offset"], args["limit"], args["budget"]
        listed, used = [], 200
        for name in names[offset:offset + limit]:
            entry = describe(name, ns[name], args["repr"])
            size = len(json.dumps(entry, ensure_ascii=True)) + 1
            if listed and used + size > budget:
                break
            listed.append(entry)
            used += size
        end = offset + len(listed)
        return {"total": len(names), "offset": offset, "variables": listed,
                "nextOffset": end if end < len(names) else None}

    sink = io.StringIO()
    saved = sys.stdout, sys.stderr
    try:
        sys.stdout = sys.stderr = sink
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                answer = run()
            except Exception as exc:
                answer = {"failed": type(exc).__name__}
    finally:
        sys.stdout, sys.stderr = saved
    answer = json.dumps(answer, ensure_ascii=True)
    if len(answer) > args["budget"]:
        answer = json.dumps({"failed": "TooLarge"})
    # leave no trace: the cached source, and the history entry of a kernel that stores every run
    linecache.cache.pop(frame_file, None)
    named = getattr(getattr(ip, "compile", None), "_filename_map", None)
    if isinstance(named, dict):
        named.pop(frame_file, None)
    hm = getattr(ip, "history_manager", None)
    raw, parsed = getattr(hm, "input_hist_raw", None), getattr(hm, "input_hist_parsed", None)
    marker = args["marker"]
    if (isinstance(raw, list) and isinstance(parsed, list) and raw and parsed and len(raw) == len(parsed)
            and isinstance(raw[-1], str) and raw[-1].startswith(marker)
            and len(parsed) - 1 in (ip.execution_count, ip.execution_count - 1)):
        count = len(parsed) - 1
        raw.pop()
        parsed.pop()
        cache = getattr(hm, "db_input_cache", None)
        if isinstance(cache, list):
            cache[:] = [e for e in cache if not (isinstance(e, tuple) and len(e) > 1 and e[0] == count)]
        before = [raw[count - k] if count - k >= 0 else "" for k in (1, 2, 3, 4)]
        for key, value in zip(("_i00", "_i", "_ii", "_iii"), before):
            setattr(hm, key, value)
        for key, value in zip(("_i", "_ii", "_iii"), before[1:]):
            ns[key] = value
            if key in hidden:
                hidden[key] = value
        for space in (ns, hidden):
            space.pop("_i" + str(count), None)
        # IPython 9 counted this run before it, IPython 8 counts it after: one less either way gives the count back
        ip.execution_count -= 1
    sys.stdout.write(args["nonce"] + answer + "\\n")
    sys.stdout.flush()
try:
    _webmcp_inspect(ARGUMENTS)
finally:
    del _webmcp_inspect
"""
)
