"""``dom.js``, the only place the person's side makes elements: the Agent panel, the cell markers, the proposal boxes.

A :class:`~webmcp_bridge.lab.ui.view.El` tree goes to ``dom.js`` as JSON in one crossing and is made there with
``createElement``, ``setAttribute`` (names from the same allow-lists, checked again in JS) and ``textContent``: there
is no path to ``innerHTML`` or an event-handler attribute. One crossing per list, not per element: through the FFI
a 200-row list holds the page 100+ ms, in JS about a millisecond. Python holds no node: it names them, by role (the
panel's), by notebook path and cell id (markers) or by proposal id (boxes, which
:mod:`webmcp_bridge.lab.ui.proposals` makes and places through ``Dom.half``: ``showBox``, ``placeBoxes`` ...), and
hears the person's events as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from importlib import resources
from typing import Any, Literal

from webmcp_bridge.lab.ffi import awaiting, load_half
from webmcp_bridge.lab.ui.i18n import DOMAIN, Text, to_json
from webmcp_bridge.lab.ui.view import ATTRIBUTES, ICONS, TAGS, El, Markers, c, marker_classes

STYLE_ID = "webmcp-bridge-style"
#: the attribute holding a marked cell's signature (its markers unchanged: the cell is not touched)
MARKERS_ATTR = "data-webmcp-bridge-markers"

#: a keyed list's edit for :meth:`Dom.rows`: ``("clear",)``, ``("keep", key)``, ``("put", key, tree)`` (on top),
#: ``("set", key, tree)`` (in its place), ``("drop", key)``
RowOp = tuple[Literal["clear"]] | tuple[Literal["keep", "drop"], str] | tuple[Literal["put", "set"], str, El]


def icon_specs() -> dict[str, dict[str, str]]:
    """The icons ``dom.js`` may draw: JupyterLab's by export name, the bridge's own with their SVG text."""
    folder = resources.files("webmcp_bridge.lab.ui").joinpath("icons")
    return {
        name: {"svg": folder.joinpath(spec["svg"]).read_text(encoding="utf-8")} if "svg" in spec else dict(spec)
        for name, spec in ICONS.items()
    }


class Dom:
    """``dom.js``, configured with the allow-lists. ``ctx`` (the loader's) gives it the notebook tracker, the shell
    and the Widget class; None: no panel, and proposal boxes only in the corner box."""

    def __init__(self, ctx: Any = None) -> None:
        self.half = load_half("webmcp_bridge.lab.ui", "dom.js", ctx)
        self.half.configure(json.dumps(sorted(TAGS)), json.dumps(sorted(ATTRIBUTES)), json.dumps(icon_specs()))
        self._prepared = False

    async def prepare(self) -> None:
        """Once: wait for the page's translator (:data:`~webmcp_bridge.lab.ui.i18n.DOMAIN`), layout restorer and
        state database. Without them the words are English and the panel is not restored."""
        if not self._prepared:
            self._prepared = True
            await awaiting(self.half).prepare(DOMAIN)

    def translate(self, texts: Sequence[Text]) -> list[str]:
        """``texts`` translated (one crossing), for JupyterLab's plain strings (command labels, dialog titles)."""
        return [str(t) for t in json.loads(str(self.half.translate(json.dumps([to_json(t) for t in texts]))))]

    def webmcp_available(self) -> bool:
        """Whether the page has WebMCP (the loader's ``modelContext``)."""
        return bool(self.half.webmcpAvailable())

    # -- the Agent panel, its nodes by role ---------------------------------------------------------------------
    def create_panel(self, options: dict[str, Any], trees: Sequence[El], listener: Any) -> dict[str, bool]:
        """Make the panel's widget (replacing one made before), draw ``trees`` in it and add it to the right sidebar.
        ``options``: ``{id, className, label, caption, rank, attrs, icon, rule}`` (the panel's ``RULE``; texts may be
        messages). ``listener`` (a proxy the caller owns) hears JSON facts: ``{kind: "click", action, data (the
        element's data-* attributes), text, reply, choice}``, ``{kind: "change", action, value}``,
        ``{kind: "focusout"}``, ``{kind: "visibility", visible}``; clicks and keys only the person made. Returns
        ``{created, visible}`` (created False without a Widget class); an attribute outside the allow-lists raises."""
        raw = self.half.createPanel(
            json.dumps(options, default=to_json), json.dumps([el.to_json() for el in trees]), listener
        )
        facts = json.loads(str(raw))
        return {"created": bool(facts.get("created")), "visible": bool(facts.get("visible"))}

    def dispose_panel(self) -> None:
        """Stop listening to the panel and remove its widget."""
        self.half.disposePanel()

    def draw(self, role: str, *els: El, held_by: Collection[str] = ()) -> bool | Literal["held"]:
        """Replace the children of the panel's node ``role`` with ``els``; False when no node has that role,
        ``"held"`` (nothing drawn) when the focus inside it is on an element whose tag name ``held_by`` lists, as
        ``fields`` reports it: checked in the page at the moment of drawing."""
        drawn = self.half.draw(role, json.dumps([el.to_json() for el in els]), json.dumps(sorted(held_by)))
        return "held" if str(drawn) == "held" else bool(drawn)

    def rows(self, role: str, ops: Sequence[RowOp]) -> None:
        """Edit the keyed list ``role`` (newest on top) in one crossing: see :data:`RowOp`."""
        payload = [[op[0], op[1], op[2].to_json()] if op[0] in ("put", "set") else list(op) for op in ops]
        self.half.rows(role, json.dumps(payload))

    def update(self, changes: dict[str, dict[str, Any]]) -> None:
        """Set ``{role: {text?, hidden?, value?, attrs?: {name: value}}}`` on the panel's nodes (texts may be
        messages); a role no node has is skipped, an attribute outside the allow-lists raises."""
        self.half.set(json.dumps(changes, default=to_json))

    def fields(self, role: str) -> tuple[str | None, dict[str, str]]:
        """``(focused, drafts)`` of the panel's node ``role``: the tag name of the focused element inside it, or None
        (a ``SELECT`` only while the person is choosing in it, from their press on it until its change or the focus
        leaving), and the text of its non-empty reply boxes by ``data-reply``."""
        facts = json.loads(str(self.half.fields(role)))
        focused = facts.get("focused")
        return (None if focused is None else str(focused)), {str(k): str(v) for k, v in facts["drafts"].items()}

    def clear_draft(self, role: str, key: str) -> None:
        """Empty the reply box ``data-reply=key`` inside the panel's node ``role``."""
        self.half.clearDraft(role, key)

    def activate(self, widget_id: str) -> None:
        """Bring the widget ``widget_id`` (the Agent panel) to the front of its area."""
        self.half.activate(widget_id)

    def apply_markers(self, path: str, want: dict[str, tuple[str, list[str], El]]) -> int:
        """Put markers on the cells of every notebook open at ``path``: ``want`` maps a cell id to ``(signature,
        classes on, badge strip)``; other cells lose every marker class and their strip; a cell whose
        :data:`MARKERS_ATTR` holds the signature already is skipped. Returns the number of cells changed."""
        payload = {cell_id: [sig, on, strip.to_json()] for cell_id, (sig, on, strip) in want.items()}
        classes = json.dumps(list(marker_classes(Markers())))
        return int(
            self.half.applyMarkers(path, json.dumps(payload), classes, MARKERS_ATTR, c("markers"), c("cell-marked"))
        )

    def install_style(self, owner: str) -> None:
        """Add the bridge's stylesheet (``style.css``) to the document once and note ``owner`` ("panel",
        "proposals") on it; it goes with the last owner's :meth:`remove_style`."""
        css = resources.files("webmcp_bridge.lab.ui").joinpath("style.css").read_text(encoding="utf-8")
        self.half.style(STYLE_ID, owner, css)

    def remove_style(self, owner: str) -> None:
        """``owner`` no longer uses the stylesheet."""
        self.half.style(STYLE_ID, owner, None)
