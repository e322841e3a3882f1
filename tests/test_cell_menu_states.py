"""lab/ui/cell_menu.py's decisions on a right-click: the target (the cell hit, else the active cell), and the
enabled state and label of each command, pushed to ``commands.js`` in one call before JupyterLab draws the menu
(JupyterLab asks those synchronously; the half answers from what Python pushed). Running a command acts on the
target of that right-click.

``commands.js`` is replaced by a stand-in recording what Python calls on it; the notebook is
the in-memory one with a real corpus notebook (the real menu is exercised by playwright-tests/test_panel.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from helpers import corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.access.levels import cell_levels
from webmcp_bridge.lab.ui import cell_menu
from webmcp_bridge.lab.ui.cell_menu import COMMANDS, CellMenu

PATH = "demo/euler.ipynb"


class Half:
    """Stands in for commands.js."""

    def __init__(self) -> None:
        self.states: list[dict[str, list[Any]]] = []
        self.added: list[str] = []
        self.on_menu: Any = None
        self.on_execute: Any = None

    def watchMenu(self, selector: str, on_menu: Any) -> None:  # noqa: N802 (the JS half's name)
        self.on_menu = on_menu

    def separator(self, selector: str, rank: float) -> None:
        pass

    def add(self, command: str, options: str, on_execute: Any) -> bool:
        self.added.append(command)
        self.on_execute = on_execute
        return True

    @property
    def listeners(self) -> tuple[Any, Any]:
        return self.on_menu, self.on_execute

    def setStates(self, text: str) -> None:  # noqa: N802 (the JS half's name)
        self.states.append(json.loads(text))

    def dispose(self) -> None:
        pass


class Port:
    """The panel as the menu sees it: the open notebook, its notes."""

    def __init__(self, nb: Any) -> None:
        self.nb = nb
        self.notes: list[tuple[str, str, str | None]] = []
        self.refreshed = 0

    def notebook_at(self, path: str | None) -> Any:
        return self.nb if path in (None, self.nb.path) else None

    def current(self) -> Any:
        return self.nb

    def note(self, what: str, path: str, cell_id: str | None = None) -> None:
        self.notes.append((str(what), path, cell_id))

    def refresh(self) -> None:
        self.refreshed += 1

    def set_level(self, level: str, apply: Any) -> None:  # no kernel is the agent's here: applied at once
        apply()

    def translate(self, texts: Any) -> list[str]:
        return [str(t) for t in texts]  # the page's translator, with no language pack: the English

    def say(self, message: Any) -> None:
        pass

    def show(self) -> None:
        pass


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> tuple[CellMenu, Half, Any]:
    half = Half()
    monkeypatch.setattr(cell_menu, "load_half", lambda package, filename, ctx: half)
    ws = MemoryWorkspace({PATH: corpus_text("pytudes-euler.ipynb")})
    nb = asyncio.run(ws.open_notebook(PATH, True))
    menu = CellMenu(Port(nb), object())  # type: ignore[arg-type]
    menu._proxies._create = lambda fn: fn  # the listeners themselves stand in for their proxies
    menu.install()
    return menu, half, nb


def cells_with_and_without_outputs(nb: Any) -> tuple[str, str]:
    cells = nb.read_cells(None, head_bytes=0, max_outputs=0)
    with_output = next(c.id for c in cells if c.output_count > 0)
    without = next(c.id for c in cells if c.output_count == 0)
    return with_output, without


def test_a_right_click_pushes_every_commands_state_for_the_cell_hit(opened) -> None:
    menu, half, nb = opened
    on_menu, _ = half.listeners
    assert half.added == list(COMMANDS.values())
    with_output, without = cells_with_and_without_outputs(nb)
    on_menu(json.dumps({"path": PATH, "cellId": with_output, "outputIndex": 0}))
    on_menu(json.dumps({"path": PATH, "cellId": without, "outputIndex": None}))
    hit_output, hit_plain = half.states
    assert hit_output[COMMANDS["cell"]] == [True, "Comment on cell"]
    assert hit_output[COMMANDS["output"]][0] is True and hit_plain[COMMANDS["output"]][0] is False
    assert hit_plain[COMMANDS["selection"]][0] is False  # no selection in that cell's editor
    assert hit_plain[COMMANDS["access"]] == [True, "Cycle agent access (write → read)"]
    assert menu._target is not None and menu._target.cell_id == without and menu._target.output_index is None


def test_a_selection_in_the_active_cell_enables_comment_on_selection(opened) -> None:
    menu, half, nb = opened
    on_menu, _ = half.listeners
    _, cell_id = cells_with_and_without_outputs(nb)
    selection = {"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 3}}
    nb.person_set_focus(cell_id, selection["end"], selection)
    on_menu("null")  # not on a cell the tracker knows: the active cell of the notebook in front
    [states] = half.states
    assert states[COMMANDS["selection"]][0] is True
    assert menu._target is not None and menu._target.cell_id == cell_id and menu._target.selection == selection


def right_click_then_run(half: Any, cell_id: str, command: str, runs: int) -> None:
    """The person right-clicks cell ``cell_id`` of PATH, then ``command`` runs ``runs`` times, each left to finish
    (its task's steps) before the next."""
    on_menu, on_execute = half.listeners

    async def scenario() -> None:
        on_menu(json.dumps({"path": PATH, "cellId": cell_id, "outputIndex": None}))
        for _ in range(runs):
            on_execute(command)
            for _ in range(20):
                await asyncio.sleep(0)

    asyncio.run(scenario())


def test_running_a_command_acts_on_the_right_clicked_cell(opened) -> None:
    menu, half, nb = opened
    on_menu, _ = half.listeners
    _, cell_id = cells_with_and_without_outputs(nb)
    right_click_then_run(half, cell_id, COMMANDS["access"], runs=1)
    assert cell_levels(nb).get(cell_id) == "read"
    assert menu.panel.notes == [("set agent access to read on", PATH, cell_id)]  # type: ignore[attr-defined]
    on_menu(json.dumps({"path": PATH, "cellId": cell_id, "outputIndex": None}))
    assert half.states[-1][COMMANDS["access"]][1] == "Cycle agent access (read → none)"


def test_a_command_with_no_right_click_yet_does_nothing(opened) -> None:
    menu, half, nb = opened
    _, on_execute = half.listeners
    on_execute(COMMANDS["access"])
    assert cell_levels(nb) == {} and menu.panel.notes == []  # type: ignore[attr-defined]


def test_a_right_click_serves_one_command_only(opened) -> None:
    """After a command ran on a right-clicked cell, the commands are disabled and a second run of the same command
    (a shortcut, another extension) acts on nothing: it must not cycle the old cell's access again."""
    menu, half, nb = opened
    _, cell_id = cells_with_and_without_outputs(nb)
    right_click_then_run(half, cell_id, COMMANDS["access"], runs=2)
    assert cell_levels(nb).get(cell_id) == "read"  # one step (write → read), not two
    assert all(enabled is False for enabled, _label in half.states[-1].values())
    assert menu._target is None
