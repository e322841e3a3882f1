"""Toolsets per page, outputs by uri and the change feed that follows typing, in Chromium with native WebMCP, on one
page: ``?toolsets=review`` registers only those (and the discovery tool), the discovery tool brings the others (the
page's toolchange fires), an output is fetched by its uri, and a burst of real keyboard typing is one change.
(The default page's budget is checked by the core scenarios in every install mode: agent_scenarios.py.)"""

from __future__ import annotations

import json

from host_memory import MemoryWorkspace
from lite_site import open_notebook
from test_tools import assert_clean, call, ok
from webmcp_bridge.session.bridge import build_bridge

NOTEBOOK = "notebook-running-code.ipynb"

#: the page's own agent call, started and left running (page.webmcp.call_tool would hold this test until it returns)
START_CALL = """([name, args]) => {
    window.pendingCall = (async () => {
        const tool = (await document.modelContext.getTools()).find(t => t.name === name);
        const result = await document.modelContext.executeTool(tool, args);
        window.pendingCallDone = performance.now();
        return typeof result === 'string' ? JSON.parse(result) : result;
    })();
}"""


def toolset_tools(*names: str) -> set[str]:
    registry = build_bridge(MemoryWorkspace({})).registry
    return {t.name for ts in registry.toolsets() if ts.name in names for t in ts.tools}


def test_a_page_chooses_its_toolsets_and_the_agent_follows_outputs_and_typing(page, page_log, site_url):
    status = open_notebook(page, site_url, NOTEBOOK, toolsets="review")
    review = toolset_tools("review", "toolsets")
    assert len(review) == 8 and status["state"] == "ready" and status["tools"] == len(review), status
    assert {t["name"] for t in page.webmcp.tools()} == review
    # native WebMCP: the tools are registered without an outputSchema, and a result carries its payload once, as its
    # text (its clients show the model the whole result)
    assert status["outputSchema"] == {"state": "off"}
    assert all("outputSchema" not in t for t in page.webmcp.tools())
    listing = page.webmcp.call_tool("jupyter_toolsets", {})
    assert set(listing) == {"content", "isError"} and json.loads(listing["content"][0]["text"])["toolsets"]

    # the discovery tool turns the notebooks and access toolsets on: registered at once, the page's toolchange fires
    page.evaluate(
        "() => { window.toolChanges = 0; document.modelContext.addEventListener('toolchange', () => "
        "window.toolChanges++); }"
    )
    turned = ok(page, "jupyter_toolsets", {"enable": ["notebooks", "access"]})
    wanted = toolset_tools("review", "toolsets", "notebooks", "access")
    assert turned["changed"] == ["notebooks", "access"] and turned["registeredToolCount"] == len(wanted)
    page.wait_for_function("n => window.webmcpBridge.status.tools === n && window.toolChanges > 0", arg=len(wanted))
    assert {t["name"] for t in page.webmcp.tools()} == wanted

    # an output fetched by the address its listing gives: the notebook's once, the cell's id and the output's index
    listing = ok(page, "jupyter_get_cells", {"includeOutputs": True, "endIndex": 8})
    cells = listing["cells"]
    printed = next(c for c in cells if c.get("outputs"))
    listed = printed["outputs"][0]
    assert listed == {
        "index": 0,
        "uri": f"{listing['uri']}/cells/{printed['id']}/outputs/0",
        "outputType": "stream",
        "mimeType": "text/plain",
        "bytes": 3,
        "preview": "10\n",
    }  # stdout
    by_uri = ok(page, "jupyter_get_output", {"uri": listed["uri"]})
    assert by_uri["text"] == "10\n" and by_uri == ok(
        page, "jupyter_get_output", {"cellId": printed["id"], "outputIndex": 0}
    )
    bad, result = call(page, "jupyter_get_output", {"uri": "notebook://../x.ipynb/cells/c/outputs/0"})
    assert result["isError"] is True and bad["error"] == "INVALID_ARGUMENT"

    # a burst of real typing in a cell is one change, told once the typing pauses. Keys typed on a loaded machine can
    # reach the page with real pauses between them (then they are several bursts, as the person's would be): the
    # page's own key times say whether a typing was one burst, and up to five typings are tried to get one.
    target = next(c for c in cells if c["type"] == "code" and c["source"] == "a = 10")
    editor = page.locator(".jp-Notebook .jp-Cell").nth(target["index"]).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    page.evaluate(
        "el => { window.keyTimes = []; el.addEventListener('keydown', () => window.keyTimes.push(performance.now())); "
        "}",
        editor.element_handle(),
    )
    typed = " + 5  # typed"
    seen = []
    for _ in range(5):
        mark = ok(page, "jupyter_get_changes")["seq"]
        page.evaluate("() => { window.keyTimes.length = 0; }")
        page.evaluate(START_CALL, ["jupyter_get_changes", {"since": mark, "wait": 12}])
        page.keyboard.type(typed)  # as fast as the driver sends keys (a person types about 100 ms apart)
        typing_ended = page.evaluate("() => performance.now()")
        told = page.evaluate("async () => await window.pendingCall")
        payload = json.loads(told["content"][0]["text"])
        assert told["isError"] is False, payload
        times = page.evaluate("() => window.keyTimes")
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        seen.append((round(max(gaps)), [(c["actor"], c["count"]) for c in payload["changes"]]))
        first = payload["changes"][0]
        assert (first["actor"], first["kind"], first["cellId"]) == ("person", "edit", target["id"]), payload
        if (
            len(times) == len(typed) and max(gaps) < 250 and times[-1] - times[0] < 2000
        ):  # one burst, as the page saw it
            # one change (its count is the entry's: every key of this typing, and of earlier ones within 10 s)
            assert len(payload["changes"]) == 1 and first["count"] >= len(typed) and "typing" not in first, (
                payload,
                gaps,
            )
            assert (
                page.evaluate("() => window.pendingCallDone") >= typing_ended
            )  # told after the typing, not on a keystroke
            again = ok(page, "jupyter_get_changes", {"since": payload["seq"], "wait": 1})
            assert again["changes"] == [], again  # told once
            break
        ok(page, "jupyter_get_changes", {"since": payload["seq"], "wait": 3})  # the rest of a broken typing
    else:
        raise AssertionError(f"the page never saw one unbroken burst of typing (longest gap ms, changes told): {seen}")
    assert_clean(page_log, site_url)
