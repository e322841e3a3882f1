"""What the model reads: the characters real MCP clients show the model for the same agent jobs, ours and theirs.

Usage: python bench/reads.py [--clients playwright,devtools,mcp-b] [--notebooks NAME,...] [--table [RESULTS_JSON]]

Four jobs an agent is asked to do, each scripted as the calls an agent makes with each side's tools, so a run is
repeatable and says whether the job succeeded (checked against the notebook file itself, read with nbformat):

- understand: know the notebook's shape: how many cells, each cell's type, the section headings, which cells have
  outputs and which raised. Ours: jupyter_get_notebook_map. The reference (no map): jupyter_get_cells with outputs,
  100 cells a call, until every cell was read.
- find-failing: which cell fails and why (its error and its source), or that none does. Ours: jupyter_get_context
  with includeErrors, then jupyter_get_cells of that cell. The reference: jupyter_get_cells with outputs, a page at a
  time, until an error output turns up (every page when none does).
- fix-and-run: the same finding, then a scripted fix of that cell (the same text change for both) and a run; the run
  must end ok with the expected output. Ours: jupyter_edit_cell_source, jupyter_run_cells (jupyter_wait_for_result
  if it went pending). The reference: jupyter_update_cell with the cell's hash, jupyter_run_cells. Only on notebooks
  with a failing cell that can run in the site's kernel once fixed.
- summarize-section: read what one named section's outputs say: at least the first 2,000 bytes of every text output
  of the section (all of a shorter one). Ours: the map (where the section is), jupyter_get_cells of its cells with
  outputs listed, then jupyter_get_output (maxBytes 2,000) of each output whose preview is cut. The reference:
  jupyter_get_cells of sources, a page at a time, until the section's end is found, then of its cells with outputs.

The clients, each the real program an agent uses, counting every character of every result the model is shown
(the jobs' calls only: opening the page and waiting for its tools and kernel are not counted):

- playwright: Playwright MCP (npm @playwright/mcp, pinned in playwright-tests/lite_site.py) on stdio, driven by the
  Python ``mcp`` client; it launches Debian's Chromium with --enable-features=WebMCP and offers the page's tools as
  ``webmcp_<tool>``; the model is shown each call's text content (its preamble and the result printed with
  JSON.stringify(result, null, 2)).
- devtools: chrome-devtools-mcp (pinned likewise) on stdio; ``execute_webmcp_tool``; the model is shown its text
  content (JSON.stringify({status, output, error}, null, 2)).
- mcp-b: the MCP-B runtime (@mcp-b/global 5.1.0, the version the bridge ships) in a Chromium without native WebMCP,
  put into the page before its scripts run (the same way on both sides), and the MCP SDK's client
  (@modelcontextprotocol/client 2.0.0) on MCP-B's tab transport (@mcp-b/transports 5.1.0), bundled for the page
  with esbuild. An MCP host shows the model one part of a result: ``structuredContent`` when there is one (Claude
  Code, Codex, VS Code, opencode before mid-2026) or the text content (opencode since, Open WebUI): both are counted,
  as "mcp-b (structured)" and "mcp-b (content)".

Ours runs on the default page (its default toolsets); the reference registers all its tools. The notebooks: the
bench's bench-jobs.ipynb (bench/notebooks.py) and three real ones shipped in the repository with their licences
(lite/content, tests/notebooks): handson-ml2-tools-pandas, sci-python-lecture-1, pytudes-euler. Also counted, once a
session: the tool definitions each client shows the model. Writes bench/results-reads.json (--table reprints it).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "playwright-tests"), str(ROOT / "py_src")]

import notebooks  # noqa: E402
import sites  # noqa: E402
from lite_site import (  # noqa: E402
    BASE_ARGS,
    MCP_SERVERS,
    WEBMCP_FLAG,
    chromium_executable,
    install_mcp,
    playwright_mcp_command,
    playwright_mcp_result,
)
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.util import CACHE  # noqa: E402
from webmcp_bridge.core.limits import strip_ansi  # noqa: E402
from webmcp_bridge.core.outline import headings  # noqa: E402

RESULTS = HERE / "results-reads.json"
SIDES = ("ours", "theirs")
JOBS = ("understand", "find-failing", "fix-and-run", "summarize-section")
CLIENTS = ("playwright", "devtools", "mcp-b")
#: the columns of the table: a client, or MCP-B counted by one of the two host rules
COUNTS = ("playwright", "devtools", "mcp-b (structured)", "mcp-b (content)")
#: the bytes of every text output of the section the summarize job must have read
SUMMARY_BYTES = 2000
#: seconds: the page's tools and the notebook's kernel (a Pyodide kernel starting on a busy machine)
READY_TIMEOUT = 240
#: the MCP-B pieces: the runtime the bridge ships, and the client side bundled for the page (npm, pinned)
MCP_B_GLOBAL = CACHE / "mcp-b-global-5.1.0" / "package" / "dist" / "index.iife.js"
CLIENT_PACKAGES = ("esbuild@0.25.12", "@mcp-b/transports@5.1.0", "@modelcontextprotocol/client@2.0.0")
CLIENT_DIR = sites.BENCH / "mcp-client"


@dataclass(frozen=True)
class Case:
    """One notebook of the bench: its file, the section to summarize (a heading's title), and for a notebook whose
    first failing cell can run once fixed: the fix (a text to replace in that cell, its replacement) and a text its
    output must then hold."""

    name: str
    folder: Path
    section: str
    fix: tuple[str, str] | None = None
    fixed_output: str | None = None


CONTENT = sites.BENCH / "reads-content"
#: the site's own kernel (the Pyodide kernel), which the real notebooks' copies name (REAL below)
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
CASES = (
    Case(notebooks.name_for("jobs"), CONTENT, notebooks.JOB_SECTION, notebooks.JOB_FAILING[1:], "14"),
    Case("real/handson-ml2-tools-pandas.ipynb", ROOT / "lite" / "content", "Handling missing data"),
    Case(
        "real/sci-python-lecture-1.ipynb",
        ROOT / "tests" / "notebooks",
        "Functions",
        ("print(y)", "y = 42\nprint(y)"),
        "42",
    ),
    Case("real/pytudes-euler.ipynb", ROOT / "lite" / "content", "Project Euler Problems 11–20"),
)


def write_content() -> None:
    """The bench's content: bench-jobs.ipynb, and in real/ a copy of each real notebook whose kernelspec names the
    site's kernel (their own, python3, python2 or a conda environment, would open JupyterLab's "Select Kernel"
    dialog and leave the notebook without a kernel); its cells and outputs are the file's."""
    notebooks.write_job_notebook(CONTENT)
    for case in CASES:
        if case.name.startswith("real/"):
            # read with nbformat, which joins the multi-line texts a file stores as lists of lines (written back as
            # one string each: JupyterLite 0.8.6 would load such a list into the live model joined with commas)
            nb = nbformat.reads((case.folder / Path(case.name).name).read_text(encoding="utf-8"), as_version=4)
            nb["metadata"]["kernelspec"] = KERNELSPEC
            target = CONTENT / case.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")


