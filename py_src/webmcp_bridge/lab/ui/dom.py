"""Making DOM nodes from :class:`~webmcp_bridge.lab.ui.view.El` trees, and the panel's stylesheet.

The only place the panel creates elements. A tree goes to ``dom.js`` as JSON in one crossing and is made
there with ``createElement``, ``setAttribute`` (names from the same allow-lists as :class:`El`, checked again
in JS) and ``textContent``; there is no path to ``innerHTML``, ``insertAdjacentHTML`` or an event-handler
attribute. One crossing per list, not several per element: through the FFI a 200-row list costs 100+ ms of
held page, in JS about a millisecond.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import js
from pyodide.code import run_js
from pyodide.ffi import to_js

from webmcp_bridge.lab.ffi import is_nullish
from webmcp_bridge.lab.ui.view import ATTRIBUTES, TAGS, El

STYLE_ID = "webmcp-bridge-panel-style"


@lru_cache(maxsize=1)
def helper() -> Any:
    """``dom.js``, evaluated once and configured with the allow-lists."""
    source = resources.files("webmcp_bridge.lab.ui").joinpath("dom.js").read_text(encoding="utf-8")
    js_half = run_js(source)
    js_half.configure(to_js(sorted(TAGS)), to_js(sorted(ATTRIBUTES)))
    return js_half


def build(el: El) -> Any:
    """A new DOM element for ``el`` and its children (not yet attached)."""
    return helper().build(json.dumps(el.to_json()))


def replace_children(parent: Any, *els: El) -> None:
    """Replace ``parent``'s children with new nodes for ``els``."""
    helper().replaceChildren(parent, json.dumps([el.to_json() for el in els]))


def apply_markers(notebook: Any, want: dict[str, tuple[str, list[str], El]], classes: list[str], attr: str,
                  strip_class: str, marked_class: str) -> int:
    """Put markers on the cell nodes of ``notebook`` (a Notebook widget): ``want`` maps a cell id to
    ``(signature, classes on, badge strip)``; cells not in it lose every class of ``classes`` and their strip.
    Cells whose node already carries the signature (attribute ``attr``) are skipped. Returns the cells changed."""
    payload = {cell_id: [sig, on, strip.to_json()] for cell_id, (sig, on, strip) in want.items()}
    return int(helper().applyMarkers(notebook, json.dumps(payload), json.dumps(classes), attr, strip_class, marked_class))


def cell_infos(nb_panel: Any, max_chars: int) -> list[tuple[str, str, str, int]]:
    """``(id, type, first non-blank line cut to max_chars, output count)`` of every cell, in order (one read)."""
    return [tuple(row) for row in json.loads(str(helper().cellInfos(nb_panel, max_chars)))]


def query(node: Any, selector: str) -> Any:
    """``node.querySelector(selector)``, None when nothing matches (JS null arrives as jsnull)."""
    if node is None:
        return None
    found = node.querySelector(selector)
    return None if is_nullish(found) else found


def closest(node: Any, selector: str) -> Any:
    """``node.closest(selector)`` for an element, None for anything else (text nodes, null) or no match."""
    if node is None or is_nullish(node) or not hasattr(node, "closest"):
        return None
    found = node.closest(selector)
    return None if is_nullish(found) else found


def install_style(style_id: str = STYLE_ID, css: str | None = None) -> None:
    """Add a stylesheet to the document once: a ``<style id=style_id>`` whose ``textContent`` is ``css``
    (default: the panel's :data:`CSS`). The proposal view uses it for its own sheet too."""
    if query(js.document, f"#{style_id}") is not None:
        return
    style = js.document.createElement("style")
    style.id = style_id
    style.textContent = CSS if css is None else css
    js.document.head.appendChild(style)


def remove_style(style_id: str = STYLE_ID) -> None:
    """Remove the stylesheet ``style_id`` (when its view is disposed)."""
    node = query(js.document, f"#{style_id}")
    if node is not None:
        node.remove()


