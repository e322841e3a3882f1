"""JupyterLab dialogs opened while the agent works: what is reported, who owns a dialog, and answering it.

The rules and the report's shape are docs/TOOLS.md, "Dialogs"; ``lab/dialogs.js`` only reports
:class:`~webmcp_bridge.host.protocol.RawDialog` values and clicks. Ownership is decided once, when a dialog is first
seen: the one running agent call that can own dialogs, unless it owns another or the person pressed a key or
pointer in the last 1.5 s; else the dialog is the person's. The agent answers only a shown dialog its call owns,
unambiguously (else INVALID_ARGUMENT, nothing clicked); the person's dialogs are only reported, never answered or
closed, and their body and input are not reported.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from webmcp_bridge.calls.pending import PendingCall, PendingCalls, pending_payload
from webmcp_bridge.core.bounds import fit_payload, json_bytes
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.limits import (
    DEFAULT_LIMITS,
    ECHO_LABEL_BYTES,
    ECHO_TITLE_BYTES,
    SHORT_ID_CHARS,
    Limits,
    truncate_utf8,
)
from webmcp_bridge.host.protocol import DialogSource, RawDialog

ANSWER_TOOL = "jupyter_answer_dialog"
#: tools whose calls never own a dialog (besides read-only ones): answering one must not adopt the next
NEVER_OWNS = frozenset({ANSWER_TOOL})


def can_own_dialogs(tool: str | None, read_only: bool) -> bool:
    """Whether a call of ``tool`` may own a dialog that opens while it runs."""
    return tool is not None and not read_only and tool not in NEVER_OWNS


def _refused(dialog_id: str, message: str) -> ToolError:
    """INVALID_ARGUMENT about one dialog; nothing was clicked."""
    return ToolError(ErrorCode.INVALID_ARGUMENT, message, dialogId=dialog_id)


def _cut(text: str, max_bytes: int) -> tuple[str, bool]:
    kept = truncate_utf8(text, max_bytes)
    return kept, len(kept) < len(text)


class DialogTracker:
    """The page's open dialogs and the agent calls that own them. ``source`` None: none is ever reported;
    ``calls``: the registry's (the running ones decide ownership)."""

    def __init__(self, source: DialogSource | None, calls: PendingCalls, limits: Limits = DEFAULT_LIMITS) -> None:
        self.source = source
        self.calls = calls
        self.limits = limits
        self._owners: dict[str, PendingCall | None] = {}  # open dialog id -> owning call (None: the person's)
        #: tasks of calls waiting for the person's decision on a proposal: they open no dialog, so never own one
        self.waiting_for_person: Callable[[], set[Any]] = set

    def start(self) -> None:
        """Watch the source, so a dialog is given to its call the moment it opens."""
        if self.source is not None:
            self.source.watch(self._changed)

    def close(self) -> None:
        """Stop watching the source."""
        if self.source is not None:
            self.source.close()

    def _changed(self) -> None:
        try:
            self.sync()
        except Exception:  # a watcher callback must never raise into the page
            traceback.print_exc()

    def sync(self) -> list[RawDialog]:
        """Read the open dialogs (oldest first), decide each new one's owner (waking it), forget closed ones."""
        if self.source is None:
            return []
        raws = self.source.snapshot(max(self.limits.dialog_body_bytes, self.limits.dialog_text_bytes))
        open_ids = {raw.id for raw in raws}
        for gone in [i for i in self._owners if i not in open_ids]:
            del self._owners[gone]
        woken: list[PendingCall] = []
        for raw in raws:
            if raw.id not in self._owners:
                owner = self._choose_owner(raw)
                self._owners[raw.id] = owner
                if owner is not None:
                    woken.append(owner)
        for call in woken:  # after the bookkeeping: a woken call reads it at once
            call.wake()
        return raws

    def _choose_owner(self, raw: RawDialog) -> PendingCall | None:
        if raw.by_person:
            return None
        blocked = self.waiting_for_person()
        candidates = [c for c in self.calls.running() if c.can_own_dialogs and c.task not in blocked]
        if len(candidates) != 1:
            return None
        candidate = candidates[0]
        if any(owner is candidate for owner in self._owners.values()):
            return None  # it already waits on a dialog: a second one is more likely the person's
        return candidate

    def owned_by(self, call: PendingCall) -> RawDialog | None:
        """The open dialog ``call`` owns (the shown one first), or None."""
        owned = [raw for raw in self.sync() if self._owners.get(raw.id) is call]
        return next((raw for raw in owned if raw.shown), owned[0] if owned else None)

    def describe(self, raw: RawDialog) -> dict[str, Any]:
        """The bounded report of one dialog (docs/TOOLS.md, "Dialogs")."""
        limits = self.limits
        title, _ = _cut(raw.title, limits.dialog_text_bytes)
        owner = self._owners.get(raw.id)
        # The person's own dialogs are reported by title and buttons only: their body and input can name
        # things the agent may not see (a hidden notebook being renamed or deleted).
        body, cut = _cut(raw.body, limits.dialog_body_bytes) if owner is not None else ("", False)
        report: dict[str, Any] = {"id": raw.id, "title": title, "body": body}
        if cut or raw.body_cut and owner is not None:
            report["bodyTruncated"] = True
        report["state"] = "shown" if raw.shown else "queued"
        report["shown"] = raw.shown
        buttons = []
        for index, button in enumerate(raw.buttons[: limits.dialog_buttons]):
            entry: dict[str, Any] = {
                "index": index,
                "label": _cut(button.label, limits.dialog_text_bytes)[0],
                "kind": "accept" if button.accept else "reject",
            }
            if button.warn:
                entry["warn"] = True
            if button.disabled:
                entry["disabled"] = True
            buttons.append(entry)
        report["buttons"] = buttons
        if len(raw.buttons) > limits.dialog_buttons:
            report["omittedButtons"] = len(raw.buttons) - limits.dialog_buttons
        if raw.input is not None and owner is not None:
            field: dict[str, Any] = {"type": raw.input.type}
            if raw.input.type != "password" and raw.input.value is not None:
                field["value"] = _cut(raw.input.value, limits.dialog_text_bytes)[0]
            if raw.input.checked is not None:
                field["checked"] = raw.input.checked
            report["input"] = field
        if raw.checkbox is not None:
            report["checkbox"] = {
                "label": _cut(raw.checkbox[0], limits.dialog_text_bytes)[0],
                "checked": raw.checkbox[1],
            }
        report["owner"] = None if owner is None else {"tool": owner.tool, "pendingId": owner.pending_id or None}
        report["answerable"] = owner is not None and raw.shown
        return report

    def describe_all(self) -> list[dict[str, Any]]:
        """Reports of the open dialogs, at most ``Limits.dialogs_listed``."""
        return [self.describe(raw) for raw in self.sync()[: self.limits.dialogs_listed]]

    def attach(self, payload: dict[str, Any], cap: int, *, stored: bool = False) -> dict[str, Any]:
        """Put ``dialogs`` (and ``dialogsOmitted``) on a success while any is open (a ``stored`` result loses stale
        ones when none is). Within ``cap``: short reports when the full ones do not fit, then
        :func:`~webmcp_bridge.core.bounds.fit_payload`."""
        raws = self.sync()
        if not raws:
            if stored:
                payload.pop("dialogs", None)
                payload.pop("dialogsOmitted", None)
            return payload
        payload.pop("dialogsOmitted", None)
        listed = [self.describe(raw) for raw in raws[: self.limits.dialogs_listed]]
        payload["dialogs"] = listed
        if len(raws) > len(listed):
            payload["dialogsOmitted"] = len(raws) - len(listed)
        if json_bytes(payload) > cap:
            payload["dialogs"] = [
                {k: d[k] for k in ("id", "title", "state", "shown", "owner", "answerable")} for d in listed
            ]
        return fit_payload(payload, cap)

    def pending_payload(self, call: PendingCall) -> dict[str, Any]:
        """``call``'s pending payload, with the ``dialog`` it owns and how to answer it."""
        payload = pending_payload(call)
        raw = self.owned_by(call)
        if raw is not None:
            payload["dialog"] = self.describe(raw)
            where = "" if raw.shown else " It is queued behind another dialog and can be answered once it is shown."
            payload["message"] = (
                f"{call.tool} waits for an answer to the dialog {raw.title!r} ({raw.id}), shown to the person.{where} "
                "Answer it with jupyter_answer_dialog (the person may answer it too); the call's result then "
                "comes back from jupyter_answer_dialog or jupyter_wait_for_result."
            )
        return payload

    def answer(self, button: str | int, dialog_id: str | None) -> tuple[PendingCall, dict[str, Any]]:
        """Click ``button`` (index or label) of the shown dialog an agent call owns; returns the owner and
        ``{dialogId, button: <label>, buttonIndex}``. Raises ToolError(INVALID_ARGUMENT), clicking nothing, unless
        the module docstring's rules hold or when it closed before the click."""
        raws = self.sync()
        if not raws:
            raise ToolError(ErrorCode.INVALID_ARGUMENT, "No dialog is open.")
        listing = [
            {
                "id": r.id,
                "title": _cut(r.title, self.limits.dialog_text_bytes)[0],
                "state": "shown" if r.shown else "queued",
            }
            for r in raws[: self.limits.dialogs_listed]
        ]
        if dialog_id is None:
            if len(raws) > 1:
                raise ToolError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"{len(raws)} dialogs are open; pass dialogId to say which one you answer.",
                    dialogs=listing,
                )
            raw = raws[0]
        else:
            found = next((r for r in raws if r.id == dialog_id), None)
            if found is None:
                raise ToolError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"No open dialog has id {dialog_id[:SHORT_ID_CHARS]!r}.",
                    dialogs=listing,
                )
            raw = found
        owner = self._owners.get(raw.id)
        if owner is None:
            raise _refused(
                raw.id,
                f"The dialog {raw.id} ({_cut(raw.title, ECHO_TITLE_BYTES)[0]!r}) was not opened by one of your calls: "
                "only the person answers it.",
            )
        if not raw.shown:
            raise _refused(
                raw.id,
                f"The dialog {raw.id} is queued behind the dialog on screen (JupyterLab shows one at a time); it can "
                "be answered once it is shown.",
            )
        index = self._button_index(raw, button)
        outcome = self.source.click(raw.id, index) if self.source is not None else "gone"
        if outcome != "clicked":
            reasons = {
                "gone": "it closed before the click",
                "queued": "it is no longer the dialog on screen",
                "disabled": "that button is disabled",
                "no-button": "that button is gone",
            }
            raise _refused(
                raw.id,
                f"The dialog {raw.id} was not answered: {reasons.get(outcome, outcome)}.",
            )
        self.sync()
        label = _cut(raw.buttons[index].label, self.limits.dialog_text_bytes)[0]
        return owner, {"dialogId": raw.id, "button": label, "buttonIndex": index}

    def _button_index(self, raw: RawDialog, button: str | int) -> int:
        labels = [b.label for b in raw.buttons]
        listed = ", ".join(
            f"{i}: {_cut(label, ECHO_LABEL_BYTES)[0]!r}" for i, label in enumerate(labels[: self.limits.dialog_buttons])
        )
        if isinstance(button, int):
            if not 0 <= button < len(labels):
                raise _refused(
                    raw.id,
                    f"The dialog {raw.id} has no button {button}; its buttons: {listed}.",
                )
            index = button
        else:
            matches = [i for i, label in enumerate(labels) if label == button]
            if not matches:
                wanted = button.strip().casefold()
                matches = [i for i, label in enumerate(labels) if label.strip().casefold() == wanted]
            if not matches:
                raise _refused(
                    raw.id,
                    f"The dialog {raw.id} has no button labelled {_cut(button, ECHO_LABEL_BYTES)[0]!r}; its buttons: "
                    f"{listed}.",
                )
            if len(matches) > 1:
                raise _refused(
                    raw.id,
                    f"Several buttons of the dialog {raw.id} are labelled {_cut(button, ECHO_LABEL_BYTES)[0]!r}; pass "
                    f"the button's index ({listed}).",
                )
            index = matches[0]
        if raw.buttons[index].disabled:
            raise _refused(
                raw.id,
                f"The button {index} of the dialog {raw.id} is disabled (the dialog's input is not valid).",
            )
        return index
