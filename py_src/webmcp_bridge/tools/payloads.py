"""Payload pieces several tools return (models for ``outputSchema``, :mod:`webmcp_bridge.calls.payloads`), each
saying where the payload is made; field names are the wire names."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, create_model

from webmcp_bridge.calls.payloads import Payload, Wire, sometimes


def model(name: str, base: type[Wire] = Payload, /, **fields: Any) -> Any:
    """A payload model ``name`` (with ``base`` :class:`Wire`: a part of one) whose keys are ``fields`` in this order,
    each a type (a required key) or ``(type, field)`` (``sometimes()``, a ``Field`` with a description)."""
    keys: dict[str, Any] = {key: value if isinstance(value, tuple) else (value, ...) for key, value in fields.items()}
    return create_model(name, __base__=base, **keys)


class NotebookSummary(Wire):
    """:func:`webmcp_bridge.tools.common.summary`."""

    path: str
    dirty: bool
    revision: int
    cellCount: int = Field(description="Cells the agent can see.")
    hiddenCellCount: int
    access: Literal["write", "read"]
    otherTabs: int | None = sometimes("Other tabs of the site with this notebook open (null: the browser cannot tell).")
    savedElsewhere: bool = sometimes("Another tab saved the file since this tab loaded or last saved it.")


class NotebookRevision(Wire):
    """The notebook block of a write's result."""

    path: str
    revision: int
    cellCount: int = sometimes()
    otherTabs: int | None = sometimes("Other tabs of the site with this notebook open (null: the browser cannot tell).")
    savedElsewhere: bool = sometimes("Another tab saved the file since this tab loaded or last saved it.")


class CellRef(Wire):
    """:func:`webmcp_bridge.tools.common.cell_ref`: a cell as a write left it."""

    id: str
    index: int
    sourceHash: str


class OutputListing(Wire):
    """An output listed, not inlined (:func:`webmcp_bridge.core.snapshot.describe_output`): its address and richest
    representation always (the product contract), other keys only where they say something."""

    index: int
    uri: str = sometimes("Its address (notebook://{path}/cells/{cellId}/outputs/{index}), for jupyter_get_output.")
    outputType: str
    mimeType: str
    mimeTypes: list[str] = sometimes("Its representations (no key: text/plain is the only one).")
    bytes: int
    preview: str = sometimes()
    previewTruncated: bool = sometimes("The previewed text is longer: read it with jupyter_get_output.")
    name: str = sometimes("A stream's name, when it is not stdout.")
    ename: str = sometimes()
    evalue: str = sometimes()
    text: str = sometimes()
    textTruncated: bool = sometimes()


class OutputAddress(Payload):
    """What every jupyter_get_output result says of the output it read: which one, and the representation returned."""

    cellId: str
    outputIndex: int
    mimeType: str


class ImageFacts(Wire):
    """An image's type, size in pixels and decoded bytes (:meth:`webmcp_bridge.core.images.ImageInfo.to_json`)."""

    mimeType: str
    width: int
    height: int
    bytes: int
    downscaled: bool = sometimes("In ``image``: whether the block holds a smaller copy, not the stored image.")


class Kernel(Wire):
    name: str | None
    status: str
    displayName: str | None = sometimes()


class Position(Wire):
    line: int
    column: int


class Selection(Wire):
    start: Position
    end: Position


class Focus(Wire):
    """The person's focus: the active cell, cursor and selection ({line, column}, 0-based, UTF-16 columns)."""

    cellId: str | None
    cursor: Position | None
    selection: Selection | None


class Message(Wire):
    author: str
    body: str
    time: float | None


class ThreadCounts(Wire):
    open: int
    resolved: int


class Thread(Wire):
    """A review thread (:meth:`webmcp_bridge.review.threads.ThreadView.to_json`)."""

    id: str
    status: Literal["open", "resolved"]
    state: Literal["exact", "reanchored", "orphaned", "cell-missing", "output-changed"]
    cellId: str
    cellIndex: int | None
    anchor: dict[str, Any] = Field(description="{kind: cell|range|output, cellId, ...} as stored (docs/TOOLS.md).")
    selection: Selection | None
    createdAt: float | None
    updatedAt: float | None
    resolvedAt: float | None
    resolvedBy: str | None
    messageCount: int
    messages: list[Message]
    omittedMessageCount: int
