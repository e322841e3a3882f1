"""An in-memory implementation of the host protocol, over nbformat dicts.

It is the reference behaviour for the semantic layer and the stand-in for JupyterLab in CPython tests (as httpx's
MockTransport stands in for the network). It mirrors what the live adapter does where a user could tell the
difference: cells of nbformat <= 4.4 notebooks get ids on load, saving writes nbformat 4.5 with those ids, every
change bumps the revision, and a "person" can edit cells between agent calls.

A test harness, not shipped (with ``host_memory_dialogs.py``, ``host_memory_render.py`` and ``png_codec.py`` beside
it): the tests, and the benchmarks that build a bridge over an in-memory notebook, import it from ``tests/``."""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import io
import json
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from functools import lru_cache
from typing import Any

import png_codec
from host_memory_dialogs import MemoryDialogs
from host_memory_render import MemoryCaptures
from webmcp_bridge.core.errors import ErrorCode, ToolError, cell_not_found, file_too_large, is_a_folder, not_a_text_file
from webmcp_bridge.core.images import EncodedImage, ImageRequest
from webmcp_bridge.core.limits import (
    CHANGE_LOG_SIZE,
    DEFAULT_LIMITS,
    base64_decoded_len,
    normalize_line_ends,
    slice_utf8,
    utf8_len,
)
from webmcp_bridge.core.metadata import METADATA_KEY
from webmcp_bridge.core.nbjson import output_texts, raw_output, text_of
from webmcp_bridge.core.paths import is_notebook_path
from webmcp_bridge.core.snapshot import source_hash, stale_cell_error
from webmcp_bridge.host.edit_plan import plan_edits
from webmcp_bridge.host.protocol import (
    AccessState,
    CellChange,
    CellType,
    ChangeKind,
    CodeRun,
    EditOp,
    Entry,
    EntryType,
    Focus,
    KernelInfo,
    OpenDocument,
    RawButton,
    RawCell,
    RunResult,
    RunState,
    SavedNotebook,
    SaveKind,
    SaveOutcome,
    TabsState,
    TextPage,
)

Executor = Callable[[str, dict], tuple[list[dict[str, Any]], str]]

#: the pure-Python decoder takes seconds on a large figure: the last few decoded images are kept (tests read one
#: figure several times)
_decoded_png = lru_cache(maxsize=4)(png_codec.decode)


def python_executor(source: str, namespace: dict) -> tuple[list[dict[str, Any]], str]:
    """Run ``source`` with ``exec`` in ``namespace``; returns (nbformat outputs, "ok"|"error").
    Stands in for a kernel in tests: stdout becomes a stream output, an exception an error output."""
    out, err = io.StringIO(), io.StringIO()
    status = "ok"
    outputs: list[dict[str, Any]] = []
    try:
        with redirect_stdout(out), redirect_stderr(err):
            exec(compile(source, "<cell>", "exec"), namespace)
    except Exception as exc:  # the cell's own error, reported like a kernel would
        status = "error"
        error = {
            "output_type": "error",
            "ename": type(exc).__name__,
            "evalue": str(exc),
            "traceback": [f"\x1b[0;31m{type(exc).__name__}\x1b[0m: {exc}"],
        }
    if out.getvalue():
        outputs.append({"output_type": "stream", "name": "stdout", "text": out.getvalue()})
    if err.getvalue():
        outputs.append({"output_type": "stream", "name": "stderr", "text": err.getvalue()})
    if status == "error":
        outputs.append(error)
    return outputs, status


