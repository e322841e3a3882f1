"""The plain values a host reads a notebook into (re-exported by :mod:`webmcp_bridge.host.protocol`; they sit in
``core`` because the pure semantics over cells take and make them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CellType = Literal["code", "markdown", "raw"]


@dataclass(frozen=True)
class RawItem:
    """One representation of an output: ``mime`` ("text/plain" for streams and errors), ``bytes`` (UTF-8 of the
    ANSI-stripped text, or decoded), ``head`` (the text's first bytes; "" for binary), ``binary`` (base64 images)."""

    mime: str
    bytes: int
    head: str = ""
    binary: bool = False


@dataclass(frozen=True)
class RawOutput:
    """One output of a code cell: ``name`` for streams, ``ename``/``evalue`` for errors."""

    output_type: str
    items: tuple[RawItem, ...]
    name: str | None = None
    ename: str | None = None
    evalue: str | None = None


@dataclass(frozen=True)
class RawCell:
    """One cell as the host read it (``output_count`` counts all outputs; ``outputs`` may hold the first few)."""

    id: str
    index: int
    cell_type: CellType
    source: str
    execution_count: int | None = None
    outputs: tuple[RawOutput, ...] = ()
    output_count: int = 0


@dataclass(frozen=True)
class RunState:
    """What a code cell's last run left: ``execution_count`` (None: not run or cleared) and ``edited`` (its
    source changed since, JupyterLab's ``isDirty``; None when the host cannot tell)."""

    id: str
    index: int
    execution_count: int | None
    edited: bool | None
