"""The cell context menu of the Agent panel: comment on a cell, a selection or an output; cycle agent access.

Four JupyterLab commands (ids in :data:`COMMANDS`) added to the context menu of notebook cells (selector
``.jp-Notebook .jp-Cell``), after a separator. The cell a command acts on is the one the person right-clicked
(``app.contextMenuHitTest``), else the active cell; the output is the one right-clicked, else the cell's
first. A comment's text comes from JupyterLab's input dialog (``InputDialog.getText`` of
``@jupyterlab/apputils``); cancelling or an empty text does nothing. "Comment on selection" takes the
selection of that cell's editor as it was when the menu opened, and is disabled without one.
Everything goes through the person's APIs on the raw notebook (:mod:`webmcp_bridge.access.guard`,
:class:`webmcp_bridge.review.threads.Review`) and the panel (a :class:`~webmcp_bridge.lab.ui.port.PanelPort`)
looks again after. The commands' callables are proxies this menu owns, destroyed by :meth:`CellMenu.dispose`.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import js

from webmcp_bridge.access.levels import cell_levels, next_level, notebook_level, set_cell_level
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ffi import Proxies, is_nullish, js_object
from webmcp_bridge.lab.notebook import LabNotebook
from webmcp_bridge.lab.ui.port import PanelPort
from webmcp_bridge.lab.ui.view import cell_label, comment_title
from webmcp_bridge.review.threads import Anchor, CellAnchor, OutputAnchor, RangeAnchor, Review

SELECTOR = ".jp-Notebook .jp-Cell"
RANK = 30
COMMANDS = {
    "cell": "webmcp-bridge:comment-cell",
    "selection": "webmcp-bridge:comment-selection",
    "output": "webmcp-bridge:comment-output",
    "access": "webmcp-bridge:cycle-access",
}


@dataclass(frozen=True)
class Target:
    """What a context-menu command acts on: the notebook, the cell, the right-clicked output (None when the
    click was not on an output) and the cell editor's selection when the menu opened (None when empty)."""

    nb: LabNotebook
    cell_id: str
    output_index: int | None
    selection: dict | None


