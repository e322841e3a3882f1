"""The host protocol's notebooks over the live JupyterLab application, through ``notebook.js``: a notebook panel is
a *handle* (a string ``notebook.js`` issues and drops when the panel is disposed), so the same Python runs in a
worker (docs/WORKER.md, "Handles instead of JS objects"); one no longer known answers NOTEBOOK_NOT_FOUND. Writes are
synchronous, so a hash check and its write cannot interleave with a person's edit. Failures of the page's
asynchronous work (a kernel request, a restart, a save) come back as data and become ToolErrors here.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from webmcp_bridge.access.kernel_scrub import scrub_code
from webmcp_bridge.core.errors import ErrorCode, ToolError, cell_not_found, notebook_not_found
from webmcp_bridge.core.limits import (
    ABORT_SETTLE_SECONDS,
    ANSI_PATTERN,
    BINARY_MIME_TYPES,
    CAPTURE_CHARS,
    CAPTURE_NODES,
    CAPTURE_PIXELS,
    CAPTURE_SLICE_MS,
    CHANGE_COALESCE_SECONDS,
    CHANGE_LOG_SIZE,
    DEFAULT_LIMITS,
    HIGHLIGHT_MS,
    KERNEL_POLL_SECONDS,
    PLATFORM_ERROR_CHARS,
    RUN_CODE_KEEP_MARGIN,
    SCRUB_HISTORY_SECONDS,
    TABS_READ_SECONDS,
    page_utf8,
    page_window,
    truncate_utf8,
)
from webmcp_bridge.core.metadata import METADATA_KEY
from webmcp_bridge.core.run_outputs import FLUSH_CHARS, FLUSH_MS, LATE_BATCH_SECONDS, RunBatches, RunOutputs
from webmcp_bridge.core.snapshot import source_hash, stale_cell_error
from webmcp_bridge.host.edit_plan import plan_edits
from webmcp_bridge.host.protocol import (
    AccessState,
    CellChange,
    CellType,
    CodeRun,
    EditOp,
    EncodedImage,
    Focus,
    ImageRequest,
    KernelInfo,
    OutputCapture,
    RawCell,
    RawItem,
    RawOutput,
    RunResult,
    RunState,
    SaveOutcome,
    TabsState,
    TextPage,
)
from webmcp_bridge.lab.ffi import Proxies, awaiting, is_nullish, json_of, load_half
from webmcp_bridge.lab.tabs import save_outcome, tabs_state

#: the person's own "Restart Kernel…" command (it asks "Restart Kernel?" first)
RESTART_COMMAND = "notebook:restart-kernel"

if TYPE_CHECKING:
    from webmcp_bridge.lab.host import JupyterLabHost


#: the name of the Error ``notebook.js`` throws for a handle it does not know (never issued, or its panel disposed)
NOTEBOOK_GONE = "NotebookGone"


def load_model_js(ctx: Any) -> Any:
    """``notebook.js`` attached to the loader's ``ctx`` and configured with the bounds Python decides
    (:mod:`webmcp_bridge.core.limits`)."""
    reader = load_half("webmcp_bridge.lab", "notebook.js", ctx)
    reader.configure(
        ANSI_PATTERN,
        json.dumps(list(BINARY_MIME_TYPES)),
        METADATA_KEY,
        CHANGE_LOG_SIZE,
        PLATFORM_ERROR_CHARS,
        CHANGE_COALESCE_SECONDS,
    )
    return reader


#: how many times a batch of edits is planned again when the notebook changed between its plan and its steps
#: (a worker: the page runs tasks between two crossings; on the main thread the two run with no task between)
_PLAN_TRIES = 3
#: the steps of a batch whose cell must still hold the source the call read (the others cannot lose text)
_CHECKED = ("set_source", "delete")
#: the reasons ``notebook.js`` captureOutput may answer "unavailable" with (anything else is read as "failed")
_CAPTURE_REASONS = ("not-shown", "no-renderer", "too-large", "failed")


class LabNotebook:
    """A :class:`~webmcp_bridge.host.protocol.LiveNotebook` over one open notebook panel, named by its handle
    (``path``: when the caller knows it; ``state``: the access state the host read with the handle, answered by
    :meth:`access_state` when nothing crossed since). In the worker the person may type between a tool's check and
    its write, so the writes that can lose text hand ``notebook.js`` what the check read (``expected``) and it writes
    nothing when the cell holds something else: STALE_CELL (docs/WORKER.md, "Check-then-write stays atomic")."""

    def __init__(
        self, host: JupyterLabHost, handle: str, path: str | None = None, state: AccessState | None = None
    ) -> None:
        self.host = host
        self.handle = str(handle)
        self.live = host.live
        self._path = path  # notebook.js starts tracking the notebook on the first call that reaches it
        self._revision: int | None = None  # the revision a write answered, until the next crossing
        self._held = state  # the access state read with the handle, until the next crossing

    def _call(self, method: str, *args: Any) -> Any:
        """``notebook.js``'s ``method(handle, *args)``: one crossing. Raises NOTEBOOK_NOT_FOUND when the panel was
        closed; any other exception passes unchanged."""
        self._revision = self._held = None
        try:
            return getattr(self.live, method)(self.handle, *args)
        except Exception as exc:
            self._raise_if_gone(exc)
            raise

    async def _call_async(self, method: str, *args: Any) -> Any:
        """As :meth:`_call` for a method that answers a promise (or null): the settled value, None for null."""
        self._revision = self._held = None
        try:
            return await _settled(getattr(awaiting(self.live), method)(self.handle, *args))
        except Exception as exc:
            self._raise_if_gone(exc)
            raise

    def _raise_if_gone(self, exc: Exception) -> None:
        """NOTEBOOK_NOT_FOUND for ``notebook.js``'s "no such notebook" (its error's name is in the text, however
        the crossing carried it)."""
        if NOTEBOOK_GONE in str(exc):
            raise notebook_not_found(self._path or self.handle) from None

    @property
    def path(self) -> str:
        """The notebook's workspace path."""
        if self._path is None:
            self._path = str(self._call("path"))
        return self._path

    def dirty(self) -> bool:
        return bool(self._call("dirty"))

    def revision(self) -> int:
        """The notebook's revision: the one a write just answered while nothing crossed since, else one crossing."""
        return self._revision if self._revision is not None else int(self._call("revision"))

    def cell_count(self) -> int:
        return int(self._call("cellCount"))

    def language(self) -> str:
        lang = self._call("language")
        return str(lang) if not is_nullish(lang) and lang else "python"

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        chosen = None if indices is None else json.dumps(list(indices))
        found = json.loads(self._call("cells", chosen, head_bytes, max_outputs))
        return [raw_cell(c, head_bytes) for c in found if c is not None]

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        found = json.loads(self._call("cells", json.dumps(list(cell_ids)), head_bytes, max_outputs))
        for cell_id, data in zip(cell_ids, found, strict=True):
            if data is None:
                raise cell_not_found(cell_id)
        return [raw_cell(data, head_bytes) for data in found]

    def find_cell(self, cell_id: str) -> RawCell:
        return self.find_cells([cell_id])[0]

    def sources_of(self, cell_ids: Sequence[str]) -> dict[str, str]:
        """``{cell id: source}`` of the cells of ``cell_ids`` that exist (a missing one is left out): one crossing."""
        ids = list(dict.fromkeys(cell_ids))
        found = json.loads(self._call("cells", json.dumps(ids), 0, 0))
        return {cell_id: str(data["source"]) for cell_id, data in zip(ids, found, strict=True) if data is not None}

    def run_states(self, last_index: int) -> list[RunState]:
        rows = json.loads(self._call("runStates", last_index))
        return [RunState(str(cell_id), int(index), count, edited) for cell_id, index, count, edited in rows]

    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage:
        """One crossing for the bytes of the page and a few around it (:func:`~webmcp_bridge.core.limits.page_window`),
        cut into the page here by every host's rule (:func:`~webmcp_bridge.core.limits.page_utf8`)."""
        first, end = page_window(offset, max_bytes)
        data = output_answer(self._call("outputBytes", cell_id, output_index, mime, first, end), cell_id)
        page, start, next_offset, total = page_utf8(
            base64.b64decode(data["data"]), int(data["first"]), int(data["total"]), offset, max_bytes
        )
        return TextPage(page, start, next_offset, total)

    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]:
        data = output_answer(self._call("outputBinary", cell_id, output_index, mime, max_bytes), cell_id)
        return data["data"], data["bytes"]

    def read_output_binary_head(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[bytes, int]:
        """One crossing for the first base64 characters that hold ``max_bytes`` decoded bytes, decoded here."""
        raw = self._call("outputBinary", cell_id, output_index, mime, 0, -(-max(0, max_bytes) // 3) * 4)
        data = output_answer(raw, cell_id)
        try:
            head = base64.b64decode(data["data"], validate=True)[:max_bytes]
        except (binascii.Error, ValueError):
            head = b""
        return head, int(data["bytes"])

    async def encode_output_image(
        self, cell_id: str, output_index: int, mime: str, request: ImageRequest
    ) -> EncodedImage | None:
        """``notebook.js`` resizeImage: the browser decodes the stored bytes, resamples and encodes them
        (createImageBitmap, OffscreenCanvas.convertToBlob)."""
        raw = await self._call_async(
            "resizeImage", cell_id, output_index, mime, request.width, request.height, request.mime, request.quality
        )
        message = f"The {mime} data of that output is not a valid {mime} image."
        return _encoded(output_answer(raw, cell_id), message, cellId=cell_id)

    async def capture_output(self, cell_id: str, output_index: int, max_side: int) -> OutputCapture:
        """``notebook.js`` captureOutput: the output's rendered node, copied with its computed styles in steps of at
        most :data:`~webmcp_bridge.core.limits.CAPTURE_SLICE_MS`, drawn from an SVG ``foreignObject`` image at most
        ``max_side`` pixels on its longest side; "too-large" past ``CAPTURE_NODES`` nodes or ``CAPTURE_CHARS``
        characters of text and style; its images and canvases copied at most ``CAPTURE_PIXELS`` pixels each."""
        limits = (CAPTURE_SLICE_MS, CAPTURE_NODES, CAPTURE_CHARS, CAPTURE_PIXELS)
        data = output_answer(await self._call_async("captureOutput", cell_id, output_index, max_side, *limits), cell_id)
        status = data.get("status")
        if status not in ("ok", "empty"):
            reason = data.get("reason") if status == "unavailable" else None
            return OutputCapture("unavailable", reason=reason if reason in _CAPTURE_REASONS else "failed")
        width, height, picture_width, picture_height = (
            int(data.get(name) or 0) for name in ("width", "height", "pictureWidth", "pictureHeight")
        )
        mime, key = str(data.get("mime") or ""), str(data.get("key") or "")
        return OutputCapture(status, mime, width, height, picture_width, picture_height, key)

    async def encode_capture(self, key: str, request: ImageRequest) -> EncodedImage:
        """``notebook.js`` encodeCapture: the held picture resampled and encoded (as :meth:`encode_output_image`)."""
        raw = await self._call_async("encodeCapture", key, request.width, request.height, request.mime, request.quality)
        data = json_of(raw)
        if data is None:
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, "That picture of the output is no longer held.")
        message = "The browser could not make a picture of that output; read its stored data with render: false."
        return _encoded(data, message, reason="failed")

    def release_capture(self, key: str) -> None:
        self._call("releaseCapture", key)

    def focus(self) -> Focus:
        data = json.loads(self._call("focus"))
        return Focus(data["cellId"], data["cursor"], data["selection"])

    def kernel(self) -> KernelInfo:
        return _kernel_info(json_of(self._call("kernel")))

    def agent_kernel(self) -> float | None:
        """``notebook.js`` kernelOwner: since when (seconds) the kernel is the agent's (kernel_trust.js)."""
        data = json_of(self._call("kernelOwner"))
        return None if data is None else float(data["since"]) / 1000

    def _written(self, raw: Any, cell_id: str, expected: str | None = None) -> RawCell:
        return raw_cell(self._write_answer(raw, {cell_id: expected}, cell_id))

    def _write_answer(self, raw: Any, expected: dict[str, Any], cell_id: str) -> dict[str, Any]:
        """A write's answer (the cell as written; null: no such cell). Raises CELL_NOT_FOUND, the line-ends refusal,
        INVALID_ARGUMENT for a cell waiting for input, or STALE_CELL (``changed``: nothing written)."""
        if is_nullish(raw):
            raise cell_not_found(cell_id)
        data: dict[str, Any] = json.loads(raw)
        if "changed" in data:
            raise self._stale(data["changed"], expected)
        if "lineEnds" in data:
            raise _line_ends_stuck(str(data["lineEnds"]))
        if "pendingInput" in data:  # JupyterLab's own rule: a cell waiting for input keeps its type (kernel deadlock)
            raise ToolError(
                ErrorCode.INVALID_ARGUMENT,
                "The cell waits for input (its run asked for it): its type is not changed until that is answered.",
                cellId=str(data["pendingInput"]),
            )
        return data

    @staticmethod
    def _stale(changed: dict[str, Any], expected: dict[str, str]) -> ToolError:
        """STALE_CELL for a write refused because the cell (``changed``: as it is now) no longer held ``expected``."""
        cell = raw_cell(changed)
        return stale_cell_error(cell, source_hash(expected[cell.id]), DEFAULT_LIMITS)

    def set_source(self, cell_id: str, source: str, expected: str | None = None) -> RawCell:
        data = self._write_answer(self._call("setSource", cell_id, source, expected), {cell_id: expected}, cell_id)
        cell = raw_cell(data)
        self.host.journal.record(self.path, cell.id, str(data["before"]), cell.source)
        self._revision = int(data["revision"])  # after the path's crossing, if any
        return cell

    def revert_source(self, cell_id: str, source: str, expected: str) -> str | None:
        """The person's revert (the Agent panel, never a tool): write ``source`` when the cell still holds
        ``expected``, as the person. None when written, else "gone" or "changed"
        (:data:`webmcp_bridge.changes.undo.REFUSALS`)."""
        raw = self._call("setSource", cell_id, source, expected, True)
        return "gone" if is_nullish(raw) else "changed" if {"changed", "lineEnds"} & set(json.loads(raw)) else None

    def insert_cell(self, index: int, cell_type: CellType, source: str) -> RawCell:
        return self._written(self._call("insertCell", index, cell_type, source), "(new cell)")

    def delete_cell(self, cell_id: str, expected: str | None = None) -> RawCell:
        return self._written(self._call("deleteCell", cell_id, expected), cell_id, expected)

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        return self._written(self._call("moveCell", cell_id, to_index), cell_id)

    def clear_outputs(self, cell_id: str) -> RawCell:
        return self._written(self._call("clearOutputs", cell_id), cell_id)

    def set_cell_type(self, cell_id: str, cell_type: CellType) -> RawCell:
        return self._written(self._call("setCellType", cell_id, cell_type), cell_id)

    def activate(self) -> None:
        """Bring the notebook's panel to the front (the Agent panel's "show in the notebook")."""
        self._call("activate")

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        ok = self._call(
            "setFocus", cell_id, json.dumps(cursor) if cursor else None, json.dumps(selection) if selection else None
        )
        if not ok:
            raise cell_not_found(cell_id)

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        """Make the cell active, scroll to it and outline the output for HIGHLIGHT_MS ms. Raises CELL_NOT_FOUND /
        OUTPUT_NOT_FOUND (nothing moves then)."""
        found = str(self._call("highlightOutput", cell_id, int(output_index), HIGHLIGHT_MS))
        if found == "cell":
            raise cell_not_found(cell_id)
        if found == "output":
            raise ToolError(
                ErrorCode.OUTPUT_NOT_FOUND,
                f"Cell {cell_id!r} has no output {output_index}.",
                cellId=cell_id,
                outputIndex=output_index,
            )

    def bridge_metadata(self) -> Any:
        return json.loads(str(self._call("bridgeMetadata")))

    def set_bridge_metadata(self, value: dict[str, Any]) -> None:
        self._call("setBridgeMetadata", json.dumps(value))

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        return [(int(i), str(cid), value) for i, cid, value in json.loads(str(self._call("cellBridgeMetadata")))]

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        if not self._call("setCellBridgeMetadata", cell_id, None if value is None else json.dumps(value)):
            raise cell_not_found(cell_id)

    def output_selection(self) -> dict[str, Any] | None:
        """The person's text selection inside one output: ``{cellId, outputIndex, text}`` or None (the share
        command)."""
        return json_of(self._call("outputSelection"))

    def take_changes(self) -> list[CellChange]:
        return [change_of(c) for c in json.loads(str(self._call("takeChanges")))]

    def take_changes_with_stamp(self) -> tuple[list[CellChange], int]:
        """:meth:`take_changes` and the notebook's stamp, a number that changes with the notebook's or a cell's
        metadata or the list of cells (so the person's side can skip reading them)."""
        data = json.loads(str(self._call("takeChangesWithStamp")))
        self._path = str(data["path"])
        return [change_of(c) for c in data["changes"]], int(data["stamp"])

    def cell_infos(
        self, max_chars: int, max_lines: int, known_revision: int | None
    ) -> tuple[int, list[tuple[str, str, str, int]]] | None:
        """``(revision, [(id, type, first non-blank line of the first max_lines lines cut to max_chars, outputs)])``
        of every cell in order; None when the revision is still ``known_revision``."""
        data = json_of(self._call("cellInfos", max_chars, max_lines, -1 if known_revision is None else known_revision))
        if data is None:
            return None
        return int(data["revision"]), [(str(i), str(t), str(line), int(n)) for i, t, line, n in data["cells"]]

    def access_state(self) -> AccessState:
        """``notebook.js`` accessState: one crossing, or none when nothing crossed since the host read it."""
        state, self._held = self._held, None
        if state is None:
            data = json.loads(str(self._call("accessState")))
            self._path = str(data["path"])
            state = access_state_of(data)
        return state

    async def save(self) -> SaveOutcome:
        """Through ``tabs.js`` (one check-and-write for every tab of the site, :mod:`webmcp_bridge.lab.tabs`)."""
        # JupyterLab takes the content one microtask after this call: the revision now is the one written
        revision = self.revision()
        self.host.tabs_read.pop(self.path, None)  # what the save changes is read anew after it
        return save_outcome(str(await awaiting(self.host.tabs).save(self.path)), revision, self.path)

    def tabs(self) -> TabsState:
        """The other tabs of this notebook (``tabs.js``), read at most once every
        :data:`~webmcp_bridge.core.limits.TABS_READ_SECONDS` (a save and :meth:`count_tabs` read them anew)."""
        key, now = self.path, time.monotonic()
        kept = self.host.tabs_read.get(key)
        if kept is not None and now - kept[0] < TABS_READ_SECONDS:
            return kept[1]
        state = tabs_state(str(self.host.tabs.state(key)))
        self.host.tabs_read[key] = (now, state)
        return state

    async def count_tabs(self) -> TabsState:
        state = tabs_state(str(await awaiting(self.host.tabs).fresh(self.path)))
        self.host.tabs_read[self.path] = (time.monotonic(), state)
        return state

    async def wait_for_kernel(self, timeout: float, statuses: tuple[str, ...] = ("idle", "busy")) -> KernelInfo:
        """Poll the kernel's status until it is one of ``statuses`` or ``timeout`` seconds passed (the session's
        ``ready`` promise can settle or fail before the kernel is up: the status is the truth). Returns early when
        the session is ready with no kernel ("none": No Kernel) or the kernel is dead."""
        loop = asyncio.get_event_loop()
        deadline = loop.time() + timeout
        while True:
            data = json_of(self._call("kernel"))
            info = _kernel_info(data)
            if (
                info.status in (*statuses, "dead")
                or loop.time() >= deadline
                or (info.status == "none" and data["ready"])
            ):
                return info
            await asyncio.sleep(KERNEL_POLL_SECONDS)

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        # notebook.js runs it as CodeCell.execute does but leaves the outputs untrusted (no script, no handler); they
        # are the agent's until JupyterLab's execute promise settles, however long after the call stopped waiting.
        # null (no such cell) or a promise of the reply's JSON text
        execution = asyncio.ensure_future(self._call_async("executeAsAgent", cell_id))
        execution.add_done_callback(lambda f: f.cancelled() or f.exception())  # a late failure is not "never retrieved"
        try:
            reply = await asyncio.wait_for(asyncio.shield(execution), timeout)
        except TimeoutError:
            return RunResult(cell_id, "timeout", None)
        except asyncio.CancelledError:  # the agent aborted the call: stop the cell rather than leave it running
            await self._interrupt_after_abort(execution)
            raise
        data = json_of(reply)
        if data is None:
            raise cell_not_found(cell_id)
        count = data.get("execution_count")
        return RunResult(cell_id, "ok" if data["status"] == "ok" else "error", None if count is None else int(count))

    async def _interrupt_after_abort(self, execution: asyncio.Future[Any]) -> None:
        """Interrupt the kernel and give the cell ABORT_SETTLE_SECONDS to end, so its KeyboardInterrupt output
        counts as the agent's run. Never raises."""
        try:
            await asyncio.wait_for(self._call_async("kernelAction", "interrupt", RESTART_COMMAND), ABORT_SETTLE_SECONDS)
            await asyncio.wait({execution}, timeout=ABORT_SETTLE_SECONDS)
        except (TimeoutError, asyncio.CancelledError, ToolError):
            pass

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        """Interrupt, or restart as the person's own command does (:data:`RESTART_COMMAND`; without it, apputils'
        SessionContextDialogs), so JupyterLab asks "Restart Kernel?" first. Returns the kernel once idle (or after
        ``timeout`` seconds), None when the restart was declined in the dialog."""
        data = json.loads(str(await self._call_async("kernelAction", action, RESTART_COMMAND)))
        outcome = data["outcome"]
        failures = {
            "none": "This notebook has no kernel.",
            "unavailable": "JupyterLab's kernel restart is not available on this page.",
            "failed": f"The kernel did not {action}: {str(data.get('message') or '')[:PLATFORM_ERROR_CHARS]}",
        }
        if outcome in failures:
            raise ToolError(ErrorCode.KERNEL_UNAVAILABLE, failures[outcome])
        if outcome == "declined":
            return None  # declined in the confirmation dialog: nothing changed
        return await self.wait_for_kernel(timeout, ("idle",))

    def apply_edits(self, ops: Sequence[EditOp], expected: dict[str, str] | None = None) -> list[str]:
        """The cells' ids and revision, then the steps :func:`~webmcp_bridge.host.edit_plan.plan_edits` resolved, in
        one transaction (one undo step) unless the revision moved meanwhile (planned again at most ``_PLAN_TRIES``
        times, else STALE_CELL). CELL_NOT_FOUND (from the plan) before anything changes."""
        for _ in range(_PLAN_TRIES):
            ids = json.loads(str(self._call("cellIds")))
            steps = plan_edits([str(i) for i in ids["ids"]], ops)
            known = expected or {}
            checked = {s.cell_id: known[s.cell_id] for s in steps if s.op in _CHECKED and s.cell_id in known}
            wire = json.dumps([step.wire() for step in steps])
            data = json.loads(str(self._call("applyEdits", wire, ids["revision"], json.dumps(checked))))
            if "revision" not in data:
                break
        else:
            raise ToolError(
                ErrorCode.STALE_CELL, "The notebook kept changing while the edits were applied; nothing changed."
            )
        if "lineEnds" in data:
            raise _line_ends_stuck(str(data["lineEnds"]))
        if "changed" in data:
            raise self._stale(data["changed"], checked)
        afters = data.get("afters") or {}
        for cell_id, before in (data.get("befores") or {}).items():
            if cell_id in afters:
                self.host.journal.record(self.path, str(cell_id), str(before), str(afters[cell_id]))
        return [str(cell_id) for cell_id in data["ids"]]

    async def scrub_kernel_history(
        self, counts: Sequence[int], sources: Sequence[str], timeout: float = SCRUB_HISTORY_SECONDS
    ) -> None:
        """Clear the kernel's memory of these hidden cells (:mod:`webmcp_bridge.access.kernel_scrub`) before the
        agent's code runs. Raises ToolError(KERNEL_UNAVAILABLE) when it did not finish (the agent's code then
        does not run)."""
        run = await self.run_code(scrub_code(counts, sources), timeout, head_bytes=0, max_outputs=1, as_agent=False)
        if run.status != "ok":
            raise ToolError(
                ErrorCode.KERNEL_UNAVAILABLE,
                "The kernel's history could not be cleared of the hidden cells, so nothing "
                "was run (it holds their sources); try again once the kernel is idle.",
            )

    async def run_code(
        self,
        code: str,
        timeout: float,
        *,
        head_bytes: int,
        max_outputs: int,
        silent: bool = False,
        as_agent: bool = True,
    ) -> CodeRun:
        """``kernel.requestExecute`` (store_history false); the iopub messages come as facts (in batches while the call
        waits, the rest at the end, also on a timeout), merged by :class:`~webmcp_bridge.core.run_outputs.RunOutputs`
        keeping ``head_bytes`` plus :data:`~webmcp_bridge.core.limits.RUN_CODE_KEEP_MARGIN` characters of a stream."""
        merged = RunOutputs(max_outputs, head_bytes + RUN_CODE_KEEP_MARGIN)
        batches = RunBatches(merged)
        proxies = Proxies()  # the run's event sink, freed once the run is finished
        sink = proxies.keep(batches.receive)
        try:
            args = (code, bool(silent), FLUSH_CHARS, FLUSH_MS, sink, bool(as_agent))
            started = json.loads(str(self._call("runCode", *args)))
            if "refused" in started:
                raise ToolError(
                    ErrorCode.KERNEL_UNAVAILABLE,
                    f"The kernel refused the request: {str(started['refused'])[:PLATFORM_ERROR_CHARS]}",
                )
            if "run" not in started:
                raise ToolError(ErrorCode.KERNEL_UNAVAILABLE, "This notebook has no kernel.")
            run = int(started["run"])
            try:
                done = json.loads(str(await asyncio.wait_for(_settled(awaiting(self.live).runDone(run)), timeout)))
            except TimeoutError:
                reason = f"no reply from the kernel within {timeout:g} s; the code may still be running"
                done = {"status": "timeout", "execution_count": None, "reason": reason}
            finally:
                # the messages not sent yet; collecting stops
                finished: dict[str, Any] = json_of(self.live.runFinish(run)) or {"facts": [], "sent": 0}
            # the batches sent before the end, which a worker's sink may not have been handed yet, come first
            missing = await batches.wait_for(int(finished["sent"]), LATE_BATCH_SECONDS)
            merged.add_all(finished["facts"])
        finally:
            proxies.clear()
        status = str(done["status"])
        reason = done.get("reason")
        if status == "aborted":
            reason = "the kernel aborted the request (an earlier request failed)"
        elif status == "failed":
            reason = f"the request failed: {reason}"
        if missing:
            lost = f"{missing} batch(es) of its outputs did not reach the bridge (none for {LATE_BATCH_SECONDS:g} s)"
            reason = f"{reason}; {lost}" if reason else f"the outputs are incomplete: {lost}"
        count = done.get("execution_count")
        return CodeRun(
            "ok" if status == "ok" else "timeout" if status == "timeout" else "error",
            merged.raw(head_bytes),
            merged.count,
            None if count is None else int(count),
            reason,
        )


def _encoded(data: dict[str, Any], failure: str, **details: Any) -> EncodedImage:
    """A picture ``notebook.js`` encoded; OUTPUT_NOT_FOUND with ``failure`` when it answered an error."""
    if "error" in data:
        raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, failure, **details)
    return EncodedImage(
        str(data["data"]), int(data["bytes"]), int(data["width"]), int(data["height"]), str(data["mime"])
    )


def _kernel_info(data: Any) -> KernelInfo:
    """``notebook.js`` kernel's answer: ``{name, status, displayName}``, or ``{ready}`` when there is no kernel."""
    if "name" not in data:
        return KernelInfo(None, "none", None)
    return KernelInfo(str(data["name"]), str(data["status"]), str(data["displayName"]))


def _line_ends_stuck(cell_id: str) -> ToolError:
    """A write refused because the cell holds CR line ends its editor could not be brought in line with (writing
    would throw in the editor, which would keep showing the old text)."""
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"Cell {cell_id!r} still holds CR line ends that could not be made LF in this "
        "JupyterLab's editor, so it was not changed (writing would leave the editor showing other text than the "
        "notebook). Nothing was changed.",
        cellId=cell_id,
    )


