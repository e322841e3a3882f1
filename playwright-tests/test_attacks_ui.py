"""Attacks on what the person sees and on who may talk to the page, replayed in a real Chromium.

- A proposal whose code holds a right-to-left override (U+202E) and other invisible characters: each is shown as
  a mark ``⟦U+202E⟧``, the box says how many there are, lines wrap (nothing past the right edge), and Accept stays
  disabled until the person has had the whole code in view (scrolled to its end, or "Show all").
- A batch proposal names its cells by position and first line, as the person finds them.
- The demo site's Content-Security-Policy holds ``frame-ancestors 'self'``, ``base-uri 'self'`` and
  ``form-action 'self'``, and a page of another origin (another local port) cannot frame it.
- With the MCP-B option, on a host that sets no headers (so the frame does load), a page of another origin that
  frames the site gets no ``mcp-server-ready`` and no answer to ``initialize``, while the framed page's own window
  still gets its answer.

The tests act as the agent (``document.modelContext``) and as the person (mouse and wheel on the boxes).
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from urllib.request import urlopen

import pytest
from playwright.sync_api import expect

from lite_site import FINAL_STATES, PageLog, lab_url, new_recorded_page, open_notebook
from test_propose_browser import NOTEBOOK, box_for, finish_call, start_call, turn_propose_on
from test_tools import assert_clean, ok

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402
from sitebuild.util import CACHE, BuildError  # noqa: E402

ACCEPT = ".webmcp-bridge-proposal-accept"
LISTING = ".webmcp-bridge-proposal-diff"
MARK = ".webmcp-bridge-invisible"
#: the three directives that never fall back to default-src
DIRECTIVES = ("frame-ancestors 'self'", "base-uri 'self'", "form-action 'self'")

#: a Trojan Source line: displayed with its bidi controls it reads as a comment after "user", but the string holds
#: all of it; then a line far wider than the box, and enough lines that the listing scrolls
TROJAN = 'access = "user\u202e \u2066# admin\u2069 \u2066"'
WIDE = "x = 1" + " " * 3000 + "; print('far right')"
CODE = "\n".join([TROJAN, WIDE, *[f"n{i} = {i}" for i in range(80)], "print('the end', access == 'user')"])


def listing_state(box) -> dict:
    """What the listing shows: its sizes (rounded px) and scroll position."""
    return box.locator(LISTING).evaluate(
        "n => ({scrollHeight: n.scrollHeight, clientHeight: n.clientHeight, scrollTop: n.scrollTop,"
        " scrollWidth: n.scrollWidth, clientWidth: n.clientWidth})"
    )


def test_invisible_characters_are_marked_and_accept_waits_for_the_whole_code(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    turn_propose_on(page)
    start_call(page, "run", "jupyter_run_code", {"code": CODE})
    box = box_for(page, tool="jupyter_run_code")

    # each invisible character is a mark of its own, in place; the box says how many the code holds
    marks = box.locator(MARK)
    assert marks.all_inner_texts() == ["⟦U+202E⟧", "⟦U+2066⟧", "⟦U+2069⟧", "⟦U+2066⟧"]
    expect(marks.first).to_be_visible()
    first_line = box.locator(".webmcp-bridge-diff-line").first
    assert first_line.text_content() == 'access = "user⟦U+202E⟧ ⟦U+2066⟧# admin⟦U+2069⟧ ⟦U+2066⟧"'
    assert not any(ch in box.text_content() for ch in "\u202e\u2066\u2069")
    flag = box.locator(".webmcp-bridge-proposal-flag")
    expect(flag).to_be_visible()
    assert flag.inner_text().startswith("Contains 4 invisible characters")

    # no hidden overflow: the wide line wraps; the listing scrolls, and until its end was shown Accept is disabled
    state = listing_state(box)
    assert state["scrollWidth"] <= state["clientWidth"], state
    assert state["scrollHeight"] > state["clientHeight"] > 0, state
    accept = box.locator(ACCEPT)
    expect(accept).to_be_disabled()
    box.locator(".webmcp-bridge-proposal-hint").wait_for()
    accept.click(force=True)  # the person's click on the disabled button does nothing
    assert box.count() == 1
    box.locator(LISTING).hover()
    page.mouse.wheel(0, state["scrollHeight"] // 2)  # half way: still not all of it
    page.wait_for_function(f"() => document.querySelector('{LISTING}').scrollTop > 0")
    expect(accept).to_be_disabled()
    while True:  # the person scrolls on until the last line shows
        page.mouse.wheel(0, state["scrollHeight"])
        now = listing_state(box)
        if now["scrollTop"] + now["clientHeight"] >= now["scrollHeight"] - 2:
            break
    expect(accept).to_be_enabled()
    assert box.locator(".webmcp-bridge-proposal-hint").count() == 0
    accept.click()
    payload, result = finish_call(page, "run", timeout=120_000)
    assert result["isError"] is False and payload["status"] == "ok", payload
    assert "the end False" in str(payload)  # what ran is what the marks showed: the string is not "user"

    # "Show all" lifts the height limit: the whole code is in the box, and Accept is enabled at once
    start_call(page, "run2", "jupyter_run_code", {"code": CODE})
    box = box_for(page, tool="jupyter_run_code")
    expect(box.locator(ACCEPT)).to_be_disabled()
    box.locator(".webmcp-bridge-proposal-expand").click()
    expect(box.locator(ACCEPT)).to_be_enabled()
    state = listing_state(box)
    assert state["scrollHeight"] <= state["clientHeight"] + 2, state
    box.locator(".webmcp-bridge-proposal-deny").click()
    payload, _ = finish_call(page, "run2")
    assert payload["status"] == "denied"
    assert_clean(page_log, site_url)


def test_a_batch_header_names_cells_by_position_and_first_line(page, page_log, site_url):
    open_notebook(page, site_url, NOTEBOOK)
    cells = ok(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 6})["cells"]
    assert [c["source"] for c in cells[3:5]] == ["a = 3", "a"]
    turn_propose_on(page)
    edits = [
        {"op": "update", "cellId": cells[3]["id"], "source": "a = 4", "expectedSourceHash": cells[3]["sourceHash"]},
        {"op": "insert", "referenceCellId": cells[4]["id"], "source": "print(a)"},
        {"op": "move", "cellId": cells[4]["id"], "referenceCellId": cells[3]["id"], "position": "above"},
    ]
    start_call(page, "batch", "jupyter_apply_edits", {"edits": edits})
    box = box_for(page, tool="jupyter_apply_edits")
    heads = box.locator(".webmcp-bridge-diff-head").all_inner_texts()
    assert heads == [
        "@ edit 1 of 3: change cell 4 «a = 3»",
        "@ edit 2 of 3: insert a code cell below cell 5 «a»",
        "@ edit 3 of 3: move cell 5 «a» above cell 4 «a = 3»",
    ]
    assert not any(c["id"] in " ".join(heads) for c in cells)  # positions and lines, no ids
    expect(box.locator(ACCEPT)).to_be_enabled()  # a short listing fits: shown whole at once
    box.locator(".webmcp-bridge-proposal-deny").click()
    payload, _ = finish_call(page, "batch")
    assert payload["status"] == "denied"
    assert_clean(page_log, site_url)


# -- frames and origins --------------------------------------------------------------------------------------

#: the page of another origin: it frames the site and records every message a frame posts to it
FOREIGN_PAGE = """<!doctype html><meta charset="utf-8"><title>another origin</title>
<script>
  window.__fromFrame = [];
  window.__frameLoads = 0;
  addEventListener('message', e => window.__fromFrame.push({origin: e.origin,
    data: JSON.parse(JSON.stringify(e.data ?? null))}));
