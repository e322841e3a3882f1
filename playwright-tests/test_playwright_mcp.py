"""A desktop agent's way in: Playwright MCP (npm ``@playwright/mcp``, pinned in lite_site.py), the MCP server Claude
Code, Codex or Cursor start on stdio (README, "Desktop agents"), driven here by the Python ``mcp`` client. It launches
Debian's Chromium with native WebMCP on (its configuration's ``launchOptions.args``), opens the site's default page
and offers the page's tools as ``webmcp_<tool>`` once a page snapshot collected them. The test lists the
``webmcp_jupyter_*`` tools it offers (the default set), runs a job end to end as an agent would (map the notebook,
find a section's first code cell, change it, run it, read what it printed) and checks that the first call, made on a
cold page, is answered within 15 s (its result, or ``pending`` with an id that ``jupyter_wait_for_result`` collects:
the client gives up on a call after 30 s) and that every result reaches the model once: the payload as the result's
text, no ``structuredContent`` beside it."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from urllib.parse import quote

from lite_site import playwright_mcp_command, playwright_mcp_result
from test_tools import DEFAULT_TOOLS

NOTEBOOK = "jupyterlite-demo-python.ipynb"
SECTION = "Simple code execution"
#: seconds: the page's tools are listed once a snapshot collected them (a cold start on a loaded machine)
READY_WAIT = 180
CALL_TIMEOUT = 300
#: seconds: the longest an agent's first call may take to be answered (result or pending; Playwright MCP's own limit
#: on a call is 30 s)
FIRST_ANSWER_SECONDS = 15


async def agent_session(site_url: str, folder: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    node, args = playwright_mcp_command(folder)
    params = StdioServerParameters(command=node, args=args, env=dict(os.environ), cwd=str(folder))
    seen: dict = {"results": []}
    with open(folder / "playwright-mcp.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def raw(name: str, arguments: dict) -> str:
                    result = await asyncio.wait_for(session.call_tool(name, arguments), CALL_TIMEOUT)
                    return "\n".join(block.text for block in result.content if block.type == "text")

                async def webmcp(name: str, arguments: dict) -> dict:
                    """A page tool's payload, as the model reads it in Playwright MCP's answer (asserted not an
                    error); a call that went pending is collected with jupyter_wait_for_result, as an agent would."""
                    result, is_error = playwright_mcp_result(await raw(f"webmcp_{name}", arguments))
                    seen["results"].append((name, result))
                    payload = json.loads(result["content"][0]["text"])
                    assert not is_error and result["isError"] is False, payload
                    if payload.get("status") == "pending":
                        return await webmcp("jupyter_wait_for_result", {"pendingId": payload["pendingId"]})
                    return payload

                await raw("browser_navigate", {"url": f"{site_url}/lab/index.html?path={quote(NOTEBOOK)}"})
                loop = asyncio.get_running_loop()
                deadline = loop.time() + READY_WAIT
                listed: set[str] = set()
                while not {f"webmcp_{name}" for name in DEFAULT_TOOLS} <= listed and loop.time() < deadline:
                    await raw("browser_snapshot", {})  # the page's WebMCP tools are collected with a snapshot
                    listed = {t.name for t in (await session.list_tools()).tools}
                    await asyncio.sleep(2)
                seen["tools"] = sorted(name for name in listed if name.startswith("webmcp_jupyter_"))
                # the first call, on a page whose bridge may still be starting: answered within the bound, with its
                # result or pending (then collected, as the answer says)
                began = loop.time()
                first, _ = playwright_mcp_result(await raw("webmcp_jupyter_get_context", {}))
                seen["first_seconds"] = loop.time() - began
                seen["first"] = json.loads(first["content"][0]["text"])
                seen["results"].append(("jupyter_get_context", first))
                pending = seen["first"].get("pendingId")
                seen["context"] = (
                    await webmcp("jupyter_wait_for_result", {"pendingId": pending}) if pending else seen["first"]
                )

                # the job: the section's first code cell, changed and run; what it printed read back
                outline = await webmcp("jupyter_get_notebook_map", {})
                start = next(index for index, _, title in outline["sections"] if title == SECTION)
                row = next(row for row in outline["cells"][start:] if row[2] == "code")
                seen["row"] = row
                await webmcp(
                    "jupyter_edit_cell_source",
                    {
                        "cellId": row[1],
                        "oldText": row[6],
                        "newText": "a = 6 * 7\nprint('hello from Playwright MCP', a)",
                    },
                )
                seen["run"] = await webmcp("jupyter_run_cells", {"cellIds": [row[1]]})
                seen["cell"] = (await webmcp("jupyter_get_cells", {"cellIds": [row[1]], "includeOutputs": True}))[
                    "cells"
                ][0]
    return seen


def run_session(site_url: str, folder: Path) -> dict:
    """The asyncio session in a thread of its own (the test process may also run Playwright's sync driver)."""
    outcome: dict = {}

    def main() -> None:
        try:
            outcome["seen"] = asyncio.run(agent_session(site_url, folder))
        except BaseException as exc:  # reported in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=main, name="playwright-mcp-client")
    thread.start()
    thread.join(timeout=900)
    assert not thread.is_alive(), "the MCP session did not end"
    if "error" in outcome:
        log = folder / "playwright-mcp.log"
        raise AssertionError(f"Playwright MCP session failed; its log: {log.read_text()[-3000:]}") from outcome["error"]
    return outcome["seen"]


def test_a_desktop_agent_works_in_a_notebook_through_playwright_mcp(site_url, tmp_path):
    seen = run_session(site_url, tmp_path)
    assert seen["tools"] == sorted(f"webmcp_{name}" for name in DEFAULT_TOOLS), seen["tools"]
    print(f"first call answered in {seen['first_seconds']:.1f} s: {seen['first'].get('status', 'its result')}")
    assert seen["first_seconds"] < FIRST_ANSWER_SECONDS, seen["first"]
    assert "notebook" in seen["first"] or (seen["first"]["status"] == "pending" and seen["first"]["pendingId"])
    assert seen["context"]["notebook"]["path"] == NOTEBOOK
    index, _, kind, _, _, _, first = seen["row"]
    assert (kind, first) == ("code", "a = 3") and index == 3
    (ran,) = seen["run"]["results"]
    assert ran["status"] == "ok" and ran["outputs"][0]["preview"] == "hello from Playwright MCP 42\n", ran
    cell = seen["cell"]
    assert cell["source"] == "a = 6 * 7\nprint('hello from Playwright MCP', a)" and cell["executionCount"] >= 1
    assert cell["outputs"] == ran["outputs"]
    # every result reached the model once: its payload as the text block, nothing beside it
    for name, result in seen["results"]:
        assert set(result) == {"content", "isError"}, (name, result)
        assert [block["type"] for block in result["content"]] == ["text"], name
