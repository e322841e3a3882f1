"""A small seeded generator of tool arguments from a JSON Schema (the `inputSchema` a tool registers).

Two kinds of arguments:

- ``valid(schema)``: arguments that satisfy the schema (types, enums/consts, min/max, lengths, required and
  optional properties, no unknown keys). A ``hint`` callable may supply a meaningful value for a property by
  name (a real cell id, a real hash, ...); it returns ``SKIP`` to let the schema decide.
- ``invalid(schema)``: arguments that break the schema in one chosen way (unknown key, missing required
  property, wrong type, out of range, too long / too short, not in the enum, too many items, a bad nested
  object, a non-object root, an oversized payload). A tool validating strictly against that schema must refuse
  every one of them.

Strings are drawn from families that stress a tool: ASCII, accents, CJK, right-to-left text and marks, emoji
(astral plane), NUL and other control characters, zero-width and format characters, very long strings.
Only JSON-representable values are produced (no NaN where it could be read as null, no lone surrogates).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

SKIP = object()

#: the largest integer the tools' schemas allow, and values around JavaScript's exact-integer limit
BIG_INTS = [2**31, 2**31 + 1, 2**32, 2**53 - 1, 2**53 + 1, 2**63, 10**18, -(2**31) - 1, -(2**53)]

ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyz0123456789_-. ",
    "éèàçñüößøåÆŒ",
    "日本語中文한국어",
    "עברית العربية فارسی",  # right-to-left scripts
    "\u200f\u200e\u202e\u202d\u2066\u2069",  # RTL/LTR marks and overrides, isolates
    "😀🎉👩‍💻🏳️‍🌈𝔘𝔫𝔦𝔠𝔬𝔡𝔢",  # astral plane and ZWJ sequences
    "\x00\x01\x07\x1b\x7f\t\n\r",  # NUL and control characters
    "\u200b\u200c\u200d\ufeff\u00ad",  # zero-width and format characters
    "'\"\\/<>&%$#{}[]:;,?*|`~",
]


def schema_types(schema: dict) -> set[str]:
    """The JSON types a (sub)schema accepts ('integer' also for 'number' is not assumed)."""
    if "anyOf" in schema:
        return set().union(*(schema_types(s) for s in schema["anyOf"]))
    if "const" in schema:
        return {schema.get("type") or type_of(schema["const"])}
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    return {kind} if kind else {"string", "integer", "number", "boolean", "array", "object", "null"}


def type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class Generator:
    """Arguments for one tool's schema, reproducible from ``seed``."""

    def __init__(self, schema: dict, seed: int, hint: Callable[[str, dict, random.Random], Any] | None = None):
        self.schema = schema
        self.rng = random.Random(seed)
        self.hint = hint or (lambda name, schema, rng: SKIP)

    # ---------------------------------------------------------------- strings and values
    def text(self, min_len: int = 0, max_len: int | None = None) -> str:
        rng = self.rng
        cap = 40 if max_len is None else max_len
        roll = rng.random()
        if roll < 0.05 and max_len is None:
            size = rng.choice([20_000, 100_000, 300_000])
        elif roll < 0.10 and max_len is not None:
            size = max_len  # exactly at the bound
        else:
            size = rng.randint(min_len, max(min_len, min(cap, 40)))
        size = max(size, min_len)
        if max_len is not None:
            size = min(size, max_len)
        alphabet = "".join(rng.sample(ALPHABETS, rng.randint(1, 3)))
        if size > 1000:
            chunk = "".join(rng.choice(alphabet) for _ in range(100))
            return (chunk * (size // 100 + 1))[:size]
        return "".join(rng.choice(alphabet) for _ in range(size))

    def value(self, schema: dict, name: str = "", depth: int = 0) -> Any:
        """A value valid for ``schema`` (``name`` is the property it is for, passed to the hint)."""
        hinted = self.hint(name, schema, self.rng) if name else SKIP
        if hinted is not SKIP:
            return hinted
        rng = self.rng
        if "anyOf" in schema:
            return self.value(rng.choice(schema["anyOf"]), "", depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return rng.choice(schema["enum"])
        kind = schema.get("type")
        if kind == "null":
            return None
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "integer":
            low = schema.get("minimum", -(2**31))
            high = schema.get("maximum", 2**31 - 1)
            return rng.choice([low, high, low + 1, rng.randint(low, min(high, low + 10)), rng.randint(low, high)])
        if kind == "number":
            return rng.uniform(schema.get("minimum", -1e6), schema.get("maximum", 1e6))
        if kind == "string":
            return self.text(schema.get("minLength", 0), schema.get("maxLength"))
        if kind == "array":
            low = schema.get("minItems", 0)
            high = min(schema.get("maxItems", 6), low + 6)
            return [self.value(schema.get("items", {}), "", depth + 1) for _ in range(rng.randint(low, high))]
        if kind == "object":
            return self.object(schema, depth + 1)
        return self.text()

    def object(self, schema: dict, depth: int = 0) -> dict:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for key, sub in props.items():
            if key in required or self.rng.random() < 0.5:
                out[key] = self.value(sub, key, depth)
        return out

    def valid(self) -> dict:
        """Arguments that satisfy the schema."""
        return self.object(self.schema)

    # ---------------------------------------------------------------- breaking the schema
    def wrong_value(self, schema: dict) -> Any:
        """A value of a JSON type the schema does not accept (or an out-of-bounds one)."""
        rng = self.rng
        allowed = schema_types(schema)
        candidates: list[Any] = []
        if "string" not in allowed:
            candidates += ["7", "", "null", "\u202e" + "x" * 3, "😀"]
        if "integer" not in allowed and "number" not in allowed:
            candidates += [0, -1, 2**31 - 1, rng.choice(BIG_INTS)]
        if "number" not in allowed:
            candidates += [0.5, -1.25, 1e300]
        if "boolean" not in allowed:
            candidates += [True, False]
        if "null" not in allowed:
            candidates += [None]
        if "array" not in allowed:
            candidates += [[], ["a"], [1, [2, [3]]], self.nested(rng.randint(20, 60))]
        if "object" not in allowed:
            candidates += [{}, {"a": 1}, {"line": 0, "column": 0}, {"\u0000": {"😀": [None]}}]
        # out of bounds for the accepted types
        for branch in schema.get("anyOf", [schema]):
            kind = branch.get("type")
            if kind == "integer":
                if "minimum" in branch:
                    candidates += [branch["minimum"] - 1, branch["minimum"] - 2**31]
                if "maximum" in branch:
                    candidates += [branch["maximum"] + 1, rng.choice([b for b in BIG_INTS if b > branch["maximum"]])]
            if kind == "string":
                if "maxLength" in branch:
                    candidates += ["x" * (branch["maxLength"] + 1), "é" * (branch["maxLength"] + rng.randint(1, 50))]
                if branch.get("minLength", 0) > 0:
                    candidates += [""]
                if "enum" in branch or "const" in branch:
                    choices = branch.get("enum") or [branch["const"]]
                    candidates += [c.upper() + " " for c in choices if isinstance(c, str)] + [
                        "explode",
                        "\u202e" + str(choices[0]),
                    ]
            if kind == "array":
                item = branch.get("items", {})
                if "maxItems" in branch:
                    candidates += [["x"] * (branch["maxItems"] + 1)]
                if item:
                    candidates += [[self.wrong_value_simple(item)]]
            if kind == "object" and branch.get("properties"):
                candidates += [self.broken_object(branch)]
        return rng.choice(candidates) if candidates else {"unexpected": self.nested(5)}

    def wrong_value_simple(self, schema: dict) -> Any:
        allowed = schema_types(schema)
        options = [v for v in (None, 5, True, {"k": 1}, [1]) if type_of(v) not in allowed]
        if schema.get("minLength", 0) > 0:
            options.append("")
        return self.rng.choice(options)

    def broken_object(self, schema: dict) -> dict:
        """A nested object that breaks ``schema`` once (used for nested properties)."""
        obj = self.object(schema)
        props = schema.get("properties", {})
        required = list(schema.get("required", []))
        roll = self.rng.random()
        if required and roll < 0.3:
            obj.pop(self.rng.choice(required), None)
            if not obj:
                obj = {}
            return obj
        if roll < 0.6 or not props:
            obj["unexpected_" + self.text(1, 6)] = 1
            return obj
        key = self.rng.choice(list(props))
        obj[key] = self.wrong_value(props[key])
        return obj

    def nested(self, depth: int) -> Any:
        value: Any = "bottom"
        for i in range(depth):
            value = [value] if i % 2 else {"d": value}
        return value

    def invalid(self) -> tuple[Any, str]:
        """Arguments that break the schema, and how (for messages)."""
        rng = self.rng
        props = self.schema.get("properties", {})
        required = list(self.schema.get("required", []))
        base = self.valid()
        ways = ["unknown key", "wrong value", "oversized", "not an object"]
        if required:
            ways.append("missing required")
        if not props:
            ways = ["unknown key", "unknown key", "oversized", "not an object"]
        way = rng.choice(ways + (["wrong value"] * 3 if props else []))
        if way == "unknown key":
            key = rng.choice(
                ["extra", "notebook_path", "cell_id", "constructor", "toString", "😀", "\u202ekey", "a" * 300, ""]
            )
            if key in props:
                key += "_"
            base[key] = rng.choice([1, None, "x", [1], {"a": {}}, self.nested(30)])
        elif way == "missing required":
            for key in rng.sample(required, rng.randint(1, len(required))):
                base.pop(key, None)
        elif way == "wrong value":
            key = rng.choice(list(props))
            base[key] = self.wrong_value(props[key])
        elif way == "oversized":
            big = "\u05d0😀x" * rng.choice([200_000, 300_000])  # 1.4-2.1 MB of UTF-8
            string_props = [k for k, s in props.items() if "string" in schema_types(s)]
            if string_props and rng.random() < 0.5:
                base[rng.choice(string_props)] = big  # over the argument cap (or over the property's maxLength)
            else:
                base["payload" + ("_" if "payload" in props else "")] = big
        else:
            return rng.choice([[], [base], ["a", 1]]), way
        return base, way