class CellMenu:
    """The context-menu commands of one Agent panel (``panel``)."""

    def __init__(self, panel: PanelPort) -> None:
        self.panel = panel
        self.app = panel.app
        self._disposables: list[Any] = []
        self._proxies = Proxies()  # the hit tests and the commands' callables
        self._is_cell = self._proxies.keep(lambda node: _has_class(node, "jp-Cell"))
        self._is_output = self._proxies.keep(lambda node: _has_class(node, "jp-OutputArea-child"))

    def install(self) -> None:
        """Add the commands and their context-menu items."""
        specs: list[tuple[str, Any, Callable[[], bool], Callable[[Target], Any]]] = [
            ("cell", "Comment on cell", lambda: self.target() is not None, self._comment_cell),
            ("selection", "Comment on selection", self._has_selection, self._comment_selection),
            ("output", "Comment on output", self._has_output, self._comment_output),
            ("access", self._proxies.keep(self._access_label), lambda: self.target() is not None, self._cycle),
        ]
        commands, menu = self.app.commands, self.app.contextMenu
        self._disposables.append(menu.addItem(js_object({"type": "separator", "selector": SELECTOR, "rank": RANK})))
        for offset, (key, label, enabled, run) in enumerate(specs):
            command = COMMANDS[key]
            if commands.hasCommand(command):
                continue
            options = {
                "label": label,
                "caption": "Agent panel: " + (label if isinstance(label, str) else "agent access of this cell"),
                "isEnabled": self._proxies.keep(lambda *_a, enabled=enabled: _safe_bool(enabled)),
                "execute": self._proxies.keep(lambda *_a, run=run: self._execute(run)),
            }
            self._disposables.append(commands.addCommand(command, js_object(options)))
            self._disposables.append(
                menu.addItem(js_object({"command": command, "selector": SELECTOR, "rank": RANK + 0.1 * (offset + 1)}))
            )

    def dispose(self) -> None:
        """Remove the commands and menu items and free their proxies."""
        for disposable in reversed(self._disposables):
            try:
                disposable.dispose()
            except Exception:
                traceback.print_exc()
        self._disposables.clear()
        self._proxies.clear()

    # -- the target ----------------------------------------------------------------------------------------
    def target(self) -> Target | None:
        """The right-clicked cell (else the active one) of an open notebook, or None."""
        cell_node = self.app.contextMenuHitTest(self._is_cell)
        nb, cell_id = None, None
        if not is_nullish(cell_node):
            for nb_panel in self.panel.open_panels():
                if nb_panel.node.contains(cell_node):
                    for widget in nb_panel.content.widgets:
                        if _same(widget.node, cell_node):
                            nb, cell_id = self.panel.notebook_of_panel(nb_panel), str(widget.model.id)
                            break
                    break
        if nb is None:
            nb = self.panel.current()
            if nb is None:
                return None
            cell_id = nb.focus().cell_id
        if cell_id is None:
            return None
        output_index = None
        output_node = self.app.contextMenuHitTest(self._is_output)
        if not is_nullish(output_node) and not is_nullish(cell_node) and cell_node.contains(output_node):
            index = 0
            sibling = output_node.previousElementSibling
            while not is_nullish(sibling):
                index += 1 if _has_class(sibling, "jp-OutputArea-child") else 0
                sibling = sibling.previousElementSibling
            output_index = index
        focus = nb.focus()
        selection = focus.selection if focus.cell_id == cell_id else None
        return Target(nb, cell_id, output_index, selection)

    def _has_selection(self) -> bool:
        target = self.target()
        return target is not None and target.selection is not None

    def _has_output(self) -> bool:
        target = self.target()
        return target is not None and target.nb.find_cell(target.cell_id).output_count > 0

    def _access_label(self, *_args: Any) -> str:
        target = self.target()
        if target is None:
            return "Cycle agent access"
        level = cell_levels(target.nb).get(target.cell_id, "write")
        return f"Cycle agent access ({level} → {next_level(level)})"

    # -- running -------------------------------------------------------------------------------------------
    def _execute(self, run: Callable[[Target], Any]) -> None:
        target = self.target()  # now: the dialog below moves the focus away
        if target is None:
            return

        async def go() -> None:
            try:
                result = run(target)
                if asyncio.iscoroutine(result):
                    await result
            except ToolError as err:
                self.panel.say(err.message)
                self.panel.show()
            except Exception as exc:
                traceback.print_exc()
                self.panel.say(f"That did not work: {type(exc).__name__}.")
            self.panel.refresh()

        asyncio.ensure_future(go())

    async def _ask(self, title: str) -> str | None:
        apputils = self.panel.apputils
        if is_nullish(apputils):  # no dialogs to borrow: the panel's own box takes the text
            self.panel.say("Type the comment in the box below, then click “Comment on …”.")
            self.panel.show()
            return None
        dialog = apputils.InputDialog
        result = await dialog.getText(
            js_object({"title": title, "placeholder": "Your comment for the agent…", "okLabel": "Comment"})
        )
        if not result.button.accept or is_nullish(result.value):
            return None
        text = str(result.value).strip()
        return text or None

    async def _comment(self, target: Target, anchor: Anchor, what: str) -> None:
        label = cell_label(target.cell_id, self.panel.cells(target.nb))
        hidden = notebook_level(target.nb) == "none" or "none" in cell_levels(target.nb).values()
        body = await self._ask(comment_title(what, label, hidden))  # the agent may read the dialog's title
        if body is None:
            return
        Review(target.nb).create(anchor, body, "person")
        self.panel.note(f"commented on {what} of" if what != "cell" else "commented on", target.nb.path, target.cell_id)
        if self.panel.thread_filter == "resolved":  # the new thread is open: show it
            self.panel.set_filter("open")
        self.panel.show()

    def _comment_cell(self, target: Target) -> Any:
        return self._comment(target, CellAnchor(target.cell_id), "cell")

    def _comment_selection(self, target: Target) -> Any:
        if target.selection is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "Select some text in the cell first.")
        return self._comment(target, RangeAnchor(target.cell_id, selection=target.selection), "the selection")

    def _comment_output(self, target: Target) -> Any:
        index = target.output_index or 0
        return self._comment(target, OutputAnchor(target.cell_id, index), f"output {index + 1}")

    def _cycle(self, target: Target) -> None:
        level = next_level(cell_levels(target.nb).get(target.cell_id, "write"))
        set_cell_level(target.nb, target.cell_id, level)
        self.panel.note(f"set agent access to {level} on", target.nb.path, target.cell_id)


def _has_class(node: Any, name: str) -> bool:
    classes = getattr(node, "classList", None)
    return bool(classes is not None and not is_nullish(classes) and classes.contains(name))


def _same(a: Any, b: Any) -> bool:
    return bool(getattr(js.Object, "is")(a, b))


def _safe_bool(fn: Callable[[], bool]) -> bool:
    try:
        return bool(fn())
    except Exception:
        traceback.print_exc()
        return False
