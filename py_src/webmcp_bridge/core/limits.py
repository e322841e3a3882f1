"""Every bound the bridge applies, in one place, and the UTF-8 helpers that measure them.

Sizes are UTF-8 bytes unless a name says otherwise (``_CHARS``: code points in Python, UTF-16 units in a JS half;
``_SECONDS`` / ``_MS``; counts). The defaults follow the product contract (docs/TOOLS.md, "Bounds"): a result's JSON
text is at most 50 KiB. :class:`Limits` holds what a site or the person's settings may change; the module constants
are fixed. The JS halves and the loader get their numbers from here as data (``configure``; ``bridge.json`` from
:data:`LOADER_BOUNDS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB

# CSI / OSC / two-character escape sequences (ECMA-48), stripped from every text output before it is measured,
# previewed or paged, so offsets are stable and no terminal control reaches the agent.
ANSI_PATTERN = r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
_ANSI = re.compile(ANSI_PATTERN)

# MIME types stored base64-encoded in nbformat: never inlined into text, returned as MCP image content.
BINARY_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
# Capturing a rendered output (a chart, an HTML table): the longest side in pixels (larger is drawn smaller), the most
# nodes and characters of text and style copied (more is not pictured: serializing and drawing it would hold the
# page's main thread), the most pixels an image or canvas is copied at, and the ms of one stretch of the walk.
CAPTURE_SIDE = 2048
CAPTURE_NODES = 20_000
CAPTURE_CHARS = 4_000_000
CAPTURE_PIXELS = 4_000_000
CAPTURE_SLICE_MS = 8


@dataclass(frozen=True)
class Limits:
    """The bridge's bounds a site or the person's settings may change. Units: bytes (UTF-8), seconds or counts."""

    result_bytes: int = 50 * KIB  # one tool result's JSON text
    input_bytes: int = 1 * MIB  # the JSON text of one call's arguments (larger: TOO_LARGE)
    source_write_bytes: int = 256 * KIB  # a cell source an agent writes (larger is refused)
    source_read_bytes: int = 16 * KIB  # one cell's source in a read (longer ones are paged: ``sourceTruncated``)
    preview_bytes: int = 240  # one output's preview in a cell listing
    output_page_bytes: int = 16 * KIB  # default and largest page of ``jupyter_get_output`` text
    image_bytes: int = 512 * KIB  # one image returned (decoded): the original on request, the largest ``maxImageBytes``
    image_side: int = 1024  # the default ``maxSide`` (pixels) of the image copy ``jupyter_get_output`` returns
    image_copy_bytes: int = 96 * KIB  # the default ``maxImageBytes`` of that copy (decoded bytes)
    cells_per_read: int = 200  # cells in one ``jupyter_get_cells`` result
    outputs_per_cell: int = 20  # outputs described per cell in a listing
    workspace_entries: int = 500  # entries in one ``jupyter_list_workspace`` result
    run_cells: int = 100  # cells in one ``jupyter_run_cells`` call
    error_preview_bytes: int = 400  # the preview of the person's text in a STALE_CELL error
    execution_timeout_seconds: float = 20.0  # a call still running after this returns ``pending`` and keeps running
    pending_keep_seconds: float = 600.0  # how long a settled pending result stays collectable
    pending_keep_count: int = 50  # how many settled pending results are kept at most
    kernel_wait_seconds: float = 180.0  # the wait for a ready kernel (a first start can take minutes; calls go pending)
    run_timeout_seconds: float = 120.0  # how long one cell may run before ``jupyter_run_cells`` reports TIMEOUT
    file_page_bytes: int = 16 * KIB  # default and largest page of ``jupyter_read_file`` text
    file_read_bytes: int = 8 * MIB  # the largest text file ``jupyter_read_file`` loads (the contents API has no ranges)
    file_write_bytes: int = 512 * KIB  # the text ``jupyter_write_file`` writes
    batch_edits: int = 50  # the edits of one ``jupyter_apply_edits`` call
    comment_body_bytes: int = 8 * KIB  # one review-thread message body (longer: TOO_LARGE)
    comment_quote_bytes: int = 4 * KIB  # the quoted source text of a range anchor
    comment_threads_listed: int = 100  # threads in one ``jupyter_list_comments`` result
    comment_messages_listed: int = 3  # messages shown per thread in a list (the first and the latest ones)
    comment_messages_returned: int = 50  # messages returned for one thread (the first and the latest ones)
    comment_threads_stored: int = 1000  # threads stored in one notebook; creating more is refused
    comment_messages_stored: int = 500  # messages stored in one thread; replying past it is refused
    dialog_body_bytes: int = 1 * KIB  # the body text of one JupyterLab dialog as reported
    dialog_text_bytes: int = 200  # a dialog's title, each button label and its input's value as reported
    dialog_buttons: int = 10  # buttons reported per dialog (the rest counted in ``omittedButtons``)
    dialogs_listed: int = 5  # open dialogs reported in one result (the rest counted in ``dialogsOmitted``)


DEFAULT_LIMITS = Limits()

# -- fixed bounds ---------------------------------------------------------------------------------------------------
CHANGE_LOG_SIZE = 500  #: cell changes a live notebook buffers between two reads (``CellChange.dropped_before``)
#: bytes of a result kept free for its own keys and the envelope when a tool fills it with cells, threads or a page
RESULT_HEADROOM = 2048
MAX_INT = 2**31 - 1  #: every integer argument and stored number is at most this: larger ones would reach JS as BigInt
#: most diff lines a proposal shows, and bytes of code a run proposal shows: more is refused (TOO_LARGE), never cut
DIFF_LINES = 400
CODE_BYTES = 32 * KIB
MAX_SHARE_BYTES = 16 * KIB  #: the most text of one share the person makes with the agent that is kept
SITE_TOOL_ARGUMENT_BYTES = 8192  #: bytes of a site tool's arguments its proposal shows (more is refused, never cut)
PROPOSAL_REASON_BYTES = 500  #: the longest reason for a denial (cut; the box's input takes as many characters)
PERSON_INPUT_WINDOW_SECONDS = 1.5  #: a dialog opening this soon after the person's own key or click is the person's

# -- calls: the registry, pending calls, dialogs ----------------------------------------------------------------------
TOOL_NAME_MAX_CHARS = 128  #: the longest tool name; a name echoed back in an error or an event is cut to it
ARGUMENT_SUMMARY_BYTES = 200  #: a call's arguments summarised on one line (the Activity list, the status item)
VALIDATION_PROBLEMS = 10  #: problems listed in one INVALID_ARGUMENT error
UNKNOWN_ARGUMENTS_CHARS = 200  #: the unknown argument names quoted in that error
VALIDATION_MESSAGE_BYTES = 200  #: each listed problem's message
EARLY_ABORTS_KEPT = 100  #: aborts that arrived before their call started, remembered (the oldest forgotten first)
ECHO_TITLE_BYTES = 100  #: a dialog's title named in an error
ECHO_LABEL_BYTES = 60  #: each button label named in an error
PLATFORM_ERROR_CHARS = 200  #: the platform's own error message (a JS exception, a failed request) quoted in an error
TOOL_BUDGET = 20  #: the most tools a page registers at load by default (the default toolsets are checked against it)
#: the most crossings into JS of one Direct-mode jupyter_update_cell with no dialog open (docs/ARCHITECTURE.md,
#: "Crossings of one call"); tests/test_crossings.py and playwright-tests/test_tools.py hold it
UPDATE_CROSSINGS = 5
AGENT_DROP_THRESHOLD = 30  #: above this many tools, some in-browser agents drop every tool (jupyter_toolsets warns)

# -- arguments (written into the tools' input schemas) ------------------------------------------------------------
ID_CHARS = 256  #: the longest cell id or other id argument
URI_CHARS = 8192  #: the longest ``notebook://`` URI parsed (MAX_PATH_BYTES and ID_CHARS, fully escaped, fit)
#: the longest short id or hash (``expectedSourceHash``, ``pendingId``, ``dialogId``, a thread's id); an unknown one
#: is echoed back cut to it
SHORT_ID_CHARS = 64
BUTTON_LABEL_CHARS = 256  #: the longest button label ``jupyter_answer_dialog`` takes
CELL_IDS = 500  #: the most cell ids one argument lists
MAX_PATH_BYTES = 1024  #: the longest workspace path
MAX_NAME_BYTES = 255  #: the longest name of one path segment (as common file systems allow)
RUN_CODE_TIMEOUT_SECONDS = 600.0  #: the longest ``runTimeout`` a ``jupyter_run_code`` call may ask for
CHANGES_RETURNED = 200  #: ``jupyter_get_changes``: the most changes one call returns
CHANGES_RETURNED_DEFAULT = 100  #: and the default
CHANGES_WAIT_SECONDS = 15.0  #: its longest wait (below the default execution timeout, so it never goes pending)
CHANGES_POLL_SECONDS = 0.25  #: how often a waiting call looks again
WORKSPACE_ENTRIES_DEFAULT = 200  #: ``jupyter_list_workspace``'s default (the most: ``Limits.workspace_entries``)

# -- results --------------------------------------------------------------------------------------------------------
IDS_LISTED = 100  #: ids in a result's lists of left-out cells (``omittedCellIds``, ``skippedReadOnly``)
CONTEXT_ITEMS = 50  #: open documents, waiting proposals and pending calls listed by ``jupyter_get_context``
ERRORS_LISTED = 20  #: ``jupyter_get_context`` ``includeErrors``: cells with an error listed
ERROR_MESSAGE_BYTES = 300  #: bytes of each error's message
ERROR_SCAN_OUTPUTS = 100  #: outputs of a cell looked at for its error (an error ends a run: it is the last output)
#: the guidance for agents (:mod:`webmcp_bridge.tools.guidance`) in all, site paragraphs included (it costs every
#: agent that reads it), and the most the bridge's own text takes of it
GUIDANCE_BYTES = 2000
GUIDANCE_BASE_BYTES = 1600
PROVENANCE_PER_CELL = 3  #: coalesced changes listed per cell by ``jupyter_get_cell_access`` (newest first)
STALE_IDS_SHOWN = 5  #: ids listed per reason in a cell's ``outputsStale``
NAMES_SOURCE_BYTES = 16 * KIB  #: the longest cell source whose names are read (a longer one's parse holds the page)
NAMES_SLICE_SECONDS = 0.02  #: the longest stretch of parsing cell sources before the page gets the thread back
EXPORT_CHUNK = 50  #: cells read per crossing while exporting a notebook (and while mapping one, listing its errors)
MAP_CELLS = 2000  #: ``jupyter_get_notebook_map``: cells one answer maps (more continue at ``nextStartIndex``)
MAP_LINE_BYTES = 64  #: bytes of a cell's first line (or a heading) kept
MAP_MIN_LINE_BYTES = 24  #: the fewest a first line or title is cut to before cells are left for a next answer
MAP_SECTIONS = 300  #: headings listed
MAX_REPORTED_CUTS = 20  #: truncation reports listed in one fitted result (the rest are counted)
MIN_KEPT_BYTES = 96  #: stage 1 of fitting never shortens a string below this; past it, stage 2 drops items
#: bytes of a fitted result kept free for its truncation report: a fixed part and a part per reported cut
TRUNCATION_REPORT_BYTES = 200 + 100 * MAX_REPORTED_CUTS
MIN_SOURCE_PAGE_JSON_BYTES = 64  #: the fewest JSON-text bytes a page of a big cell source takes, whatever the cap
MAX_SOURCES = 256  #: pages of big cell sources remembered as given to the agent (the oldest forgotten first)
MIN_FILE_PAGE_BYTES = 256  #: a ``jupyter_read_file`` page halved to fit the result cap never goes below this
#: a wait for a pending call ends this much before the execution timeout, so it never goes pending (at most a tenth)
WAIT_MARGIN_SECONDS = 0.5
WAIT_FOR_RESULT_SECONDS = 3600  #: the largest ``timeout`` of ``jupyter_wait_for_result`` (cut to the execution timeout)

# -- jupyter_search (core/search.py, tools/search.py; why these bound a regular expression: core/search.py) ----------
SEARCH_PATTERN_CHARS = 200  #: the longest query
#: seconds (CPU time under CPython) one stretch of matching may run (core/alarm.py); a stretch starts at each text
#: and after each yield; one match that overruns it twice ends the search with INVALID_ARGUMENT. Under the page's
#: 50 ms: the engine checks the deadline every 4096 steps of at most a window each.
SEARCH_MATCH_SECONDS = 0.03
SEARCH_WINDOW_CHARS = 512  #: the characters one match sees (a longer line: windows overlapping by half)
SEARCH_RECHECK_CHARS = 4 * SEARCH_WINDOW_CHARS  #: of a long line, seen by a match that reached its window's end
SEARCH_SNIPPET_BYTES = 160  #: a hit's snippet
SEARCH_HITS_DEFAULT = 50  #: hits in one result by default
SEARCH_HITS = 100  #: and at most
SEARCH_TEXT_BYTES = 256 * KIB  #: one cell source or file searched (the rest is not, counted in ``cutTexts``)
SEARCH_OUTPUT_BYTES = 64 * KIB  #: one output's text searched (likewise)
SEARCH_SCAN_BYTES = 4 * MIB  #: text scanned in one call before it stops with a cursor (at a cell or file boundary)
SEARCH_SECONDS = 5.0  #: seconds one call scans before it stops with a cursor
SEARCH_SLICE_SECONDS = 0.02  #: the longest stretch between two yields to the page
SEARCH_WALK_ENTRIES = 5_000  #: workspace entries walked to find what to search (past it: ``walkTruncated``)
SEARCH_NOTEBOOK_BYTES = 16 * MIB  #: the largest notebook file read when it is not open (as the contents API says)
SEARCH_SKIPPED_LISTED = 20  #: paths listed in ``skippedPaths`` (files not searched: binary or too large)

# -- kernels --------------------------------------------------------------------------------------------------------
INTERRUPT_WAIT_SECONDS = 10.0  #: after an interrupt the agent asked for: the wait for an idle kernel
ABORT_SETTLE_SECONDS = 5.0  #: after an aborted run: the wait for the interrupt request, then for the cell to end
SCRUB_HISTORY_SECONDS = 10.0  #: the longest clearing hidden cells from the kernel's history may take (then: refused)
KERNEL_POLL_SECONDS = 0.1  #: how often a wait for the kernel looks at its status again
#: the run rule (access/run_consent.py): workspace entries walked to find a hidden notebook or cell; a workspace
#: with more is treated as holding one (every run is asked)
HIDDEN_WALK_ENTRIES = 5_000
#: ``jupyter_run_code``: text (UTF-16 units) kept per output while a run is waited for, past
#: ``Limits.output_page_bytes``: the rest of a flood of output is counted and dropped, not held
RUN_CODE_KEEP_MARGIN = 64 * 1024
VARIABLES_LISTED = 100  #: ``jupyter_list_variables`` (core/kernel_inspect.py): variables one list returns
VARIABLES_LISTED_DEFAULT = 50  #: and the default
VARIABLE_REPR_BYTES = 200  #: each repr in a list (and each item's, column's or key's in one variable's details)
VARIABLE_DETAIL_BYTES = 4 * KIB  #: one inspected variable's repr
VARIABLE_ITEMS = 20  #: items and public attributes of one inspected variable listed
VARIABLES_TIMEOUT_SECONDS = 30.0  #: how long the inspection may take in the kernel

# -- features: the change log, review threads, Propose mode -----------------------------------------------------------
TABS_READ_SECONDS = 5.0  #: a read of a notebook's other tabs (lab/tabs.js) is reused this long (a save reads anew)
#: how long a save waits for the site's tabs' Web Lock before it saves without it (same version check, a warning to
#: the person): another tab holds it far less; a longer hold is something else of the origin (the Pyodide kernel)
SAVE_LOCK_WAIT_SECONDS = 5.0
#: a sealed message between the site's tabs whose own time is further than this from the receiver's clock is dropped
#: (within it, a message that comes a second time is dropped)
TAB_MESSAGE_SECONDS = 30.0
TAB_MESSAGE_CHARS = 4096  #: the longest sealed message a tab opens
CHANGE_LOG_ENTRIES = 2000  #: entries the session's change log keeps (a reader is told it missed some)
CHANGE_COALESCE_SECONDS = 10.0  #: changes of one cell by one actor within this many seconds merge into one entry
AGENT_EDITS_KEPT = 500  #: the agent's source edits kept for review and revert (changes/undo.py)
AGENT_EDIT_BYTES = 8 * 1024 * 1024  #: bytes of their sources in all (the oldest go first)
TYPING_QUIET_SECONDS = 0.25  #: a burst of the person's typing: each edit at most this long after the one before
TYPING_LONGEST_SECONDS = 2.0  #: and none this long or more after the burst's first
BURST_LOOKBACK = 50  #: entries back a person's edit looks for the burst it continues
RESOURCE_TTL_MS = 1000  #: MCP resources' cache hint for a notebook or a cell (the person may be typing in it)
OUTPUT_RESOURCE_TTL_MS = 60_000  #: and for an output (it changes only when its cell runs again)
CONTEXT_CHARS = 32  #: characters of context stored on each side of a review thread's quote
FINGERPRINT_HEAD_BYTES = 1024  #: bytes of each representation's text that go into an output's fingerprint
PROPOSAL_SUMMARY_BYTES = 300  #: a proposal's one-line summary
SUMMARY_IDS = 10  #: cell ids named in the summary of a proposal over several cells
PROPOSAL_CHECK_SECONDS = 0.5  #: how often a waiting proposal checks that its cell and notebook still exist

# -- the person's settings (the Settings Editor's schema carries the same numbers; a test compares them) ------------
EXECUTION_TIMEOUT_BOUNDS = (1.0, 600.0)  #: ``executionTimeout``: smallest and largest
RESULT_BYTES_BOUNDS = (4096, 1048576)  #: ``resultBytes``
RUN_TIMEOUT_BOUNDS = (1.0, 86400.0)  #: ``runTimeout``
MAX_DISABLED_TOOLS = 200  #: ``disabledTools``: the most names or globs used
MAX_TOOLSET_WORDS = 50  #: ``toolsets``: the most words used
MIN_PAGE_BYTES = 1024  #: a page bound scaled down with a small ``resultBytes`` never goes below this
SETTINGS_LOAD_SECONDS = 5.0  #: the longest the start-up waits for the settings before it goes on with the defaults

# -- the person's side in JupyterLab (the Agent panel, the cell markers, the proposal boxes) -----------------------
ACTIVITY_ROWS = 200  #: rows kept in the Activity section (newest first)
ACCESS_ROWS = 200  #: restricted cells listed in the Access section (the rest are counted)
THREAD_ROWS = 100  #: threads listed in the Comments section
PANEL_PREVIEW_BYTES = 80  #: bytes of a cell's first line shown in a list row
PANEL_PREVIEW_LINES = 50  #: lines of a cell's source ``dom.js`` looks at for its first non-blank line
COMMENT_SHOWN_BYTES = 2000  #: bytes of a comment body shown before "show all"
COMMENT_TITLE_BYTES = 8000  #: bytes of a comment body in the element's title
QUOTE_SHOWN_BYTES = 300  #: bytes of a thread's quoted text shown
PANEL_FLUSH_SECONDS = 0.2  #: debounce of model changes before the panel and the markers look at a notebook again
WORKING_SECONDS = 2.0  #: how long the agent-at-work ring stays on a cell after the agent's last change to it
APPLY_CHUNK = 25  #: cells whose access "apply to all cells" changes between two yields to the browser
BOX_CHECK_SECONDS = 0.3  #: how often the boxes of waiting proposals are checked against their cells' current nodes
#: a proposal box's Accept is enabled no sooner than this after it appeared: an agent that cancels and proposes again
#: at once cannot put its new proposal under a click the person aimed at the old one
ACCEPT_ARM_SECONDS = 1.0
HIGHLIGHT_MS = 4000  #: how long ``highlight_output`` keeps an output outlined

# -- the loader (``lite/extension/static/remoteEntry.js``), handed over in ``bridge.json`` --------------------------
RECENT_CALLS = 5  #: recent tool calls the status item lists on hover
FAILURE_REASON_CHARS = 200  #: a failed start's reason (the last line of Python's traceback)
REFUSAL_REASON_CHARS = 300  #: the browser's reason for refusing to register a tool
#: when the bridge's Python starts (docs/loader.md, 1a): once the page has had no long task for START_QUIET_MS in an
#: idle period with at least START_IDLE_LEFT_MS left (a headless Chromium's idle periods last about 15 ms after
#: JupyterLab restored; 20 was never met), or START_LATEST_MS after JupyterLab restored at the latest
START_QUIET_MS = 500
START_IDLE_LEFT_MS = 5
START_LATEST_MS = 4_000
START_IDLE_WAIT_MS = 1000  #: the longest wait for an idle period while looking for a quiet page
START_RECHECK_MS = 100  #: the pause before looking again when the page was not quiet
STEP_IDLE_WAIT_MS = 500  #: the longest wait for an idle period between two start-up stages
#: the longest an agent's call made before the bridge's Python is up waits before the loader answers ``pending``
#: (docs/loader.md, "No client waits past a bound"): a first call must be answered within 15 s (clients give up,
#: Playwright MCP after 30 s, and its own snapshot took 2-4 s more on a loaded 2-core machine)
START_ANSWER_MS = 8_000
#: the worker's watchdog (docs/loader.md): the loader pings the worker's thread this often while calls run, and a
#: thread silent this long is held by Python (a backtracking pattern, a site's tool in a loop): the worker restarts
#: and its calls answer TIMEOUT. Longer than any call's stretch of Python, shorter than Playwright MCP's 30 s.
WORKER_PING_MS = 1_000
WORKER_STUCK_MS = 10_000
#: the numbers the loader applies, as ``bridge.json`` carries them (its ``bounds``)
LOADER_BOUNDS = {
    "recentCalls": RECENT_CALLS,
    "failureChars": FAILURE_REASON_CHARS,
    "refusalChars": REFUSAL_REASON_CHARS,
    "startQuietMs": START_QUIET_MS,
    "startIdleLeftMs": START_IDLE_LEFT_MS,
    "startLatestMs": START_LATEST_MS,
    "startIdleWaitMs": START_IDLE_WAIT_MS,
    "startRecheckMs": START_RECHECK_MS,
    "stepIdleWaitMs": STEP_IDLE_WAIT_MS,
    "startAnswerMs": START_ANSWER_MS,
    "workerPingMs": WORKER_PING_MS,
    "workerStuckMs": WORKER_STUCK_MS,
}

# -- a site's own contributions (webmcp_bridge.contrib) ---------------------------------------------------------------
CONTRIBUTION_ENTRIES = 20  #: entries of the site's contribution list loaded (page config and settings together)
CONTRIBUTION_FILE_BYTES = 4 * MIB  #: the largest contribution file (a module or a wheel) fetched from the site
DIAGNOSTICS_KEPT = 50  #: diagnostics kept in one session (later ones dropped)
DIAGNOSTIC_NAME_BYTES = 200  #: the longest name of one
DIAGNOSTIC_REASON_BYTES = 300  #: and its reason


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes (lone surrogates count as 3 bytes, as JS encoders emit U+FFFD)."""
    return len(text.encode("utf-8", "surrogatepass"))


