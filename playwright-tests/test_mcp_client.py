"""A real MCP client reaches the page's WebMCP tools: the Python ``mcp`` client drives the npm server
``chrome-devtools-mcp`` (pinned, installed into .cache/node/), which starts its own headless Chromium with
WebMCP on, opens the built site (its default toolsets), calls the ``jupyter_*`` tools through its WebMCP category
and turns the other toolsets on with the discovery tool (its next listing has every tool)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable, install_chrome_devtools_mcp
from test_tools import DEFAULT_TOOLS, FEATURE_TOOLS, PAGE_TOOLS

NOTEBOOK = "jupyterlite-demo-python.ipynb"
#: seconds; a cold start on a small shared machine (JupyterLab, the bridge, then the kernel's own Pyodide)
BRIDGE_WAIT = 120
CALL_TIMEOUT = 240


class BrowserRestarted(Exception):
    """chrome-devtools-mcp says its Chromium went away and was started again (its page ids changed)."""


def server_command(log_file: Path) -> tuple[str, list[str]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to run chrome-devtools-mcp")
    args = [
        str(install_chrome_devtools_mcp()),
        "--headless",
        "--isolated",
        f"--executablePath={chromium_executable()}",
        f"--chromeArg={WEBMCP_FLAG}",
        "--categoryExperimentalWebmcp=true",
        "--no-usage-statistics",
        "--no-performance-crux",
        f"--logFile={log_file}",  # the server's and Chromium's own log
        *(f"--chromeArg={arg}" for arg in BASE_ARGS),  # --no-sandbox and background networking off
    ]
    return node, args


def text_of(result) -> str:
    assert result.content and result.content[0].type == "text", result
    return result.content[0].text


async def agent_session(site_url: str, log: list, log_file: Path) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, args = server_command(log_file)
    env = {**os.environ, "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1"}
    params = StdioServerParameters(command=command, args=args, env=env)
    seen: dict = {}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                await session.initialize()
                server_tools = {t.name for t in (await session.list_tools()).tools}
                assert {"list_pages", "navigate_page", "list_webmcp_tools", "execute_webmcp_tool"} <= server_tools

                async def tool(name: str, arguments: dict) -> str:
                    result = await session.call_tool(name, arguments)
                    text = text_of(result)
                    log.append((name, arguments, text[:300]))
                    if "the browser was restarted or reconnected" in text:
                        raise BrowserRestarted(text[:300])
                    assert not result.is_error, text
                    return text

                pages = await tool("list_pages", {})
                page_id = int(re.search(r"^(\d+):.*\[selected\]", pages, re.M).group(1))
                # the page as an agent finds it: the default toolsets (no ?toolsets= in the URL)
                await tool(
                    "navigate_page",
                    {"pageId": page_id, "type": "url", "url": f"{site_url}/lab/index.html?path={quote(NOTEBOOK)}"},
                )

                async def listed_when(wanted: set[str]) -> list[str]:
                    """The page's tools as the client lists them, polled until ``wanted`` are all there (the bridge
                    registers its tools some seconds after the page opens; a strict check must not see a listing
                    taken mid-start-up)."""
                    listing = ""
                    loop = asyncio.get_running_loop()
                    deadline = loop.time() + BRIDGE_WAIT
                    while (
                        not wanted <= set(re.findall(r'name="(jupyter_[A-Za-z0-9_]+)"', listing))
                        and loop.time() < deadline
                    ):
                        await asyncio.sleep(2)
                        listing = await tool("list_webmcp_tools", {"pageId": page_id})
                    return sorted(set(re.findall(r'name="(jupyter_[A-Za-z0-9_]+)"', listing)))

                seen["default_tools"] = await listed_when(DEFAULT_TOOLS)

                async def webmcp(name: str, arguments: dict) -> tuple[dict, bool]:
                    """Call a page tool; return (payload, isError). A tool error is an MCP success whose text carries
                    it."""
                    text = await tool(
                        "execute_webmcp_tool", {"pageId": page_id, "toolName": name, "input": json.dumps(arguments)}
                    )
                    response = json.loads(text)
                    assert response.get("status") in ("Completed", "Error"), text[:500]
                    if response["status"] == "Error":
                        return {"error": response}, True
                    output = response["output"]
                    # native WebMCP: the payload once, as the text (the client shows the model the whole result)
                    assert "structuredContent" not in output, output
                    return json.loads(output["content"][0]["text"]), bool(output["isError"])

                seen["context"], _ = await webmcp("jupyter_get_context", {})
                while seen["context"].get("status") == "pending":  # asked while Python started: collected
                    seen["pending_followed"] = seen.get("pending_followed", 0) + 1
                    seen["context"], _ = await webmcp(
                        "jupyter_wait_for_result", {"pendingId": seen["context"]["pendingId"]}
                    )
                seen["opened"], _ = await webmcp("jupyter_open_notebook", {"path": NOTEBOOK})
                cells, failed = await webmcp("jupyter_get_cells", {"startIndex": 0, "endIndex": 20})
                assert not failed, cells
                seen["cells"] = cells
                target = next(c for c in cells["cells"] if c["type"] == "code")
                seen["stale"] = await webmcp(
                    "jupyter_update_cell", {"cellId": target["id"], "source": "x", "expectedSourceHash": "0" * 16}
                )
                seen["update"] = await webmcp(
                    "jupyter_update_cell",
                    {
                        "cellId": target["id"],
                        "source": "print('hello from an MCP client', 6 * 7)",
                        "expectedSourceHash": target["sourceHash"],
                    },
                )
                run = await webmcp("jupyter_run_cells", {"cellIds": [target["id"]]})
                # a kernel that starts slowly makes the run pending: an agent collects it as the answer says
                while not run[1] and run[0].get("status") == "pending":
                    seen["pending_followed"] = seen.get("pending_followed", 0) + 1
                    run = await webmcp("jupyter_wait_for_result", {"pendingId": run[0]["pendingId"], "timeout": 30})
                seen["run"] = run
                seen["output"] = await webmcp("jupyter_get_output", {"cellId": target["id"], "outputIndex": 0})
                seen["reread"] = await webmcp("jupyter_get_cells", {"cellIds": [target["id"]], "includeOutputs": True})
                seen["target"] = target
                # the other toolsets, through the discovery tool: the client's next listing has every tool
                toolsets, _ = await webmcp("jupyter_toolsets", {})
                seen["enabled"] = await webmcp(
                    "jupyter_toolsets", {"enable": [t["name"] for t in toolsets["toolsets"] if not t["enabled"]]}
                )
                seen["webmcp_tools"] = await listed_when(FEATURE_TOOLS)
    return seen


def restarted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or holds (the client's task groups wrap what a session raises), a BrowserRestarted."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(lambda e: isinstance(e, BrowserRestarted)) is not None
    return isinstance(exc, BrowserRestarted)


def run_session(site_url: str, log_dir: Path) -> tuple[dict, list]:
    """Run the asyncio MCP session in its own thread (the test process also runs Playwright's sync driver).

    When the server's Chromium goes away mid-session (it says so in its next answer), the agent starts over once,
    as an agent told "call list_pages" would; a second loss fails the test with the server's log."""
    outcome: dict = {}
    log: list = []
    first_attempt: list = []  # the calls of a session whose browser went away

    def main():
        for attempt in (1, 2):
            outcome["log_file"] = log_dir / f"chrome-devtools-mcp-{attempt}.log"  # the server's log of this attempt
            try:
                outcome["seen"] = asyncio.run(agent_session(site_url, log, outcome["log_file"]))
                outcome["seen"]["attempts"] = attempt
                outcome.pop("error", None)
                return
            except BaseException as exc:  # reported in the test's thread
                outcome["error"] = exc
                if not restarted(exc):
                    return
                first_attempt.extend(log)
                log.clear()

    thread = threading.Thread(target=main, name="mcp-client")
    thread.start()
    thread.join(timeout=900)
    assert not thread.is_alive(), "the MCP session did not end"
    if "error" in outcome:
        log_file = outcome["log_file"]
        server_log = log_file.read_text(errors="replace")[-4000:] if log_file.exists() else "(no log)"
        earlier = (
            f"a first session lost its browser after: {json.dumps(first_attempt, default=str)[-1500:]}\n"
            if first_attempt
            else ""
        )
        raise AssertionError(
            f"{earlier}MCP session failed; calls so far: {json.dumps(log, default=str)[-3000:]}\n"
            f"server log (tail): {server_log}"
        ) from outcome["error"]
    return outcome["seen"], log


def test_a_real_mcp_client_works_in_a_notebook_through_chrome_devtools_mcp(site_url, tmp_path):
    seen, log = run_session(site_url, tmp_path)

    assert set(seen["default_tools"]) == DEFAULT_TOOLS, sorted(set(seen["default_tools"]) ^ DEFAULT_TOOLS)
    enabled, failed = seen["enabled"]
    assert not failed and enabled["registeredToolCount"] == len(PAGE_TOOLS), (
        enabled
    )  # the bridge's and the demo site's own
    tools = seen["webmcp_tools"]
    assert set(tools) == FEATURE_TOOLS, sorted(
        set(tools) ^ FEATURE_TOOLS
    )  # every jupyter_ tool, through the real client
    assert seen["context"]["notebook"]["path"] == NOTEBOOK
    assert seen["opened"]["notebook"]["path"] == NOTEBOOK
    cells = seen["cells"]["cells"]
    assert cells and all(c["sourceHash"] and c["id"] for c in cells)

    stale, failed = seen["stale"]
    assert failed and stale["error"] == "STALE_CELL" and stale["currentSourceHash"] == seen["target"]["sourceHash"]

    update, failed = seen["update"]
    assert not failed and update["cell"]["id"] == seen["target"]["id"]
    assert update["cell"]["sourceHash"] != seen["target"]["sourceHash"]

    run, failed = seen["run"]
    assert not failed, run
    (result,) = run["results"]
    assert result["status"] == "ok" and result["executionCount"] >= 1, result
    output, failed = seen["output"]
    assert not failed and output["text"] == "hello from an MCP client 42\n"
    (reread,) = seen["reread"][0]["cells"]
    assert reread["source"] == "print('hello from an MCP client', 6 * 7)"
    assert reread["sourceHash"] == update["cell"]["sourceHash"]
    assert reread["outputs"][0]["preview"] == "hello from an MCP client 42\n"
    assert sum(1 for name, *_ in log if name == "execute_webmcp_tool") == 10 + seen.get("pending_followed", 0)