# ---------------------------------------------------------------------------------------------- ground truth


def output_text(output: dict) -> str | None:
    """What an output says as text, as both sides read it: a stream's text, an error's "ename: evalue", a result's
    text/plain (ANSI stripped); None for an output with no text (an image alone)."""
    kind = output.get("output_type")
    if kind == "stream":
        return strip_ansi("".join(output.get("text", "")))
    if kind == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    data = output.get("data", {})
    if "text/plain" in data:
        return strip_ansi("".join(data["text/plain"]))
    return None


@dataclass
class Truth:
    """What the notebook file says, for checking a job's answer."""

    types: list[str]
    headings: list[tuple[int, int, str]]
    with_outputs: set[int]
    errors: list[tuple[int, str, str, str]]  # (index, ename, evalue, source) of each cell whose outputs hold an error
    section: range  # the cells of the section to summarize (its heading's cell to the next heading as high)
    section_texts: list[str]  # the first SUMMARY_BYTES of each text output of the section, in order


def truth_of(case: Case) -> Truth:
    nb = json.loads((CONTENT / case.name).read_text(encoding="utf-8"))
    cells = nb["cells"]
    sources = ["".join(c["source"]) for c in cells]
    found = [
        (i, level, title)
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown"
        for level, title in headings(sources[i])
    ]
    start = next(k for k, (_, _, title) in enumerate(found) if title == case.section)
    first, level = found[start][0], found[start][1]
    end = next((i for i, lv, _ in found[start + 1 :] if lv <= level and i > first), len(cells))
    errors = []
    for i, c in enumerate(cells):
        for o in c.get("outputs", []):
            if o["output_type"] == "error":
                errors.append((i, o["ename"], o["evalue"], sources[i]))
                break
    texts = []
    for c in cells[first:end]:
        for o in c.get("outputs", []):
            text = output_text(o)
            if text:
                texts.append(text.encode("utf-8")[:SUMMARY_BYTES].decode("utf-8", "ignore"))
    return Truth(
        types=[c["cell_type"] for c in cells],
        headings=found,
        with_outputs={i for i, c in enumerate(cells) if c.get("outputs")},
        errors=errors,
        section=range(first, end),
        section_texts=texts,
    )