# JupyterLab's theme variables, so the panel follows light and dark themes.
CSS = """
.webmcp-bridge-panel {
  display: flex; flex-direction: column; overflow: auto; min-width: 240px;
  background: var(--jp-layout-color1); color: var(--jp-ui-font-color1);
  font-family: var(--jp-ui-font-family); font-size: var(--jp-ui-font-size1);
}
.webmcp-bridge-panel-head { padding: 8px 10px 4px; border-bottom: var(--jp-border-width) solid var(--jp-border-color2); }
.webmcp-bridge-panel-head h2 { margin: 0; font-size: var(--jp-ui-font-size2); font-weight: 600; }
.webmcp-bridge-panel-head p { margin: 2px 0 0; color: var(--jp-ui-font-color2); font-size: var(--jp-ui-font-size0); }
.webmcp-bridge-section { border-bottom: var(--jp-border-width) solid var(--jp-border-color2); }
.webmcp-bridge-section > summary {
  cursor: pointer; padding: 6px 10px; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em;
  font-size: var(--jp-ui-font-size0); color: var(--jp-ui-font-color1); background: var(--jp-layout-color2);
}
.webmcp-bridge-section-body { padding: 6px 10px 10px; }
.webmcp-bridge-row { display: flex; gap: 6px; align-items: center; margin: 4px 0; flex-wrap: wrap; }
.webmcp-bridge-select, .webmcp-bridge-reply {
  background: var(--jp-input-background, var(--jp-layout-color1)); color: var(--jp-ui-font-color1);
  border: var(--jp-border-width) solid var(--jp-input-border-color, var(--jp-border-color1)); border-radius: 2px;
  font: inherit; padding: 2px 4px;
}
.webmcp-bridge-reply { width: 100%; box-sizing: border-box; resize: vertical; margin: 4px 0; }
.webmcp-bridge-button {
  font: inherit; font-size: var(--jp-ui-font-size0); cursor: pointer; padding: 2px 8px; border-radius: 2px;
  border: var(--jp-border-width) solid var(--jp-border-color1); background: var(--jp-layout-color2);
  color: var(--jp-ui-font-color1);
}
.webmcp-bridge-button:hover { background: var(--jp-layout-color3); }
.webmcp-bridge-button:disabled { opacity: 0.5; cursor: default; }
.webmcp-bridge-link {
  font: inherit; background: none; border: none; padding: 0; cursor: pointer;
  color: var(--jp-content-link-color, var(--jp-brand-color1)); text-decoration: underline;
}
.webmcp-bridge-empty, .webmcp-bridge-omitted, .webmcp-bridge-notice { color: var(--jp-ui-font-color2); margin: 4px 0; }
.webmcp-bridge-notice { color: var(--jp-warn-color0, var(--jp-ui-font-color1)); }
.webmcp-bridge-activity, .webmcp-bridge-threads, .webmcp-bridge-messages, .webmcp-bridge-access-list {
  list-style: none; margin: 0; padding: 0;
}
.webmcp-bridge-activity-row {
  display: flex; gap: 6px; align-items: baseline; flex-wrap: wrap; padding: 2px 0;
  border-bottom: var(--jp-border-width) dotted var(--jp-border-color3);
}
.webmcp-bridge-time { color: var(--jp-ui-font-color2); font-size: var(--jp-ui-font-size0); font-variant-numeric: tabular-nums; }
.webmcp-bridge-actor { font-weight: 600; }
.webmcp-bridge-actor-agent .webmcp-bridge-actor { color: var(--jp-brand-color1); }
.webmcp-bridge-outcome { font-size: var(--jp-ui-font-size0); padding: 0 4px; border-radius: 2px; }
.webmcp-bridge-outcome-ok { background: var(--jp-success-color3, transparent); }
.webmcp-bridge-outcome-error { background: var(--jp-error-color3, transparent); }
.webmcp-bridge-outcome-running { background: var(--jp-warn-color3, transparent); }
.webmcp-bridge-thread { border: var(--jp-border-width) solid var(--jp-border-color2); border-radius: 3px; margin: 6px 0; padding: 6px; }
.webmcp-bridge-thread-resolved { opacity: 0.75; }
.webmcp-bridge-thread-head { display: flex; gap: 6px; align-items: baseline; flex-wrap: wrap; }
.webmcp-bridge-state, .webmcp-bridge-status { font-size: var(--jp-ui-font-size0); color: var(--jp-ui-font-color2); }
.webmcp-bridge-state-orphaned, .webmcp-bridge-state-cell-missing, .webmcp-bridge-state-output-changed { color: var(--jp-warn-color0); }
.webmcp-bridge-quote {
  display: block; margin: 4px 0; padding: 2px 4px; white-space: pre-wrap; word-break: break-word;
  background: var(--jp-layout-color2); font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size);
}
.webmcp-bridge-message { margin: 4px 0; }
.webmcp-bridge-message .webmcp-bridge-author { font-weight: 600; margin-right: 6px; }
.webmcp-bridge-author-agent .webmcp-bridge-author { color: var(--jp-brand-color1); }
.webmcp-bridge-body { margin: 2px 0 0; white-space: pre-wrap; word-break: break-word; }
.webmcp-bridge-actions { display: flex; gap: 4px; flex-wrap: wrap; }
.webmcp-bridge-subhead { font-size: var(--jp-ui-font-size1); margin: 8px 0 4px; }
.webmcp-bridge-access-row { display: flex; gap: 6px; align-items: baseline; padding: 2px 0; }
.webmcp-bridge-access-row .webmcp-bridge-line {
  flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
  font-family: var(--jp-code-font-family); font-size: var(--jp-ui-font-size0); color: var(--jp-ui-font-color2);
}
.webmcp-bridge-level-read.webmcp-bridge-button { border-color: var(--jp-warn-color1); }
.webmcp-bridge-level-none.webmcp-bridge-button { border-color: var(--jp-error-color1); }

/* cell markers */
.jp-Cell.webmcp-bridge-cell-marked { position: relative; }
.webmcp-bridge-markers {
  position: absolute; top: 24px; left: 6px; width: 62px; z-index: 3; display: flex; flex-wrap: wrap;
  justify-content: flex-end; gap: 2px; pointer-events: none;
}
.webmcp-bridge-badge {
  pointer-events: auto; font: inherit; font-family: var(--jp-ui-font-family); font-size: 9px; line-height: 13px;
  padding: 0 3px; border-radius: 6px; border: var(--jp-border-width) solid var(--jp-border-color1);
  background: var(--jp-layout-color1); color: var(--jp-ui-font-color1); cursor: default; white-space: nowrap;
}
button.webmcp-bridge-badge { cursor: pointer; }
.webmcp-bridge-badge-lock.webmcp-bridge-level-read { border-color: var(--jp-warn-color1); }
.webmcp-bridge-badge-lock.webmcp-bridge-level-none { border-color: var(--jp-error-color1); }
.webmcp-bridge-badge-agent-run, .webmcp-bridge-badge-working { border-color: var(--jp-brand-color1); }
.jp-Cell.webmcp-bridge-cell-none { background: repeating-linear-gradient(135deg, transparent 0 10px, var(--jp-layout-color2) 10px 12px); }
.jp-Cell.webmcp-bridge-cell-working { outline: 2px solid var(--jp-brand-color1); outline-offset: -2px;
  animation: webmcp-bridge-pulse 1.2s ease-in-out infinite; }
@keyframes webmcp-bridge-pulse { 50% { outline-color: transparent; } }
.webmcp-bridge-output-highlight { outline: 2px solid var(--jp-brand-color1); outline-offset: 1px;
  background: var(--jp-layout-color2); transition: background 0.3s; }
"""
