"""Making DOM nodes from :class:`~webmcp_bridge.lab.ui.view.El` trees, and the bridge's one stylesheet.

The only place the person's side (the Agent panel, the cell markers, Propose mode's inline boxes) creates
elements. A tree goes to ``dom.js`` as JSON in one crossing and is made there with ``createElement``,
``setAttribute`` (names from the same allow-lists as :class:`El`, checked again in JS) and ``textContent``;
there is no path to ``innerHTML``, ``insertAdjacentHTML`` or an event-handler attribute. One crossing per list,
not several per element: through the FFI a 200-row list costs 100+ ms of held page, in JS about a millisecond.
The session makes one :class:`Dom` and hands it to the parts that draw.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import js
from pyodide.ffi import to_js

from webmcp_bridge.lab.ffi import is_nullish, load_half
from webmcp_bridge.lab.ui.view import ATTRIBUTES, TAGS, El

STYLE_ID = "webmcp-bridge-style"


class Dom:
    """``dom.js``, evaluated and configured with the allow-lists (:data:`~webmcp_bridge.lab.ui.view.TAGS`,
    :data:`~webmcp_bridge.lab.ui.view.ATTRIBUTES`)."""

    def __init__(self) -> None:
        self.half = load_half("webmcp_bridge.lab.ui", "dom.js")
        self.half.configure(to_js(sorted(TAGS)), to_js(sorted(ATTRIBUTES)))

    def build(self, el: El) -> Any:
        """A new DOM element for ``el`` and its children (not yet attached)."""
        return self.half.build(json.dumps(el.to_json()))

    def replace_children(self, parent: Any, *els: El) -> None:
        """Replace ``parent``'s children with new nodes for ``els``."""
        self.half.replaceChildren(parent, json.dumps([el.to_json() for el in els]))

    def apply_markers(
        self,
        notebook: Any,
        want: dict[str, tuple[str, list[str], El]],
        classes: list[str],
        attr: str,
        strip_class: str,
        marked_class: str,
    ) -> int:
        """Put markers on the cell nodes of ``notebook`` (a Notebook widget): ``want`` maps a cell id to
        ``(signature, classes on, badge strip)``; cells not in it lose every class of ``classes`` and their strip.
        Cells whose node already carries the signature (attribute ``attr``) are skipped. Returns the cells changed."""
        payload = {cell_id: [sig, on, strip.to_json()] for cell_id, (sig, on, strip) in want.items()}
        return int(
            self.half.applyMarkers(notebook, json.dumps(payload), json.dumps(classes), attr, strip_class, marked_class)
        )

    def place(self, panel: Any, cell_id: str | None, node: Any) -> bool | None:
        """Put ``node`` in ``panel`` (a NotebookPanel) inside the cell ``cell_id`` (before its footer), or after the
        last cell for None, unless it is there already. True: (re)inserted; False: already in place; None: no
        place for it now (no such cell)."""
        placed = self.half.place(panel, cell_id, node)
        return None if is_nullish(placed) else bool(placed)

    def seen_to_end(self, node: Any) -> bool:
        """Whether a scrolling element shows its last line now: it is laid out (attached and not hidden: a
        non-zero visible height) and its visible area reaches the end of its content (within 2 px)."""
        return bool(self.half.seenToEnd(node))


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


def _owners(style: Any) -> set[str]:
    """The owners noted on the stylesheet element (attribute ``data-owners``, space-separated)."""
    value = style.getAttribute("data-owners")
    return set() if is_nullish(value) else set(str(value).split())


def install_style(owner: str) -> None:
    """Add the bridge's stylesheet (``style.css``, package data) to the document once, as ``<style id=STYLE_ID>``,
    and note ``owner`` (a view using it: "panel", "proposals") on it; each owner removes itself with
    :func:`remove_style`, and the sheet goes with the last. The document holds this state, not Python."""
    style = query(js.document, f"#{STYLE_ID}")
    if style is None:
        style = js.document.createElement("style")
        style.id = STYLE_ID
        style.textContent = resources.files("webmcp_bridge.lab.ui").joinpath("style.css").read_text(encoding="utf-8")
        js.document.head.appendChild(style)
    owners = _owners(style)
    style.setAttribute("data-owners", " ".join(sorted(owners | {owner})))


def remove_style(owner: str) -> None:
    """``owner`` no longer uses the stylesheet; it is removed when no owner is left."""
    style = query(js.document, f"#{STYLE_ID}")
    if style is None:
        return
    owners = _owners(style) - {owner}
    if owners:
        style.setAttribute("data-owners", " ".join(sorted(owners)))
    else:
        style.remove()