def squash(text: str) -> str:
    """Text with its runs of white space made one space (outputs are compared so, whatever the line ends)."""
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------------- jobs


class JobFailed(Exception):
    """The job's answer is not what the notebook says."""


@dataclass
class Tally:
    """The calls of one job and the characters each client rule showed the model."""

    calls: list[str] = field(default_factory=list)
    chars: dict[str, int] = field(default_factory=dict)


class Agent:
    """One side's scripted agent on one client: ``call`` makes a tool call through the client and adds what the
    model was shown to the current job's tally."""

    def __init__(self, client: Any, side: str, path: str) -> None:
        self.client, self.side, self.path = client, side, path
        self.tally = Tally()

    async def call(self, name: str, args: dict) -> dict:
        if name not in ("jupyter_get_context", "jupyter_wait_for_result"):  # the tools of one notebook name it
            args = {"notebookPath": self.path, **args}
        payload, is_error, shown = await self.client.call(name, args)
        self.tally.calls.append(name.removeprefix("jupyter_"))
        for rule, chars in shown.items():
            self.tally.chars[rule] = self.tally.chars.get(rule, 0) + chars
        if is_error:
            raise JobFailed(f"{name} failed: {json.dumps(payload)[:300]}")
        return payload


async def theirs_pages(agent: Agent, include_outputs: bool, stop=None) -> list[dict]:
    """The reference's cells, read as its agent reads them: 100 a call (its cap), on from where the last page ended
    (a page it shortened to fit its cap says so with fewer cells); ``stop(cells so far)`` ends the reading early."""
    cells: list[dict] = []
    while True:
        page = await agent.call(
            "jupyter_get_cells",
            {"startIndex": len(cells), "endIndex": len(cells) + 100, "includeOutputs": include_outputs},
        )
        cells.extend(page["cells"])
        count = page["notebook"]["cellCount"]
        if not page["cells"] or len(cells) >= count or (stop is not None and stop(cells)):
            return cells


def theirs_errors(cell: dict) -> list[dict]:
    return [o for o in cell.get("outputs", []) if o.get("outputType") == "error"]


async def notebook_map(agent: Agent) -> tuple[list, list]:
    """Ours: the whole notebook map, page after page as an agent reads it: (rows, sections)."""
    rows: list = []
    sections: list = []
    start = 0
    while True:
        page = await agent.call("jupyter_get_notebook_map", {"startIndex": start})
        rows += page["cells"]
        sections += page["sections"]
        if not page["truncated"]:
            return rows, sections
        start = page["nextStartIndex"]


async def understand(agent: Agent, truth: Truth) -> str:
    if agent.side == "ours":
        rows, sections = await notebook_map(agent)
        types = [row[2] for row in rows]
        found = [tuple(s) for s in sections]
        with_outputs = {row[0] for row in rows if row[4]}
        errors = [row[0] for row in rows if "e" in row[5]]
    else:
        cells = await theirs_pages(agent, include_outputs=True)
        types = [c["type"] for c in cells]
        found = [
            (c["index"], level, title)
            for c in cells
            if c["type"] == "markdown"
            for level, title in headings(c.get("source", ""))
        ]
        with_outputs = {c["index"] for c in cells if c.get("outputs")}
        errors = [c["index"] for c in cells if theirs_errors(c)]
    if types != truth.types:
        raise JobFailed("the cell types differ")
    want = [(i, level, title.encode()[:70].decode("utf-8", "ignore")) for i, level, title in truth.headings]
    got = [(i, level, title.encode()[:70].decode("utf-8", "ignore")) for i, level, title in found]
    if got != want:
        raise JobFailed(f"headings differ: {len(got)} found, {len(want)} in the file")
    if with_outputs != truth.with_outputs or errors != [e[0] for e in truth.errors]:
        raise JobFailed("the cells with outputs or errors differ")
    return f"{len(types)} cells, {len(found)} headings, {len(errors)} with an error"


