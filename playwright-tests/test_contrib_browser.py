"""A site's own tools in the built demo site: the course's check_exercise (registered, called by the agent, its
hidden tests left nowhere), the narrowed jupyter_write_file, the page's call and run events, and a site tool file
that raises on import (reported in the status item; every other tool works)."""

from __future__ import annotations

import json

from playwright.sync_api import Page

from lite_site import open_notebook
from test_more_tools import assert_clean, error
from test_tools import PAGE_TOOLS, ok

COURSE = "course/word-counts.ipynb"

#: before the page's scripts: keep every webmcp-bridge:call / webmcp-bridge:run event's detail (a JSON round trip
#: proves it is plain data) and note, at each of the page's toolchange events, whether the site's tool was there
RECORD_EVENTS = """(() => {
    window.__bridgeEvents = [];
    window.__toolchangeNames = [];
    // per toolchange event, whether the page's tools then held the site's check_exercise
    if (document.modelContext) document.modelContext.addEventListener('toolchange', () => {
        Promise.resolve(document.modelContext.getTools()).then(tools => window.__toolchangeNames.push(tools.some(t =>
          t.name === 'check_exercise')));
    });
    for (const type of ['webmcp-bridge:call', 'webmcp-bridge:run']) {
        window.addEventListener(type, e => window.__bridgeEvents.push({type,
          detail: JSON.parse(JSON.stringify(e.detail))}));
    }
})()"""

#: looks for the hidden tests anywhere the agent's code could reach them afterwards: the kernel's traceback cache
#: (linecache), its input history (In/_ih, _i*, the history manager's) and the person's namespace (the needles are
#: built so this code holds none)
PROBE = """
import linecache
needles = ['saw the ' + 'Cat', '__pay' + 'load__', '@@che' + 'ck-']
ip = get_ipython()
hay = [''.join(v[2] or []) for v in list(linecache.cache.values()) if len(v) > 2]
hay += [str(x) for x in ip.user_ns.get('In', [])] + [str(x) for x in ip.user_ns.get('_ih', [])]
hay += [repr(v)[:2000] for k, v in list(ip.user_ns.items()) if k not in ('In', '_ih', 'Out', '_oh', 'needles', 'hay',
  'ip')]
hay += [str(getattr(ip.history_manager, n, '')) for n in ('_i', '_ii', '_iii', '_i00')]
print('traces', sum(1 for h in hay for n in needles if n in h))
"""


def collect(page: Page, name: str, args: dict) -> dict:
    return ok(page, name, args, timeout=180_000)


def test_the_course_tool_is_called_by_the_agent_and_a_builtin_is_narrowed(page: Page, page_log, site_url):
    page.add_init_script(RECORD_EVENTS)
    status = open_notebook(page, site_url, COURSE, timeout_ms=240_000)
    assert status["state"] == "ready" and status["tools"] == len(PAGE_TOOLS) and status["diagnostics"] == [], status
    tools = {t["name"]: t for t in page.webmcp.tools()}
    assert set(tools) == PAGE_TOOLS and "hidden tests" in tools["check_exercise"]["description"]
    assert "course/answers/" in tools["jupyter_write_file"]["description"]  # the site's description of our tool
    changes = page.evaluate(
        "() => window.__toolchangeNames"
    )  # the site's tool came after tools.json's: the page was told
    assert changes and changes[-1] is True, changes

    verdict = collect(page, "check_exercise", {"exercise": "word-counts"})
    assert (verdict["status"], verdict["cellId"], verdict["passed"], verdict["total"]) == ("checked", "answer", 2, 4), (
        verdict
    )
    assert [t["passed"] for t in verdict["tests"]] == [True, False, False, True], verdict
    assert "saw the Cat" not in json.dumps(verdict)
    probe = collect(page, "jupyter_run_code", {"code": PROBE})
    assert probe["outputs"][0]["text"] == "traces 0\n", probe

    error(page, "jupyter_write_file", {"path": "course/notes.md", "content": "x"}, "INVALID_PATH")
    assert ok(page, "jupyter_write_file", {"path": "course/answers/agent.md", "content": "x"})["created"] is True
    assert ok(page, "jupyter_get_context")["diagnostics"] == []

    events = page.evaluate("() => window.__bridgeEvents")
    calls = [e["detail"] for e in events if e["type"] == "webmcp-bridge:call"]
    runs = [e["detail"] for e in events if e["type"] == "webmcp-bridge:run"]
    check = next(c for c in calls if c["tool"] == "check_exercise")
    assert check["outcome"] == "ok" and check["duration"] > 0 and check["arguments"] == '{"exercise":"word-counts"}', (
        check
    )
    assert [c["outcome"] for c in calls if c["tool"] == "jupyter_write_file"] == ["INVALID_PATH", "ok"], calls
    assert [(r["tool"], r["kind"], r["path"], r["status"], r["callId"]) for r in runs] == [
        ("check_exercise", "code", COURSE, "ok", check["callId"]),
        ("jupyter_run_code", "code", COURSE, "ok", runs[1]["callId"]),
    ], runs
    assert_clean(page_log, site_url)


BROKEN = ".webmcp/broken_tools.py"


def test_a_site_tool_file_that_raises_on_import_leaves_every_other_tool_working(page: Page, page_log, site_url):
    # the settings name one more file (as the Settings Editor or overrides.json would), and the site serves it
    def settings_with_broken_file(route):
        schemas = route.fetch().json()
        for entry in schemas:
            if entry["id"] == "jupyterlab-webmcp-bridge:plugin":
                entry["schema"]["properties"]["contributions"]["default"] = [BROKEN]
        route.fulfill(json=schemas)

    page.context.route("**/build/schemas/all_federated.json", settings_with_broken_file)
    page.context.route(
        f"**/files/{BROKEN}",
        lambda route: route.fulfill(
            body="x = 1\nraise RuntimeError('this site tool is broken')\n", content_type="text/x-python"
        ),
    )
    status = open_notebook(page, site_url, "jupyterlite-empty.ipynb", timeout_ms=240_000)
    assert status["state"] == "ready" and status["tools"] == len(PAGE_TOOLS), status
    assert [(d["name"], d["kind"], d["severity"]) for d in status["diagnostics"]] == [(BROKEN, "import", "error")], (
        status
    )
    reason = status["diagnostics"][0]["reason"]
    assert "RuntimeError: this site tool is broken (line 2)" in reason, reason
    item = page.locator(".webmcp-bridge-status")
    assert item.inner_text() == f"WebMCP: ready ({len(PAGE_TOOLS)} tools) · 1 contribution failed"
    assert f"error (import) {BROKEN}: {reason}" in item.get_attribute("title")
    assert ok(page, "jupyter_get_context")["diagnostics"] == status["diagnostics"]
    assert {t["name"] for t in page.webmcp.tools()} == PAGE_TOOLS  # the course's file still loaded
    assert ok(page, "jupyter_get_cells")["cellCount"] == 1
    error(page, "check_exercise", {"exercise": "word-counts"}, "CELL_NOT_FOUND")  # called, and says no cell defines it
    assert_clean(page_log, site_url)
