"""End-to-end fixtures (for playwright-tests/): build the site once, serve it, drive it with Debian Chromium.

This file sits at the repo root, not in playwright-tests/, so that its fixtures reach playwright-tests/ and the
repository root (the ``sitebuild`` package) is on ``sys.path``, with tests/ (the test harness the browser tests share:
the in-memory host, the PNG codec). Tests import shared helpers from helper modules, never from a conftest:
``tests/helpers.py`` under CPython, ``playwright-tests/lite_site.py`` in the browser.

- ``site_url``: the built ``_output/`` served on a free 127.0.0.1 port (build.py's own server: same headers).
- ``browser``: headless Chromium with native WebMCP (``--enable-features=WebMCP``);
  ``browser_without_webmcp``: the same browser without the flag.
- ``page`` / ``page_without_webmcp``: a fresh browser context per test (JupyterLite keeps edits in IndexedDB,
  so a new context means the original content), with every request URL, page error and console error
  recorded on ``page_log`` / ``page_without_webmcp_log``.
- ``lite_site.open_notebook(page, site_url, name)``: open ``lab/index.html?path=<name>`` and wait for the bridge status.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "playwright-tests"), str(HERE / "tests")]
from lite_site import BASE_ARGS, WEBMCP_FLAG, PageLog, chromium_executable, new_recorded_page  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402
from sitebuild.util import BuildError  # noqa: E402


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """Build the site (incrementally: seconds when nothing changed) and return _output/ (or the folder named
    by the environment variable WEBMCP_BRIDGE_SITE_DIR, so two checkouts' test runs need not share one)."""
    try:
        custom = os.environ.get("WEBMCP_BRIDGE_SITE_DIR")
        return build_site(output=Path(custom)) if custom else build_site()
    except BuildError as exc:
        pytest.fail(f"site build failed: {exc}")


@pytest.fixture(scope="session")
def site_url(site_dir: Path):
    """Serve the built site on a free 127.0.0.1 port in a background thread; yield its base URL."""
    server = make_server(site_dir, port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def playwright_driver():
    """One Playwright driver for the session."""
    with sync_playwright() as driver:
        yield driver


def _launch(driver, with_webmcp: bool) -> Browser:
    """Headless Debian Chromium with a fresh temporary profile."""
    args = ([WEBMCP_FLAG] if with_webmcp else []) + BASE_ARGS
    return driver.chromium.launch(executable_path=chromium_executable(), headless=True, args=args)


@pytest.fixture(scope="session")
def browser(playwright_driver):
    """Chromium with native WebMCP (document.modelContext)."""
    browser = _launch(playwright_driver, with_webmcp=True)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def browser_without_webmcp(playwright_driver):
    """Chromium without the WebMCP flag: no document.modelContext."""
    browser = _launch(playwright_driver, with_webmcp=False)
    yield browser
    browser.close()


@pytest.fixture
def page_log():
    """The request / error record of this test's `page`; a named JupyterLab race seen on it (lite_site.UPSTREAM_RACES,
    not counted by own_page_errors) is reported as a warning, so the runs' summaries show how often it happens."""
    log = PageLog()
    yield log
    if log.upstream_races():
        warnings.warn(
            f"JupyterLab's own race(s) seen on the page (docs/UPSTREAM.md): {log.upstream_races()}", stacklevel=1
        )


@pytest.fixture
def page(browser, page_log, site_url):
    """A page (fresh context: original content) in the WebMCP browser, recorded on page_log."""
    context, page = new_recorded_page(browser, page_log)
    yield page
    context.close()


@pytest.fixture
def page_without_webmcp_log() -> PageLog:
    """The request / error record of this test's `page_without_webmcp`."""
    return PageLog()


@pytest.fixture
def page_without_webmcp(browser_without_webmcp, page_without_webmcp_log, site_url):
    """A page (fresh context) in the browser without WebMCP, recorded on page_without_webmcp_log."""
    context, page = new_recorded_page(browser_without_webmcp, page_without_webmcp_log)
    yield page
    context.close()


#: the test files that take longest (a server and its venv, the fuzz, a site author's fresh venv and build, the
#: MCP client): run first, so that with two workers (pytest-xdist, one file per worker at a time) the run does
#: not end waiting on one of them
SLOW_FIRST = (
    "test_lab_server.py",
    "test_reliability.py",
    "test_install_modes.py",
    "test_notebook7_server.py",
    "test_mcp_client.py",
    "test_two_tabs.py",
    "test_propose_browser.py",
    "test_tools.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the tests: the files of SLOW_FIRST in that order, then every other one as collected (a stable sort:
    the tests of a file keep their order). A browser test (under ``playwright-tests/``) that fails runs once more
    (pytest-rerunfailures' ``flaky`` mark), as JupyterLab's own Playwright suite retries once on CI: a page of
    several processes on a loaded 2-core machine times a race now and then. A failure that comes back fails; each
    rerun is listed in the summary with its first failure (pyproject's ``addopts``), to be found and fixed. The
    CPython suite never reruns."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))
    for item in items:
        if item.path.parent.name == "playwright-tests":
            item.add_marker(pytest.mark.flaky(reruns=1))
