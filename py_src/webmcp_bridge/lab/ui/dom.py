"""Making DOM nodes from :class:`~webmcp_bridge.lab.ui.view.El` trees, and the bridge's one stylesheet.

The only place the person's side (the Agent panel, the cell markers, Propose mode's inline boxes) creates
elements. A tree goes to ``dom.js`` as JSON in one crossing and is made there with ``createElement``,
``setAttribute`` (names from the same allow-lists as :class:`El`, checked again in JS) and ``textContent``;
there is no path to ``innerHTML``, ``insertAdjacentHTML`` or an event-handler attribute. One crossing per list,
not several per element: through the FFI a 200-row list costs 100+ ms of held page, in JS about a millisecond.
The session makes one :class:`Dom` and hands it to the parts that draw. Python holds no node: it names them.

The Agent panel (:mod:`webmcp_bridge.lab.ui.panel`): ``dom.js`` makes its widget (:meth:`Dom.create_panel`) and keeps
its nodes by role (the panel itself is ``"panel"``, then every element drawn in it with a ``data-role``); Python
draws by role (:meth:`Dom.draw`, :meth:`Dom.rows` for the keyed Activity list, :meth:`Dom.update`). The person's
events reach one listener as JSON facts (:class:`PanelRule` says which clicks, and what ``dom.js`` does during an
event). The cell markers go on the cells of the notebook at a path, by cell id (:meth:`Dom.apply_markers`); their
buttons report clicks as the panel's do.

Proposal boxes (:mod:`webmcp_bridge.lab.ui.proposals`) are named by proposal id: ``dom.js`` keeps their nodes, finds
a proposal's notebook by path through the notebook tracker (the loader's ``ctx`` handed to it once), listens to
the boxes and reports the person's actions as JSON facts to one listener, so the proposals' Python holds no node.
The bridge's stylesheet is added and removed by ``dom.js`` too (the CSS text is package data read here).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any, Literal

from webmcp_bridge.lab.ffi import awaiting, load_half
from webmcp_bridge.lab.ui.i18n import DOMAIN, Text, to_json
from webmcp_bridge.lab.ui.view import ATTRIBUTES, ICONS, TAGS, El

STYLE_ID = "webmcp-bridge-style"

#: a keyed list's edit for :meth:`Dom.rows`: ``("clear",)``, ``("keep", key)``, ``("put", key, tree)`` (on top),
#: ``("set", key, tree)`` (in its place), ``("drop", key)``
RowOp = tuple[Literal["clear"]] | tuple[Literal["keep", "drop"], str] | tuple[Literal["put", "set"], str, El]


@dataclass(frozen=True)
class PanelRule:
    """What ``dom.js`` does with the person's events in the Agent panel (and on the cell markers' buttons), pushed as
    data when the panel is made.

    Attributes:
        actions: the ``data-action`` values whose clicks are reported (and kept from JupyterLab's own handling, by
            ``stopPropagation``); a click on a ``select`` is never one (its change is), nor a click the page's
            scripts made (``isTrusted`` false: ``element.click()``, ``dispatchEvent``).
        text_box: a selector: a click's fact carries the value (and ``data-reply``) of the first ``textarea`` of the
            closest such box around the clicked element.
        choice_row: a selector: a click's fact carries the value of the first ``select`` of the closest such row.
        submit_box, submit_button: the person's Ctrl/Cmd+Enter in a ``textarea`` inside a ``submit_box`` is
            reported as a click of the first ``submit_button`` of that box (the key's default, a newline, is
            prevented).
    """

    actions: tuple[str, ...]
    text_box: str
    choice_row: str
    submit_box: str
    submit_button: str

    def to_json(self) -> dict[str, Any]:
        """The form ``dom.js`` reads: ``{actions, textBox, choiceRow, submit: {box, button}}``."""
        return {
            "actions": list(self.actions),
            "textBox": self.text_box,
            "choiceRow": self.choice_row,
            "submit": {"box": self.submit_box, "button": self.submit_button},
        }


@dataclass(frozen=True)
class PanelOptions:
    """The Agent panel's widget: its ``id``, ``class_name``, tab ``label`` and ``caption`` (translated),
    ``rank`` in the right sidebar, ``attrs`` on its node, the event :class:`PanelRule` and the tab's ``icon`` (a
    name of :data:`~webmcp_bridge.lab.ui.view.ICONS`, or "" for none)."""

    id: str
    class_name: str
    label: Text
    caption: Text
    rank: int
    attrs: dict[str, Text]
    rule: PanelRule
    icon: str = ""

    def to_json(self) -> dict[str, Any]:
        """The form ``dom.js`` reads (camelCase keys, messages as JSON)."""
        raw = asdict(self)
        raw["className"] = raw.pop("class_name")
        raw["label"], raw["caption"] = to_json(self.label), to_json(self.caption)
        raw["attrs"] = {name: to_json(value) for name, value in self.attrs.items()}
        raw["rule"] = self.rule.to_json()
        return raw


def icon_specs() -> dict[str, dict[str, str]]:
    """The icons ``dom.js`` may draw (:data:`~webmcp_bridge.lab.ui.view.ICONS`): JupyterLab's by export name, the
    bridge's own with their SVG text (package data, ``icons/``)."""
    folder = resources.files("webmcp_bridge.lab.ui").joinpath("icons")
    return {
        name: {"svg": folder.joinpath(spec["svg"]).read_text(encoding="utf-8")} if "svg" in spec else dict(spec)
        for name, spec in ICONS.items()
    }