class MemoryNotebook(MemoryCaptures):
    """One open notebook held as an nbformat dict (``self.nb``)."""

    def __init__(self, workspace: MemoryWorkspace, path: str, nb: dict[str, Any]) -> None:
        self.workspace = workspace
        self.path = path
        self.nb = copy.deepcopy(nb)
        for cell in self.nb.setdefault("cells", []):
            cell["source"] = normalize_line_ends(
                text_of(cell.get("source", ""))
            )  # a list of lines on disk; CRLF as the editor shows it
            if not cell.get("id"):
                cell["id"] = uuid.uuid4().hex[:8]  # as JupyterLab does for ids missing on disk
        self._revision = workspace.clock  # a workspace-wide clock: a reopened notebook never reuses a revision
        self._dirty = False
        self._on_disk = workspace.files.get(path)  # the file as opened or last saved, to spot a change on disk
        self._exec_count = 0
        # the text each cell last ran (stripped) and whether it was edited since, as JupyterLab's code cell model
        # keeps them (``isDirty``): a cell loaded with outputs has no known text, so any edit counts
        self._ran_text: dict[str, str] = {}
        self._edited: dict[str, bool] = {}
        self._namespace: dict[str, Any] = {}
        self._focus = Focus()
        self.kernel_status = "idle"
        self.agent_since: float | None = None  # since when the kernel is the agent's (agent_kernel)
        self.kernel_display_name = "Python (in memory)"
        self.interruptible = True  # False stands in for a kernel that cannot stop running code (Pyodide's)
        self.run_seconds: dict[str, float] = {}  # cell id -> how long its run takes (simulated; 0 when absent)
        self._changes: list[CellChange] = []  # bounded by CHANGE_LOG_SIZE, as the live host's buffer (_record)
        self._last_deleted_meta: dict[str, Any] = {}
        self.highlighted: list[tuple[str, int]] = []  # (cell id, output index) of each highlight_output, for tests
        self.other_tabs: int | None = 0  # stands in for other tabs of the site with this notebook open (tests set it)
        self.saved_elsewhere = False  # stands in for another tab's save of the file (tests set it)
        self.not_shown, self.captures = set(), {}  # MemoryCaptures': cells the page does not show, pictures held

    # -- the person's side, for tests -------------------------------------------------------------
    def person_set_source(self, cell_id: str, source: str) -> None:
        """Edit a cell as the person would (through the UI)."""
        self._cell(cell_id)["source"] = source
        self._note_edit(cell_id)
        self._changed("edit", cell_id, "person")

    def person_insert_cell(self, index: int, cell_type: CellType, source: str) -> str:
        """Insert a cell as the person would; returns its id."""
        return self._insert(index, cell_type, source, "person")

    def person_delete_cell(self, cell_id: str) -> None:
        """Delete a cell as the person would."""
        self._delete(cell_id, "person")

    def person_set_focus(self, cell_id: str | None, cursor: dict | None = None, selection: dict | None = None) -> None:
        """Move the person's focus (active cell, cursor, selection) in this notebook."""
        self._focus = Focus(cell_id, cursor, selection)

    # -- protocol -------------------------------------------------------------------------------------
    def _changed(self, kind: ChangeKind | None = None, cell_id: str | None = None, actor: str = "agent") -> None:
        self.workspace.clock += 1
        self._revision = self.workspace.clock
        self._dirty = True
        if kind is not None and cell_id is not None:
            meta = next(
                (c.get("metadata", {}) for c in self.nb["cells"] if c.get("id") == cell_id), self._last_deleted_meta
            )
            block = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
            level = block.get("access") if isinstance(block, dict) else None
            self._record(CellChange(actor, kind, cell_id, time.time(), level, self._revision))  # type: ignore[arg-type]

    def _index(self, cell_id: str) -> int:
        for i, cell in enumerate(self.nb["cells"]):
            if cell.get("id") == cell_id:
                return i
        raise cell_not_found(cell_id)

    def _cell(self, cell_id: str) -> dict[str, Any]:
        return self.nb["cells"][self._index(cell_id)]

    def _raw(self, index: int, head_bytes: int, max_outputs: int) -> RawCell:
        cell = self.nb["cells"][index]
        outputs = cell.get("outputs", []) if cell.get("cell_type") == "code" else []
        return RawCell(
            id=cell["id"],
            index=index,
            cell_type=cell.get("cell_type", "code"),
            source=cell["source"],
            execution_count=cell.get("execution_count"),
            outputs=tuple(raw_output(o, head_bytes) for o in outputs[:max_outputs]),
            output_count=len(outputs),
        )

    def dirty(self) -> bool:
        return self._dirty

    def revision(self) -> int:
        return self._revision

    def cell_count(self) -> int:
        return len(self.nb["cells"])

    def language(self) -> str:
        info = self.nb.get("metadata", {}).get("language_info") or {}
        kernel = self.nb.get("metadata", {}).get("kernelspec") or {}
        return str(info.get("name") or kernel.get("language") or "python")

    def find_cells(self, cell_ids: Sequence[str], *, head_bytes: int = 0, max_outputs: int = 0) -> list[RawCell]:
        return [self._raw(self._index(cid), head_bytes, max_outputs) for cid in cell_ids]

    def find_cell(self, cell_id: str) -> RawCell:
        return self._raw(self._index(cell_id), 0, 0)

    def read_cells(self, indices: Sequence[int] | None, *, head_bytes: int, max_outputs: int) -> list[RawCell]:
        chosen = range(len(self.nb["cells"])) if indices is None else indices
        return [self._raw(i, head_bytes, max_outputs) for i in chosen]

    def run_states(self, last_index: int) -> list[RunState]:
        return [
            RunState(cell["id"], i, cell.get("execution_count"), self._edited.get(cell["id"], False))
            for i, cell in enumerate(self.nb["cells"][: max(0, last_index + 1)])
            if cell.get("cell_type") == "code"
        ]

    def _output(self, cell_id: str, output_index: int) -> dict[str, Any]:
        outputs = self._cell(cell_id).get("outputs", [])
        if not 0 <= output_index < len(outputs):
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"No output {output_index} in cell {cell_id!r}.")
        return outputs[output_index]

    def read_output_text(self, cell_id: str, output_index: int, mime: str, offset: int, max_bytes: int) -> TextPage:
        text = output_texts(self._output(cell_id, output_index)).get(mime, "")
        page, start, nxt, total = slice_utf8(text, offset, max_bytes)
        return TextPage(page, start, nxt, total)

    def read_output_binary(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[str | None, int]:
        data = "".join(output_texts(self._output(cell_id, output_index)).get(mime, "").split())
        size = base64_decoded_len(data)
        return (data if size <= max_bytes else None), size

    def _binary(self, cell_id: str, output_index: int, mime: str) -> str:
        output = self._output(cell_id, output_index)
        texts = output_texts(output)
        if mime not in texts:
            raise ToolError(ErrorCode.OUTPUT_NOT_FOUND, f"That output has no {mime!r} representation.", cellId=cell_id)
        return "".join(texts[mime].split())

    def read_output_binary_head(self, cell_id: str, output_index: int, mime: str, max_bytes: int) -> tuple[bytes, int]:
        data = self._binary(cell_id, output_index, mime)
        chars = -(-max(0, max_bytes) // 3) * 4
        try:
            head = base64.b64decode(data[:chars], validate=True)[:max_bytes]
        except (binascii.Error, ValueError):
            head = b""
        return head, base64_decoded_len(data)

    async def encode_output_image(
        self, cell_id: str, output_index: int, mime: str, request: ImageRequest
    ) -> EncodedImage | None:
        """PNG only, with the small pure-Python codec of :mod:`png_codec` (nearest-pixel resampling, an
        RGBA PNG out, whatever ``request.mime`` asked); None for the other formats, which this host cannot decode."""
        data = self._binary(cell_id, output_index, mime)
        await asyncio.sleep(0)
        if mime != "image/png":
            return None
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        decoded = _decoded_png(raw)
        if decoded is None:
            if raw.startswith(png_codec.SIGNATURE):
                return None  # a PNG this small codec does not take (interlaced, under 8 bits a sample)
            raise ToolError(
                ErrorCode.OUTPUT_NOT_FOUND,
                f"The {mime} data of that output is not a valid {mime} image.",
                cellId=cell_id,
            )
        width, height, rows = decoded
        copy = png_codec.encode(
            request.width, request.height, png_codec.resample(width, height, rows, request.width, request.height)
        )
        return EncodedImage(
            base64.b64encode(copy).decode("ascii"), len(copy), request.width, request.height, "image/png"
        )

    def _check_expected(self, expected: dict[str, str | None]) -> None:
        """STALE_CELL before any change for a cell not holding what the check read (None: unchecked), as notebook.js."""
        for cell in [self.find_cell(cell_id) for cell_id, source in expected.items() if source is not None]:
            if cell.source != expected[cell.id]:
                raise stale_cell_error(cell, source_hash(str(expected[cell.id])), DEFAULT_LIMITS)

    def set_source(self, cell_id: str, source: str, expected: str | None = None) -> RawCell:
        self._check_expected({cell_id: expected})
        self._cell(cell_id)["source"] = normalize_line_ends(source)
        self._note_edit(cell_id)
        self._changed("edit", cell_id)
        return self.find_cell(cell_id)

    def _note_edit(self, cell_id: str) -> None:
        cell = self._cell(cell_id)
        if cell.get("execution_count") is not None:
            self._edited[cell_id] = self._ran_text.get(cell_id, "") != cell["source"].strip()

    @staticmethod
    def _new_cell(cell_type: CellType, source: str) -> dict[str, Any]:
        cell: dict[str, Any] = {"cell_type": cell_type, "id": uuid.uuid4().hex[:8], "metadata": {}}
        cell["source"] = normalize_line_ends(source)
        if cell_type == "code":
            cell.update(outputs=[], execution_count=None)
        return cell

    def _insert(self, index: int, cell_type: CellType, source: str, actor: str = "agent") -> str:
        self.nb["cells"].insert(index, cell := self._new_cell(cell_type, source))
        self._changed("insert", cell["id"], actor)
        return str(cell["id"])

    def insert_cell(self, index: int, cell_type: CellType, source: str) -> RawCell:
        return self.find_cell(self._insert(index, cell_type, source))

    def _delete(self, cell_id: str, actor: str = "agent") -> None:
        self._last_deleted_meta = self._cell(cell_id).get("metadata", {})
        del self.nb["cells"][self._index(cell_id)]
        self._changed("delete", cell_id, actor)

    def delete_cell(self, cell_id: str, expected: str | None = None) -> RawCell:
        self._check_expected({cell_id: expected})
        before = self.find_cell(cell_id)
        self._delete(cell_id)
        return before

    def move_cell(self, cell_id: str, to_index: int) -> RawCell:
        cell = self.nb["cells"].pop(self._index(cell_id))
        self.nb["cells"].insert(to_index, cell)
        self._changed("move", cell_id)
        return self.find_cell(cell_id)

    def set_cell_type(self, cell_id: str, cell_type: CellType) -> RawCell:
        cell = self._cell(cell_id)
        if cell.get("cell_type") != cell_type:
            cell["cell_type"] = cell_type
            if cell_type == "code":
                cell.update(outputs=[], execution_count=None)
                cell.pop("attachments", None)
            else:
                cell.pop("outputs", None)
                cell.pop("execution_count", None)
            self._edited.pop(cell_id, None)
            self._changed("type", cell_id)
        return self.find_cell(cell_id)

    def clear_outputs(self, cell_id: str) -> RawCell:
        cell = self._cell(cell_id)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            self._changed("clear", cell_id)
        return self.find_cell(cell_id)

    def bridge_metadata(self) -> Any:
        return copy.deepcopy(self.nb.setdefault("metadata", {}).get(METADATA_KEY))

    def set_bridge_metadata(self, value: dict[str, Any]) -> None:
        self.nb.setdefault("metadata", {})[METADATA_KEY] = copy.deepcopy(value)
        self._changed()

    def cell_bridge_metadata(self) -> list[tuple[int, str, Any]]:
        return [
            (i, c["id"], copy.deepcopy(c["metadata"][METADATA_KEY]))
            for i, c in enumerate(self.nb["cells"])
            if isinstance(c.get("metadata"), dict) and METADATA_KEY in c["metadata"]
        ]

    def _cell_locks(self) -> tuple[tuple[str, bool, bool], ...]:
        locks = []
        for c in self.nb["cells"]:
            meta = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
            editable, deletable = meta.get("editable") is not False, meta.get("deletable") is not False
            if not (editable and deletable):
                locks.append((c["id"], editable, deletable))
        return tuple(locks)

    def set_cell_bridge_metadata(self, cell_id: str, value: dict[str, Any] | None) -> None:
        meta = self._cell(cell_id).setdefault("metadata", {})
        if value is None:
            meta.pop(METADATA_KEY, None)
        else:
            meta[METADATA_KEY] = copy.deepcopy(value)
        self._changed("metadata", cell_id, "person")

    def _record(self, change: CellChange) -> None:
        """Buffer ``change`` until the next take; past CHANGE_LOG_SIZE the oldest are dropped and counted in the
        oldest change kept (``dropped_before``), as ``notebook.js`` does for the live notebook."""
        self._changes.append(change)
        if len(self._changes) > CHANGE_LOG_SIZE:
            gone = self._changes[: len(self._changes) - CHANGE_LOG_SIZE]
            del self._changes[: len(gone)]
            dropped = sum(1 + c.dropped_before for c in gone)
            self._changes[0] = replace(self._changes[0], dropped_before=self._changes[0].dropped_before + dropped)

    def take_changes(self) -> list[CellChange]:
        taken = list(self._changes)
        self._changes.clear()
        return taken

    def access_state(self) -> AccessState:
        def access(block: Any) -> Any:
            return block.get("access") if isinstance(block, dict) else None

        cells = tuple(
            (i, c["id"], access(c["metadata"].get(METADATA_KEY)))
            for i, c in enumerate(self.nb["cells"])
            if isinstance(c.get("metadata"), dict) and access(c["metadata"].get(METADATA_KEY)) is not None
        )
        return AccessState(
            self._revision,
            access(self.nb.setdefault("metadata", {}).get(METADATA_KEY)),
            cells,
            len(self.nb["cells"]),
            tuple(self.take_changes()),
            self._cell_locks(),
        )

    def set_focus(self, cell_id: str, cursor: dict | None, selection: dict | None) -> None:
        self._index(cell_id)
        self._focus = Focus(cell_id, cursor or (selection["end"] if selection else {"line": 0, "column": 0}), selection)
        self.workspace.current = self.path

    def focus(self) -> Focus:
        return self._focus

    def highlight_output(self, cell_id: str, output_index: int) -> None:
        self._output(cell_id, output_index)
        self._focus = Focus(cell_id, {"line": 0, "column": 0}, None)
        self.workspace.current = self.path
        self.highlighted.append((cell_id, output_index))

    def kernel(self) -> KernelInfo:
        return KernelInfo("python3", self.kernel_status, self.kernel_display_name)

    async def save(self) -> SaveOutcome:
        """As the live host: the file is compared with the text this notebook loaded or last saved (so any
        change, however close, is seen) and a changed file asks "File Changed" first."""
        outcome: SaveKind = "saved"
        if self.workspace.files.get(self.path) != self._on_disk:  # changed on disk: JupyterLab asks first
            answer = await self.workspace.dialogs.ask(
                "File Changed",
                f'"{self.path}" has changed on disk since the last time it was opened or saved.',
                (
                    RawButton("Cancel", accept=False),
                    RawButton("Revert", accept=True),
                    RawButton("Overwrite", accept=True, warn=True),
                ),
            )
            if answer == 0:
                return SaveOutcome("cancelled")
            if answer == 1:  # revert: load the version on disk
                self.nb = MemoryNotebook(self.workspace, self.path, json.loads(self.workspace.files[self.path])).nb
                self._on_disk, self._dirty = self.workspace.files[self.path], False
                self._changed()
                self._dirty = False
                self.saved_elsewhere = False
                return SaveOutcome("reverted")
            outcome = "overwritten"
        revision = self.revision()
        saved = copy.deepcopy(self.nb)
        saved["nbformat"], saved["nbformat_minor"] = 4, max(5, int(saved.get("nbformat_minor", 5)))
        self.workspace.files[self.path] = self._on_disk = json.dumps(saved, indent=1, ensure_ascii=False) + "\n"
        self._dirty = False
        self.saved_elsewhere = False
        return SaveOutcome(outcome, revision, None)

    def tabs(self) -> TabsState:
        return TabsState(self.other_tabs, self.saved_elsewhere)

    async def count_tabs(self) -> TabsState:
        return self.tabs()

    async def wait_for_kernel(self, timeout: float) -> KernelInfo:
        return self.kernel()

    def agent_kernel(self) -> float | None:
        return self.agent_since

    async def run_cell(self, cell_id: str, timeout: float) -> RunResult:
        cell = self._cell(cell_id)
        self.agent_since = self.agent_since or time.time()  # the tools' runs are the agent's
        outputs, status = self.workspace.executor(cell.get("source", ""), self._namespace)
        await asyncio.sleep(0)
        self._exec_count += 1
        cell["outputs"], cell["execution_count"] = outputs, self._exec_count
        self._ran_text[cell_id], self._edited[cell_id] = cell.get("source", "").strip(), False
        self._changed("run", cell_id)
        if (
            self.run_seconds.get(cell_id, 0.0) > timeout
        ):  # past the wait: reported as a timeout (its outputs land "later")
            return RunResult(cell_id, "timeout", None, f"no reply within {timeout:g} s")
        return RunResult(cell_id, status, self._exec_count)

    async def kernel_action(self, action: str, timeout: float) -> KernelInfo | None:
        if action == "restart":
            if self.workspace.dialogs.confirm_restart:  # JupyterLab's confirmation, as MemoryDialogs stands in for it
                answer = await self.workspace.dialogs.ask(
                    "Restart Kernel?",
                    f"Do you want to restart the kernel of {self.path.rsplit('/', 1)[-1]}? All variables will be lost.",
                    (RawButton("Cancel", accept=False), RawButton("Restart", accept=True, warn=True)),
                )
                if answer != 1:
                    return None
            self._namespace, self._exec_count, self.agent_since = {}, 0, None
        elif self.kernel_status == "busy" and self.interruptible:
            self.kernel_status = "idle"
        return self.kernel()

    def apply_edits(self, ops: Sequence[EditOp], expected: dict[str, str] | None = None) -> list[str]:
        steps = plan_edits([c["id"] for c in self.nb["cells"]], ops)  # CELL_NOT_FOUND before anything changes
        checked = {s.cell_id for s in steps if s.op in ("set_source", "delete")}
        self._check_expected({i: s for i, s in (expected or {}).items() if i in checked})
        cells = list(self.nb["cells"])  # worked on a copy (cells copied on write), swapped in at the end
        touched: list[tuple[str, ChangeKind]] = []
        for step in steps:
            if step.op == "insert":
                cell = self._new_cell(step.cell_type or "code", step.source or "")
                cells.insert(step.index, cell)
                touched.append((cell["id"], "insert"))
            elif step.op == "set_source":
                cells[step.index] = {**cells[step.index], "source": normalize_line_ends(step.source or "")}
                touched.append((str(step.cell_id), "edit"))
            elif step.op == "delete":
                del cells[step.index]
                touched.append((str(step.cell_id), "delete"))
            else:
                cells.insert(step.index, cells.pop(step.from_index or 0))
                touched.append((str(step.cell_id), "move"))
        self.nb["cells"] = cells
        self._changed()  # one revision for the batch, one change record per op
        now = time.time()
        for cell_id, kind in touched:
            self._record(CellChange("agent", kind, cell_id, now))
        return [cell_id for cell_id, _ in touched]

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
        if self.kernel_status not in ("idle", "busy"):
            raise ToolError(ErrorCode.KERNEL_UNAVAILABLE, "This notebook has no running kernel.")
        if as_agent:
            self.agent_since = self.agent_since or time.time()
        outputs, status = self.workspace.executor(code, self._namespace)
        await asyncio.sleep(0)
        return CodeRun(status, tuple(raw_output(o, head_bytes) for o in outputs[:max_outputs]), len(outputs), None)


class MemoryWorkspace:
    """A workspace of files (path -> text) and the notebooks open on them.

    Args:
        files: initial contents; notebook files are nbformat JSON text; a ``bytes`` value stands for a file
            stored as binary (as JupyterLab stores uploads), text only when it is UTF-8 without NUL.
        executor: runs a code cell's source (default :func:`python_executor`)."""

    def __init__(self, files: dict[str, str | bytes] | None = None, executor: Executor = python_executor) -> None:
        self.files: dict[str, str | bytes] = dict(files or {})
        self.executor = executor
        self.open: dict[str, MemoryNotebook] = {}
        self.current: str | None = None
        self.clock = 0  # counts every change of every notebook (revisions are read from it)
        self.dialogs = MemoryDialogs()

    def _dirs(self) -> set[str]:
        dirs = {""}
        for path in self.files:
            parts = path.split("/")[:-1]
            dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return dirs

    async def list_dir(self, path: str) -> list[Entry] | None:
        if path not in self._dirs():
            return None
        prefix = f"{path}/" if path else ""
        seen: dict[str, Entry] = {}
        for p in self.files:
            if p.startswith(prefix):
                rest = p[len(prefix) :]
                name = rest.split("/")[0]
                full = prefix + name
                kind: EntryType = "directory" if "/" in rest else ("notebook" if is_notebook_path(name) else "file")
                seen.setdefault(name, Entry(full, name, kind, open=full in self.open))
        return list(seen.values())

    async def stat(self, path: str) -> Entry | None:
        name = path.rsplit("/", 1)[-1]
        if path in self.files:
            return Entry(path, name, "notebook" if is_notebook_path(path) else "file")
        if path in self._dirs():
            return Entry(path, name, "directory")
        return None

    async def open_notebook(self, path: str, activate: bool) -> MemoryNotebook:
        if path not in self.open:
            self.open[path] = MemoryNotebook(self, path, json.loads(self.files[path]))
        if activate or self.current is None:
            self.current = path
        return self.open[path]

    async def create_notebook(self, path: str, kernel_name: str | None) -> None:
        nb = {
            "cells": [],
            "metadata": {
                "kernelspec": {"name": kernel_name or "python", "display_name": "Python", "language": "python"}
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        self.files[path] = json.dumps(nb)

    def open_documents(self) -> list[OpenDocument]:
        return [OpenDocument(p, "notebook", nb.dirty()) for p, nb in self.open.items()]

    def current_notebook(self) -> MemoryNotebook | None:
        return self.open.get(self.current) if self.current else None

    def find_open(self, path: str) -> MemoryNotebook | None:
        return self.open.get(path)

    async def notebook_bridge_metadata(self, path: str, listed: Entry | None = None) -> Any:
        if listed is None and path in self.open:
            return self.open[path].bridge_metadata()
        try:
            meta = json.loads(self.files[path]).get("metadata")
        except (KeyError, ValueError, AttributeError):
            return None
        return copy.deepcopy(meta.get(METADATA_KEY)) if isinstance(meta, dict) else None

    async def saved_access_blocks(self, path: str) -> tuple[Any, list[Any]] | None:
        data = self.files.get(path)
        if data is None or not is_notebook_path(path):
            return None
        try:
            nb = json.loads(data)
            meta = nb.get("metadata")
            cells = [c.get("metadata") for c in nb.get("cells", []) if isinstance(c, dict)]
        except (ValueError, AttributeError):
            return None
        blocks = [m.get(METADATA_KEY) for m in cells if isinstance(m, dict) and m.get(METADATA_KEY) is not None]
        return (meta.get(METADATA_KEY) if isinstance(meta, dict) else None), copy.deepcopy(blocks)

    async def read_saved_notebook(
        self, path: str, max_bytes: int, *, head_bytes: int, max_outputs: int
    ) -> SavedNotebook | None:
        data = self.files.get(path)
        if data is None or not is_notebook_path(path) or path in self.open:
            return None
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        if utf8_len(text) > max_bytes:
            raise file_too_large(path, utf8_len(text), max_bytes)
        try:
            nb = json.loads(text)
            meta = nb.get("metadata")
            cells = [c for c in nb.get("cells", []) if isinstance(c, dict)]
        except (ValueError, AttributeError):
            return None
        raws, blocks = [], []
        for index, cell in enumerate(cells):
            outputs = (cell.get("outputs") or []) if cell.get("cell_type") == "code" else []
            raws.append(
                RawCell(
                    id=str(cell.get("id") or ""),
                    index=index,
                    cell_type=cell.get("cell_type", "code"),
                    source=normalize_line_ends(text_of(cell.get("source", ""))),
                    execution_count=cell.get("execution_count"),
                    outputs=tuple(raw_output(o, head_bytes) for o in outputs[:max_outputs] if isinstance(o, dict)),
                    output_count=len(outputs),
                )
            )
            cell_meta = cell.get("metadata")
            blocks.append(copy.deepcopy(cell_meta.get(METADATA_KEY)) if isinstance(cell_meta, dict) else None)
        notebook_block = copy.deepcopy(meta.get(METADATA_KEY)) if isinstance(meta, dict) else None
        return SavedNotebook(notebook_block, tuple(raws), tuple(blocks))

    async def read_text(self, path: str, max_bytes: int) -> str | None:
        if path not in self.files:
            if path in self._dirs():
                raise is_a_folder(path)
            return None
        data = self.files[path]  # bytes stand for a file stored as binary (an upload)
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
        except UnicodeDecodeError:
            raise not_a_text_file(path) from None
        if "\x00" in text:  # the same rule as notebook.js: UTF-8 text without NUL characters
            raise not_a_text_file(path)
        size = utf8_len(text)
        if size > max_bytes:
            raise file_too_large(path, size, max_bytes)
        return text

    async def write_text(self, path: str, text: str) -> None:
        self.files[path] = text