async def _settled(value: Any) -> Any:
    """A half's answer settled: None for null, else the awaited promise (or the worker's coroutine)."""
    return None if is_nullish(value) else await value


def output_answer(raw: Any, cell_id: str) -> dict[str, Any]:
    """The JSON object of ``notebook.js``'s answer about one output of ``cell_id``; OUTPUT_NOT_FOUND when the page
    answered nothing: the output is gone."""
    data = json_of(raw)
    if data is None:
        raise ToolError(
            ErrorCode.OUTPUT_NOT_FOUND, "That output is gone (the cell was rerun or cleared).", cellId=cell_id
        )
    return data


def raw_output(o: dict[str, Any], head_bytes: int) -> RawOutput:
    """An output as ``notebook.js``'s describeOutput gives it, each text head cut here to ``head_bytes`` UTF-8
    bytes (the JS half sends the first ``head_bytes`` UTF-16 units, which hold at least that many bytes)."""
    return RawOutput(
        o["output_type"],
        tuple(RawItem(m, b, truncate_utf8(h, head_bytes), bin_) for m, b, h, bin_ in o["items"]),
        name=o.get("name"),
        ename=o.get("ename"),
        evalue=o.get("evalue"),
    )


#: the change kinds a run makes (its outputs cleared, arriving, its execution count set)
RUN_KINDS = ("clear", "output", "run")


