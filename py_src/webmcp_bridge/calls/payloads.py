"""Pydantic models of what a successful call returns, for each tool's ``outputSchema`` (docs/TOOLS.md, "Output
schemas"): ``anyOf`` the tool's own payloads (:class:`Payload`), :class:`PendingPayload` and :class:`UnfitPayload`,
with the registry's additions (:class:`Added`) as top-level ``properties``. Field names are wire names; a
sometimes-absent key is :func:`sometimes`; ``additionalProperties`` stays open (tests check a closed copy).
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from webmcp_bridge.calls.schemas import inline_refs


def sometimes(description: str | None = None) -> Any:
    """A field for a key that is sometimes absent from the payload (not required; absent rather than null)."""
    return Field(default=None, description=description)


class Wire(BaseModel):
    """Base of every payload model: field names are the wire names; no extra key is declared."""

    model_config = ConfigDict(extra="ignore")


class DialogButton(Wire):
    index: int
    label: str
    kind: Literal["accept", "reject"]
    warn: bool = sometimes()
    disabled: bool = sometimes()


class DialogOwner(Wire):
    tool: str
    pendingId: str | None


class DialogReport(Wire):
    """A dialog open during a call (:mod:`webmcp_bridge.calls.dialogs`), or its short report."""

    id: str
    title: str
    body: str = sometimes()
    bodyTruncated: bool = sometimes()
    state: Literal["shown", "queued"]
    shown: bool
    buttons: list[DialogButton] = sometimes()
    omittedButtons: int = sometimes()
    input: dict[str, Any] = sometimes("The body's first input: {type, value?, checked?}.")
    checkbox: dict[str, Any] = sometimes("A footer checkbox: {label, checked}.")
    owner: DialogOwner | None
    answerable: bool


class Payload(Wire):
    """Base of every tool's success payload model (the registry's additions are :class:`Added`)."""


class Added(Wire):
    """Keys the registry adds to any success: open dialogs, and the cuts made to fit the cap."""

    dialogs: list[dict[str, Any]] = sometimes()
    dialogsOmitted: int = sometimes()
    truncated: bool = sometimes()
    truncation: list[dict[str, Any]] = sometimes()
    truncationOmitted: int = sometimes()


class PendingPayload(Payload):
    """A call still running after the execution timeout (or waiting on a dialog it opened): collect it with
    jupyter_wait_for_result."""

    status: Literal["pending"]
    pendingId: str
    tool: str
    message: str
    dialog: dict[str, Any] = sometimes()


class UnfitPayload(Wire):
    """A result that did not fit the result cap even shortened: ask for less."""

    truncated: Literal[True]
    message: str


class AnyPayload(Payload):
    """The payload of another call (a collected pending call's own result)."""

    model_config = ConfigDict(extra="allow")


def payload_schema(model: Any) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, ``$defs`` inlined, no model descriptions) of a payload model or union."""
    schema = TypeAdapter(model).json_schema(mode="validation")
    schema.pop("description", None)
    # a sometimes-absent key's default is no value a payload holds; a nested model's docstring is for the code
    return inline_refs(schema, drop=("title", "default"), drop_target_description=True)


def output_schema(model: Any) -> dict[str, Any]:
    """The ``outputSchema`` for success payload ``model`` (module docstring); a fresh copy of a cached one."""
    return copy.deepcopy(_output_schema(model))


def shared_output_schema(model: Any) -> dict[str, Any]:
    """:func:`output_schema` without the copy: shared, never to be changed."""
    return _output_schema(model)


@functools.cache
def _output_schema(model: Any) -> dict[str, Any]:
    variants: list[dict[str, Any]] = []
    for part in (model, PendingPayload, UnfitPayload):
        schema = payload_schema(part)
        for variant in schema["anyOf"] if set(schema) == {"anyOf"} else [schema]:
            variant.pop("description", None)
            variants.append(variant)
    return {"type": "object", "properties": payload_schema(Added)["properties"], "anyOf": variants}
