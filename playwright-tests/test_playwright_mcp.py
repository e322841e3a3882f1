"""An agent's first call through the MCP stack desktop agents use: the npm server Playwright MCP (pinned, installed
into .cache/node-playwright-mcp/), which launches its own Debian Chromium with WebMCP on (its config's launch options),
driven by the Python ``mcp`` client over stdio, as Claude Code, Codex or Cursor drive it. On a cold page the client
sees the bridge's tools as ``webmcp_jupyter_*`` and its first call answers within 15 s of being made, whatever the
machine's speed: with its result, or ``pending`` with an id that ``jupyter_wait_for_result`` collects (the client gives
up on a call after 30 s; a first call that waited for the bridge's whole start did, on a busy machine). Then the
agent's next calls are answered as usual."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable, install_playwright_mcp, lab_url

NOTEBOOK = "jupyterlite-demo-python.ipynb"
#: seconds: the page's tools are listed once JupyterLab activated the bridge (a cold start on a loaded machine)
LISTED_WAIT = 120
#: the longest an agent's first call may take to be answered (the product's bound: the client's own limit is 30 s)
FIRST_ANSWER_SECONDS = 15
#: how Playwright MCP introduces a WebMCP tool's result in its text (the JSON of the CallToolResult follows)
RESULT_MARK = "untrusted:"


def page_result(text: str) -> dict:
    """The page tool's CallToolResult from Playwright MCP's text (``### Result``, a line naming the tool, then the
    result's JSON pretty-printed, then ``### Page`` and the rest)."""
    start = text.index("{", text.index(RESULT_MARK))
    result, _end = json.JSONDecoder().raw_decode(text, start)
    return result


async def agent(site_url: str, config: Path, seen: dict) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to run Playwright MCP")
    params = StdioServerParameters(
        command=node,
        args=[str(install_playwright_mcp()), "--config", str(config)],
        env={**os.environ},
        cwd=str(config.parent),  # its workspace root: nothing it writes lands in the checkout
    )
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def call(name: str, arguments: dict) -> dict:
                    result = await session.call_tool(name, arguments)
                    assert not result.is_error, result.content[0].text[:500]
                    return page_result(result.content[0].text)

                navigated = await session.call_tool("browser_navigate", {"url": lab_url(site_url, NOTEBOOK, None)})
                assert not navigated.is_error, navigated.content[0].text[:500]
                loop = asyncio.get_running_loop()
                deadline = loop.time() + LISTED_WAIT
                names: list[str] = []
                while "webmcp_jupyter_get_context" not in names and loop.time() < deadline:
                    await session.call_tool("browser_snapshot", {})  # Playwright MCP collects the page's tools with it
                    names = [t.name for t in (await session.list_tools()).tools if t.name.startswith("webmcp_")]
                    if "webmcp_jupyter_get_context" not in names:
                        await asyncio.sleep(0.5)  # snapshots back to back were seen never to collect the tools
                seen["listed"] = names
                began = time.monotonic()
                first = await call("webmcp_jupyter_get_context", {})
                seen["first_seconds"] = time.monotonic() - began
                seen["first"] = first
                payload = first["structuredContent"]
                while payload.get("status") == "pending":  # collected as the answer says
                    collected = await call("webmcp_jupyter_wait_for_result", {"pendingId": payload["pendingId"]})
                    payload = collected["structuredContent"]
                    seen.setdefault("collects", 0)
                    seen["collects"] += 1
                seen["collected"] = payload
                seen["next"] = await call("webmcp_jupyter_get_cells", {"startIndex": 0, "endIndex": 3})


def test_the_first_call_through_playwright_mcp_on_a_cold_page_is_answered_within_the_bound(site_url, tmp_path):
    config = tmp_path / "playwright-mcp.json"
    config.write_text(
        json.dumps(
            {
                "browser": {
                    "browserName": "chromium",
                    "isolated": True,
                    "launchOptions": {
                        "executablePath": chromium_executable(),
                        "headless": True,
                        "args": [WEBMCP_FLAG, *BASE_ARGS],
                    },
                },
                "outputDir": str(tmp_path / "output"),  # its console logs and snapshots, out of the checkout
            }
        )
    )
    seen: dict = {}
    with ThreadPoolExecutor(1) as pool:  # a loop of its own: the suite's sync Playwright keeps one running here
        pool.submit(asyncio.run, agent(site_url, config, seen)).result()
    assert {"webmcp_jupyter_get_context", "webmcp_jupyter_wait_for_result"} <= set(seen["listed"]), seen["listed"]
    first = seen["first"]
    print(f"first call answered in {seen['first_seconds']:.1f} s: {first['structuredContent'].get('status', 'result')}")
    assert seen["first_seconds"] < FIRST_ANSWER_SECONDS, seen
    assert first["isError"] is False
    payload = first["structuredContent"]
    assert "notebook" in payload or (payload["status"] == "pending" and payload["pendingId"]), payload
    assert "notebook" in seen["collected"] and "kernel" in seen["collected"], seen["collected"]
    cells = seen["next"]["structuredContent"]
    assert seen["next"]["isError"] is False and len(cells["cells"]) == 3, cells