async def find_failing(agent: Agent, truth: Truth) -> dict | None:
    """The first failing cell as the agent found it: {index, id, ename, evalue, source, hash} (None: none fails)."""
    if agent.side == "ours":
        context = await agent.call("jupyter_get_context", {"includeErrors": True})
        errors = context["errors"]["cells"]
        if not errors:
            return None
        first = errors[0]
        cell = (await agent.call("jupyter_get_cells", {"cellIds": [first["cellId"]]}))["cells"][0]
        found = {
            "index": first["index"],
            "id": first["cellId"],
            "ename": first["ename"],
            "evalue": first["evalue"],
            "source": cell["source"],
            "hash": cell["sourceHash"],
        }
    else:
        cells = await theirs_pages(agent, True, stop=lambda cells: any(theirs_errors(c) for c in cells))
        failing = next((c for c in cells if theirs_errors(c)), None)
        if failing is None:
            return None
        error = theirs_errors(failing)[0]
        found = {
            "index": failing["index"],
            "id": failing["id"],
            "ename": error["ename"],
            "evalue": error["evalue"],
            "source": failing["source"],
            "hash": failing["sourceHash"],
        }
    return found


def check_failing(found: dict | None, truth: Truth) -> str:
    if not truth.errors:
        if found is not None:
            raise JobFailed(f"found a failing cell where none fails: {found['index']}")
        return "none fails"
    index, ename, evalue, source = truth.errors[0]
    if found is None:
        raise JobFailed("no failing cell found")
    if (found["index"], found["ename"], found["source"]) != (index, ename, source) or not found["evalue"].startswith(
        evalue[:100]
    ):
        raise JobFailed(f"found cell {found['index']} ({found['ename']}), the file says {index} ({ename})")
    return f"cell {index}: {ename}: {evalue[:60]}"


async def find_failing_job(agent: Agent, truth: Truth) -> str:
    return check_failing(await find_failing(agent, truth), truth)


async def fix_and_run(agent: Agent, truth: Truth, case: Case) -> str:
    found = await find_failing(agent, truth)
    check_failing(found, truth)
    assert found is not None and case.fix is not None
    old, new = case.fix
    if agent.side == "ours":
        await agent.call("jupyter_edit_cell_source", {"cellId": found["id"], "oldText": old, "newText": new})
        run = await agent.call("jupyter_run_cells", {"cellIds": [found["id"]]})
        while run.get("status") == "pending":
            run = await agent.call("jupyter_wait_for_result", {"pendingId": run["pendingId"]})
        (result,) = run["results"]
        said = " ".join(o.get("preview", "") for o in result.get("outputs", []))
        if result["status"] != "ok" or case.fixed_output not in said:
            raise JobFailed(f"the run: {json.dumps(result)[:300]}")
    else:
        await agent.call(
            "jupyter_update_cell",
            {"cellId": found["id"], "source": found["source"].replace(old, new), "expectedSourceHash": found["hash"]},
        )
        run = await agent.call("jupyter_run_cells", {"cellIds": [found["id"]]})
        results = run.get("results") or run.get("cells") or []
        text = json.dumps(run)
        if not results or any(r.get("status") != "ok" for r in results) or case.fixed_output not in text:
            raise JobFailed(f"the run: {text[:300]}")
    return f"cell {found['index']} fixed and ran"


