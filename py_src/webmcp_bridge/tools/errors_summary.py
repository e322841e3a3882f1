"""The errors summary of ``jupyter_get_context`` (``includeErrors``): the cells of the current notebook whose last run
raised (an ``error`` output among their first ERROR_SCAN_OUTPUTS: a run that raises ends with one, the next run clears
the outputs first), at most ERRORS_LISTED in notebook order, each with its error's name and message cut to
ERROR_MESSAGE_BYTES (the traceback is read with ``jupyter_get_output``). Read through the access guard: a hidden cell
is never listed and indices count visible cells.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from webmcp_bridge.access.notebook_guard import GuardedNotebook
from webmcp_bridge.calls.payloads import Wire
from webmcp_bridge.core.limits import ERROR_MESSAGE_BYTES, ERROR_SCAN_OUTPUTS, ERRORS_LISTED, EXPORT_CHUNK, preview
from webmcp_bridge.core.uris import notebook_uri

#: the name the Pyodide kernel (jupyterlite-pyodide-kernel 0.8.6, ``str(type(error))``) gives an error
_CLASS_REPR = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>")


def error_name(ename: str) -> str:
    """The error's class name as ipykernel gives it (``ValueError``): the Pyodide kernel's ``<class 'ValueError'>`` (or
    ``<class 'module.Name'>``) becomes ``ValueError`` (``Name``); any other name is kept as it is."""
    match = _CLASS_REPR.fullmatch(ename.strip())
    return match.group(1) if match else ename


class CellError(Wire):
    """One cell whose last run raised."""

    cellId: str
    index: int
    executionCount: int | None
    ename: str
    evalue: str
    outputIndex: int


class ErrorsSummary(Wire):
    """The cells of the current notebook whose last run raised (:func:`errors_summary`)."""

    path: str
    uri: str
    count: int
    cells: list[CellError]
    truncated: bool


async def errors_summary(nb: GuardedNotebook) -> dict[str, Any]:
    """``{path, uri, count, cells: [{cellId, index, executionCount, ename, evalue, outputIndex}], truncated}`` for
    ``nb`` (see the module docstring). Reads the visible cells :data:`EXPORT_CHUNK` at a time, with a yield to the page
    between reads (a notebook of thousands of cells never holds it in one stretch)."""
    found: list[dict[str, Any]] = []
    count = 0
    total = nb.cell_count()
    for start in range(0, total, EXPORT_CHUNK):
        if start:
            await asyncio.sleep(0)
        for cell in nb.read_cells(
            range(start, min(total, start + EXPORT_CHUNK)), head_bytes=0, max_outputs=ERROR_SCAN_OUTPUTS
        ):
            index = next((i for i, o in enumerate(cell.outputs) if o.output_type == "error"), None)
            if index is None:
                continue
            count += 1
            if len(found) >= ERRORS_LISTED:
                continue
            output = cell.outputs[index]
            found.append(
                {
                    "cellId": cell.id,
                    "index": cell.index,
                    "executionCount": cell.execution_count,
                    "ename": preview(error_name(output.ename or ""), ERROR_MESSAGE_BYTES),
                    "evalue": preview(output.evalue or "", ERROR_MESSAGE_BYTES),
                    "outputIndex": index,
                }
            )
    return {
        "path": nb.path,
        "uri": notebook_uri(nb.path),
        "count": count,
        "cells": found,
        "truncated": count > len(found),
    }
