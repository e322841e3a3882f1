"""Which names a code cell's source binds and reads, read with Python's own parser (:mod:`ast`).

:func:`cell_names` answers a :class:`CellNames` for one cell's source; :mod:`webmcp_bridge.core.staleness` follows
the names from cell to cell. The rules (binds, reads, function bodies, IPython syntax, unreadable cells) are those
of docs/TOOLS.md, "Stale outputs", after Python's execution model (the language reference's "Naming and binding").
Results are cached by source text (:data:`CACHE_SIZE` sources): a notebook is read again at every cell read.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from webmcp_bridge.core.limits import NAMES_SOURCE_BYTES, utf8_len

#: why a cell's names cannot be read (:attr:`CellNames.unreadable`)
CELL_MAGIC = "cellMagic"
LINE_MAGIC = "lineMagic"
STAR_IMPORT = "starImport"
SYNTAX = "syntax"
TOO_LONG = "tooLong"
OTHER_LANGUAGE = "language"

CACHE_SIZE = 4096  #: sources whose :class:`CellNames` are kept (the least recently read are forgotten first)

#: line magics that bind no name of the notebook (IPython's documentation of each, TensorBoard's for ``%tensorboard``),
#: dropped before parsing (``x = %sx ls`` binds ``x``); any other line magic makes the cell unreadable
NAMELESS_MAGICS = frozenset(
    """alias alias_magic aimport autoawait autocall autoindent automagic autoreload bookmark cat cd clear colors conda
    config connect_info cp dhist dirs doctest_mode env history killbgscripts less load_ext ls lsmagic magic mamba man
    matplotlib micromamba mkdir more mv notebook page pdef pdoc pfile pinfo pinfo2 pip popd pprint precision psearch
    psource pushd pwd pycat qtconsole quickref reload_ext rm rmdir set_env sx system tensorboard unalias unload_ext
    who who_ls whos xmode""".split()
)
#: line magics whose argument is Python code run in the notebook's namespace (its options before it)
_TIMING_MAGICS = frozenset({"time", "timeit"})
_TIMEIT_VALUE_OPTIONS = frozenset({"-n", "-r", "-p"})


@dataclass(frozen=True)
class CellNames:
    """What one code cell's source binds and reads (``unreadable``: None, else why not, and the rest is empty).

    ``defines``: names bound (or a part of them rebound) at module level; ``reads``: names read before they are bound
    for certain; ``later``: the other free names of its functions' and classes' bodies; ``calls``: per function or
    class defined, its body's free names; ``depends``: per name bound, the names from before the cell it may be made
    from (a ``def``: its decorators and defaults only).
    """

    defines: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    later: frozenset[str] = frozenset()
    calls: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))
    depends: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))
    unreadable: str | None = None


def unreadable(reason: str) -> CellNames:
    """The names of a cell that cannot be read, for ``reason``."""
    return CellNames(unreadable=reason)


class _Unreadable(Exception):
    """Raised with the reason (``args[0]``) a source cannot be read."""


@lru_cache(maxsize=CACHE_SIZE)
def cell_names(source: str) -> CellNames:
    """The names ``source`` (Python with IPython's syntax) binds and reads; never raises (see ``unreadable``)."""
    if utf8_len(source) > NAMES_SOURCE_BYTES:
        return unreadable(TOO_LONG)
    try:
        tree = _parse(source) or _parse(_without_ipython(source))
        return unreadable(SYNTAX) if tree is None else _Cell().read(tree)
    except _Unreadable as exc:
        return unreadable(exc.args[0])
    except (RecursionError, MemoryError):  # nesting deeper than the parser or the walk can follow
        return unreadable(SYNTAX)


def _parse(source: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: the names are the same
            tree = compile(source, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except (SyntaxError, ValueError, OverflowError):  # ValueError: a NUL character
        return None
    assert isinstance(tree, ast.Module)
    return tree


_HELP = re.compile(r"(?:\?{1,2}[\w.]+|[\w.]+\?{1,2})")
_ASSIGNED = re.compile(r"([A-Za-z_][\w.,\s\[\]()*]*?)\s*=\s*([!%].*)")


def _without_ipython(source: str) -> str:
    """``source`` with IPython's line syntax replaced by the Python it stands for, line for line."""
    lines = source.split("\n")
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("%%"):
        raise _Unreadable(CELL_MAGIC)
    return "\n".join(_line_without_ipython(line) for line in lines)


def _line_without_ipython(line: str) -> str:
    code = line.strip()
    indent = line[: len(line) - len(line.lstrip())]
    if _HELP.fullmatch(code):
        return indent + "pass"
    target = None
    assigned = _ASSIGNED.fullmatch(code)
    if assigned:
        target, code = assigned.group(1), assigned.group(2)
    if code.startswith("!"):
        python = "None"
    elif code.startswith("%"):
        if code.startswith("%%"):
            raise _Unreadable(CELL_MAGIC)
        name, _, argument = code[1:].partition(" ")
        if name in _TIMING_MAGICS:
            python = _timed_code(argument) or "None"
        elif name in NAMELESS_MAGICS:
            python = "None"
        else:
            raise _Unreadable(LINE_MAGIC)
    else:
        return line
    if target is not None:
        return f"{indent}{target} = {python}"
    return indent + ("pass" if python == "None" else python)


def _timed_code(argument: str) -> str:
    words = argument.split(" ")
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option in _TIMEIT_VALUE_OPTIONS and words:
            words.pop(0)
    return " ".join(words).strip()


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPE_KINDS = frozenset(_SCOPES)
_COMPREHENSION_KINDS = frozenset(_COMPREHENSIONS)
#: nodes with no name below them
_LEAVES = frozenset({ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue})


def _base_name(node: ast.expr) -> str | None:
    """``df`` of ``df.a["b"]``, if any."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _params(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a is not None)]


def _evaluated_where_defined(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef) -> list[ast.AST]:
    """The parts of a ``def``, ``lambda`` or ``class`` evaluated where it stands."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    parts: list[ast.AST] = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        parts += node.decorator_list
        parts += [a.annotation for a in _params(node.args) if a.annotation is not None]
        if node.returns is not None:
            parts.append(node.returns)
    return parts


class _Scope:
    """The names one function (or lambda, comprehension, class) body binds and loads, by Python's scoping rules."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.loads: set[str] = set()
        self.declared: set[str] = set()  # global / nonlocal
        self.globals: set[str] = set()  # declared global
        self.nested: set[str] = set()  # free names of nested scopes
        self.global_stores: set[str] = set()  # module names nested scopes assign through `global`

    def walk(self, nodes: Iterable[ast.AST]) -> _Scope:
        stack = list(nodes)
        loads, bound = self.loads, self.bound
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:  # the most common node: its only child is its context
                (loads if type(node.ctx) is ast.Load else bound).add(node.id)  # type: ignore[attr-defined]
                continue
            if kind in _LEAVES:
                continue
            if kind in _SCOPE_KINDS:
                assert isinstance(node, _SCOPES)
                if not isinstance(node, ast.Lambda):
                    bound.add(node.name)
                stack.extend(_evaluated_where_defined(node))
                inner = _function_scope(node) if not isinstance(node, ast.ClassDef) else _Scope().walk(node.body)
                self.nested |= inner.free()
                self.global_stores |= inner.global_stores | inner.assigned_globals()
                continue
            if kind in _COMPREHENSION_KINDS:
                assert isinstance(node, _COMPREHENSIONS)
                stack.append(node.generators[0].iter)
                inner = _comprehension_scope(node)
                self.nested |= inner.free()
                self.global_stores |= inner.global_stores
                continue
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                self.declared.update(node.names)
                if isinstance(node, ast.Global):
                    self.globals.update(node.names)
            elif isinstance(node, ast.alias):
                if node.name != "*":
                    bound.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bound.add(node.rest)
            for name in node._fields:  # ast.iter_child_nodes, without its generator
                value = getattr(node, name, None)
                if isinstance(value, list):
                    stack.extend(item for item in value if isinstance(item, ast.AST))
                elif isinstance(value, ast.AST):
                    stack.append(value)
        return self

    def free(self) -> set[str]:
        local = self.bound - self.declared
        return (self.loads | self.nested) - local

    def assigned_globals(self) -> set[str]:
        return self.bound & self.globals


def _function_scope(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> _Scope:
    scope = _Scope()
    scope.bound |= {a.arg for a in _params(node.args)}
    body: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
    return scope.walk(body)


def _comprehension_scope(node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> _Scope:
    """The comprehension's own scope (its first iterable is evaluated outside it)."""
    parts: list[ast.AST] = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    for number, generator in enumerate(node.generators):
        parts += [generator.target, *generator.ifs]
        if number:
            parts.append(generator.iter)
    return _Scope().walk(parts)


def _walrus_targets(node: ast.AST) -> set[str]:
    """Names bound by ``:=`` in ``node`` outside functions (also in a comprehension)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _SCOPES):
            continue
        if isinstance(item, ast.NamedExpr) and isinstance(item.target, ast.Name):
            found.add(item.target.id)
        stack.extend(ast.iter_child_nodes(item))
    return found


class _Cell:
    """One walk of a cell's module body, in order."""

    def __init__(self) -> None:
        self.defines: set[str] = set()
        self.reads: set[str] = set()
        self.later: set[str] = set()  # free names of the bodies of functions defined here: read at the cell's end
        self.calls: dict[str, frozenset[str]] = {}
        self.origin: dict[str, set[str]] = {}  # name bound here -> names from before the cell its value may use
        self.binding: set[str] = set()  # names the top-level statement being read binds
        self.loaded: set[str] = set()  # names it loads to make them (not in the bodies of the functions it defines)

    def read(self, tree: ast.Module) -> CellNames:
        bound: set[str] = set()
        for statement in tree.body:
            before = set(bound)
            self.binding, self.loaded = set(), set()
            self.statement(statement, bound)
            used: set[str] = set()
            for name in self.loaded:
                used |= self.origin.get(name, set())
                if name not in before:
                    used.add(name)  # not bound here for certain yet: the value from before the cell, maybe
            for name in self.binding:
                self.origin.setdefault(name, set()).update(used)
        return CellNames(
            frozenset(self.defines),
            frozenset(self.reads),
            frozenset(self.later - bound - self.reads),
            MappingProxyType(dict(self.calls)),
            MappingProxyType({name: frozenset(self.origin.get(name, ())) for name in self.defines}),
        )

    def define(self, *names: str) -> None:
        self.defines.update(names)
        self.binding.update(names)

    def body(self, statements: Iterable[ast.stmt], bound: set[str]) -> None:
        for statement in statements:
            self.statement(statement, bound)

    def use(self, node: ast.AST | None, bound: set[str]) -> None:
        if node is None:
            return
        scope = _Scope().walk([node])
        loads = scope.loads | scope.nested
        self.loaded |= loads
        self.reads |= loads - bound
        self.define(*_walrus_targets(node), *scope.global_stores)

    def bind(self, target: ast.AST, bound: set[str], certain: bool) -> None:
        if isinstance(target, ast.Name):
            self.define(target.id)
            if certain:
                bound.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind(element, bound, certain)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, bound, certain)
        else:  # a part of an object: the object's name is read, and what it holds changes
            self.use(target, bound)
            base = _base_name(target)  # type: ignore[arg-type]
            if base is not None:
                self.define(base)

    def define_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, bound: set[str]) -> None:
        for part in _evaluated_where_defined(node):
            self.use(part, bound)
        if isinstance(node, ast.ClassDef):
            body = _Scope().walk(node.body)  # the class body runs here; its methods when called
            methods = set(body.nested)
            self.loaded |= body.loads
            self.reads |= body.loads - body.bound - bound
            self.define(*body.global_stores)
        else:
            scope = _function_scope(node)
            methods = scope.free()
            self.define(*scope.global_stores, *scope.assigned_globals())
        self.calls[node.name] = frozenset(methods)
        self.later |= methods
        self.define(node.name)
        bound.add(node.name)

    def statement(self, node: ast.stmt, bound: set[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.define_function(node, bound)
        elif isinstance(node, ast.Assign):
            self.use(node.value, bound)
            for target in node.targets:
                self.bind(target, bound, certain=True)
        elif isinstance(node, ast.AugAssign):
            self.use(node.value, bound)
            if isinstance(node.target, ast.Name):
                self.loaded.add(node.target.id)
                if node.target.id not in bound:
                    self.reads.add(node.target.id)
            self.bind(node.target, bound, certain=True)
        elif isinstance(node, ast.AnnAssign):
            self.use(node.annotation, bound)
            self.use(node.value, bound)
            if node.value is not None:
                self.bind(node.target, bound, certain=True)
            elif not isinstance(node.target, ast.Name):
                self.use(node.target, bound)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.use(node.iter, bound)
            inner = set(bound)
            self.bind(node.target, inner, certain=True)
            self.body(node.body, inner)
            self.body(node.orelse, set(bound))
        elif isinstance(node, (ast.While, ast.If)):
            self.use(node.test, bound)
            self.body(node.body, set(bound))
            self.body(node.orelse, set(bound))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.use(item.context_expr, bound)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, bound, certain=True)
            self.body(node.body, bound)
        elif isinstance(node, (ast.Try, ast.TryStar)):
            self.body(node.body, set(bound))
            for handler in node.handlers:
                self.use(handler.type, bound)
                inner = set(bound)
                if handler.name:
                    self.define(handler.name)
                    inner.add(handler.name)
                self.body(handler.body, inner)
            self.body(node.orelse, set(bound))
            self.body(node.finalbody, bound)
        elif isinstance(node, ast.Match):
            self.use(node.subject, bound)
            for case in node.cases:
                inner = set(bound)
                captures = _Scope().walk([case.pattern])
                self.loaded |= captures.loads
                self.reads |= captures.loads - bound
                for name in captures.bound:
                    self.define(name)
                    inner.add(name)
                self.use(case.guard, inner)
                self.body(case.body, inner)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    raise _Unreadable(STAR_IMPORT)
                name = alias.asname or alias.name.split(".")[0]
                self.define(name)
                bound.add(name)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.define(target.id)
                    bound.discard(target.id)
                else:
                    self.bind(target, bound, certain=False)
        elif type(node).__name__ == "TypeAlias":  # Python 3.12: `type X = ...`, its value evaluated when used
            name = node.name  # type: ignore[attr-defined]
            self.later |= _Scope().walk([node.value]).free()  # type: ignore[attr-defined]
            self.bind(name, bound, certain=True)
        elif not isinstance(node, (ast.Global, ast.Nonlocal)):
            self.use(node, bound)  # an expression, return, raise, assert, pass ...