</script>
"""


@pytest.fixture
def foreign_origin():
    """A page on another local port (another origin); ``frame_site`` adds the iframe that frames a site in it."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "index.html").write_text(FOREIGN_PAGE, encoding="utf-8")
        server = make_server(Path(folder), port=0, quiet=True, headers={})
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_address[1]}"
        server.shutdown()
        server.server_close()


def frame_site(page, foreign: str, src: str):
    """Open the foreign page, add its iframe with ``src`` already set, and return the frame once that document
    loaded. The iframe is made with its address: an iframe inserted without one fires a load for its first
    about:blank, which a wait would take for the site's."""
    page.goto(f"{foreign}/index.html")
    page.evaluate(
        """src => { const frame = document.createElement('iframe');
        Object.assign(frame, {id: 'site', width: 1000, height: 700, src});
        frame.addEventListener('load', () => window.__frameLoads++);
        document.body.append(frame); }""",
        src,
    )
    page.wait_for_function("() => window.__frameLoads > 0", timeout=60_000)
    return page.locator("#site").element_handle().content_frame()


def test_the_site_csp_has_the_frame_base_and_form_directives_and_another_origin_cannot_frame_it(
    page, page_log, site_url, foreign_origin
):
    with urlopen(f"{site_url}/lab/index.html") as response:
        csp = response.headers["Content-Security-Policy"]
    directives = [d.strip() for d in csp.split(";")]
    assert all(d in directives for d in DIRECTIVES), csp
    frame = frame_site(page, foreign_origin, lab_url(site_url, NOTEBOOK))
    # the browser refused the document: the frame holds its error page, no JupyterLab, no bridge
    assert not frame.url.startswith(site_url), frame.url
    assert frame.evaluate("() => !window.jupyterapp && !window.webmcpBridge")


