"""The cell context menu of the Agent panel: comment on a cell, a selection or an output; cycle agent access.

A command acts on the cell the person right-clicked (else the active cell), on the output right-clicked (else the
cell's first), "Comment on selection" on that cell editor's selection when the menu opened; a comment's text comes
from JupyterLab's ``InputDialog`` (cancelled or empty: nothing). JupyterLab asks ``commands.js`` synchronously for
each command's label and enabled state, so it answers from the states Python pushes when it reports a right-click.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webmcp_bridge.access.levels import cell_levels, next_level
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ffi import Proxies, awaiting, load_half, quietly
from webmcp_bridge.lab.ui.actions import cycle_level, hides
from webmcp_bridge.lab.ui.i18n import Text, _
from webmcp_bridge.lab.ui.view import LEVEL_WORD, cell_label, comment_title
from webmcp_bridge.review.threads import Anchor, CellAnchor, OutputAnchor, RangeAnchor

if TYPE_CHECKING:  # known by their types only, so this module imports under CPython too
    from webmcp_bridge.lab.notebook import LabNotebook
    from webmcp_bridge.lab.ui.panel import AgentPanel

SELECTOR = ".jp-Notebook .jp-Cell"
RANK = 30
COMMANDS = {
    "cell": "webmcp-bridge:comment-cell",
    "selection": "webmcp-bridge:comment-selection",
    "output": "webmcp-bridge:comment-output",
    "access": "webmcp-bridge:cycle-access",
}
ACCESS_LABEL = _("Cycle agent access")
#: each command's label and caption (the access command's label shows the change it makes once a cell is targeted)
WORDS = {
    "cell": (_("Comment on cell"), _("Agent panel: comment on cell")),
    "selection": (_("Comment on selection"), _("Agent panel: comment on selection")),
    "output": (_("Comment on output"), _("Agent panel: comment on output")),
    "access": (ACCESS_LABEL, _("Agent panel: agent access of this cell")),
}


@dataclass(frozen=True)
class Target:
    """What a command acts on: the notebook, the cell, the output right-clicked (or None) and the cell editor's
    selection when the menu opened (or None)."""

    nb: LabNotebook
    cell_id: str
    output_index: int | None
    selection: dict | None


class CellMenu:
    """The context-menu commands of one Agent panel; ``ctx`` (the loader's) is handed once to ``commands.js`` (the
    commands, the right-clicks, the input dialog)."""

    def __init__(self, panel: AgentPanel, ctx: Any) -> None:
        self.panel = panel
        self.half = load_half("webmcp_bridge.lab", "commands.js", ctx)
        self._proxies = Proxies()  # the menu and execute listeners
        self._target: Target | None = None  # what the person's last right-click on a cell acts on
        self._words: dict[Text, str] = {}  # the labels as the page's translator gave them

    def install(self) -> None:
        """Add the commands and their context-menu items, and follow the person's right-clicks on cells."""
        self.half.watchMenu(SELECTOR, self._proxies.keep(self._on_menu))
        execute = self._proxies.keep(self._on_execute)
        self.half.separator(SELECTOR, RANK)
        for offset, key in enumerate(COMMANDS):
            label, caption = self._say(list(WORDS[key]))
            menu = {"selector": SELECTOR, "rank": RANK + 0.1 * (offset + 1)}
            options = {"label": label, "caption": caption, "enabled": "state", "menu": menu}
            self.half.add(COMMANDS[key], json.dumps(options), execute)

    def _say(self, texts: list[Text]) -> list[str]:
        """``texts`` translated (the ones not seen before in one crossing), for JupyterLab's plain strings."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._words]
        if missing:
            self._words.update(zip(missing, self.panel.translate(missing), strict=True))
        return [self._words[t] for t in texts]

    def _push(self, target: Target | None) -> None:
        """Push each command's enabled state and (translated) label for ``target``."""
        states = self.states(target)
        labels = self._say([label for _enabled, label in states.values()])
        pushed = {cid: [enabled, said] for (cid, (enabled, _label)), said in zip(states.items(), labels, strict=True)}
        self.half.setStates(json.dumps(pushed))

    def dispose(self) -> None:
        """Remove the commands and menu items and free their listeners."""
        quietly(self.half.dispose)
        self._proxies.clear()
        self._target = None

    # -- the target ----------------------------------------------------------------------------------------
    def _on_menu(self, facts_json: Any) -> None:
        """Listener of ``commands.js``' ``watchMenu``: the person right-clicked a cell (``facts_json``: JSON text
        ``{path, cellId, outputIndex}`` or null); decide the target and push each command's enabled state and label."""
        try:
            self._target = self.target(json.loads(str(facts_json)))
            self._push(self._target)
        except Exception:
            traceback.print_exc()

    def target(self, facts: dict[str, Any] | None) -> Target | None:
        """The right-clicked cell (``facts`` from ``commands.js``: its notebook's path, its id and the output
        index hit), else the active cell of the notebook in front, or None."""
        nb, cell_id = None, None
        if facts is not None:
            nb = self.panel.notebook_at(str(facts["path"])) if facts.get("path") else None
            cell_id = str(facts["cellId"]) if nb is not None else None
        if nb is None:
            nb = self.panel.current()
            if nb is None:
                return None
            cell_id = nb.focus().cell_id
        if cell_id is None:
            return None
        hit = None if facts is None else facts.get("outputIndex")
        output_index = None if hit is None else int(hit)
        focus = nb.focus()
        selection = focus.selection if focus.cell_id == cell_id else None
        return Target(nb, cell_id, output_index, selection)

    def states(self, target: Target | None) -> dict[str, list[Any]]:
        """``{command id: [enabled, label]}`` for ``target`` (a check that fails counts as disabled)."""
        return {
            COMMANDS["cell"]: [target is not None, WORDS["cell"][0]],
            COMMANDS["selection"]: [target is not None and target.selection is not None, WORDS["selection"][0]],
            COMMANDS["output"]: [_safe(lambda: _has_output(target), False), WORDS["output"][0]],
            COMMANDS["access"]: [target is not None, _safe(lambda: _access_label(target), ACCESS_LABEL)],
        }

    # -- running -------------------------------------------------------------------------------------------
    def _on_execute(self, command: Any) -> None:
        """The person chose ``command`` on their right-click's target. The target serves one command: the commands
        are disabled until the next right-click, so one run another way later never acts on an old right-click."""
        target, self._target = self._target, None
        quietly(lambda: self._push(None))
        if target is None or str(command) not in COMMANDS.values():
            return

        async def go() -> None:
            try:
                await self._run(str(command), target)
            except ToolError as err:
                self.panel.say(err.message)
                self.panel.show()
            except Exception as exc:
                traceback.print_exc()
                self.panel.say(_("That did not work: %1.", type(exc).__name__))
            self.panel.refresh()

        asyncio.ensure_future(go())

    async def _ask(self, title: Text) -> str | None:
        said, placeholder, ok = self._say([title, _("Your comment for the agent…"), _("Comment")])
        options = {"title": said, "placeholder": placeholder, "okLabel": ok}
        reply = json.loads(str(await awaiting(self.half).askText(json.dumps(options))))
        if not reply["available"]:  # no dialogs to borrow: the panel's own box takes the text
            self.panel.say(_("Type the comment in the box below, then click “Comment on …”."))
            self.panel.show()
            return None
        if not reply["accept"] or reply["value"] is None:
            return None
        text = str(reply["value"]).strip()
        return text or None

    async def _comment(self, target: Target, anchor: Anchor, what: Text) -> None:
        label = cell_label(target.cell_id, self.panel.cells(target.nb))
        body = await self._ask(comment_title(what, label, hides(target.nb)))  # the agent may read the dialog's title
        if body is None:
            return
        self.panel.review(target.nb).create(anchor, body, "person")
        self.panel.note(
            _("commented on %1 of", what) if what != "cell" else _("commented on"), target.nb.path, target.cell_id
        )
        if self.panel.thread_filter == "resolved":  # the new thread is open: show it
            self.panel.set_filter("open")
        self.panel.show()

    async def _run(self, command: str, target: Target) -> None:
        if command == COMMANDS["access"]:
            cycle_level(self.panel, target.nb, target.cell_id)
        elif command == COMMANDS["cell"]:
            await self._comment(target, CellAnchor(target.cell_id), "cell")
        elif command == COMMANDS["selection"]:
            if target.selection is None:
                raise ToolError(ErrorCode.INVALID_ARGUMENT, str(_("Select some text in the cell first.")))
            await self._comment(target, RangeAnchor(target.cell_id, selection=target.selection), _("the selection"))
        elif command == COMMANDS["output"]:
            index = target.output_index or 0
            await self._comment(target, OutputAnchor(target.cell_id, index), _("output %1", str(index + 1)))


def _has_output(target: Target | None) -> bool:
    return target is not None and target.nb.find_cell(target.cell_id).output_count > 0


def _access_label(target: Target | None) -> Text:
    if target is None:
        return ACCESS_LABEL
    level = cell_levels(target.nb).get(target.cell_id, "write")
    after = next_level(level)
    return _("Cycle agent access (%1 → %2)", LEVEL_WORD.get(level, level), LEVEL_WORD.get(after, after))


def _safe(fn: Callable[[], Any], default: Any) -> Any:
    """``fn()``, or ``default`` when it fails (printed)."""
    try:
        return fn()
    except Exception:
        traceback.print_exc()
        return default