async def summarize_section(agent: Agent, truth: Truth, case: Case) -> str:
    texts: list[str] = []
    if agent.side == "ours":
        rows, sections = await notebook_map(agent)
        at = next(k for k, s in enumerate(sections) if s[2] == case.section)
        first, level = sections[at][0], sections[at][1]
        end = next((s[0] for s in sections[at + 1 :] if s[1] <= level and s[0] > first), len(rows))
        code = [row[0] for row in rows[first:end] if row[4]]
        listed = await agent.call(
            "jupyter_get_cells",
            {"cellIds": [rows[i][1] for i in code], "includeSource": False, "includeOutputs": True},
        )
        for cell in listed["cells"]:
            for out in cell.get("outputs", []):
                if "ename" in out:
                    texts.append(f"{out['ename']}: {out['evalue']}")
                elif "preview" not in out:
                    continue  # an image: nothing to read as text
                elif out.get("previewTruncated"):
                    page = await agent.call(
                        "jupyter_get_output",
                        {
                            "cellId": cell["id"],
                            "outputIndex": out["index"],
                            "mimeType": "text/plain",
                            "maxBytes": SUMMARY_BYTES,
                        },
                    )
                    texts.append(page["text"])
                else:
                    texts.append(out["preview"])
    else:

        def past_section(cells: list[dict]) -> bool:
            titles = [
                (c["index"], level, title)
                for c in cells
                if c["type"] == "markdown"
                for level, title in headings(c.get("source", ""))
            ]
            at = next((k for k, t in enumerate(titles) if t[2] == case.section), None)
            return at is not None and any(lv <= titles[at][1] for _, lv, _ in titles[at + 1 :])

        cells = await theirs_pages(agent, False, stop=past_section)
        titles = [
            (c["index"], level, title)
            for c in cells
            if c["type"] == "markdown"
            for level, title in headings(c.get("source", ""))
        ]
        at = next(k for k, t in enumerate(titles) if t[2] == case.section)
        first, level = titles[at][0], titles[at][1]
        end = next((i for i, lv, _ in titles[at + 1 :] if lv <= level and i > first), len(cells))
        listed = await agent.call(
            "jupyter_get_cells", {"startIndex": first, "endIndex": end, "includeOutputs": True, "includeSource": False}
        )
        for cell in listed["cells"]:
            for out in cell.get("outputs", []):
                if out.get("outputType") == "error":
                    texts.append(f"{out['ename']}: {out['evalue']}")
                elif "text" in out:
                    texts.append(out["text"])
    read = [squash(t) for t in texts]
    missing = [t for t in truth.section_texts if not any(r.startswith(squash(t)) for r in read)]
    if missing:
        raise JobFailed(f"{len(missing)} of {len(truth.section_texts)} outputs not read: {missing[0][:80]!r}")
    return f"{len(truth.section_texts)} outputs read"


# ------------------------------------------------------------------------------------------------- clients


def parse_json_after(text: str, marker: str) -> Any:
    """The JSON value that starts at the first "{" after ``marker`` in ``text``."""
    at = text.index("{", text.index(marker))
    return json.JSONDecoder().raw_decode(text[at:])[0]


def payload_of(result: dict) -> dict:
    """The tool's payload in a CallToolResult: its structuredContent, else its first text block's JSON."""
    if isinstance(result.get("structuredContent"), dict):
        return result["structuredContent"]
    return json.loads(result["content"][0]["text"])


def text_chars(content: list) -> int:
    return sum(len(block.text) for block in content if getattr(block, "type", None) == "text")


class StdioClient:
    """An MCP server on stdio (the Python ``mcp`` client) that reaches the page's WebMCP tools."""

    name = ""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.session: Any = None
        self._stack: Any = None

    def command(self) -> tuple[str, list[str], dict]:
        raise NotImplementedError

    async def __aenter__(self) -> StdioClient:
        from contextlib import AsyncExitStack

        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        command, args, env = self.command()
        self._stack = AsyncExitStack()
        quiet = self._stack.enter_context(open(self.folder / f"{self.name}.log", "w"))  # noqa: SIM115
        read, write = await self._stack.enter_async_context(
            stdio_client(StdioServerParameters(command=command, args=args, env=env, cwd=str(self.folder)), errlog=quiet)
        )
        self.session = await self._stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=None))
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.aclose()

    async def raw(self, name: str, args: dict) -> Any:
        return await asyncio.wait_for(self.session.call_tool(name, args), 300)


class PlaywrightMcp(StdioClient):
    """Playwright MCP: the page's tools are MCP tools named ``webmcp_<tool>``, collected with a page snapshot."""

    name = "playwright"

    def command(self) -> tuple[str, list[str], dict]:
        node, args = playwright_mcp_command(self.folder)
        return node, args, dict(os.environ)

    async def open(self, url: str, wanted: int) -> int:
        await self.raw("browser_navigate", {"url": url})
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            await self.raw("browser_snapshot", {})
            tools = [t for t in (await self.session.list_tools()).tools if t.name.startswith("webmcp_jupyter_")]
            if len(tools) >= wanted:
                return sum(len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema)) for t in tools)
            await asyncio.sleep(2)
        raise RuntimeError(f"Playwright MCP listed fewer than {wanted} tools")

    async def call(self, name: str, args: dict) -> tuple[dict, bool, dict[str, int]]:
        result = await self.raw(f"webmcp_{name}", args)
        text = "\n".join(block.text for block in result.content if block.type == "text")
        parsed, is_error = playwright_mcp_result(text)
        return payload_of(parsed), is_error or bool(parsed.get("isError")), {"playwright": text_chars(result.content)}


