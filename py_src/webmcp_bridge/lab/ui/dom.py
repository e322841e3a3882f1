"""Making DOM nodes from :class:`~webmcp_bridge.lab.ui.view.El` trees, and the bridge's one stylesheet.

The only place the person's side (the Agent panel, the cell markers, Propose mode's inline boxes) creates
elements. A tree goes to ``dom.js`` as JSON in one crossing and is made there with ``createElement``,
``setAttribute`` (names from the same allow-lists as :class:`El`, checked again in JS) and ``textContent``;
there is no path to ``innerHTML``, ``insertAdjacentHTML`` or an event-handler attribute. One crossing per list,
not several per element: through the FFI a 200-row list costs 100+ ms of held page, in JS about a millisecond.
The session makes one :class:`Dom` and hands it to the parts that draw.

Proposal boxes (:mod:`webmcp_bridge.lab.ui.proposals`) are named by proposal id: ``dom.js`` keeps their nodes, finds
a proposal's notebook by path through the notebook tracker (the loader's ``ctx`` handed to it once), listens to
the boxes and reports the person's actions as JSON facts to one listener, so the proposals' Python holds no node.
The bridge's stylesheet is added and removed by ``dom.js`` too (the CSS text is package data read here).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from webmcp_bridge.lab.ffi import is_nullish, load_half
from webmcp_bridge.lab.ui.view import ATTRIBUTES, TAGS, El

STYLE_ID = "webmcp-bridge-style"


class Dom:
    """``dom.js``, evaluated and configured with the allow-lists (:data:`~webmcp_bridge.lab.ui.view.TAGS`,
    :data:`~webmcp_bridge.lab.ui.view.ATTRIBUTES`).

    Args:
        ctx: the loader's context, handed once to ``dom.js`` (its ``tracker`` finds a proposal's notebook); None
            leaves the proposal boxes without notebooks (only the corner box places them).
    """

    def __init__(self, ctx: Any = None) -> None:
        self.half = load_half("webmcp_bridge.lab.ui", "dom.js", ctx)
        self.half.configure(json.dumps(sorted(TAGS)), json.dumps(sorted(ATTRIBUTES)))

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

    def install_style(self, owner: str) -> None:
        """Add the bridge's stylesheet (``style.css``, package data) to the document once, as ``<style
        id=STYLE_ID>``, and note ``owner`` (a view using it: "panel", "proposals") on it; each owner removes itself
        with :meth:`remove_style`, and the sheet goes with the last. The document holds this state, not Python."""
        css = resources.files("webmcp_bridge.lab.ui").joinpath("style.css").read_text(encoding="utf-8")
        self.half.installStyle(STYLE_ID, owner, css)

    def remove_style(self, owner: str) -> None:
        """``owner`` no longer uses the stylesheet; it is removed when no owner is left."""
        self.half.removeStyle(STYLE_ID, owner)

    # -- proposal boxes, by proposal id ---------------------------------------------------------------------
    def configure_boxes(self, names: dict[str, str]) -> None:
        """The class names of a box's parts: ``{diff, accept, expand, hint, deny, reason, expanded}``."""
        self.half.configureBoxes(json.dumps(names))

    def watch_boxes(self, listener: Any) -> None:
        """The one listener (a proxy the caller owns; None: none) of every box's actions, called with JSON text
        ``{id, action: "accept" | "deny" | "expand" | "seen", reason (deny only)}``."""
        self.half.watchBoxes(listener)

    def show_box(self, proposal_id: str, el: El) -> bool:
        """Build the box of ``proposal_id`` from ``el`` (not placed yet); True when it has a listing to be seen."""
        return bool(self.half.showBox(proposal_id, json.dumps(el.to_json())))

    def place_boxes(self, items: Sequence[tuple[str, str | None, str | None, bool]], corner: El) -> list[str]:
        """Put each box ``(id, path, cell_id, measure)`` in its place: ``path`` None, in the corner box (made from
        ``corner`` when there is none); else in its notebook's cell (after the last cell for ``cell_id`` None), or
        out of the page when that notebook is not open. Returns the ids, among those with ``measure``, whose
        listing is in view to its end now (one crossing for all)."""
        raw = self.half.placeBoxes(json.dumps([list(item) for item in items]), json.dumps(corner.to_json()))
        return [str(i) for i in json.loads(str(raw))]

    def reveal_box(self, proposal_id: str) -> None:
        """Enable the box's Accept and drop its "Show all" and hint."""
        self.half.revealBox(proposal_id)

    def expand_box(self, proposal_id: str) -> None:
        """Lift the height limit of the box's listing."""
        self.half.expandBox(proposal_id)

    def disable_box(self, proposal_id: str) -> None:
        """Disable every button of the box."""
        self.half.disableBox(proposal_id)

    def remove_box(self, proposal_id: str, drop_corner: bool) -> None:
        """Take the box out of the page (and the corner box, with ``drop_corner``)."""
        self.half.removeBox(proposal_id, bool(drop_corner))


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
