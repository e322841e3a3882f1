"""Pydantic models of what a successful call returns, for each tool's ``outputSchema``.

A tool declares the model (or a union of models) of its success payload (``Tool.output_model``); the registry
publishes the JSON Schema of every payload a successful call of that tool can return (:func:`output_schema`):

- the tool's own payload (a model extending :class:`Payload`);
- :class:`PendingPayload`: any call still running after the execution timeout, or waiting on a dialog it opened;
- :class:`UnfitPayload`: a result that did not fit the cap even shortened;
- a feature's normal end of a call, when the tool's model names it (Propose mode's ``denied``).

and, for every one of them, the keys the registry may add to any successful result (:class:`Added`: the open
``dialogs``, and ``truncated``/``truncation`` when a result was shortened to fit the cap), declared once as the
schema's top-level ``properties``.

Errors (``isError: true``) are not described by ``outputSchema``: MCP clients check structured content against it
only for successful results, and every error is ``{error, message, ...details}`` with a code of the closed list
(docs/TOOLS.md). The models' field names are the wire names (camelCase). A key that is sometimes absent is
declared with :func:`sometimes` (not required; never ``null`` unless its type says so). The published schemas
leave ``additionalProperties`` open, so a client built against them keeps working when a later version adds a
key; the tests check every real result against a closed copy (tests/test_output_schemas.py).
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
    """A JupyterLab dialog open during a call (:mod:`webmcp_bridge.calls.dialogs`; a short report when the full ones
    do not fit: id, title, state, shown, owner, answerable)."""

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
    """Base of every tool's success payload model. The keys the registry may add to any successful result are not
    declared here but once for all payloads of a tool (:class:`Added`, the schema's top-level ``properties``)."""


class Added(Wire):
    """Keys the registry adds to any successful result: the open dialogs (:mod:`webmcp_bridge.calls.dialogs`) and
    the cuts of a result shortened to fit the cap (:mod:`webmcp_bridge.core.bounds`)."""

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
    """The JSON Schema (draft 2020-12, ``$defs`` inlined, no model descriptions) of a payload model or a union of
    them."""
    schema = TypeAdapter(model).json_schema(mode="validation")
    schema.pop("description", None)
    # pydantic's title and default keywords dropped (a default of a sometimes-absent key is not a value a payload
    # holds), and a nested model's own description (its docstring, written for the code)
    return inline_refs(schema, drop=("title", "default"), drop_target_description=True)


def output_schema(model: Any) -> dict[str, Any]:
    """The ``outputSchema`` of a tool whose success payload is ``model`` (a payload model or a union): an object with
    the keys the registry may add to any result (:class:`Added`, as top-level ``properties``) that is one of
    ``model``'s payloads, :class:`PendingPayload` or :class:`UnfitPayload` (``anyOf``; see the module docstring).
    Generated once per model (a fresh copy each call)."""
    return copy.deepcopy(_output_schema(model))


def shared_output_schema(model: Any) -> dict[str, Any]:
    """:func:`output_schema` without the copy: the cached schema itself, shared by every caller, which must not change
    it (for one that only reads or serializes it)."""
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
