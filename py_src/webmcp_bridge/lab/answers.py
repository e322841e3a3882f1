"""What ``notebook.js``'s answers become in Python: its JSON facts of a cell, an output and a change as the host
protocol's values (:mod:`webmcp_bridge.host.protocol`), for :mod:`webmcp_bridge.lab.notebook` and
:mod:`webmcp_bridge.lab.host`. Pure functions of the answers; nothing here crosses to the page."""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import truncate_utf8
from webmcp_bridge.host.protocol import AccessState, Actor, CellChange, RawCell, RawItem, RawOutput
from webmcp_bridge.lab.ffi import is_nullish


def output_answer(raw: Any, cell_id: str) -> dict[str, Any]:
    """The JSON object of ``notebook.js``'s answer about one output of ``cell_id`` (its bytes, a copy, a picture);
    OUTPUT_NOT_FOUND when the page answered nothing: the output is gone."""
    if is_nullish(raw):
        raise ToolError(
            ErrorCode.OUTPUT_NOT_FOUND, "That output is gone (the cell was rerun or cleared).", cellId=cell_id
        )
    return json.loads(str(raw))


def raw_output(o: dict[str, Any], head_bytes: int) -> RawOutput:
    """An output as ``notebook.js``'s describeOutput gives it, each text head cut here to ``head_bytes`` UTF-8
    bytes (the JS half sends the first ``head_bytes`` UTF-16 units, which hold at least that many bytes)."""
    return RawOutput(
        o["output_type"],
        tuple(RawItem(m, b, truncate_utf8(h, head_bytes), bin_) for m, b, h, bin_ in o["items"]),
        name=o.get("name"),
        ename=o.get("ename"),
        evalue=o.get("evalue"),
    )


#: the change kinds a run makes (its outputs cleared, arriving, its execution count set)
RUN_KINDS = ("clear", "output", "run")


def actor_of(kind: str, agent_write: bool, agent_run: bool) -> Actor:
    """Who made a cell change ``notebook.js`` recorded: "agent" when it happened inside one of the agent's writes
    through the adapter, or when it is the outputs or execution count (:data:`RUN_KINDS`) of a cell whose execution
    the agent started and that has not ended (``LabNotebook.run_cell``, also after the call stopped waiting);
    "person" for everything else (typing, the toolbar, the person's runs)."""
    return "agent" if agent_write or (kind in RUN_KINDS and agent_run) else "person"


def change_of(c: dict[str, Any]) -> CellChange:
    """A change as ``notebook.js``'s change log records it."""
    kind = c["kind"]
    return CellChange(
        actor_of(kind, bool(c["agentWrite"]), bool(c["agentRun"])),
        kind,
        str(c["cellId"]),
        float(c["time"]),
        c.get("access"),
        c.get("revision"),
        int(c.get("droppedBefore") or 0),
        int(c.get("repeats") or 0),
        float(c["lastTime"]) if c.get("repeats") else None,
    )


def raw_cell(data: dict[str, Any], head_bytes: int = 0) -> RawCell:
    """A cell as ``notebook.js``'s describeCell gives it (its output text heads cut to ``head_bytes`` UTF-8 bytes)."""
    return RawCell(
        id=data["id"],
        index=data["index"],
        cell_type=data["cell_type"],
        source=data["source"],
        execution_count=data.get("execution_count"),
        outputs=tuple(raw_output(o, head_bytes) for o in data["outputs"]),
        output_count=data["output_count"],
    )


def access_state_of(data: dict[str, Any]) -> AccessState:
    """The access state as ``notebook.js``'s accessState gives it (``{revision, notebook, cells, cellCount, changes,
    locks}``; its ``path`` is the caller's)."""
    return AccessState(
        int(data["revision"]),
        data["notebook"],
        tuple((int(i), str(cid), access) for i, cid, access in data["cells"]),
        int(data["cellCount"]),
        tuple(change_of(c) for c in data["changes"]),
        tuple((str(cid), bool(e), bool(d)) for cid, e, d in data["locks"]),
    )
