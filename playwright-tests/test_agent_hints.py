"""What an agent reads to work well, in a real page with native WebMCP: the errors summary and the guidance of
``jupyter_get_context``, and the annotations the browser keeps of each tool."""

from __future__ import annotations

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_tools import assert_clean, ok

#: a demo notebook saved with the outputs of its last runs: four cells raised ZeroDivisionError (0-based indices)
SAVED_ERRORS = "ipython-beyond-plain-python.ipynb"
RAISED = [61, 62, 63, 71]

#: each getTools() entry's name and annotations, read field by field (browser objects)
ANNOTATIONS_JS = """async () => Object.fromEntries((await document.modelContext.getTools()).map(t => [t.name,
    t.annotations ? Object.fromEntries(Object.keys(t.annotations).map(k => [k, t.annotations[k]])) : null]))"""


def test_errors_summary_lists_the_cells_that_raised_and_follows_runs(page, page_log, site_url):
    open_notebook(page, site_url, SAVED_ERRORS, toolsets=None)  # the default page: get_context is there
    summary = ok(page, "jupyter_get_context", {"includeErrors": True})["errors"]
    assert summary["path"] == SAVED_ERRORS and summary["count"] == 4 and summary["truncated"] is False
    assert [c["index"] for c in summary["cells"]] == RAISED
    assert {(c["ename"], c["evalue"]) for c in summary["cells"]} == {("ZeroDivisionError", "float division by zero")}
    # the ids are the cells' own, and the error's output reads the traceback the person sees
    first = summary["cells"][0]
    [cell] = ok(page, "jupyter_get_cells", {"cellIds": [first["cellId"]]})["cells"]
    assert cell["index"] == 61 and summary["uri"] == f"notebook://{SAVED_ERRORS}"
    traceback = ok(page, "jupyter_get_output", {"cellId": first["cellId"], "outputIndex": first["outputIndex"]})["text"]
    assert "ZeroDivisionError" in traceback and "\x1b" not in traceback
    # a cell the agent runs that raises joins the list; clearing a cell's outputs takes it off
    added = ok(page, "jupyter_insert_cell", {"source": "raise ValueError('no answer yet')"})["cell"]
    ran = ok(page, "jupyter_run_cells", {"cellIds": [added["id"]]}, timeout=KERNEL_TIMEOUT_MS)
    assert ran["results"][0]["status"] == "error"
    ok(page, "jupyter_clear_outputs", {"cellIds": [first["cellId"]]})
    after = ok(page, "jupyter_get_context", {"includeErrors": True})["errors"]
    assert [c["index"] for c in after["cells"]] == [62, 63, 71, 84]
    assert (after["cells"][-1]["cellId"], after["cells"][-1]["ename"], after["cells"][-1]["evalue"]) == (
        added["id"],
        "ValueError",
        "no answer yet",
    )
    # without the flag nothing of it is read
    assert "errors" not in ok(page, "jupyter_get_context")
    assert_clean(page_log, site_url)


def test_guidance_in_get_context_with_the_sites_paragraph(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb", toolsets=None)
    guidance = ok(page, "jupyter_get_context", {"includeGuidance": True})["guidance"]
    assert guidance.startswith("How to work in this notebook page")
    assert "expectedSourceHash" in guidance and "jupyter_wait_for_result" in guidance and "Propose mode" in guidance
    # the demo site's contribution (lite/content/.webmcp/course_tools.py) adds its paragraph last
    assert guidance.endswith("write answers only under course/answers/.")
    assert "\n\nOn this course site, check a student's exercise with check_exercise" in guidance
    assert len(guidance.encode()) < 2048  # under 2 KB
    assert "guidance" not in ok(page, "jupyter_get_context")
    assert_clean(page_log, site_url)


def test_the_browser_keeps_the_webmcp_hints_of_every_tool(page, page_log, site_url):
    """Chromium's native WebMCP keeps readOnlyHint and untrustedContentHint of a tool's annotations (and drops the MCP
    hints: they reach MCP clients through MCP-B, test_mcp_b.py): the tools that return the page's text say so."""
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    listed = page.evaluate(ANNOTATIONS_JS)
    for name in ("jupyter_get_context", "jupyter_list_workspace", "jupyter_get_changes", "jupyter_get_cell_access"):
        assert listed[name]["untrustedContentHint"] is True and listed[name]["readOnlyHint"] is True, (
            name,
            listed[name],
        )
    assert listed["jupyter_delete_cell"]["readOnlyHint"] is False
    assert not any("destructiveHint" in (hints or {}) for hints in listed.values()), listed["jupyter_delete_cell"]
    assert_clean(page_log, site_url)
