"""One ``$ref`` inliner for pydantic's JSON Schemas: WebMCP clients read nested models written in place more
reliably than ``$defs``. A self-referring model cannot be inlined: it stays under a root ``$defs`` with its
``$ref``s (valid draft 2020-12, section 8.2.4).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

_PREFIX = "#/$defs/"


def _name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _refs(node: Any) -> set[str]:
    """The ``$defs`` names ``node`` refers to, at any depth."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.add(_name(ref))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def recursive_definitions(defs: dict[str, Any]) -> set[str]:
    """The names in ``defs`` that reach themselves through ``$ref``s (cannot be inlined)."""
    edges = {name: _refs(schema) & defs.keys() for name, schema in defs.items()}
    recursive: set[str] = set()
    for start in defs:
        seen: set[str] = set()
        stack = list(edges[start])
        while stack:
            name = stack.pop()
            if name == start:
                recursive.add(start)
                break
            if name not in seen:
                seen.add(name)
                stack.extend(edges[name])
    return recursive


def inline_refs(
    schema: dict[str, Any], *, drop: Iterable[str] = ("title",), drop_target_description: bool = False
) -> dict[str, Any]:
    """A copy of ``schema`` with its ``$defs`` inlined at each ``$ref`` (recursive ones kept under a root ``$defs``).
    ``drop``: keywords removed from every node (not from ``properties`` mappings). ``drop_target_description``: an
    inlined model's own ``description`` left out. Raises KeyError for a ``$ref`` to an unknown name."""
    schema = copy.deepcopy(schema)
    defs: dict[str, Any] = schema.pop("$defs", {})
    keep = recursive_definitions(defs)
    dropped = frozenset(drop)

    def walk(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, dict):
            if in_properties:
                return {name: walk(value) for name, value in node.items()}
            ref = node.get("$ref")
            if isinstance(ref, str) and _name(ref) not in keep:
                target = {
                    k: v for k, v in defs[_name(ref)].items() if not (drop_target_description and k == "description")
                }
                return walk({**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}})
            if isinstance(ref, str):
                node = {**node, "$ref": _PREFIX + _name(ref)}
            return {k: walk(v, k == "properties") for k, v in node.items() if k not in dropped}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result: dict[str, Any] = walk(schema)
    if keep:
        result["$defs"] = {name: walk(defs[name]) for name in sorted(keep)}
    return result
