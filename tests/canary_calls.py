"""Argument combinations for every registered tool, generated from its inputSchema (for the canary scan).

Used by tests/test_access.py (CPython, memory host) and playwright-tests/test_access_browser.py (real
JupyterLab). Nothing here names a tool: the calls come from whatever definitions the registry publishes, so
a tool added later is scanned with no change here.

The values are the ones an agent could plausibly send: ids of cells it can see, paths of the workspace (the
hidden notebook's path among them), small integers, every enum value, true/false, short strings. Hidden ids
and the canary text are never sent (a result may echo its arguments; that a hidden id gets exactly the
unknown-id error is checked separately).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Pools:
    """What to draw argument values from.

    ``cell_ids``: ids of cells the agent may see; ``notebook_paths``: notebook paths (None = omit); ``paths``:
    any workspace paths (files, folders, notebooks); ``texts``: short strings for free-text fields.
    """

    cell_ids: list[str]
    notebook_paths: list[str | None]
    paths: list[str]
    texts: list[str] = field(default_factory=lambda: ["x", "print(1)", "", "a = 1\n"])
    ints: list[int] = field(default_factory=lambda: [0, 1, 3, 1000])


def _values(name: str, schema: dict[str, Any], pools: Pools, rng: random.Random, depth: int = 0) -> list[Any]:
    """Candidate values for one property (a handful, most useful first)."""
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        values: list[Any] = []
        for option in options:
            values.extend(_values(name, option, pools, rng, depth))
        return values + ([None] if any(s.get("type") == "null" for s in schema["anyOf"]) else [])
    if "oneOf" in schema:
        values = []
        for option in schema["oneOf"]:
            values.extend(_values(name, option, pools, rng, depth))
        return values
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    kind = schema.get("type")
    lowered = name.lower()
    if kind == "string":
        if lowered.endswith("cellid"):
            return pools.cell_ids[:3]
        if lowered == "notebookpath":
            return [p for p in pools.notebook_paths if p is not None]
        if lowered in ("path", "directory"):
            return pools.paths
        if lowered.endswith("hash"):
            return ["0" * 16]
        return pools.texts
    if kind == "integer":
        low = schema.get("minimum", 0)
        return [max(low, v) for v in pools.ints]
    if kind == "number":
        return [0.1, 1.0]
    if kind == "boolean":
        return [True, False]
    if kind == "array":
        if lowered.endswith("cellids"):
            return [pools.cell_ids[:2], pools.cell_ids, []]
        item = schema.get("items", {})
        if depth > 2:
            return [[]]
        items = _values(name.rstrip("s"), item, pools, rng, depth + 1)
        return [items[:1], items[:3]] if items else [[]]
    if kind == "object" or "properties" in schema:
        if depth > 2:
            return [{}]
        return list(itertools.islice(_objects(schema, pools, rng, depth + 1), 4))
    return [None]


def _objects(schema: dict[str, Any], pools: Pools, rng: random.Random, depth: int) -> Iterator[dict[str, Any]]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    options = {name: _values(name, sub, pools, rng, depth) or [None] for name, sub in props.items()}
    while True:
        args: dict[str, Any] = {}
        for name, values in options.items():
            if name in required or rng.random() < 0.6:
                value = rng.choice(values)
                if value is not None or name not in required:
                    args[name] = value
        yield {k: v for k, v in args.items() if v is not None or k not in required}


def calls_for(definition: dict[str, Any], pools: Pools, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """Up to ``count`` distinct argument objects for one tool: first every value of each property on its own
    (with the required ones filled), then random combinations."""
    rng = random.Random(f"{definition['name']}:{seed}")
    schema = definition.get("inputSchema", {})
    props: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", []))
    seen: set[str] = set()
    calls: list[dict[str, Any]] = []

    def add(args: dict[str, Any]) -> None:
        import json

        key = json.dumps(args, sort_keys=True)
        if key not in seen and len(calls) < count:
            seen.add(key)
            calls.append(args)

    base = {name: (_values(name, props[name], pools, rng) or [None])[0] for name in required}
    add({k: v for k, v in base.items() if v is not None})
    for name, sub in props.items():
        for value in _values(name, sub, pools, rng):
            if value is not None:
                add({**{k: v for k, v in base.items() if v is not None}, name: value})
    objects = _objects(schema, pools, rng, 0)
    for _ in range(count * 4):
        if len(calls) >= count:
            break
        add(next(objects))
    return calls
