"""The bridge's own inspection of a kernel's variables: a fixed program, its arguments as data, its one-line answer.

``jupyter_list_variables`` and ``jupyter_inspect_variable`` run :data:`PROGRAM`, the same text but for one line of
arguments written by ``repr`` (the variable's name, checked as an identifier, travels as a string literal).

**It runs none of the notebook's code** (docs/SECURITY.md): the agent's earlier runs can leave objects whose
``__repr__``, ``__len__``, properties or metaclass read a hidden notebook, and can replace names in ``builtins`` or
``sys.modules``; the person's Accept shows only this program. So its tools come from literals and the immutable
slots of builtin types, and it looks up no global or builtin name before its answer. Only exact builtin types are
shown by their repr; anything else by its type's name (read through ``type``'s own descriptors); a numpy array only
when its exact type is the C ``numpy.ndarray``; signatures only of plain functions and builtins. Dicts are read by
iterating, never by a look-up (a planted key's ``__eq__``); ``sys`` comes only through the interpreter's own
``__import__``. It cannot keep out the name ``_webmcp_inspect`` it stores, the kernel's ``sys.stdout``, nor
IPython's run hooks in the Pyodide kernel (no silent runs): a second line with the call's token makes
:func:`read_answer` refuse the answer, and the run rule bounds the rest. After the answer it removes its source
from ``linecache`` and, in a kernel that ignores ``store_history: false`` (JupyterLite 0.8.6), its history entry.
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
    """``name`` when it is a Python identifier that is not a keyword; else raises ToolError(INVALID_ARGUMENT)."""
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
    """:data:`PROGRAM` whose last line passes ``arguments`` (with ``nonce`` and :data:`MARKER`) as a dict display
    written by ``repr`` (the program then needs no parser the kernel's code could have replaced).

    ``arguments``: ``{"mode": "list" | "inspect", "budget": bytes of the answer, "repr": bytes of a short repr}``
    and, to list: ``offset``, ``limit``; to inspect: ``name`` (checked), ``detail`` (bytes of its repr), ``items``.
    Raises TypeError for a key that is not a str or a value not a str, int, bool or None."""
    values = {**arguments, "nonce": nonce, "marker": MARKER}
    for key, value in values.items():
        if type(key) is not str or not (value is None or type(value) in (str, int, bool)):
            raise TypeError(f"inspection argument {key!r} must be a str, int, bool or None")
    return PROGRAM.replace("ARGUMENTS", repr(values))


def read_answer(text: str, nonce: str) -> dict[str, Any] | None:
    """The JSON object after the one line of ``text`` that starts with ``nonce``; None when there is none, more than
    one (code left in the kernel printed the token too) or it is not a JSON object."""
    lines = [line for line in text.splitlines() if line.startswith(nonce)]
    if len(lines) != 1:
        return None
    try:
        value = json.loads(lines[0][len(nonce) :])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


#: The program run in the kernel (see the module docstring); ``ARGUMENTS`` is replaced by :func:`inspection_code`.
PROGRAM = (
    MARKER
    + """
def _webmcp_inspect(args):
    # Every tool below comes from the interpreter's own types, which no Python code can change: the slots and
    # descriptors of builtin (non-heap) types, reached from literals. No global or builtin name, no module attribute
    # and no method of the notebook's classes is used before the answer is written (only tidy() does, after it).
    def anchor():  # this program's globals (the cells' namespace), builtins and file, without a name look-up
        pass

    type_ = (0).__class__.__class__
    tdict = type_.__dict__
    t_flags, t_name = tdict["__flags__"].__get__, tdict["__name__"].__get__
    t_qualname, t_module = tdict["__qualname__"].__get__, tdict["__module__"].__get__
    t_mro, t_dict = tdict["__mro__"].__get__, tdict["__dict__"].__get__
    str_, int_, float_, complex_, bytes_ = "".__class__, (0).__class__, (0.0).__class__, (0j).__class__, b"".__class__
    bool_, none_, list_, tuple_, dict_ = True.__class__, None.__class__, [].__class__, ().__class__, {}.__class__
    set_, function_, ellipsis_ = {0}.__class__, anchor.__class__, ....__class__
    getset_ = tdict["__dict__"].__class__
    object_ = t_mro(int_)[-1]
    items_of, HEAP = dict_.items, 512
    static = {}
    for t in tdict["__subclasses__"](object_):
        if not t_flags(t) & HEAP and t_module(t) == "builtins":
            static[t_name(t)] = t
    frozenset_, range_, bytearray_ = static.get("frozenset"), static.get("range"), static.get("bytearray")
    module_, builtin_ = static.get("module"), static.get("builtin_function_or_method")
    module_dict = t_dict(module_)["__dict__"].__get__

    proxy_ = type_(tdict)

    def entry(mapping, key, default=None):
        # a str key's value in a dict or a class's mappingproxy, found by iterating its items (a lookup could
        # compare a planted key with its __eq__); default for anything else
        t = type_(mapping)
        if t is not dict_ and t is not proxy_:
            return default
        for k, v in (items_of(mapping) if t is dict_ else proxy_.items(mapping)):
            if type_(k) is str_ and k == key:
                return v
        return default

    def own_dict(value):
        # an object's instance dict, through the interpreter's own __dict__ descriptor only
        for c in t_mro(type_(value)):
            d = entry(t_dict(c), "__dict__")
            if d is not None:
                if type_(d) is not getset_:
                    return None
                try:
                    found = d.__get__(value)
                except:
                    return None
                return found if type_(found) is dict_ else None
        return None

    def is_type(value):
        for c in t_mro(type_(value)):
            if c is type_:
                return True
        return False

    def type_name(t):
        # a heap type's __module__ is read from its namespace by iterating (type's own getter looks it up)
        module = entry(t_dict(t), "__module__") if t_flags(t) & HEAP else t_module(t)
        name = t_qualname(t)
        module = module if type_(module) is str_ else "?"
        name = name if type_(name) is str_ else "?"
        return name if module == "builtins" else module + "." + name

    def static_in(t, module, name):
        # the non-heap type module.name in t's MRO (a C type: its descriptors are the interpreter's), or None
        for c in t_mro(t):
            if not t_flags(c) & HEAP and t_module(c) == module and t_name(c) == name:
                return c
        return None

    def cut(text, limit):
        if str_.__len__(text) <= limit // 4:
            return text, False
        data = str_.encode(text, "utf-8", "surrogatepass")
        if bytes_.__len__(data) <= limit:
            return text, False
        return bytes_.decode(data[: limit - 3 if limit > 3 else 0], "utf-8", "ignore") + "...", True

    sized = (str_, bytes_, bytearray_, list_, tuple_, dict_, set_, frozenset_, range_)

    def length_of(value):
        t = type_(value)
        for s in sized:
            if t is s:
                return t.__len__(value)
        return None

    def numpy_array(value):
        t = type_(value)
        return t if not t_flags(t) & HEAP and t_module(t) == "numpy" and t_name(t) == "ndarray" else None

    def array_facts(value, array):
        ad = t_dict(array)
        shape = ad["shape"].__get__(value)
        dtype = ad["dtype"].__get__(value)
        base = static_in(type_(dtype), "numpy", "dtype")
        facts = {"shape": [int_.__index__(n) for n in shape]}
        if base is not None:
            dd = t_dict(base)
            kind, size, code = dd["kind"].__get__(dtype), dd["itemsize"].__get__(dtype), dd["str"].__get__(dtype)
            names = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}
            facts["kind"] = kind
            if kind == "b":
                facts["dtype"] = "bool"
            elif kind in names:
                facts["dtype"] = names[kind] + "%d" % (8 * size)
            else:
                facts["dtype"] = code
        return facts

    def text_of(value, limit, depth):
        # the builtin repr of a builtin value (containers written here, items by the same rule), else a name
        t = type_(value)
        if t is str_:
            head = value[:limit]
            return str_.__repr__(head) + ("..." if str_.__len__(value) > limit else "")
        if t is bytes_ or t is bytearray_:
            return t.__repr__(value[:limit]) + ("..." if t.__len__(value) > limit else "")
        if t is int_:
            try:
                return int_.__repr__(value)
            except:
                return "<int of %d bits>" % int_.bit_length(value)
        if t is bool_ or t is float_ or t is complex_ or t is none_ or t is ellipsis_ or t is range_:
            return t.__repr__(value)
        if t is list_ or t is tuple_ or t is set_ or t is frozenset_ or t is dict_:
            opening, closing = {list_: ("[", "]"), tuple_: ("(", ")"), dict_: ("{", "}")}.get(t, ("{", "}"))
            if t is frozenset_:
                opening, closing = "frozenset({", "})"
            if depth >= 3:
                return opening + "..." + closing
            parts, used = [], 0
            pairs = items_of(value) if t is dict_ else value
            for item in pairs:
                if list_.__len__(parts) >= 20 or used >= limit:
                    parts.append("...")
                    break
                if t is dict_:
                    part = text_of(item[0], limit - used, depth + 1) + ": " + text_of(item[1], limit - used, depth + 1)
                else:
                    part = text_of(item, limit - used, depth + 1)
                parts.append(part)
                used += str_.__len__(part) + 2
            if not parts:
                return {set_: "set()", frozenset_: "frozenset()"}.get(t, opening + closing)
            if t is tuple_ and list_.__len__(parts) == 1:
                return "(" + parts[0] + ",)"
            return opening + ", ".join(parts) + closing
        if t is function_:
            name = value.__qualname__
            return "<function " + (name if type_(name) is str_ else "?") + ">"
        if t is builtin_:
            name = value.__name__
            return "<built-in function " + (name if type_(name) is str_ else "?") + ">"
        array = numpy_array(value)
        if array is not None:
            facts = array_facts(value, array)
            size = t_dict(array)["size"].__get__(value)
            if facts.get("kind", "") in ("b", "i", "u", "f", "c") and size <= 1000:
                return "array(" + text_of(t_dict(array)["tolist"](value), limit, 0) + ")"
            return "<numpy.ndarray shape=" + text_of(tuple_(facts["shape"]), limit, 0) + ">"
        if is_type(value):
            return "<class '" + type_name(value) + "'>"
        return "<" + type_name(t) + " object>"

    def describe(name, value, limit):
        entry_ = {"name": name, "type": type_name(type_(value))}
        length = length_of(value)
        if length is not None:
            entry_["length"] = length
        array = numpy_array(value)
        if array is not None:
            try:
                facts = array_facts(value, array)
                entry_["shape"] = facts["shape"]
                if "dtype" in facts:
                    entry_["dtype"] = facts["dtype"]
            except:
                pass
        try:
            text = text_of(value, limit, 0)
        except:
            text = "<" + entry_["type"] + " object>"
        entry_["repr"], entry_["reprTruncated"] = cut(text, limit)
        return entry_

    def signature_of(value):
        # a plain function's parameters, read from its code object and defaults (no annotation is evaluated)
        code = value.__code__
        names, argc, posonly = code.co_varnames, code.co_argcount, code.co_posonlyargcount
        kwonly, flags = code.co_kwonlyargcount, code.co_flags
        defaults = value.__defaults__
        defaults = defaults if type_(defaults) is tuple_ else ()
        kwdefaults = value.__kwdefaults__
        kwdefaults = {k: v for k, v in items_of(kwdefaults) if type_(k) is str_} if kwdefaults is not None else {}
        first_default = argc - tuple_.__len__(defaults)
        parts = []
        for i in range_(argc):
            part = names[i]
            if i >= first_default:
                part = part + "=" + text_of(defaults[i - first_default], 60, 2)
            parts.append(part)
            if i + 1 == posonly:
                parts.append("/")
        at = argc + kwonly
        if flags & 4:
            parts.append("*" + names[at])
            at += 1
        elif kwonly:
            parts.append("*")
        for part in names[argc : argc + kwonly]:
            if part in kwdefaults:
                part = part + "=" + text_of(kwdefaults[part], 60, 2)
            parts.append(part)
        if flags & 8:
            parts.append("**" + names[at])
        return "(" + ", ".join(parts) + ")"

    def detail(name, value):
        entry_ = describe(name, value, args["detail"])
        items, limit = args["items"], args["repr"]
        t = type_(value)
        array = numpy_array(value)
        if array is not None:
            ad = t_dict(array)
            entry_["ndim"], entry_["size"], entry_["nbytes"] = (
                ad["ndim"].__get__(value), ad["size"].__get__(value), ad["nbytes"].__get__(value))
        elif t is dict_ or t is list_ or t is tuple_ or t is set_ or t is frozenset_:
            listed = []
            for item in (items_of(value) if t is dict_ else value):
                if list_.__len__(listed) >= items:
                    break
                row = {"key": cut(text_of(item[0], limit, 1), limit)[0]} if t is dict_ else {}
                item = item[1] if t is dict_ else item
                row["type"], row["repr"] = type_name(type_(item)), cut(text_of(item, limit, 1), limit)[0]
                listed.append(row)
            entry_["items"] = listed
        elif t is function_ or t is builtin_:
            if t is function_:
                entry_["signature"] = cut(signature_of(value), limit)[0]
            else:
                text = value.__text_signature__
                if type_(text) is str_:
                    entry_["signature"] = cut(text.replace("$module, ", "").replace("$self, ", "")
                                              .replace("($module)", "()").replace("($self)", "()"), limit)[0]
            doc = value.__doc__
            if type_(doc) is str_ and doc.strip():
                entry_["doc"] = cut(doc.strip().splitlines()[0], limit)[0]
        elif t is not module_ and not is_type(value):
            own = own_dict(value)
            if own is not None:
                public = [k for k, v in items_of(own) if type_(k) is str_ and not k.startswith("_")]
                values = {k: v for k, v in items_of(own) if type_(k) is str_}
                entry_["attributeCount"] = list_.__len__(public)
                entry_["attributes"] = [{"name": k, "type": type_name(type_(values[k]))} for k in public[:items]]
        return entry_

    # sys, through the import statement only when __import__ is the interpreter's own (a builtin function of
    # the builtins module) and only when what it gives is the real sys (its own builtin functions are bound to it)
    importer = entry(anchor.__builtins__, "__import__")
    owner = importer.__self__ if type_(importer) is builtin_ else None
    if type_(owner) is not module_ or entry(module_dict(owner), "__name__") != "builtins" or (
            importer.__name__ != "__import__"):
        return
    sys_ = importer("sys")
    getframe = entry(module_dict(sys_), "_getframe") if type_(sys_) is module_ else None
    if type_(getframe) is not builtin_ or getframe.__self__ is not sys_:
        return
    # the namespace the cells run in (this function's globals), as a dict of its str names
    ns = {k: v for k, v in items_of(anchor.__globals__) if type_(k) is str_}
    modules = entry(module_dict(sys_), "modules", {})
    shell_module = entry(modules, "IPython.core.interactiveshell")
    shell_class = entry(module_dict(shell_module), "InteractiveShell") if type_(shell_module) is module_ else None
    ip = entry(t_dict(shell_class), "_instance") if shell_class is not None and is_type(shell_class) else None
    ip_dict = own_dict(ip) if ip is not None else None
    hidden = entry(ip_dict, "user_ns_hidden", {}) if ip_dict is not None else {}
    hidden = {k: v for k, v in items_of(hidden) if type_(k) is str_} if type_(hidden) is dict_ else {}
    absent = object_()

    def history_name(name):
        if name in ("_", "__", "___", "_i", "_ii", "_iii", "_i00", "_ih", "_oh", "_dh", "_webmcp_inspect"):
            return True
        digits = name[2:] if name.startswith("_i") else name[1:]
        return name.startswith("_") and digits.isdigit()

    def visible(name):
        return name in ns and not history_name(name) and ns[name] is not hidden.get(name, absent)

    def run():
        if args["mode"] == "inspect":
            name = args["name"]
            if not visible(name):
                return {"name": name, "defined": False}
            found = detail(name, ns[name])
            found["defined"] = True
            return found
        names = [n for n in ns if not n.startswith("_") and visible(n) and type_(ns[n]) is not module_]
        names.sort()
        offset, limit, budget = args["offset"], args["limit"], args["budget"]
        listed, used = [], 200
        for name in names[offset:offset + limit]:
            described = describe(name, ns[name], args["repr"])
            size = str_.__len__(encode(described)) + 1
            if listed and used + size > budget:
                break
            listed.append(described)
            used += size
        end = offset + list_.__len__(listed)
        return {"total": list_.__len__(names), "offset": offset, "variables": listed,
                "nextOffset": end if end < list_.__len__(names) else None}

    def tidy(args, ip, anchor):
        # after the answer: take this run's source out of linecache and of the history of a kernel that stores every
        # run (IPython's own objects, used the ordinary way: whatever they run comes after the answer line)
        import linecache
        frame_file = anchor.__code__.co_filename
        linecache.cache.pop(frame_file, None)
        if ip is None:
            return
        ns = anchor.__globals__
        hidden = getattr(ip, "user_ns_hidden", None) or {}
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

    # JSON, written here: '"', '\\\\', control characters escaped, a lone surrogate as U+FFFD
    escapes = dict_.fromkeys(range_(0xD800, 0xE000), "\\\\ufffd")
    for i in range_(32):
        escapes[i] = "\\\\u%04x" % i
    escapes[34], escapes[92] = '\\\\"', "\\\\\\\\"

    def encode(value):
        t = type_(value)
        if t is str_:
            return '"' + str_.translate(value, escapes) + '"'
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if t is int_:
            return "%d" % value
        if t is list_:
            return "[" + ",".join([encode(v) for v in value]) + "]"
        if t is dict_:
            return "{" + ",".join([encode(k) + ":" + encode(v) for k, v in items_of(value)]) + "}"
        return '"?"'

    try:
        answer = encode(run())
    except:
        answer = encode({"failed": "Error"})
    if str_.__len__(answer) > args["budget"]:
        answer = encode({"failed": "TooLarge"})
    # the one line of the answer, to the kernel's stdout (its stream is the kernel's, not the program's)
    stream = entry(module_dict(sys_), "stdout")
    stream.write(args["nonce"] + answer + "\\n")
    stream.flush()
    tidy(args, ip, anchor)

try:
    _webmcp_inspect(ARGUMENTS)
finally:
    del _webmcp_inspect
"""
)