class DevtoolsMcp(StdioClient):
    """chrome-devtools-mcp: ``execute_webmcp_tool`` on its selected page."""

    name = "devtools"

    def command(self) -> tuple[str, list[str], dict]:
        node = shutil.which("node") or "node"
        args = [
            str(install_mcp()["chrome-devtools-mcp"]),
            "--headless",
            "--isolated",
            f"--executablePath={chromium_executable()}",
            f"--chromeArg={WEBMCP_FLAG}",
            "--categoryExperimentalWebmcp=true",
            "--no-usage-statistics",
            "--no-performance-crux",
            *(f"--chromeArg={arg}" for arg in BASE_ARGS),
        ]
        return node, args, {**os.environ, "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1"}

    async def open(self, url: str, wanted: int) -> int:
        pages = (await self.raw("list_pages", {})).content[0].text
        self.page_id = int(re.search(r"^(\d+):.*\[selected\]", pages, re.M).group(1))
        await self.raw("navigate_page", {"pageId": self.page_id, "type": "url", "url": url})
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            listing = (await self.raw("list_webmcp_tools", {"pageId": self.page_id})).content[0].text
            if len(set(re.findall(r'name="(jupyter_[A-Za-z0-9_]+)"', listing))) >= wanted:
                return len(listing)
            await asyncio.sleep(2)
        raise RuntimeError(f"chrome-devtools-mcp listed fewer than {wanted} tools")

    async def call(self, name: str, args: dict) -> tuple[dict, bool, dict[str, int]]:
        result = await self.raw(
            "execute_webmcp_tool", {"pageId": self.page_id, "toolName": name, "input": json.dumps(args)}
        )
        text = "\n".join(block.text for block in result.content if block.type == "text")
        response = parse_json_after(text, "")
        if response.get("status") != "Completed":
            return {"error": response}, True, {"devtools": text_chars(result.content)}
        output = response["output"]
        if isinstance(output, str):  # the browser's answer as JSON text (seen on long results)
            output = json.loads(output)
        return payload_of(output), bool(output.get("isError")), {"devtools": text_chars(result.content)}


def mcp_client_bundle() -> str:
    """The MCP SDK's client and MCP-B's tab transport as one script for the page (``window.__benchMcp``), bundled
    once with esbuild from the pinned npm packages into .cache/bench/mcp-client/."""
    bundle = CLIENT_DIR / "client.js"
    if not bundle.exists():
        CLIENT_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                shutil.which("npm") or "npm",
                "install",
                "--prefix",
                str(CLIENT_DIR),
                "--no-save",
                "--no-package-lock",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                *CLIENT_PACKAGES,
            ],
            check=True,
        )
        entry = CLIENT_DIR / "entry.mjs"
        entry.write_text(
            "import { Client } from '@modelcontextprotocol/client';\n"
            "import { TabClientTransport } from '@mcp-b/transports';\n"
            "window.__benchMcp = { Client, TabClientTransport };\n",
            encoding="utf-8",
        )
        subprocess.run(
            [
                str(CLIENT_DIR / "node_modules" / ".bin" / "esbuild"),
                str(entry),
                "--bundle",
                "--format=iife",
                "--platform=browser",
                f"--outfile={bundle}",
            ],
            check=True,
        )
    return bundle.read_text(encoding="utf-8")


#: the MCP-B runtime's options, as the bridge's loader sets them: its tab server answers this page's origin only,
#: its iframe transport is off
MCP_B_OPTIONS = (
    "window.__webModelContextOptions = {autoInitialize: true, transport: {tabServer: {allowedOrigins: "
    "[window.location.origin]}, iframeServer: false}};"
)
CONNECT_JS = """async () => {
    const { Client, TabClientTransport } = window.__benchMcp;
    const client = new Client({ name: 'webmcp-bridge-bench', version: '1' });
    await client.connect(new TabClientTransport({ targetOrigin: window.location.origin }));
    window.__benchClient = client;
}"""
LIST_JS = """async () => (await window.__benchClient.listTools()).tools"""
CALL_JS = """async ([name, args]) => {
    try { return { result: await window.__benchClient.callTool({ name, arguments: args }) }; }
    catch (error) { return { thrown: String(error && error.message || error) }; }
}"""


