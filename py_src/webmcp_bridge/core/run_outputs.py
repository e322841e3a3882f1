"""The outputs of a kernel request made without a cell (``jupyter_run_code``, the bridge's own inspections), merged
from the kernel's iopub messages as JupyterLab's output area merges them, within bounds.

A host reports the messages as facts, in the order they came (the JupyterLab host: ``notebook.js`` ``runCode``,
in batches); :class:`RunOutputs` decides what they make. The rules, those of JupyterLab's ``OutputAreaModel``:

- consecutive ``stream`` messages of one name (stdout, stderr) are one output, their texts joined;
- ``clear_output`` empties the outputs at once, or, with ``wait``, just before the next output arrives;
- ``error``, ``execute_result`` and ``display_data`` are one output each.

Bounds (the call only ever returns a head of each text, so nothing more is held while it waits): only the first
``max_outputs`` outputs are kept (the others are counted); a stream's text is kept up to ``keep_chars``
characters and what comes past that is only measured, in UTF-8 bytes of its text as it came (the size reported
stays the whole stream's, so the result says its text was cut). Standard library and ``core`` only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from webmcp_bridge.core.limits import utf8_len
from webmcp_bridge.core.nbjson import raw_output
from webmcp_bridge.core.raw import RawItem, RawOutput

#: a host sends its collected messages once their stream text reaches this many characters (UTF-16 units in the
#: page), or :data:`FLUSH_MS` after the first one arrived, whichever is first: what the page holds of a run while
#: the call waits stays about this size whatever the kernel prints
FLUSH_CHARS = 64 * 1024
#: milliseconds from a run's first unsent message to its sending (see :data:`FLUSH_CHARS`)
FLUSH_MS = 100
#: seconds a finished run waits, from its end or from the last batch that arrived, for the batches its host sent but
#: that have not arrived yet (in the bridge's worker a batch is a message, which can arrive after the run's end was
#: read); they are normally in the queue already
LATE_BATCH_SECONDS = 5.0


@dataclass
class _Output:
    """One output kept: its nbformat dict (a stream's ``text`` as kept) and the UTF-8 bytes of stream text not kept."""

    output: dict[str, Any]
    dropped: int = 0


class RunOutputs:
    """The outputs of one kernel request, built from its messages (see the module docstring).

    Args:
        max_outputs: how many outputs to keep (the rest are counted).
        keep_chars: how many characters of a stream's text to keep (the rest is measured).

    A message is a dict: ``{"type": "stream", "name", "text"}``, ``{"type": "error", "ename", "evalue",
    "traceback"}``, ``{"type": "execute_result" | "display_data", "data"}``, ``{"type": "clear_output", "wait"}``;
    an unknown type or a message that is not a dict is ignored.
    """

    def __init__(self, max_outputs: int, keep_chars: int) -> None:
        self.max_outputs = max(0, int(max_outputs))
        self.keep_chars = max(0, int(keep_chars))
        self.kept: list[_Output] = []
        self.count = 0  # outputs made so far (kept or not)
        self._last_stream: str | None = None  # the stream name of the last output counted, if it is a stream
        self._clear_on_next = False

    def _clear(self) -> None:
        self.kept, self.count, self._last_stream, self._clear_on_next = [], 0, None, False

    def _bound(self, kept: _Output, more: str) -> None:
        """Add ``more`` to a kept stream's text within ``keep_chars``; measure the rest."""
        text = kept.output["text"]
        room = self.keep_chars - len(text)
        if kept.dropped == 0 and len(more) <= room:
            kept.output["text"] = text + more
            return
        cut = max(0, min(room, len(more))) if kept.dropped == 0 else 0
        if cut:
            kept.output["text"] = text + more[:cut]
        kept.dropped += utf8_len(more[cut:])

    def _add(self, output: dict[str, Any]) -> None:
        if self._clear_on_next:
            self._clear()
        stream = output["name"] if output["output_type"] == "stream" else None
        if stream is not None and stream == self._last_stream:
            if self.count == len(self.kept):  # else the stream's output was not kept
                self._bound(self.kept[-1], output["text"])
            return
        self.count += 1
        self._last_stream = stream
        if len(self.kept) >= self.max_outputs:
            return
        if stream is None:
            self.kept.append(_Output(output))
            return
        kept = _Output({**output, "text": ""})
        self._bound(kept, output["text"])
        self.kept.append(kept)

    def add(self, message: Any) -> None:
        """Take one message (see the class docstring)."""
        if not isinstance(message, dict):
            return
        kind = message.get("type")
        if kind == "stream":
            self._add({"output_type": "stream", "name": str(message.get("name")), "text": str(message.get("text", ""))})
        elif kind == "error":
            trace = message.get("traceback")
            self._add(
                {
                    "output_type": "error",
                    "ename": str(message.get("ename") or ""),
                    "evalue": str(message.get("evalue") or ""),
                    "traceback": [str(line) for line in trace] if isinstance(trace, list) else [],
                }
            )
        elif kind in ("execute_result", "display_data"):
            data = message.get("data")
            self._add({"output_type": kind, "data": data if isinstance(data, dict) else {}})
        elif kind == "clear_output":
            if message.get("wait"):
                self._clear_on_next = True
            else:
                self._clear()

    def add_all(self, messages: Iterable[Any]) -> None:
        """Take messages in order."""
        for message in messages:
            self.add(message)

    def raw(self, head_bytes: int) -> tuple[RawOutput, ...]:
        """The kept outputs as :class:`RawOutput` with text heads of ``head_bytes``; a stream whose text was cut
        reports the whole text's size."""
        described = []
        for kept in self.kept:
            out = raw_output(kept.output, head_bytes)
            if kept.dropped:
                out = RawOutput(
                    out.output_type,
                    tuple(
                        RawItem(i.mime, i.bytes + kept.dropped, i.head, i.binary) if i.mime == "text/plain" else i
                        for i in out.items
                    ),
                    name=out.name,
                    ename=out.ename,
                    evalue=out.evalue,
                )
            described.append(out)
        return tuple(described)


class RunBatches:
    """A run's event sink: merges each batch of facts a host sends (JSON text of a list, as :class:`RunOutputs`
    takes them) into ``merged`` and counts them, so the run can wait for those sent before its end that have not
    been handed over yet (the JupyterLab host's ``runFinish`` says how many it sent; in the bridge's worker a batch
    is a message, which can be queued behind the answer that ended the run)."""

    def __init__(self, merged: RunOutputs) -> None:
        self.merged = merged
        self.received = 0
        self._arrived: asyncio.Event | None = None

    def receive(self, batch: Any) -> None:
        """One batch: JSON text of a list of facts (``notebook.js`` runCode)."""
        self.received += 1
        self.merged.add_all(json.loads(str(batch)))
        if self._arrived is not None:
            self._arrived.set()

    async def wait_for(self, sent: int, timeout: float) -> int:
        """Wait until ``sent`` batches were received, or until ``timeout`` seconds passed without one arriving (the
        bound restarts with each batch, so a long queue still being handed over is not cut). Returns how many are
        missing (0 when all arrived); nothing raises but cancellation."""
        while self.received < sent:
            before = self.received
            self._arrived = asyncio.Event()
            try:
                await asyncio.wait_for(self._arrived.wait(), timeout)
            except TimeoutError:
                if self.received == before:
                    break
            finally:
                self._arrived = None
        return max(0, sent - self.received)