def truncate_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` of at most ``max_bytes`` UTF-8 bytes (never splitting a code point)."""
    if max_bytes <= 0:
        return ""
    if len(text) <= max_bytes // 4:  # every code point is at most 4 bytes: no need to encode
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    cut = max_bytes
    while cut > 0 and (data[cut] & 0xC0) == 0x80:  # step back off a continuation byte
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")


def slice_utf8(text: str, offset: int, max_bytes: int) -> tuple[str, int, int | None, int]:
    """One page of ``text`` by UTF-8 byte offset: ``(page, start, next_offset, total_bytes)``.

    ``start`` is ``offset`` moved back to the start of its code point; the page never splits a code point and is at
    most ``max_bytes`` unless one code point is larger; ``next_offset`` is None at the end. ValueError for a negative
    offset.
    """
    data = text.encode("utf-8", "surrogatepass")
    return page_utf8(data, 0, len(data), offset, max_bytes)


def page_window(offset: int, max_bytes: int) -> tuple[int, int]:
    """The byte range ``[first, end)`` of a text :func:`page_utf8` needs for the page at ``offset`` (3 bytes more
    before, 4 after; the holder clips it). ValueError for a negative offset."""
    if offset < 0:
        raise ValueError("offset must be >= 0")
    return max(0, offset - 3), offset + max(1, max_bytes) + 4


def page_utf8(window: bytes, first: int, total: int, offset: int, max_bytes: int) -> tuple[str, int, int | None, int]:
    """:func:`slice_utf8` over ``window``, bytes ``[first, first + len(window))`` of a UTF-8 text of ``total``
    bytes covering :func:`page_window` (the JupyterLab host reads only that of a large output)."""
    if offset < 0:
        raise ValueError("offset must be >= 0")

    def at(i: int) -> int:
        return window[i - first]

    start = min(offset, total)
    while 0 < start < total and (at(start) & 0xC0) == 0x80:
        start -= 1
    end = min(total, start + max(1, max_bytes))
    while start < end < total and (at(end) & 0xC0) == 0x80:
        end -= 1
    if end == start and start < total:  # a single code point wider than the page
        end = start + 1
        while end < total and (at(end) & 0xC0) == 0x80:
            end += 1
    page = window[start - first : end - first].decode("utf-8", "surrogatepass")
    return page, start, (end if end < total else None), total


_CR = re.compile(r"\r\n?")


def normalize_line_ends(text: str) -> str:
    """``text`` with every CRLF and lone CR made LF, the only line ends a cell source holds in the bridge."""
    return _CR.sub("\n", text) if "\r" in text else text


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (see :data:`ANSI_PATTERN`)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def preview(text: str, max_bytes: int) -> str:
    """A one-glance preview: ANSI stripped, cut to ``max_bytes`` with a trailing ellipsis when cut."""
    clean = strip_ansi(text)
    if utf8_len(clean) <= max_bytes:
        return clean
    return truncate_utf8(clean, max(0, max_bytes - 3)) + "…"


def base64_decoded_len(data: str) -> int:
    """Decoded size in bytes of base64 text (whitespace and padding ignored)."""
    n = sum(1 for ch in data if not ch.isspace())
    pad = len(data.rstrip()) - len(data.rstrip().rstrip("="))
    return max(0, (n * 3) // 4 - pad)
