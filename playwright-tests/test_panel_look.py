"""The person's side as a person sees it, in JupyterLab's light, dark and dark high-contrast themes, at 1440x900 and
1280x720: the Agent panel (Activity with an agent's edit, its Diff open and a call waiting for the person; Comments;
Access), a cell's markers and a Propose box. Each state is checked by the accessibility engine axe-core (the pinned
npm package, its script injected by the test: nothing loads from another origin) with no serious or critical
violation in the panel, the boxes and the markers, and by a layout check: nothing in the panel is wider than the
sidebar (at the default width and the narrowest JupyterLab allows) and no marker leaves its cell's prompt area.

The screenshots of the panel, a Propose box and the Activity in the light and dark themes at 1440x900 are the README's
(docs/images/), written here each run so they stay current; the others go to the test's temporary folder.
Notebook 7 gets the same layout and accessibility checks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from agent_scenarios import open_in
from lite_site import EVERY_TOOLSET, axe_source, choose
from test_panel import PANEL, call, cell, context_menu, open_panel, section
from test_propose_browser import BOX, box_for, start_call

DEMO = "jupyterlite-demo-python.ipynb"
IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
#: the themes JupyterLab ships, and the panel's background in each (the theme is in place once it is)
THEMES = {
    "light": ("JupyterLab Light", "rgb(255, 255, 255)"),
    "dark": ("JupyterLab Dark", "rgb(33, 33, 33)"),
    "high-contrast": ("JupyterLab Dark High Contrast", "rgb(17, 17, 17)"),
}
SIZES = ((1440, 900), (1280, 720))
#: what axe-core looks at: the panel, the Propose boxes, the cell markers
OURS = (PANEL, BOX, ".webmcp-bridge-markers")

#: JupyterLite's page gives its <body> no height and "overflow: hidden" (JupyterLab's shell is positioned in it), so
#: axe-core takes every text as clipped away and checks no contrast; while it runs, the body's overflow is visible
#: (which moves nothing: the shell is absolutely placed in the viewport)
AXE_RUN = """async (selectors) => {
  const include = selectors.filter(s => document.querySelector(s)).map(s => [s]);
  const overflow = document.body.style.overflow;
  document.body.style.overflow = 'visible';
  let result;
  try {
    result = await window.axe.run({ include }, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    });
  } finally {
    document.body.style.overflow = overflow;
  }
  const contrast = (list) => list.filter(p => p.id === 'color-contrast').flatMap(p => p.nodes);
  const ratios = contrast(result.passes).map(n => n.any.find(a => a.data?.contrastRatio)?.data.contrastRatio)
    .filter(Boolean);
  const unsure = contrast(result.incomplete).map(n => [n.target.join(' '), n.any[0]?.message ?? '']);
  return {
    violations: result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => [n.target.join(' '), n.failureSummary]).slice(0, 5) })),
    checked: ratios.length, lowest: ratios.length ? Math.min(...ratios) : null, unsure: unsure.slice(0, 8),
    unsureCount: unsure.length,
  };
}"""

#: every element of the panel that sticks out of it, and the panel's own horizontal overflow
PANEL_OVERFLOW = """(selector) => {
  const root = document.querySelector(selector);
  const box = root.getBoundingClientRect();
  const out = [];
  if (root.scrollWidth > root.clientWidth + 1) out.push(`panel: scrollWidth ${root.scrollWidth} > ${root.clientWidth}`);
  for (const el of root.querySelectorAll('*')) {
    if (!el.getClientRects().length) continue;
    const r = el.getBoundingClientRect();
    if (r.width && (r.right > box.right + 1 || r.left < box.left - 1)) {
      const at = (a, b) => `${Math.round(a)}..${Math.round(b)}`;
      const where = `${at(r.left, r.right)} of ${at(box.left, box.right)}`;
      out.push(`${el.tagName}.${el.className} ${where}`);
    }
    if (el.tagName === 'BUTTON' && el.scrollWidth > el.clientWidth + 1) out.push(`clipped button: ${el.textContent}`);
  }
  return { width: Math.round(box.width), out };
}"""

#: every marker badge outside its cell's prompt area, or with its text clipped
MARKERS_OUT = """() => {
  const out = [];
  let seen = 0;
  for (const badge of document.querySelectorAll('.webmcp-bridge-badge')) {
    const cell = badge.closest('.jp-Cell');
    const prompt = cell.querySelector('.jp-InputPrompt') || cell;
    const r = badge.getBoundingClientRect(), c = cell.getBoundingClientRect(), p = prompt.getBoundingClientRect();
    if (!r.width) continue;
    seen += 1;
    if (r.left < c.left - 0.5 || r.right > Math.max(p.right, c.left + 64) + 0.5) {
      out.push(`${badge.textContent} ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
    if (badge.scrollWidth > badge.clientWidth + 1) out.push(`clipped: ${badge.textContent}`);
  }
  return { seen, out };
}"""


def use_theme(page: Page, theme: str) -> None:
    """Switch JupyterLab to ``theme`` (a key of THEMES) with its own command; wait until its colours are in place."""
    name, background = THEMES[theme]
    page.evaluate("name => window.jupyterapp.commands.execute('apputils:change-theme', { theme: name })", name)
    page.wait_for_function(
        "([selector, bg]) => getComputedStyle(document.querySelector(selector)).backgroundColor === bg",
        arg=[PANEL, background],
        timeout=30_000,
    )
    page.wait_for_timeout(300)  # the theme's icons and fonts settle


def check_axe(page: Page, where: str) -> dict:
    """Run axe-core on the panel, the boxes and the markers; no serious or critical violation. Returns its figures."""
    found = page.evaluate(AXE_RUN, list(OURS))
    grave = [v for v in found["violations"] if v["impact"] in ("serious", "critical")]
    assert grave == [], f"{where}: {json.dumps(grave, indent=1)}"
    assert found["checked"] > 20, found  # the texts were looked at
    print(
        f"axe {where}: no serious or critical violation; {found['checked']} texts checked, lowest contrast "
        f"{found['lowest']}:1; other findings: {[(v['id'], v['impact']) for v in found['violations']]}"
    )
    return found


def check_layout(page: Page, where: str) -> None:
    """Nothing in the panel wider than it; every marker inside its cell's prompt area, unclipped."""
    panel = page.evaluate(PANEL_OVERFLOW, PANEL)
    assert panel["out"] == [], f"{where} (panel {panel['width']} px): {panel['out']}"
    markers = page.evaluate(MARKERS_OUT)
    assert markers["seen"] >= 2 and markers["out"] == [], f"{where}: {markers}"


def stage(page: Page) -> None:
    """What the screenshots show: the agent commented, edited a cell (its Diff open from the row, by keyboard) and
    has a change waiting in Propose mode; the person restricted a cell."""
    cells = call(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 8})["cells"]
    by_source = {c["source"]: c for c in cells}
    target, edited = by_source["a = 3"], by_source["a"]
    call(page, "jupyter_create_comment", {"cellId": target["id"], "body": "Why is a = 3 here?"})
    call(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 3})
    call(
        page,
        "jupyter_update_cell",
        {"cellId": edited["id"], "source": "a  # the value", "expectedSourceHash": edited["sourceHash"]},
    )
    context_menu(page, target["index"] + 2, "Cycle agent access")
    expect(cell(page, target["index"] + 2).locator(".webmcp-bridge-badge-lock")).to_have_text("read")
    activity = section(page, "activity")
    diff = activity.locator('.webmcp-bridge-activity-row[data-key^="change:"]').filter(has_text="edited").first
    diff.locator('[data-action="show-edits"]').press("Enter")  # one key from the row to the diff
    expect(activity.locator(".webmcp-bridge-edits .webmcp-bridge-diff-add")).to_have_text(["+ a  # the value"])
    choose(page.locator(f'{PANEL} select[data-action="mode"]'), "propose")
    page.wait_for_function("() => window.webmcpBridge.status.mode === 'propose'")
    start_call(
        page,
        "wait",
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "a = 4", "expectedSourceHash": target["sourceHash"]},
    )
    box_for(page, tool="jupyter_update_cell")
    # the call that waits for the person reads as waiting, not running
    expect(activity.locator(".webmcp-bridge-outcome-waiting")).to_have_text("waiting for you")
    # icons, not emoji: no text of the panel or the markers needs an emoji font
    shown = page.evaluate(
        "() => [...document.querySelectorAll('#webmcp-bridge-panel, .webmcp-bridge-markers')]"
        ".map(n => n.textContent).join('')"
    )
    assert not re.search("[\U0001f300-\U0001faff\u2600-\u27bf]", shown), shown


def shoot(page: Page, folder: Path, scratch: Path, theme: str, size: tuple[int, int]) -> None:
    """Screenshots of the panel, the Propose box (with its cell) and Activity into ``folder``, of the whole page into
    ``scratch``."""
    folder.mkdir(parents=True, exist_ok=True)
    page.locator(PANEL).evaluate("node => { node.scrollTop = 0; }")
    page.locator(PANEL).screenshot(path=folder / f"panel-{theme}.png")
    page.locator(BOX).first.locator("xpath=ancestor::div[contains(@class, 'jp-Cell')][1]").screenshot(
        path=folder / f"propose-{theme}.png"
    )
    section(page, "activity").screenshot(path=folder / f"activity-{theme}.png")
    scratch.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=scratch / f"page-{theme}-{size[0]}x{size[1]}.png")


def narrowest_sidebar(page: Page) -> int:
    """Drag the right sidebar's edge as far right as JupyterLab lets it go; its width then."""
    stack = page.locator("#jp-right-stack")
    box = stack.bounding_box()
    x, y = box["x"] - 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(page.viewport_size["width"] - 5, y, steps=8)
    page.mouse.up()
    page.wait_for_timeout(300)
    return round(stack.bounding_box()["width"])


def test_the_panel_boxes_and_markers_in_every_theme_at_two_widths(page, page_log, site_url, tmp_path):
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    page.emulate_media(reduced_motion="reduce")
    status = open_in(page, site_url, "lab", DEMO, toolsets=EVERY_TOOLSET)
    assert status["state"] == "ready", status
    open_panel(page)
    page.add_script_tag(content=axe_source())
    stage(page)
    # reduced motion: the agent-at-work ring does not pulse
    assert (
        page.evaluate(
            "() => { const n = document.createElement('div'); n.className = 'jp-Cell webmcp-bridge-cell-working';"
            " document.body.append(n); const a = getComputedStyle(n).animationName; n.remove(); return a; }"
        )
        == "none"
    )

    for theme in ("light", "dark", "high-contrast"):
        use_theme(page, theme)
        for size in SIZES:
            page.set_viewport_size({"width": size[0], "height": size[1]})
            page.wait_for_timeout(200)
            where = f"{theme} {size[0]}x{size[1]}"
            check_axe(page, where)
            check_layout(page, where)
            if theme != "high-contrast":
                readme = size == SIZES[0]
                shoot(page, IMAGES if readme else tmp_path / where.replace(" ", "-"), tmp_path, theme, size)
    print(f"screenshots: {IMAGES} and {tmp_path}")

    # the narrowest sidebar JupyterLab allows: still nothing sticks out
    width = narrowest_sidebar(page)
    assert width < 300, width
    check_layout(page, f"narrowest sidebar ({width} px)")
    page.screenshot(path=tmp_path / "narrowest.png")
    assert page_log.own_page_errors() == []
    assert page_log.foreign_requests(site_url, allow_content_links=True) == []


def test_the_panel_has_no_horizontal_overflow_at_the_default_width(page, page_log, site_url):
    """The sidebar as JupyterLab opens it, at 1280x720: the panel's content fits, with every section open."""
    page.set_viewport_size({"width": 1280, "height": 720})
    assert open_in(page, site_url, "lab", DEMO)["state"] == "ready"
    open_panel(page)
    check_layout_without_markers = page.evaluate(PANEL_OVERFLOW, PANEL)
    assert check_layout_without_markers["out"] == [], check_layout_without_markers
    assert check_layout_without_markers["width"] >= 200
    # with every kind of row drawn: the person's level changes, a long notice
    context_menu(page, 1, "Cycle agent access")
    context_menu(page, 2, "Cycle agent access")
    expect(section(page, "access").locator(".webmcp-bridge-access-row")).to_have_count(2)
    section(page, "access").locator(".webmcp-bridge-kernel-note > summary").click()
    panel = page.evaluate(PANEL_OVERFLOW, PANEL)
    assert panel["out"] == [], panel
    assert page_log.own_page_errors() == []


def test_the_panel_and_markers_fit_in_notebook7(page, page_log, site_url, tmp_path):
    page.set_viewport_size({"width": 1280, "height": 720})
    status = open_in(page, site_url, "notebooks", DEMO, toolsets=EVERY_TOOLSET)
    assert status["state"] == "ready", status
    page.evaluate("() => window.jupyterapp.shell.activateById('webmcp-bridge-panel')")
    expect(page.locator(f"#jp-right-stack {PANEL}")).to_be_visible()
    page.wait_for_selector(f'{PANEL}[data-state="ready"]', state="attached", timeout=60_000)
    page.add_script_tag(content=axe_source())
    cells = call(page, "jupyter_get_cells", {"startIndex": 0, "endIndex": 6})["cells"]
    target = next(c for c in cells if c["source"] == "a = 3")
    call(page, "jupyter_create_comment", {"cellId": target["id"], "body": "Why 3?"})
    call(
        page,
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "a = 3  # three", "expectedSourceHash": target["sourceHash"]},
    )
    expect(cell(page, target["index"]).locator(".webmcp-bridge-badge")).to_have_count(2)
    expect(cell(page, target["index"]).locator(".webmcp-bridge-badge-agent-changed")).to_have_attribute(
        "aria-label", re.compile("The agent changed this cell")
    )
    check_layout(page, "Notebook 7")
    check_axe(page, "Notebook 7 light")
    page.screenshot(path=tmp_path / "notebook7.png")
    print(f"screenshot: {tmp_path / 'notebook7.png'}")
    assert page_log.own_page_errors() == []


#: the panel's controls the person can reach with Tab, in order, and how each shows its focus
TAB_WALK = """async (count) => {
  const panel = document.querySelector('#webmcp-bridge-panel');
  const controls = [...panel.querySelectorAll('button, select, textarea, summary, [tabindex="0"]')]
    .filter(n => n.getClientRects().length && !n.disabled);
  return { controls: controls.length };
}"""


def test_every_control_is_reached_by_tab_with_visible_focus_and_the_panel_comes_back(page, page_log, site_url):
    """Tab from the panel's first control to its last: each is reached and shows a 2px focus ring; Enter on a
    section's summary folds it. A reload brings the panel back open, where it was."""
    page.set_viewport_size({"width": 1280, "height": 720})
    assert open_in(page, site_url, "lab", DEMO)["state"] == "ready"
    open_panel(page)
    context_menu(page, 3, "Cycle agent access")
    expect(section(page, "access").locator(".webmcp-bridge-access-row")).to_have_count(1)
    controls = page.evaluate(TAB_WALK, 0)["controls"]
    assert controls >= 12, controls
    page.locator(f'{PANEL} select[data-action="mode"]').focus()
    reached = []
    for _ in range(controls + 5):
        focus = page.evaluate(
            """() => { const n = document.activeElement; const s = getComputedStyle(n);
            return { inside: !!n.closest('#webmcp-bridge-panel'), what: n.tagName + ':' + (n.getAttribute('data-action')
              ?? n.textContent.slice(0, 20)), ring: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 }; }"""
        )
        if not focus["inside"]:
            break
        reached.append(focus)
        page.keyboard.press("Tab")
    assert len(reached) >= controls, (controls, [r["what"] for r in reached])
    assert [r["what"] for r in reached if not r["ring"]] == []
    # a section folds and unfolds from the keyboard
    summary = section(page, "access").locator(":scope > summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(section(page, "access")).not_to_have_attribute("open", "")
    page.keyboard.press("Enter")
    expect(section(page, "access")).to_have_attribute("open", "")

    # the person left the panel open: after a reload it is open again, with no click
    page.reload()
    page.wait_for_selector(f'{PANEL}[data-state="ready"]', state="attached", timeout=90_000)
    expect(page.locator(PANEL)).to_be_visible(timeout=15_000)
    assert page_log.own_page_errors() == []