@pytest.fixture(scope="module")
def mcp_b_site_without_headers():
    """The demo site built with the MCP-B option, served with no headers at all (a host like GitHub Pages), so a
    page of another origin can frame it."""
    try:
        folder = build_site(output=CACHE / "site-mcp-b", mcp_b=True)
    except BuildError as exc:
        pytest.fail(f"site build failed: {exc}")
    server = make_server(folder, port=0, quiet=True, headers={})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


#: the MCP messages a client of another origin sends to a framed page: on the iframe transport's channel and on
#: the tab transport's, a readiness check and an initialize request
PROBES_JS = """() => {
    const frame = document.getElementById('site').contentWindow;
    for (const channel of ['mcp-iframe', 'mcp-default']) {
        frame.postMessage({channel, type: 'mcp', direction: 'client-to-server', payload: 'mcp-check-ready'}, '*');
        frame.postMessage({channel, type: 'mcp', direction: 'client-to-server', payload: {jsonrpc: '2.0', id: channel,
            method: 'initialize', params: {protocolVersion: '2025-06-18', capabilities: {},
            clientInfo: {name: 'another-origin', version: '1'}}}}, '*');
    }
}"""

#: in the framed page: an MCP client on its own window (the tab transport), initialize only; its answer or null
OWN_WINDOW_CLIENT_JS = """() => new Promise(resolve => {
    const listener = event => {
        const d = event.data;
        if (event.source !== window || !d || d.channel !== 'mcp-default' || d.direction !== 'server-to-client') return;
        if (d.payload && d.payload.id === 'own') { removeEventListener('message', listener); resolve(d.payload); }
    };
    addEventListener('message', listener);
    setTimeout(() => resolve(null), 60000);
    window.postMessage({channel: 'mcp-default', type: 'mcp', direction: 'client-to-server', payload: {jsonrpc: '2.0',
        id: 'own', method: 'initialize', params: {protocolVersion: '2025-06-18', capabilities: {},
        clientInfo: {name: 'own-window', version: '1'}}}}, window.location.origin);
})"""


def test_with_mcp_b_a_cross_origin_frame_gets_no_mcp_answer(
    browser_without_webmcp, mcp_b_site_without_headers, foreign_origin
):
    site = mcp_b_site_without_headers
    log = PageLog()
    context, page = new_recorded_page(browser_without_webmcp, log)
    try:
        frame = frame_site(page, foreign_origin, lab_url(site, "jupyterlite-empty.ipynb"))
        assert frame.url.startswith(site), frame.url
        frame.wait_for_function(
            "states => !!window.webmcpBridge && states.includes(window.webmcpBridge.status.state)",
            arg=list(FINAL_STATES),
            timeout=120_000,
        )
        assert frame.evaluate("() => window.webmcpBridge.status.polyfill") == "mcp-b"
        # the framed page notes every message its parent posts, so the test knows when the probes were handled
        frame.evaluate("""() => { window.__fromParent = 0;
            addEventListener('message', e => { if (e.source === window.parent) window.__fromParent++; }); }""")
        assert page.evaluate("() => window.__fromFrame") == []  # no mcp-server-ready announced to this origin
        page.evaluate(PROBES_JS)
        frame.wait_for_function("() => window.__fromParent === 4")
        # the page's own window is still served (the server is up and answering) ...
        own = frame.evaluate(OWN_WINDOW_CLIENT_JS)
        assert own is not None and own["result"]["serverInfo"]["name"], own
        # ... and after that answer, a marker posted to the parent arrives after anything posted before it
        frame.evaluate("() => window.parent.postMessage({marker: 'done'}, '*')")
        page.wait_for_function("() => window.__fromFrame.some(m => m.data && m.data.marker === 'done')")
        assert page.evaluate("() => window.__fromFrame") == [{"origin": site, "data": {"marker": "done"}}]
        # how: the iframe transport is off, the tab transport takes the page's own origin only
        assert frame.evaluate("() => window.__webModelContextOptions.transport") == {
            "tabServer": {"allowedOrigins": [site]},
            "iframeServer": False,
        }
    finally:
        context.close()
