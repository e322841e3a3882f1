"""Review threads in the real JupyterLab, as the agent: a comment on a source range and one on an output,
anchors through the person's harmless edit and through the quoted text going away, and threads that persist
through save and reload (they live in the notebook's metadata)."""

from __future__ import annotations

from lite_site import open_notebook, wait_for_bridge
from test_tools import ok

NOTEBOOK = "ipython-beyond-plain-python.ipynb"


def threads(page) -> dict[str, dict]:
    return {t["id"]: t for t in ok(page, "jupyter_list_comments", {"status": "all"})["threads"]}


def test_agent_comments_on_a_range_and_an_output_and_they_persist(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    cells = ok(page, "jupyter_get_cells", {"includeOutputs": True, "endIndex": 40})["cells"]
    code = next(c for c in cells if c["type"] == "code" and "\n" in c["source"] and len(c["source"]) > 20)
    with_output = next(c for c in cells if c["type"] == "code" and c.get("outputs"))
    quote = code["source"].split("\n")[0].strip()[:12]
    assert code["source"].count(quote) == 1
    ranged = ok(page, "jupyter_create_comment", {"cellId": code["id"], "quote": quote, "body": "Why this line?"})[
        "thread"
    ]
    on_output = ok(
        page, "jupyter_create_comment", {"cellId": with_output["id"], "outputIndex": 0, "body": "Is this output right?"}
    )["thread"]
    now = threads(page)
    assert now[ranged["id"]]["state"] == "exact" and now[ranged["id"]]["anchor"]["kind"] == "range"
    assert now[on_output["id"]]["state"] == "exact" and now[on_output["id"]]["anchor"]["kind"] == "output"

    # the person adds a line above, in the real editor: the range follows its text
    page.locator(".jp-Notebook .jp-Cell").nth(code["index"]).locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("# a note from the person\n")
    page.wait_for_timeout(300)
    moved = threads(page)[ranged["id"]]
    assert moved["state"] in ("exact", "reanchored") and moved["selection"]["start"]["line"] == 1, moved

    # the quoted text goes away: orphaned, never a guess
    current = ok(page, "jupyter_get_cells", {"cellIds": [code["id"]]})["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {"cellId": code["id"], "source": "pass", "expectedSourceHash": current["sourceHash"]},
    )
    assert threads(page)[ranged["id"]]["state"] == "orphaned"

    ok(page, "jupyter_reply_comment", {"threadId": on_output["id"], "body": "Checked: it is."})
    ok(page, "jupyter_save_notebook")
    page.reload()
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    wait_for_bridge(page, 60_000)
    after = threads(page)
    assert set(after) >= {ranged["id"], on_output["id"]}
    assert [m["body"] for m in after[on_output["id"]]["messages"]] == ["Is this output right?", "Checked: it is."]
    assert after[ranged["id"]]["state"] == "orphaned"
    assert not page_log.own_page_errors()
