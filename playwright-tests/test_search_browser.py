"""jupyter_search on the demo site, acting as the agent through native WebMCP: hits in the open notebook (its live
model), in a notebook that is not open (read from the workspace without opening it) and in a text file; a cell the
person hides is not found, with exactly the answer of a text that is nowhere; a regular expression that backtracks
without end answers the structured error (the deadline inside the match) while another call answers."""

from __future__ import annotations

from lite_site import open_notebook
from test_more_tools import assert_clean
from test_propose_browser import finish_call, start_call
from test_tools import ok

EULER = "pytudes-euler.ipynb"  # opened
PANDAS = "handson-ml2-tools-pandas.ipynb"  # not opened: nbformat 4.4, no cell ids in the file
E1 = "cell-0091"  # def euler_1 ... """Multiples of 3 and 5: ...

HIDE = """cellId => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.context.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.id === cellId) c.sharedModel.setMetadata('webmcp_bridge', {access: 'none'});
  }
}"""

TYPE = """({cellId, text}) => {
  const cells = window.jupyterapp.shell.currentWidget.context.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.id === cellId) c.sharedModel.setSource(text + "\\n" + c.sharedModel.getSource());
  }
}"""


def test_search_finds_text_in_open_and_closed_notebooks_and_files_but_not_in_hidden_cells(page, page_log, site_url):
    open_notebook(page, site_url, EULER, toolsets=None)  # the default page: search is one toolset away
    enabled = ok(page, "jupyter_toolsets", {"enable": ["search"]})
    assert enabled["changed"] == ["search"]

    found = ok(page, "jupyter_search", {"query": r"Peter Norvig|148\.413159", "regex": True})
    by_path = {}
    for hit in found["hits"]:
        by_path.setdefault(hit["path"], []).append(hit)
    assert set(by_path) == {EULER, PANDAS, "LICENSES.md"}, found
    assert by_path[EULER][0]["kind"] == "source" and by_path[EULER][0]["uri"].startswith(f"notebook://{EULER}/cells/")
    closed = by_path[PANDAS]
    assert [(h["kind"], h["cellIndex"], h["outputIndex"], h["line"]) for h in closed] == [("output", 9, 0, 4)]
    assert "148.413159" in closed[0]["snippet"] and closed[0]["uri"] == f"notebook://{PANDAS}"
    assert [h["kind"] for h in by_path["LICENSES.md"]] == ["file"]
    assert "Peter Norvig" in by_path["LICENSES.md"][0]["snippet"]
    # the closed notebook was read without opening it
    assert PANDAS not in {d["path"] for d in ok(page, "jupyter_get_context")["openDocuments"]}

    # the live model: what the person just typed (not saved) is found
    page.evaluate(TYPE, {"cellId": "cell-0092", "text": "# typed by the person: zebra-marker"})
    typed = ok(page, "jupyter_search", {"query": "zebra-marker"})
    assert [(h["path"], h["cellId"], h["line"]) for h in typed["hits"]] == [(EULER, "cell-0092", 1)]

    text = "Multiples of 3 and 5"
    visible = ok(page, "jupyter_search", {"query": text, "glob": "*.ipynb"})
    holding = {h["cellId"] for h in visible["hits"]}
    assert E1 in holding and "source" in {h["kind"] for h in visible["hits"] if h["cellId"] == E1}

    # the person hides the cells holding it: the text is not found, with the answer of a text that is nowhere
    for cell_id in holding:
        page.evaluate(HIDE, cell_id)
    hidden = ok(page, "jupyter_search", {"query": text, "glob": "*.ipynb"})
    nowhere = ok(page, "jupyter_search", {"query": "Multiples of 3 and 9", "glob": "*.ipynb"})
    assert hidden["hits"] == [] and hidden == nowhere
    assert page_log.foreign_requests(site_url) == [] and page_log.own_page_errors() == []


#: a pattern that backtracks for minutes on any line of 48 characters or more, before the deadline inside the match
ATTACK = r"(?:.|..){24}\x00"


def test_a_pattern_that_backtracks_without_end_answers_an_error_while_another_call_answers(page, page_log, site_url):
    """The attack of the issue through the real tool: it ends with the structured error (its match stopped inside
    the engine, twice), the call started right after it answers too, and the search works again afterwards. The
    figures printed are the attack call's time in the page and the page's longest task meanwhile."""
    open_notebook(page, site_url, EULER, toolsets=None)
    ok(page, "jupyter_toolsets", {"enable": ["search"]})
    page.evaluate(
        """() => {
        window.__longest = 0;
        new PerformanceObserver(list => {
          for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
        }).observe({type: 'longtask'});
        window.__began = performance.now();
    }"""
    )
    start_call(page, "attack", "jupyter_search", {"query": ATTACK, "regex": True})
    start_call(page, "other", "jupyter_get_context", {})
    other, _ = finish_call(page, "other")
    assert other["notebook"]["path"] == EULER, other
    refused, result = finish_call(page, "attack")
    spent, longest = page.evaluate("() => [performance.now() - window.__began, window.__longest]")
    print(f"\n[search attack] {ATTACK}: answered in {spent:.0f} ms; the page's longest task meanwhile {longest:.0f} ms")
    assert result["isError"] is True and refused["error"] == "INVALID_ARGUMENT", refused
    assert refused["field"] == "query" and refused["matchSeconds"] == 0.03
    assert "backtracks too much" in refused["message"] and refused["path"] and refused["line"] >= 1
    # nothing is left set: the next search answers as usual (its time printed beside the attack's)
    page.evaluate("() => { window.__longest = 0; window.__began = performance.now(); }")
    found = ok(page, "jupyter_search", {"query": "no such text anywhere"})
    spent, longest = page.evaluate("() => [performance.now() - window.__began, window.__longest]")
    print(f"[search attack] a plain string over the same workspace: {spent:.0f} ms; longest task {longest:.0f} ms")
    assert found["hits"] == [] and found["truncated"] is False
    found = ok(page, "jupyter_search", {"query": "Peter Norvig", "glob": "*.ipynb"})
    assert {h["path"] for h in found["hits"]} == {EULER}
    assert_clean(page_log, site_url)
