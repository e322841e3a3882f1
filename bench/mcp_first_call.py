"""The first call as an agent's MCP stack makes it: Playwright MCP (``@playwright/mcp``, pinned in
playwright-tests/lite_site.py, the server desktop agents such as Claude Code, Codex and Cursor use to reach a browser
tab) launches its own Debian Chromium with WebMCP on, the Python ``mcp`` client drives it over stdio. On one site: the
page opened (``browser_navigate``), its tools polled (``browser_snapshot``, then the client's tool list) until
``webmcp_jupyter_get_cells`` is listed, then that call made at once; a ``pending`` answer collected with
``webmcp_jupyter_wait_for_result``. Seconds from the navigation's request: tools listed, first answer (the result or
``pending``), first result; cold (a fresh server and browser profile) and warm (a second server on that profile).

    python bench/mcp_first_call.py [--runs N]    # ours and theirs (bench/run.py's sites), interleaved

bench/run.py records the same figures once per run (``mcp_first_call``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "playwright-tests")]

from lite_site import BASE_ARGS, WEBMCP_FLAG, chromium_executable, install_mcp  # noqa: E402

#: the call (the same for both extensions: they register the same names with compatible arguments)
TOOL = "webmcp_jupyter_get_cells"
WAIT = "webmcp_jupyter_wait_for_result"
#: seconds: how long the tools may take to be listed, and the answer to a call (the client's own limit is 30 s)
LISTED_WAIT = 180
#: the pause between two looks for the page's tools (seconds)
POLL_SECONDS = 0.5
#: how Playwright MCP introduces a page tool's result in its text (the result's JSON follows)
RESULT_MARK = "untrusted:"


def page_result(text: str) -> dict:
    """The page tool's CallToolResult in Playwright MCP's text (a JSON object after RESULT_MARK)."""
    start = text.index("{", text.index(RESULT_MARK))
    result, _end = json.JSONDecoder().raw_decode(text, start)
    return result


async def measure(url: str, notebook: str) -> dict:
    """{cold: {listed, answer, result, pending}, warm: {...}} in seconds from each navigation's request: cold, a fresh
    server whose browser profile is empty; warm, a second server on the same profile (the browser's cache kept, as a
    person's browser coming back). (One server navigating again was seen never to list the new page's tools once a
    page tool had been called: Playwright MCP 0.0.86.)"""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is needed to run Playwright MCP")
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "playwright-mcp.json"
        config.write_text(
            json.dumps(
                {
                    "browser": {
                        "browserName": "chromium",
                        "isolated": False,
                        "userDataDir": str(Path(tmp) / "profile"),
                        "launchOptions": {
                            "executablePath": chromium_executable(),
                            "headless": True,
                            "args": [WEBMCP_FLAG, *BASE_ARGS],
                        },
                    },
                    "outputDir": str(Path(tmp) / "output"),
                }
            )
        )
        params = StdioServerParameters(
            command=node,
            args=[str(install_mcp()["@playwright/mcp"]), "--config", str(config)],
            env={**os.environ},
            cwd=tmp,
        )
        with open(os.devnull, "w") as quiet:
            for kind in ("cold", "warm"):
                async with stdio_client(params, errlog=quiet) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        out[kind] = await one_load(session, f"{url}/lab/index.html?path={notebook}", notebook)
    return out


async def one_load(session, page_url: str, notebook: str) -> dict:
    began = time.monotonic()
    navigated = await session.call_tool("browser_navigate", {"url": page_url})
    if navigated.is_error:
        raise RuntimeError(navigated.content[0].text[:300])
    listed = None
    while listed is None and time.monotonic() - began < LISTED_WAIT:
        await session.call_tool("browser_snapshot", {})  # Playwright MCP collects the page's tools with it
        if TOOL in {t.name for t in (await session.list_tools()).tools}:
            listed = time.monotonic() - began
        else:  # snapshots back to back never saw the tools arrive (seen on the bench's site): a pause between
            await asyncio.sleep(POLL_SECONDS)
    if listed is None:
        names = sorted(t.name for t in (await session.list_tools()).tools if t.name.startswith("webmcp_"))
        raise RuntimeError(f"{TOOL} was not listed within {LISTED_WAIT} s (listed: {', '.join(names) or 'none'})")
    args = {"notebookPath": notebook, "startIndex": 0, "endIndex": 10}
    for _ in range(100):  # an error (the notebook not open yet) is retried as the in-page first call does
        answer = await session.call_tool(TOOL, args)
        result = page_result(answer.content[0].text)
        if not result.get("isError"):
            break
        await asyncio.sleep(0.05)
    first = time.monotonic() - began
    payload = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    pending = payload.get("status") == "pending"
    while payload.get("status") == "pending":
        collected = page_result((await session.call_tool(WAIT, {"pendingId": payload["pendingId"]})).content[0].text)
        payload = collected.get("structuredContent") or json.loads(collected["content"][0]["text"])
    return {"listed": listed, "answer": first, "result": time.monotonic() - began, "pending": pending}


def main() -> int:
    import run as bench
    import sites

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    folders = {side: sites.BENCH / side for side in ("ours", "theirs")}
    servers, urls = bench.serve(folders)
    found: dict[str, list[dict]] = {side: [] for side in folders}
    try:
        for _ in range(opts.runs):
            for side in folders:
                found[side].append(asyncio.run(measure(urls[side], bench.LOAD_NOTEBOOK)))
    finally:
        for server in servers:
            server.shutdown()
    print(f"Playwright MCP, seconds from the navigation's request (medians of {opts.runs})\n")
    print("| figure | ours | reference | ratio |\n|---|---|---|---|")
    for kind in ("cold", "warm"):
        for key in ("listed", "answer", "result"):
            a, b = (statistics.median(run[kind][key] for run in found[side]) for side in ("ours", "theirs"))
            print(f"| {key}, {kind} | {a:.1f} | {b:.1f} | {a / b:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
