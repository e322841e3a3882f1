"""The one ``$ref`` inliner (calls/schemas.py): nested models written in place, self-referring ones kept."""

from __future__ import annotations

from typing import Any

import jsonschema
from pydantic import BaseModel

from webmcp_bridge.calls.payloads import payload_schema
from webmcp_bridge.calls.registry import input_schema
from webmcp_bridge.calls.schemas import inline_refs, recursive_definitions


class Leaf(BaseModel):
    """A leaf (this docstring is the model's description)."""

    title: str
    weight: int = 1


class Node(BaseModel):
    label: str
    children: list[Node] = []
    leaf: Leaf | None = None


class Even(BaseModel):
    odd: Odd | None = None


class Odd(BaseModel):
    even: Even | None = None


class Holder(BaseModel):
    tree: Node
    pair: Even
    leaf: Leaf


def test_only_definitions_on_a_cycle_are_recursive() -> None:
    defs = Holder.model_json_schema()["$defs"]
    assert recursive_definitions(defs) == {"Node", "Even", "Odd"}
    assert recursive_definitions(Leaf.model_json_schema().get("$defs", {})) == set()


def test_a_tree_model_keeps_its_definitions_and_validates_a_tree() -> None:
    schema = input_schema(Holder)
    assert sorted(schema["$defs"]) == ["Even", "Node", "Odd"]
    assert schema["properties"]["tree"] == {"$ref": "#/$defs/Node"}
    # the leaf is inlined everywhere, its property named "title" kept while pydantic's title keywords go
    assert schema["properties"]["leaf"]["properties"]["title"] == {"type": "string"}
    assert "title" not in schema["$defs"]["Node"]
    tree = {"label": "root", "children": [{"label": "a", "children": [{"label": "b"}]}]}
    good = {"tree": tree, "pair": {"odd": {"even": {}}}, "leaf": {"title": "t"}}
    jsonschema.Draft202012Validator(schema).validate(good)
    bad = {**good, "tree": {"label": "root", "children": [{"children": []}]}}  # a child with no label
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


def test_payload_schemas_drop_defaults_and_the_models_own_description() -> None:
    schema: dict[str, Any] = payload_schema(Holder)
    leaf = schema["properties"]["leaf"]
    assert "description" not in leaf and "default" not in leaf["properties"]["weight"]
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    # the input is not changed
    original = Holder.model_json_schema()
    assert inline_refs(original) is not original and "$defs" in original and len(original["$defs"]) == 4