class Dom:
    """``dom.js``, evaluated and configured with the allow-lists (:data:`~webmcp_bridge.lab.ui.view.TAGS`,
    :data:`~webmcp_bridge.lab.ui.view.ATTRIBUTES`).

    Args:
        ctx: the loader's context, handed once to ``dom.js`` (its ``tracker`` finds the notebooks of proposals and
            markers, ``app.shell`` and ``modules.widgets`` make the Agent panel); None leaves the proposal boxes
            without notebooks (only the corner box places them) and no panel to make.
    """

    def __init__(self, ctx: Any = None) -> None:
        self.half = load_half("webmcp_bridge.lab.ui", "dom.js", ctx)
        self.half.configure(json.dumps(sorted(TAGS)), json.dumps(sorted(ATTRIBUTES)), json.dumps(icon_specs()))
        self._prepared = False

    async def prepare(self) -> None:
        """Wait for the page's optional services the person's side uses: JupyterLab's translator (the bundle of
        :data:`~webmcp_bridge.lab.ui.i18n.DOMAIN`), its layout restorer and its state database. Without them the
        words are English and the panel is not restored. Once per page: later calls return at once."""
        if not self._prepared:
            self._prepared = True
            await awaiting(self.half).prepare(DOMAIN)

    def translate(self, texts: Sequence[Text]) -> list[str]:
        """``texts`` as the page's translator gives them (one crossing), for what JupyterLab takes as plain strings:
        command labels, a dialog's title."""
        return [str(t) for t in json.loads(str(self.half.translate(json.dumps([to_json(t) for t in texts]))))]

    def webmcp_available(self) -> bool:
        """Whether the page has WebMCP (the loader's ``modelContext``)."""
        return bool(self.half.webmcpAvailable())

    # -- the Agent panel, its nodes by role ---------------------------------------------------------------------
    def create_panel(self, options: PanelOptions, trees: Sequence[El], listener: Any) -> dict[str, bool]:
        """Make the Agent panel's widget (replacing one made before), draw ``trees`` in it and add it to the right
        sidebar, in one crossing. ``listener`` (a proxy the caller owns) hears the person's events as JSON text:
        ``{kind: "click", action, data: {name: value} (the element's data-* attributes), text, reply, choice}``
        (see :class:`PanelRule`), ``{kind: "change", action, value}``, ``{kind: "focusout"}``, ``{kind:
        "visibility", visible}``; clicks and keys only when the person made them. Returns ``{created, visible}``:
        created False when the page has no Widget class. An attribute name of ``options.attrs`` outside the
        allow-lists raises the page's error (no panel is added)."""
        raw = self.half.createPanel(json.dumps(options.to_json()), json.dumps([el.to_json() for el in trees]), listener)
        facts = json.loads(str(raw))
        return {"created": bool(facts.get("created")), "visible": bool(facts.get("visible"))}

    def dispose_panel(self) -> None:
        """Stop listening to the panel and remove its widget."""
        self.half.disposePanel()

    def draw(self, role: str, *els: El) -> bool:
        """Replace the children of the panel's node ``role`` with new nodes for ``els`` (one crossing). False when
        no node has that role."""
        return bool(self.half.draw(role, json.dumps([el.to_json() for el in els])))

    def rows(self, role: str, ops: Sequence[RowOp]) -> None:
        """Edit the keyed list ``role`` (newest on top) in one crossing: see :data:`RowOp`."""
        payload = [[op[0], op[1], op[2].to_json()] if op[0] in ("put", "set") else list(op) for op in ops]
        self.half.rows(role, json.dumps(payload))

    def update(self, changes: dict[str, dict[str, Any]]) -> None:
        """Set ``{role: {text?, hidden?, value?, attrs?: {name: value}}}`` on the panel's nodes, in one crossing (a
        text or attribute value may be a :class:`~webmcp_bridge.lab.ui.i18n.Msg`); a role no node has is skipped.
        An attribute name outside the allow-lists raises the page's error (the roles before it in ``changes`` are
        already set)."""
        self.half.set(json.dumps(changes, default=to_json))

    def fields(self, role: str) -> tuple[str | None, dict[str, str]]:
        """``(focused, drafts)`` of the panel's node ``role``: the tag name of the focused element when it is inside
        (else None; a ``SELECT`` only while the person is choosing in it, from their key or pointer press on it until
        its change or the focus leaving) and the text of its non-empty reply boxes by their ``data-reply`` (one
        crossing)."""
        facts = json.loads(str(self.half.fields(role)))
        focused = facts.get("focused")
        return (None if focused is None else str(focused)), {str(k): str(v) for k, v in facts["drafts"].items()}

    def clear_draft(self, role: str, key: str) -> None:
        """Empty the reply box ``data-reply=key`` inside the panel's node ``role``."""
        self.half.clearDraft(role, key)

    def activate(self, widget_id: str) -> None:
        """Bring the widget ``widget_id`` (the Agent panel) to the front of its area."""
        self.half.activate(widget_id)

    def apply_markers(
        self,
        path: str,
        want: dict[str, tuple[str, list[str], El]],
        classes: list[str],
        attr: str,
        strip_class: str,
        marked_class: str,
    ) -> int:
        """Put markers on the cells of every notebook open at ``path``: ``want`` maps a cell id to ``(signature,
        classes on, badge strip)``; cells not in it lose every class of ``classes`` and their strip. Cells whose node
        already carries the signature (attribute ``attr``) are skipped. One crossing; returns the cells changed."""
        payload = {cell_id: [sig, on, strip.to_json()] for cell_id, (sig, on, strip) in want.items()}
        return int(
            self.half.applyMarkers(path, json.dumps(payload), json.dumps(classes), attr, strip_class, marked_class)
        )

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