class McpBClient:
    """The MCP SDK's client on MCP-B's tab transport, in the page, in a Chromium without native WebMCP."""

    name = "mcp-b"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def __aenter__(self) -> McpBClient:
        from playwright.async_api import async_playwright

        self._driver = await async_playwright().start()
        self._browser = await self._driver.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=BASE_ARGS
        )
        self._context = await self._browser.new_context()
        await self._context.add_init_script(script=MCP_B_OPTIONS + "\n" + MCP_B_GLOBAL.read_text(encoding="utf-8"))
        self.page = await self._context.new_page()
        self._bundle = mcp_client_bundle()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._browser.close()
        await self._driver.stop()

    async def open(self, url: str, wanted: int) -> int:
        await self.page.goto(url)
        await self.page.evaluate(self._bundle)
        await self.page.evaluate(CONNECT_JS)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            tools = [t for t in await self.page.evaluate(LIST_JS) if t["name"].startswith("jupyter_")]
            if len(tools) >= wanted:  # what a host gives the model of a tool: its name, description and input schema
                return sum(
                    len(t["name"]) + len(t.get("description", "")) + len(json.dumps(t["inputSchema"])) for t in tools
                )
            await asyncio.sleep(2)
        raise RuntimeError(f"MCP-B listed fewer than {wanted} tools")

    async def call(self, name: str, args: dict) -> tuple[dict, bool, dict[str, int]]:
        answer = await self.page.evaluate(CALL_JS, [name, args])
        if "thrown" in answer:
            return {"error": answer["thrown"]}, True, {}
        result = answer["result"]
        content = sum(len(b.get("text", "")) for b in result.get("content", []) if b.get("type") == "text")
        structured = (
            len(json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":")))
            if isinstance(result.get("structuredContent"), dict)
            else content
        )
        shown = {"mcp-b (structured)": structured, "mcp-b (content)": content}
        return payload_of(result), bool(result.get("isError")), shown


# ---------------------------------------------------------------------------------------------------- run


async def wait_for_kernel(client: Any, path: str) -> None:
    """Until the notebook's kernel is idle (not counted: the agent would find it so in a page open for a while)."""
    deadline = time.monotonic() + READY_TIMEOUT
    seen = None
    while time.monotonic() < deadline:
        try:  # a first call can outlast a client's own limit while the page's tools start (Playwright MCP: 30 s)
            seen, _, _ = await client.call("jupyter_get_context", {})
        except ValueError as exc:
            seen = str(exc)[:200]
        else:
            if (seen.get("kernel") or {}).get("status") == "idle":
                return
        await asyncio.sleep(2)
    raise RuntimeError(f"the kernel of {path} did not become idle: {seen}")


async def run_client(kind: str, urls: dict[str, str], cases: list[Case], wanted: dict[str, int], log) -> dict:
    """Every job on every notebook, ours then the reference's, through one client (a fresh server and browser per
    side and notebook). Returns {side: {"definitions": chars, notebook: {job: {...}}}}."""
    found: dict = {}
    for side in SIDES:
        found[side] = {}
        for case in cases:
            truth = truth_of(case)
            folder = Path(tempfile.mkdtemp(prefix=f"reads-{kind}-"))
            maker = {"playwright": PlaywrightMcp, "devtools": DevtoolsMcp, "mcp-b": McpBClient}[kind]
            url = f"{urls[side]}/lab/index.html?path={quote(case.name)}"
            try:
                async with maker(folder) as client:
                    found[side]["definitions"] = await client.open(url, wanted[side])
                    await wait_for_kernel(client, case.name)
                    jobs = {}
                    for job in JOBS:
                        if job == "fix-and-run" and case.fix is None:
                            continue
                        agent = Agent(client, side, case.name)
                        started = time.monotonic()
                        try:
                            if job == "understand":
                                detail = await understand(agent, truth)
                            elif job == "find-failing":
                                detail = await find_failing_job(agent, truth)
                            elif job == "fix-and-run":
                                detail = await fix_and_run(agent, truth, case)
                            else:
                                detail = await summarize_section(agent, truth, case)
                            ok = True
                        except JobFailed as exc:
                            ok, detail = False, str(exc)
                        jobs[job] = {
                            "ok": ok,
                            "detail": detail,
                            "calls": agent.tally.calls,
                            "chars": agent.tally.chars,
                            "seconds": round(time.monotonic() - started, 1),
                        }
                        log(f"{kind} {side} {case.name} {job}: {'ok' if ok else 'FAILED'} {agent.tally.chars} {detail}")
                    found[side][case.name] = jobs
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    return found


