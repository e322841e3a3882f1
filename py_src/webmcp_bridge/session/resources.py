"""Notebooks, cells and outputs as MCP resources where the page's runtime serves them (MCP-B's
``registerResource``; docs/TOOLS.md, "Addresses"): the three :data:`TEMPLATES` (most specific first, as the runtime
tries them) and :func:`read_resource`, a registry call (the access guard, bounds, the Activity panel) whether or not
its toolset is on. Notebooks and cells are fresh for :data:`SHORT_TTL_MS` (the person may type), outputs
:data:`OUTPUT_TTL_MS`, all ``private``; a failed read raises :class:`ResourceError` with the tool's error payload.
"""

from __future__ import annotations

import json
from typing import Any

from webmcp_bridge.calls.registry import Registry
from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.limits import OUTPUT_RESOURCE_TTL_MS, RESOURCE_TTL_MS
from webmcp_bridge.core.uris import parse_uri

#: fresh for one second: a notebook or a cell (the person may be typing in it)
SHORT_TTL_MS = RESOURCE_TTL_MS
#: fresh for a minute: an output (it changes only when its cell runs again)
OUTPUT_TTL_MS = OUTPUT_RESOURCE_TTL_MS

TEMPLATES: tuple[dict[str, str], ...] = (
    {
        "name": "notebook-output",
        "uriTemplate": "notebook://{+path}/cells/{cellId}/outputs/{index}",
        "mimeType": "text/plain",
        "description": "One output of a notebook cell (cell by id, output by 0-based index): its text (first page) or "
        "image. The uri of each output is listed by jupyter_get_cells and jupyter_run_cells.",
    },
    {
        "name": "notebook-cell",
        "uriTemplate": "notebook://{+path}/cells/{cellId}",
        "mimeType": "application/json",
        "description": "One notebook cell by id: its source, hash and outputs listed (JSON, as jupyter_get_cells "
        "returns it).",
    },
    {
        "name": "notebook",
        "uriTemplate": "notebook://{+path}",
        "mimeType": "application/json",
        "description": "A notebook of the workspace: its cells listed with ids, uris, types and hashes (JSON, as "
        "jupyter_get_cells returns it without sources).",
    },
)


class ResourceError(Exception):
    """A failed read: ``payload`` is the tool's error payload ``{error, message, ...}`` (INVALID_ARGUMENT: bad URI)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(str(payload.get("message", "The resource could not be read.")))
        self.payload = payload


async def _call(registry: Registry[Any], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await registry.call(tool, arguments, any_toolset=True)
    if result["isError"]:
        raise ResourceError(result["structuredContent"])
    return result


async def read_resource(registry: Registry[Any], uri: str) -> dict[str, Any]:
    """The MCP ``ReadResourceResult`` of ``uri``: ``{contents: [{uri, mimeType, text | blob, _meta?}], ttlMs,
    cacheScope}``. Raises :class:`ResourceError`."""
    try:
        address = parse_uri(uri)
    except ToolError as err:
        raise ResourceError(err.payload()) from None
    canonical = address.uri
    if address.output_index is not None:
        result = await _call(registry, "jupyter_get_output", {"uri": canonical})
        payload = result["structuredContent"]
        images = [block for block in result["content"][1:] if block.get("type") == "image"]
        if images:
            item: dict[str, Any] = {"uri": canonical, "mimeType": images[0]["mimeType"], "blob": images[0]["data"]}
        else:
            # a rendered output that renders nothing has no text: its message says so
            text = payload["text"] if "text" in payload else payload.get("message", "")
            item = {"uri": canonical, "mimeType": payload["mimeType"], "text": text}
            if payload.get("nextOffset") is not None:
                item["_meta"] = {
                    "truncated": True,
                    "totalBytes": payload["totalBytes"],
                    "nextOffset": payload["nextOffset"],
                    "more": "read the rest with jupyter_get_output (uri, offset)",
                }
        return {"contents": [item], "ttlMs": OUTPUT_TTL_MS, "cacheScope": "private"}
    if address.cell_id is not None:
        args: dict[str, Any] = {"notebookPath": address.path, "cellIds": [address.cell_id], "includeOutputs": True}
    else:
        args = {"notebookPath": address.path, "includeSource": False}
    result = await _call(registry, "jupyter_get_cells", args)
    text = result["content"][0]["text"]
    return {
        "contents": [{"uri": canonical, "mimeType": "application/json", "text": text}],
        "ttlMs": SHORT_TTL_MS,
        "cacheScope": "private",
    }


def templates_json() -> str:
    """:data:`TEMPLATES` as JSON text, for the loader."""
    return json.dumps(list(TEMPLATES))
