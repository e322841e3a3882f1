"""The plain values a host reads a notebook into: a cell (:class:`RawCell`), its outputs (:class:`RawOutput`)
and their representations (:class:`RawItem`).

They sit in ``core/`` rather than beside the host protocol (:mod:`webmcp_bridge.host.protocol`, which re-exports
them) because the pure semantics over cells (:mod:`webmcp_bridge.core.snapshot`, :mod:`webmcp_bridge.core.nbjson`)
takes and makes them, and ``core`` imports nothing above it. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CellType = Literal["code", "markdown", "raw"]


@dataclass(frozen=True)
class RawItem:
    """One representation of an output.

    Attributes:
        mime: the MIME type; streams and errors use "text/plain".
        bytes: full size: UTF-8 bytes of the (ANSI-stripped) text, or decoded bytes for binary data.
        head: the first bytes of the text (at most the head size asked for); "" for binary data.
        binary: True when the data is base64 in nbformat (images).
    """

    mime: str
    bytes: int
    head: str = ""
    binary: bool = False


@dataclass(frozen=True)
class RawOutput:
    """One output of a code cell. ``name`` is the stream name (stdout/stderr) for streams;
    ``ename``/``evalue`` are set for errors."""

    output_type: str
    items: tuple[RawItem, ...]
    name: str | None = None
    ename: str | None = None
    evalue: str | None = None


@dataclass(frozen=True)
class RawCell:
    """One cell as the host read it. ``source`` is the full source text; ``outputs`` is empty for
    non-code cells; ``output_count`` counts all outputs even when ``outputs`` holds only the first few."""

    id: str
    index: int
    cell_type: CellType
    source: str
    execution_count: int | None = None
    outputs: tuple[RawOutput, ...] = ()
    output_count: int = 0


@dataclass(frozen=True)
class RunState:
    """What a code cell's last run left, as the host's model knows it.

    Attributes:
        id: the cell's nbformat id.
        index: its index in the notebook.
        execution_count: the count of the run that made its outputs; None when it has not run (or was cleared).
        edited: True when its source changed since that run, False when not, None when the host cannot tell
            (JupyterLab's code cell model ``isDirty``; a cell loaded with outputs counts as edited once its text
            changes, since the text that ran is not stored in nbformat).
    """

    id: str
    index: int
    execution_count: int | None
    edited: bool | None
