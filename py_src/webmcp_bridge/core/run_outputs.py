"""The outputs of a kernel request made without a cell (``jupyter_run_code``, the bridge's own inspections), merged
from its iopub messages by the rules of JupyterLab's ``OutputAreaModel``: consecutive ``stream`` messages of one name
are one output; ``clear_output`` empties the outputs at once or, with ``wait``, before the next output; ``error``,
``execute_result`` and ``display_data`` are one output each. Bounded: only ``max_outputs`` outputs and ``keep_chars``
characters of a stream are kept, the rest counted or measured (in UTF-8 bytes), so nothing more is held while a call
waits.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from webmcp_bridge.core.limits import utf8_len
from webmcp_bridge.core.nbjson import raw_output
from webmcp_bridge.core.raw import RawOutput

#: a host sends its collected messages once their stream text reaches this many characters (UTF-16 units), or
#: :data:`FLUSH_MS` after the first one, whichever is first: what the page holds of a run stays about this size
FLUSH_CHARS = 64 * 1024
FLUSH_MS = 100  #: milliseconds from a run's first unsent message to its sending
#: seconds a finished run waits (from its end or the last batch) for batches sent but not arrived yet (in the worker
#: a batch is a message, which can arrive after the run's end)
LATE_BATCH_SECONDS = 5.0


@dataclass
class _Output:
    """One output kept (nbformat) and the UTF-8 bytes of its stream text not kept."""

    output: dict[str, Any]
    dropped: int = 0


class RunOutputs:
    """The outputs of one kernel request, built from its messages: ``{"type": "stream", "name", "text"}``,
    ``{"type": "error", "ename", "evalue", "traceback"}``, ``{"type": "execute_result" | "display_data", "data"}``,
    ``{"type": "clear_output", "wait"}``; anything else is ignored.
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
        if not isinstance(message, dict):
            return
        kind = message.get("type")
        if kind == "stream":
            self._add({"output_type": "stream", "name": str(message.get("name")), "text": str(message.get("text", ""))})
        elif kind == "error":
            trace = message.get("traceback")
            names = {"ename": str(message.get("ename") or ""), "evalue": str(message.get("evalue") or "")}
            lines = [str(line) for line in trace] if isinstance(trace, list) else []
            self._add({"output_type": "error", **names, "traceback": lines})
        elif kind in ("execute_result", "display_data"):
            data = message.get("data")
            self._add({"output_type": kind, "data": data if isinstance(data, dict) else {}})
        elif kind == "clear_output":
            if message.get("wait"):
                self._clear_on_next = True
            else:
                self._clear()

    def add_all(self, messages: Iterable[Any]) -> None:
        for message in messages:
            self.add(message)

    def raw(self, head_bytes: int) -> tuple[RawOutput, ...]:
        """The kept outputs with text heads of ``head_bytes`` (a cut stream reports the whole text's size)."""
        described = []
        for kept in self.kept:
            out = raw_output(kept.output, head_bytes)
            if kept.dropped:
                items = (replace(i, bytes=i.bytes + kept.dropped) if i.mime == "text/plain" else i for i in out.items)
                out = replace(out, items=tuple(items))
            described.append(out)
        return tuple(described)


class RunBatches:
    """A run's event sink: merges each batch a host sends (JSON text of a list of messages) into ``merged`` and
    counts them, so the run can wait for those sent before its end (``runFinish`` says how many) not handed over yet."""

    def __init__(self, merged: RunOutputs) -> None:
        self.merged = merged
        self.received = 0
        self._arrived: asyncio.Event | None = None

    def receive(self, batch: Any) -> None:
        self.received += 1
        self.merged.add_all(json.loads(str(batch)))
        if self._arrived is not None:
            self._arrived.set()

    async def wait_for(self, sent: int, timeout: float) -> int:
        """Wait until ``sent`` batches were received, or ``timeout`` seconds passed without one arriving; returns how
        many are missing. Nothing raises but cancellation."""
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