def change_of(c: dict[str, Any]) -> CellChange:
    """A change as ``notebook.js``'s change log records it. Its actor is the agent when it happened inside one of the
    agent's writes, or when it is the outputs or execution count (:data:`RUN_KINDS`) of a cell whose execution the
    agent started and that has not ended (also after the call stopped waiting); the person for everything else."""
    kind = c["kind"]
    agent = bool(c["agentWrite"]) or (kind in RUN_KINDS and bool(c["agentRun"]))
    return CellChange(
        "agent" if agent else "person",
        kind,
        str(c["cellId"]),
        float(c["time"]),
        c.get("access"),
        c.get("revision"),
        int(c.get("droppedBefore") or 0),
        int(c.get("repeats") or 0),
        float(c["lastTime"]) if c.get("repeats") else None,
    )


def raw_cell(data: dict[str, Any], head_bytes: int = 0) -> RawCell:
    """A cell as ``notebook.js``'s describeCell gives it (its output text heads cut to ``head_bytes`` UTF-8 bytes)."""
    return RawCell(
        id=data["id"],
        index=data["index"],
        cell_type=data["cell_type"],
        source=data["source"],
        execution_count=data.get("execution_count"),
        outputs=tuple(raw_output(o, head_bytes) for o in data["outputs"]),
        output_count=data["output_count"],
    )


def access_state_of(data: dict[str, Any]) -> AccessState:
    """The access state as ``notebook.js``'s accessState gives it (its ``path`` is the caller's)."""
    return AccessState(
        int(data["revision"]),
        data["notebook"],
        tuple((int(i), str(cid), access) for i, cid, access in data["cells"]),
        int(data["cellCount"]),
        tuple(change_of(c) for c in data["changes"]),
        tuple((str(cid), bool(e), bool(d)) for cid, e, d in data["locks"]),
    )
