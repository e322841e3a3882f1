"""An in-memory :class:`~webmcp_bridge.host.protocol.DialogSource` for tests: dialogs opened by hand, clicked as
JupyterLab's would be.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from webmcp_bridge.host.protocol import (
    RawButton,
    RawDialog,
    RawInput,
)


class MemoryDialogs:
    """The application's dialogs in memory (a :class:`webmcp_bridge.host.protocol.DialogSource` for tests), queued as
    JupyterLab queues them: the oldest open dialog is shown, the others wait. Code of the "application" opens
    one with :meth:`ask` (awaiting the index of the button clicked) or :meth:`open`; a test acts as the person
    with :meth:`person_click`; the tracker clicks through :meth:`click`.

    Attributes:
        confirm_restart: when True, ``MemoryNotebook.kernel_action("restart")`` asks "Restart Kernel?" first
            (buttons Cancel, Restart), as JupyterLab does.
        clicks: every click, in order: (dialog id, button index, "agent" | "person").
    """

    def __init__(self) -> None:
        self.confirm_restart = False
        self.clicks: list[tuple[str, int, str]] = []
        self._open: list[tuple[RawDialog, asyncio.Future[int]]] = []
        self._next = 1
        self._callback: Callable[[], None] | None = None

    def open(
        self,
        title: str,
        body: str,
        buttons: Sequence[RawButton],
        *,
        by_person: bool = False,
        input: RawInput | None = None,
        checkbox: tuple[str, bool] | None = None,
    ) -> tuple[str, asyncio.Future[int]]:
        """Open a dialog (shown if none is, else queued); returns its id and a future of the clicked button index.
        Needs a running event loop."""
        dialog_id = f"d-{self._next}"
        self._next += 1
        raw = RawDialog(
            dialog_id, title, body, tuple(buttons), shown=False, input=input, checkbox=checkbox, by_person=by_person
        )
        self._open.append((raw, asyncio.get_running_loop().create_future()))
        self._changed()
        return dialog_id, self._open[-1][1]

    async def ask(self, title: str, body: str, buttons: Sequence[RawButton], **options: Any) -> int:
        """Open a dialog and wait for its answer: the index of the button clicked."""
        _, answer = self.open(title, body, buttons, **options)
        return await answer

    def is_open(self, dialog_id: str) -> bool:
        """Whether the dialog is still open."""
        return any(raw.id == dialog_id for raw, _ in self._open)

    def person_click(self, dialog_id: str, index: int) -> str:
        """The person clicks a button (same outcome codes as :meth:`click`)."""
        return self._click(dialog_id, index, "person")

    # -- the DialogSource protocol -----------------------------------------------------------------------
    def snapshot(self, max_chars: int) -> list[RawDialog]:
        return [
            RawDialog(
                raw.id,
                raw.title[:max_chars],
                raw.body[:max_chars],
                raw.buttons,
                shown=i == 0,
                body_cut=len(raw.body) > max_chars,
                input=raw.input,
                checkbox=raw.checkbox,
                by_person=raw.by_person,
            )
            for i, (raw, _) in enumerate(self._open)
        ]

    def click(self, dialog_id: str, index: int) -> str:
        return self._click(dialog_id, index, "agent")

    def watch(self, callback: Callable[[], None]) -> None:
        self._callback = callback

    def close(self) -> None:
        self._callback = None

    def _click(self, dialog_id: str, index: int, who: str) -> str:
        at = next((i for i, (raw, _) in enumerate(self._open) if raw.id == dialog_id), None)
        if at is None:
            return "gone"
        if at != 0:
            return "queued"
        raw, answer = self._open[0]
        if not 0 <= index < len(raw.buttons):
            return "no-button"
        if raw.buttons[index].disabled:
            return "disabled"
        del self._open[0]
        self.clicks.append((dialog_id, index, who))
        if not answer.done():
            answer.set_result(index)
        self._changed()
        return "clicked"

    def _changed(self) -> None:
        if self._callback is not None:
            self._callback()