def table(results: dict) -> str:
    """The Markdown table: per job and notebook, the characters each client showed the model, ours and the
    reference's, and their ratio (ours / reference; the goal is at most 0.5), with whether each side's job succeeded."""
    clients = results["clients"]
    out = [
        "| notebook | job | client | ours | reference | ratio | ours ok | reference ok |",
        "|---|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for case in results["notebooks"]:
        for job in JOBS:
            for count in COUNTS:
                kind = count.split(" ")[0]
                if kind not in clients:
                    continue
                ours = clients[kind]["ours"].get(case, {}).get(job)
                theirs = clients[kind]["theirs"].get(case, {}).get(job)
                if ours is None or theirs is None:
                    continue
                a, b = ours["chars"].get(count, 0), theirs["chars"].get(count, 0)
                ratio = a / b if b else None
                if ratio is not None and ours["ok"] and theirs["ok"]:
                    worst = max(worst, ratio)
                out.append(
                    f"| {case.removesuffix('.ipynb')} | {job} | {count} | {a:,} | {b:,} | "
                    f"{'-' if ratio is None else f'{ratio:.2f}'} | {'yes' if ours['ok'] else 'NO'} | "
                    f"{'yes' if theirs['ok'] else 'NO'} |"
                )
    out += ["", "| tool definitions shown once a session | ours | reference |", "|---|---|---|"]
    for kind, sides in clients.items():
        out.append(f"| {kind} | {sides['ours'].get('definitions', 0):,} | {sides['theirs'].get('definitions', 0):,} |")
    out += ["", f"Highest ratio over jobs both sides did: {worst:.2f}"]
    return "\n".join(out)


def serve(folders: dict[str, Path]) -> tuple[list, dict[str, str]]:
    servers, urls = [], {}
    for key, folder in folders.items():
        server = make_server(folder, port=0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        urls[key] = f"http://127.0.0.1:{server.server_address[1]}"
    return servers, urls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated: " + ", ".join(CLIENTS))
    parser.add_argument("--notebooks", default="", help="comma-separated notebook names (default: all)")
    parser.add_argument("--table", nargs="?", const=str(RESULTS), metavar="RESULTS_JSON")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(Path(args.table).read_text(encoding="utf-8"))))
        return 0
    kinds = [k for k in args.clients.split(",") if k]
    cases = [c for c in CASES if not args.notebooks or c.name in args.notebooks.split(",")]
    write_content()
    folders = sites.build_sites(CONTENT, prefix="reads-")
    wanted = {"ours": default_tools(folders["ours"]), "theirs": 22}
    install_mcp()
    servers, urls = serve(folders)
    started = time.monotonic()
    results: dict = {
        "meta": {
            "date": datetime.date.today().isoformat(),
            "reference": sites.REFERENCE,
            "summary_bytes": SUMMARY_BYTES,
            "chromium": subprocess.run(
                [chromium_executable(), "--version"], capture_output=True, text=True, check=False
            ).stdout.strip(),
            "clients": {
                "playwright": f"@playwright/mcp@{MCP_SERVERS['@playwright/mcp']}",
                "devtools": f"chrome-devtools-mcp@{MCP_SERVERS['chrome-devtools-mcp']}",
                "mcp-b": ["@mcp-b/global@5.1.0 (in the page)", *CLIENT_PACKAGES],
            },
        },
        "notebooks": [c.name for c in cases],
        "clients": {},
    }
    previous = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else None
    if previous and previous.get("notebooks") == results["notebooks"]:
        results["clients"].update({k: v for k, v in previous["clients"].items() if k not in kinds})

    def log(line: str) -> None:
        print(f"[reads {time.monotonic() - started:5.0f} s] {line}", flush=True)

    try:
        for kind in kinds:
            results["clients"][kind] = asyncio.run(run_client(kind, urls, cases, wanted, log))
            results["table"] = table(results)
            RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    finally:
        for server in servers:
            server.shutdown()
    print(results["table"])
    return 0


def default_tools(site: Path) -> int:
    """How many tools the bridge of the built ``site`` registers on a default page (its tools.json)."""
    manifest = json.loads((site / "extensions" / "jupyterlab-webmcp-bridge" / "static" / "tools.json").read_text())
    return len(
        {tool for name in (*manifest["aliases"]["default"], *manifest["always"]) for tool in manifest["toolsets"][name]}
    )


if __name__ == "__main__":
    raise SystemExit(main())
