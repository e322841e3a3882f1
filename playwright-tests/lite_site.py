"""Helpers for the end-to-end tests (imported by conftest.py and the tests; a distinct module name so it never
collides with another folder's conftest): the browser flags, a page recorder, notebook opening, and the demo
page's tool definitions as Python makes them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page

CONTENT = Path(__file__).resolve().parents[1] / "lite" / "content"
SITE_CONFIG = Path(__file__).resolve().parents[1] / "jupyter-lite.json"
URL_IN_TEXT = re.compile(r"https?://[^\s\"'()<>\\\]]+")

BASE_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
WEBMCP_FLAG = "--enable-features=WebMCP"
#: states after which the bridge status no longer changes by itself
FINAL_STATES = ("ready", "unavailable", "failed")
#: a cold start on a small machine: JupyterLab, then a main-thread Pyodide (≈ 5 s here)
BRIDGE_TIMEOUT_MS = 90_000
#: the first cell run also starts the kernel's own Pyodide in a worker
KERNEL_TIMEOUT_MS = 120_000


def serve(folder: Path, headers: dict | None = None):
    """Serve ``folder`` (a built site) on a free 127.0.0.1 port in a daemon thread with build.py's own server:
    ``headers`` None sends the site's ``_headers`` (COOP/COEP), ``{}`` none. Returns ``(server, base URL)``; the
    caller shuts the server down."""
    from sitebuild.serve import make_server

    server = make_server(folder, port=0, quiet=True, headers=headers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def chromium_executable() -> str:
    """The real Chromium binary (Debian's /usr/bin/chromium is a shell wrapper around it)."""
    for candidate in ("/usr/lib/chromium/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    pytest.fail("Chromium not found: install it (apt-get install -y chromium)")


@dataclass(frozen=True)
class UpstreamRace:
    """A page error JupyterLab raises by itself under some timings (docs/UPSTREAM.md has its reproduction
    without the bridge): recognised by its exact message and a stack whose every frame with a URL is in the
    bundle ``bundle`` (a file name start, e.g. ``jlab_core.``), so the same message from any other code counts."""

    name: str
    message: str
    bundle: str

    def matches(self, message: str, stack: str) -> bool:
        """Whether an uncaught error (its message, its ``Error.stack`` text) is this race."""
        frames = [line.strip() for line in stack.splitlines()[1:] if line.strip().startswith("at ")]
        located = [f for f in frames if "://" in f]
        return message == self.message and bool(located) and all(f"/{self.bundle}" in f for f in located)


#: JupyterLab 4.6's content-visibility rendering mode (its default `windowingMode`): every change of a notebook's
#: cell list queues a frame callback that calls `this._contentVisibilityObserver.observe(...)` for each cell, and
#: detaching or disposing the notebook sets that observer to null; a change right before a detach throws in the
#: frame. Nothing is lost (the observer only toggles CSS on visible cells). docs/UPSTREAM.md, "content visibility".
CONTENT_VISIBILITY_RACE = UpstreamRace(
    "content-visibility observer after detach", "Cannot read properties of null (reading 'observe')", "build/jlab_core."
)
UPSTREAM_RACES = (CONTENT_VISIBILITY_RACE,)


@dataclass
class PageLog:
    """What one page did: every request URL, uncaught page errors (with their stacks) and console errors."""

    requests: list[str] = field(default_factory=list)
    blocked_by_csp: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    #: (message, stack) of each uncaught page error, in order (recorded by new_recorded_page)
    page_error_stacks: list[tuple[str, str]] = field(default_factory=list)
    #: the last warnings and errors the page's workers printed (the bridge's worker prints the traceback of a tool's
    #: INTERNAL_ERROR there): shown with a failed test's locals, never asserted on
    worker_console: list[str] = field(default_factory=list)

    def upstream_races(self) -> list[str]:
        """The names of the UPSTREAM_RACES seen on the page, one per error (reported, not counted as ours)."""
        return [
            race.name
            for message, stack in self.page_error_stacks
            for race in UPSTREAM_RACES
            if race.matches(message, stack)
        ]

    def own_page_errors(self) -> list[str]:
        """Uncaught page errors: the bridge's, JupyterLab's and the kernel's (the pinned kernel's lost-reply error is
        patched at build time, build.patch_kernel_messaging, so it counts too), except the named JupyterLab races
        of UPSTREAM_RACES, recognised by message and stack (each such error is left out once)."""
        errors = list(self.page_errors)
        for message, stack in self.page_error_stacks:
            if any(race.matches(message, stack) for race in UPSTREAM_RACES) and message in errors:
                errors.remove(message)
        return errors

    def foreign_requests(self, site_url: str, allow_content_links: bool = False) -> list[str]:
        """Requests to any origin other than the site's (data: and blob: URLs are not network requests).

        Some shipped notebooks embed remote images in their markdown (badges, logos). The site's
        Content-Security-Policy stops those in the browser before any connection is made (Playwright still
        reports the attempt, then fails it with "csp"): such attempts are not requests that left the page and
        are not counted. Every other foreign request is, unless allow_content_links excuses a URL written
        literally in a notebook of lite/content/.
        """
        origin = urlsplit(site_url)[:2]
        allowed = content_urls() if allow_content_links else frozenset()
        return [
            url
            for url in self.requests
            if not url.startswith(("data:", "blob:"))
            and urlsplit(url)[:2] != origin
            and url not in allowed
            and url not in self.blocked_by_csp
        ]


@lru_cache(maxsize=1)
def content_urls() -> frozenset[str]:
    """Every http(s) URL written in the shipped notebooks (lite/content/*.ipynb)."""
    found = set()
    for path in CONTENT.glob("*.ipynb"):
        found.update(URL_IN_TEXT.findall(path.read_text(encoding="utf-8")))
    return frozenset(found)


def new_recorded_page(browser: Browser, log: PageLog):
    """A page in a fresh context whose requests (page, workers, service worker) and errors go to `log`."""
    context = browser.new_context()
    context.on("request", lambda request: log.requests.append(request.url))
    context.on("requestfailed", lambda request: request.failure == "csp" and log.blocked_by_csp.append(request.url))
    page = context.new_page()
    page.on("pageerror", lambda error: record_page_error(log, error))
    page.on("console", lambda msg: msg.type == "error" and log.console_errors.append(msg.text))
    page.on("worker", lambda worker: worker.on("console", lambda msg: record_worker_console(log, msg)))
    return context, page


def record_worker_console(log: PageLog, msg) -> None:
    """Keep the last 20 warnings and errors of a worker's console on ``log`` (each cut to 2,000 characters)."""
    if msg.type in ("error", "warning"):
        log.worker_console.append(msg.text[:2000])
        del log.worker_console[:-20]


def record_page_error(log: PageLog, error) -> None:
    """Record an uncaught page error (Playwright's Error: message, stack) on ``log``."""
    log.page_errors.append(str(error))
    log.page_error_stacks.append((error.message, error.stack or ""))


def result_payload(result: dict) -> dict:
    """The payload of a CallToolResult the page returned: its first text block's JSON. Native WebMCP's results carry
    it once, as that text (no ``structuredContent``: its clients show the model the whole result); the MCP-B
    runtime's also as ``structuredContent``, which must then be the same payload (docs/TOOLS.md, "The result
    envelope")."""
    text = result["content"][0]
    assert text["type"] == "text", result
    payload = json.loads(text["text"])
    assert "structuredContent" not in result or result["structuredContent"] == payload, result
    return payload


def bridge_status(page: Page) -> dict:
    """window.webmcpBridge.status, as a dict (None before the loader ran)."""
    return page.evaluate("() => window.webmcpBridge ? JSON.parse(JSON.stringify(window.webmcpBridge.status)) : null")


def choose(select: Locator, value: str) -> None:
    """Choose ``value`` in the ``<select>`` located by ``select`` (a Playwright Locator) as a person does, with the
    keyboard: focus it, open its list (Alt+ArrowDown), move to the option, Enter. The browser then fires one trusted
    ``change`` for the choice; Playwright's ``select_option`` fires an untrusted one, which the Agent panel does not
    take as the person's (``lab/ui/dom.js``: only ``event.isTrusted`` changes count). Choosing the option already
    chosen changes nothing. Raises ValueError when no option has ``value``."""
    values = select.evaluate("s => [...s.options].map(o => o.value)")
    if value not in values:
        raise ValueError(f"no option {value!r} in {values}")
    current = select.evaluate("s => s.selectedIndex")
    target = values.index(value)
    select.focus()
    keyboard = select.page.keyboard
    keyboard.press("Alt+ArrowDown")
    for _ in range(abs(target - current)):
        keyboard.press("ArrowDown" if target > current else "ArrowUp")
    keyboard.press("Enter")


def wait_for_bridge(page: Page, timeout_ms: int = BRIDGE_TIMEOUT_MS) -> dict:
    """Wait until the bridge status settles (ready / unavailable / failed); return it. A settled bridge must run its
    Python on the thread the page asked for (``?webmcpBridgeThread=``, :data:`THREAD`): "main" on the main thread,
    "worker" or the default ("auto") in the worker, which this Chromium can always start (JSPI, and shared memory on
    the isolated server): no silent fallback to the main thread during a run. The fallback has its own tests
    (test_worker_mode.py), which do not wait here."""
    page.wait_for_function(
        "states => !!window.webmcpBridge && states.includes(window.webmcpBridge.status.state)",
        arg=list(FINAL_STATES),
        timeout=timeout_ms,
    )
    status = bridge_status(page)
    if status["state"] != "failed":
        expected = "main" if status.get("threadAsked") == "main" else "worker"
        assert status.get("thread") == expected, (
            f"expected the {expected} thread, running on {status.get('thread')}: {status}"
        )
    return status


#: the query that turns every toolset on: the tests of a feature reach its tools without a discovery call (the
#: default page, which registers fewer, is tested on its own: test_platform_browser.py, agent_scenarios.py)
EVERY_TOOLSET = "all"


#: the thread the bridge's Python runs on in the pages the tests open (``?webmcpBridgeThread=``): the environment
#: variable WEBMCP_BRIDGE_THREAD ("worker" or "main") chooses it for a whole run; unset, the page's default ("auto":
#: the worker in this Chromium)
THREAD = os.environ.get("WEBMCP_BRIDGE_THREAD") or None


def lab_url(site_url: str, name: str, toolsets: str | None = EVERY_TOOLSET, thread: str | None = None) -> str:
    """JupyterLite's JupyterLab on notebook ``name``, with ``?toolsets=`` (None: the page's default toolsets) and
    ``?webmcpBridgeThread=`` (``thread``; None: :data:`THREAD`; "" or an unset :data:`THREAD`: no parameter, the
    page's default thread)."""
    query = f"path={quote(name)}" + ("" if toolsets is None else f"&toolsets={quote(toolsets)}")
    chosen = THREAD if thread is None else thread
    if chosen:
        query += f"&webmcpBridgeThread={quote(chosen)}"
    return f"{site_url}/lab/index.html?{query}"


def open_notebook(
    page: Page, site_url: str, name: str, timeout_ms: int = BRIDGE_TIMEOUT_MS, toolsets: str | None = EVERY_TOOLSET
) -> dict:
    """Open a notebook of the site's content in JupyterLab (every toolset on unless ``toolsets`` says otherwise;
    None: the page's default); wait for it and for the bridge; return the status."""
    page.goto(lab_url(site_url, name, toolsets))
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=timeout_ms)
    bring_to_front(page, name, timeout_ms)
    return wait_for_bridge(page, timeout_ms)


def bring_to_front(page: Page, path: str, timeout_ms: int = BRIDGE_TIMEOUT_MS) -> None:
    """Make notebook ``path`` JupyterLab's current widget, as a person clicking its tab would.

    JupyterLab restores the documents open in the page before and may bring one of them to the front after the
    ``?path=`` one; opening ``path`` while it still lays out the restored panels races with it. So this waits for
    ``app.restored``, opens ``path`` with JupyterLab's own command when another document is in front, and waits
    until ``path`` is current with its cells shown."""
    page.evaluate(
        """async path => {
        const app = window.jupyterapp;
        await app.restored;
        if (app.shell.currentWidget?.context?.path !== path) await app.commands.execute('docmanager:open', {path});
    }""",
        path,
    )
    page.wait_for_function(
        "path => { const w = window.jupyterapp.shell.currentWidget;"
        " return w?.context?.path === path && !!w.node.querySelector('.jp-Notebook .jp-Cell'); }",
        arg=path,
        timeout=timeout_ms,
    )


#: the MCP servers a desktop agent uses to reach the page's WebMCP tools (npm packages, pinned), installed together into
#: .cache/node/ by `python playwright-tests/lite_site.py install-mcp` (.ci/run)
MCP_SERVERS = {"chrome-devtools-mcp": "1.11.0", "@playwright/mcp": "0.0.86"}
CHROME_DEVTOOLS_MCP = f"chrome-devtools-mcp@{MCP_SERVERS['chrome-devtools-mcp']}"
NODE_DIR = Path(__file__).resolve().parents[1] / ".cache" / "node"


def _npm_install(prefix: Path, specs: list[str]) -> None:
    """``npm install`` the pinned ``specs`` into ``prefix`` (no lock, no save: npm's ``--no-save`` removes from a prefix
    every package the same run does not name, so each prefix is installed in one run)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm is needed to install {', '.join(specs)} (apt-get install -y npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-save",
            "--no-package-lock",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            *specs,
        ],
        check=True,
    )


def install_npm(spec: str, prefix: Path | None = None) -> Path:
    """Install the pinned npm package ``spec`` (``name@version``) once into ``prefix`` (by default a folder of its own
    under .cache/node/) and return its folder."""
    package, version = spec.rsplit("@", 1)
    prefix = prefix or NODE_DIR / spec.replace("/", "+")
    folder = prefix / "node_modules" / package
    manifest = folder / "package.json"
    if not (manifest.exists() and json.loads(manifest.read_text())["version"] == version):
        _npm_install(prefix, [spec])
    return folder


def install_mcp() -> dict[str, Path]:
    """Install the pinned MCP servers of :data:`MCP_SERVERS` into .cache/node/ (one npm run for those missing or at
    another version; nothing when all are there) and return ``{package: its entry script}``."""
    folders = {package: NODE_DIR / "node_modules" / package for package in MCP_SERVERS}

    def installed(package: str) -> bool:
        manifest = folders[package] / "package.json"
        return manifest.exists() and json.loads(manifest.read_text())["version"] == MCP_SERVERS[package]

    if not all(installed(package) for package in MCP_SERVERS):
        _npm_install(NODE_DIR, [f"{package}@{version}" for package, version in MCP_SERVERS.items()])
    entries = {}
    for package, folder in folders.items():
        binaries = json.loads((folder / "package.json").read_text())["bin"]
        entry = (
            binaries
            if isinstance(binaries, str)
            else binaries.get(package.rsplit("/", 1)[-1]) or next(iter(binaries.values()))
        )
        entries[package] = folder / entry
    return entries


def install_chrome_devtools_mcp() -> Path:
    """The pinned chrome-devtools-mcp's entry script (installed with the other MCP servers, :func:`install_mcp`)."""
    return install_mcp()["chrome-devtools-mcp"]


def playwright_mcp_config(folder: Path) -> Path:
    """Write Playwright MCP's configuration into ``folder`` and return its path: Debian's Chromium (its real binary),
    headless, with native WebMCP on (``--enable-features=WebMCP``: without it the page has no
    ``document.modelContext``) and this machine's flags (:data:`BASE_ARGS`), an in-memory profile, its files (page
    snapshots) kept in ``folder``. The README shows the same file for a desktop agent (headed, the person's
    Chromium)."""
    config = {
        "browser": {
            "browserName": "chromium",
            "isolated": True,
            "launchOptions": {
                "executablePath": chromium_executable(),
                "headless": True,
                "args": [WEBMCP_FLAG, *BASE_ARGS],
            },
        },
        "outputDir": str(folder / "output"),
    }
    path = folder / "playwright-mcp.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def playwright_mcp_command(folder: Path) -> tuple[str, list[str]]:
    """``(node, arguments)`` that start the pinned Playwright MCP on stdio with :func:`playwright_mcp_config` (written
    into ``folder``), as a desktop agent's MCP configuration starts it. Its client sees the page's WebMCP tools as
    tools named ``webmcp_<tool>`` once a page snapshot collected them (``browser_snapshot``)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to run the MCP servers (apt-get install -y nodejs)")
    return node, [str(install_mcp()["@playwright/mcp"]), "--config", str(playwright_mcp_config(folder))]


def playwright_mcp_result(text: str) -> tuple[dict, bool]:
    """The CallToolResult in the text Playwright MCP answers a ``webmcp_<tool>`` call with (its "### Result" section,
    or "### Error" when the result has ``isError``: a preamble line saying the output is page-provided and
    untrusted, then the result as JSON), and whether it came as an error. Raises ValueError when the text holds no
    result (Playwright MCP's own failure, such as its 30 s limit on a call)."""
    marker = text.find("untrusted:\n")
    if marker < 0:
        raise ValueError(f"no WebMCP result in Playwright MCP's answer: {text[:300]!r}")
    result, _ = json.JSONDecoder().raw_decode(text, marker + len("untrusted:\n"))
    return result, text.lstrip().startswith("### Error")


#: the accessibility engine the browser tests run in the page (npm, MPL-2.0), injected by the test as a script's
#: text: nothing is loaded from another origin
AXE_CORE = "axe-core@4.14.1"


def axe_source() -> str:
    """The pinned axe-core's script (installed once into .cache/node/)."""
    return (install_npm(AXE_CORE) / "axe.min.js").read_text(encoding="utf-8")


if __name__ == "__main__":  # `python playwright-tests/lite_site.py install-mcp` (used by .ci/run): both MCP servers
    import sys

    if sys.argv[1:] == ["install-mcp"]:
        for package, entry in install_mcp().items():
            print(package, entry)
    elif sys.argv[1:] == ["install-axe"]:
        print(install_npm(AXE_CORE))


@lru_cache(maxsize=1)
def _demo_definitions() -> str:
    from host_memory import MemoryWorkspace
    from webmcp_bridge.contrib.config import PAGE_CONFIG_KEY, parse_entries
    from webmcp_bridge.contrib.loading import SiteLoader
    from webmcp_bridge.core.diagnostics import Diagnostics
    from webmcp_bridge.session.bridge import build_bridge

    configured = json.loads(SITE_CONFIG.read_text(encoding="utf-8"))["jupyter-config-data"].get(PAGE_CONFIG_KEY)
    entries, problems = parse_entries(("the site's jupyter-lite.json", configured))
    assert problems == [], problems

    async def fetch(path: str) -> bytes:
        return (CONTENT / path).read_bytes()

    diagnostics = Diagnostics()
    with (
        tempfile.TemporaryDirectory() as workdir,
        ThreadPoolExecutor(1) as thread,
    ):  # Playwright's loop runs in this thread
        contributions = thread.submit(asyncio.run, SiteLoader(fetch, Path(workdir), diagnostics).load(entries)).result()
        bridge = build_bridge(MemoryWorkspace({}), contributions=contributions, diagnostics=diagnostics)
    assert diagnostics.to_json() == [], diagnostics.to_json()
    return json.dumps(bridge.registry.definitions())


def demo_definitions() -> list[dict]:
    """The WebMCP definitions the demo page registers once the bridge is up: the bridge's tools and the site's own
    contributions (the repository's jupyter-lite.json names them; read from lite/content as the page reads the
    site's files), made by the same Python."""
    return json.loads(_demo_definitions())
