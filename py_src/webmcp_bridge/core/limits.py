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
#: cell changes a live notebook buffers between two reads (older ones dropped: ``CellChange.dropped_before``)
CHANGE_LOG_SIZE = 500
#: bytes of a result kept free for its own keys and the envelope when a tool fills it with cells, threads or a page
RESULT_HEADROOM = 2048
MAX_INT = 2**31 - 1  #: every integer argument and stored number is at most this: larger ones would reach JS as BigInt
#: most diff lines a proposal shows, and bytes of code a run proposal shows: more is refused (TOO_LARGE), never cut
DIFF_LINES = 400
CODE_BYTES = 32 * KIB
MAX_SHARE_BYTES = 16 * KIB  #: the most text of one share the person makes with the agent that is kept
SITE_TOOL_ARGUMENT_BYTES = 8192  #: bytes of a site tool's arguments its proposal shows (more is refused, never cut)
#: the longest reason the person gives when denying a proposal (cut; the box's input takes as many characters)
PROPOSAL_REASON_BYTES = 500
#: a dialog that opens within this many seconds of the person's own key or pointer press is the person's
PERSON_INPUT_WINDOW_SECONDS = 1.5

# -- calls: the registry, pending calls, dialogs ----------------------------------------------------------------------
#: the longest tool name; a name echoed back in an error or an event is cut to it
TOOL_NAME_MAX_CHARS = 128
#: bytes of a call's arguments summarised on one line (the Activity list, the status item's recent calls)
ARGUMENT_SUMMARY_BYTES = 200
#: INVALID_ARGUMENT: problems listed, characters of the unknown argument names quoted, bytes of each problem's message
VALIDATION_PROBLEMS = 10
UNKNOWN_ARGUMENTS_CHARS = 200
VALIDATION_MESSAGE_BYTES = 200
EARLY_ABORTS_KEPT = 100  #: aborts that arrived before their call started, remembered (the oldest forgotten first)
#: bytes of a dialog's title and of each button label named in an error
ECHO_TITLE_BYTES = 100
ECHO_LABEL_BYTES = 60
#: the platform's own error message (a JS exception, a failed kernel request) quoted in an error
PLATFORM_ERROR_CHARS = 200
TOOL_BUDGET = 20  #: the most tools a page registers at load by default (the default toolsets are checked against it)
#: the most crossings into JS of one Direct-mode jupyter_update_cell with no dialog open (docs/ARCHITECTURE.md,
#: "Crossings of one call"); tests/test_crossings.py and playwright-tests/test_tools.py hold it
UPDATE_CROSSINGS = 5
#: above this many registered tools, some in-browser agents drop every tool of the page (jupyter_toolsets warns)
AGENT_DROP_THRESHOLD = 30

# -- arguments (written into the tools' input schemas) ------------------------------------------------------------
#: the longest cell id or other id argument
ID_CHARS = 256
#: the longest ``notebook://`` URI parsed (a path of MAX_PATH_BYTES and an id of ID_CHARS, fully escaped, fit)
URI_CHARS = 8192
#: the longest short id or hash (``expectedSourceHash``, ``pendingId``, ``dialogId``, a thread's id); an unknown one
#: is echoed back cut to it
SHORT_ID_CHARS = 64
BUTTON_LABEL_CHARS = 256  #: the longest button label ``jupyter_answer_dialog`` takes
CELL_IDS = 500  #: the most cell ids one argument lists
#: the longest workspace path, and the longest name of one segment (as common file systems allow)
MAX_PATH_BYTES = 1024
MAX_NAME_BYTES = 255
RUN_CODE_TIMEOUT_SECONDS = 600.0  #: the longest ``runTimeout`` a ``jupyter_run_code`` call may ask for
#: ``jupyter_get_changes``: the most changes one call returns and the default; the longest wait (below the default
#: execution timeout, so a wait never goes pending) and how often a waiting call looks again
CHANGES_RETURNED = 200
CHANGES_RETURNED_DEFAULT = 100
CHANGES_WAIT_SECONDS = 15.0
CHANGES_POLL_SECONDS = 0.25
#: ``jupyter_list_workspace``: the default number of entries (the most is ``Limits.workspace_entries``)
WORKSPACE_ENTRIES_DEFAULT = 200

# -- results --------------------------------------------------------------------------------------------------------
#: ids listed in a result's lists of left-out cells (``omittedCellIds``, ``skippedReadOnly``)
IDS_LISTED = 100
CONTEXT_ITEMS = 50  #: open documents, waiting proposals and pending calls listed by ``jupyter_get_context``
#: ``jupyter_get_context`` ``includeErrors``: cells with an error listed, bytes of each message, and the outputs of a
#: cell looked at for its error (an error ends a run, so it is the last output)
ERRORS_LISTED = 20
ERROR_MESSAGE_BYTES = 300
ERROR_SCAN_OUTPUTS = 100
#: the guidance for agents (:mod:`webmcp_bridge.tools.guidance`) in all, site paragraphs included (it costs every
#: agent that reads it), and the most the bridge's own text takes of it
GUIDANCE_BYTES = 2000
GUIDANCE_BASE_BYTES = 1600
PROVENANCE_PER_CELL = 3  #: coalesced changes listed per cell by ``jupyter_get_cell_access`` (newest first)
STALE_IDS_SHOWN = 5  #: ids listed per reason in a cell's ``outputsStale``
#: the longest cell source whose names are read (core/names.py; a longer one's parse would hold the page)
NAMES_SOURCE_BYTES = 16 * KIB
NAMES_SLICE_SECONDS = 0.02  #: the longest stretch of parsing cell sources before the page gets the thread back
EXPORT_CHUNK = 50  #: cells read per crossing while exporting a notebook (and while mapping one, listing its errors)
#: ``jupyter_get_notebook_map``: cells one answer maps (more continue at ``nextStartIndex``), bytes of a cell's first
#: line or heading kept, the fewest a first line is cut to before cells are left for a next answer, headings listed
MAP_CELLS = 2000
MAP_LINE_BYTES = 64
MAP_MIN_LINE_BYTES = 24
MAP_SECTIONS = 300
MAX_REPORTED_CUTS = 20  #: truncation reports listed in one fitted result (the rest are counted)
MIN_KEPT_BYTES = 96  #: stage 1 of fitting never shortens a string below this; past it, stage 2 drops items
#: bytes of a fitted result kept free for its truncation report: a fixed part and a part per reported cut
TRUNCATION_REPORT_BYTES = 200 + 100 * MAX_REPORTED_CUTS
#: a page of a big cell source never takes fewer JSON-text bytes than this, whatever the cap leaves
MIN_SOURCE_PAGE_JSON_BYTES = 64
MAX_SOURCES = 256  #: pages of big cell sources remembered as given to the agent (the oldest forgotten first)
#: a page of ``jupyter_read_file`` halved to fit the result cap (JSON escaping) never goes below this
MIN_FILE_PAGE_BYTES = 256
#: a wait for a pending call ends this much before the execution timeout, so it never goes pending (at most a tenth)
WAIT_MARGIN_SECONDS = 0.5
#: the largest ``timeout`` ``jupyter_wait_for_result`` takes (the wait is cut to the execution timeout)
WAIT_FOR_RESULT_SECONDS = 3600

# -- jupyter_search (core/search.py, tools/search.py; why these bound a regular expression: core/search.py) ----------
#: the longest query
SEARCH_PATTERN_CHARS = 200
#: seconds (CPU time under CPython) one stretch of matching may run (core/alarm.py); a stretch starts at each text
#: and after each yield; one match that overruns it twice ends the search with INVALID_ARGUMENT. Under the page's
#: 50 ms: the engine checks the deadline every 4096 steps of at most a window each.
SEARCH_MATCH_SECONDS = 0.03
#: the characters one match sees: a longer line is searched in windows of this many, overlapping by half
SEARCH_WINDOW_CHARS = 512
SEARCH_SNIPPET_BYTES = 160  #: a hit's snippet
#: hits in one result: the default and the most
SEARCH_HITS_DEFAULT = 50
SEARCH_HITS = 100
#: one cell source or file searched, and one output's text (the rest is not, counted in ``cutTexts``)
SEARCH_TEXT_BYTES = 256 * KIB
SEARCH_OUTPUT_BYTES = 64 * KIB
SEARCH_SCAN_BYTES = 4 * MIB  #: text scanned in one call before it stops with a cursor (at a cell or file boundary)
#: seconds one call scans before it stops with a cursor, and the longest stretch between two yields to the page
SEARCH_SECONDS = 5.0
SEARCH_SLICE_SECONDS = 0.02
#: workspace entries walked to find what to search (past it the walk stops: ``walkTruncated``)
SEARCH_WALK_ENTRIES = 5_000
#: the largest notebook file read when it is not open (as the contents service reports its size)
SEARCH_NOTEBOOK_BYTES = 16 * MIB
SEARCH_SKIPPED_LISTED = 20  #: paths listed in ``skippedPaths`` (files not searched: binary or too large)

# -- kernels --------------------------------------------------------------------------------------------------------
#: after an interrupt the agent asked for: how long to wait for the kernel to be idle again
INTERRUPT_WAIT_SECONDS = 10.0
#: after an aborted run: how long to wait for the interrupt request, then for the cell to end
ABORT_SETTLE_SECONDS = 5.0
#: how long clearing the kernel's history of hidden cells may take before the agent's code is refused
SCRUB_HISTORY_SECONDS = 10.0
KERNEL_POLL_SECONDS = 0.1  #: how often a wait for the kernel looks at its status again
#: the run rule (access/run_consent.py): workspace entries walked to find a hidden notebook or cell; a workspace
#: with more is treated as holding one (every run is asked)
HIDDEN_WALK_ENTRIES = 5_000
#: ``jupyter_run_code``: text (UTF-16 units) kept per output while a run is waited for, past
#: ``Limits.output_page_bytes``: the rest of a flood of output is counted and dropped, not held
RUN_CODE_KEEP_MARGIN = 64 * 1024
#: ``jupyter_list_variables`` / ``jupyter_inspect_variable`` (core/kernel_inspect.py): variables one list returns
#: and the default; bytes of each repr in a list (and of each item's, column's or key's in one variable's details);
#: bytes of one inspected variable's repr; items and public attributes listed; seconds the inspection may take
VARIABLES_LISTED = 100
VARIABLES_LISTED_DEFAULT = 50
VARIABLE_REPR_BYTES = 200
VARIABLE_DETAIL_BYTES = 4 * KIB
VARIABLE_ITEMS = 20
VARIABLES_TIMEOUT_SECONDS = 30.0

# -- features: the change log, review threads, Propose mode -----------------------------------------------------------
#: how long a read of the other tabs of a notebook (lab/tabs.js) is reused (jupyter_get_context and a save read anew)
TABS_READ_SECONDS = 5.0
#: how long a save waits for the site's tabs' Web Lock before it saves without it (same version check, a warning to
#: the person): another tab holds it far less; a longer hold is something else of the origin (the Pyodide kernel)
SAVE_LOCK_WAIT_SECONDS = 5.0
#: a sealed message between the site's tabs whose own time is further than this from the receiver's clock is dropped
#: (within it, a message that comes a second time is dropped), and the longest one a tab opens
TAB_MESSAGE_SECONDS = 30.0
TAB_MESSAGE_CHARS = 4096
CHANGE_LOG_ENTRIES = 2000  #: entries the session's change log keeps (a reader is told it missed some)
#: repeated changes of one cell by one actor within this many seconds merge into one entry
CHANGE_COALESCE_SECONDS = 10.0
#: the agent's source edits kept for review and revert (changes/undo.py): how many, and bytes of their sources
AGENT_EDITS_KEPT = 500
AGENT_EDIT_BYTES = 8 * 1024 * 1024
#: a burst of the person's typing: each edit at most this long after the one before, none this long or more after
#: the burst's first; entries back a person's edit looks for the burst it continues
TYPING_QUIET_SECONDS = 0.25
TYPING_LONGEST_SECONDS = 2.0
BURST_LOOKBACK = 50
#: MCP resources' cache hints: a notebook or a cell (the person may be typing in it), an output (changes on a run)
RESOURCE_TTL_MS = 1000
OUTPUT_RESOURCE_TTL_MS = 60_000
CONTEXT_CHARS = 32  #: characters of context stored on each side of a review thread's quote
FINGERPRINT_HEAD_BYTES = 1024  #: bytes of each representation's text that go into an output's fingerprint
#: a proposal's one-line summary, and the cell ids it names for several cells
PROPOSAL_SUMMARY_BYTES = 300
SUMMARY_IDS = 10
PROPOSAL_CHECK_SECONDS = 0.5  #: how often a waiting proposal checks that its cell and notebook still exist

# -- the person's settings (the Settings Editor's schema carries the same numbers; a test compares them) ------------
#: ``executionTimeout``, ``resultBytes``, ``runTimeout``: smallest and largest
EXECUTION_TIMEOUT_BOUNDS = (1.0, 600.0)
RESULT_BYTES_BOUNDS = (4096, 1048576)
RUN_TIMEOUT_BOUNDS = (1.0, 86400.0)
#: ``disabledTools``: names or globs used; ``toolsets``: words used
MAX_DISABLED_TOOLS = 200
MAX_TOOLSET_WORDS = 50
MIN_PAGE_BYTES = 1024  #: a page bound scaled down with a small ``resultBytes`` never goes below this
SETTINGS_LOAD_SECONDS = 5.0  #: the longest the start-up waits for the settings before it goes on with the defaults

# -- the person's side in JupyterLab (the Agent panel, the cell markers, the proposal boxes) -----------------------
#: rows of the Activity section (newest first), restricted cells of the Access section, threads of Comments
ACTIVITY_ROWS = 200
ACCESS_ROWS = 200
THREAD_ROWS = 100
#: bytes of a cell's first line in a list row, and the lines ``dom.js`` looks at for the first non-blank one
PANEL_PREVIEW_BYTES = 80
PANEL_PREVIEW_LINES = 50
#: bytes of a comment body shown before "show all", and in the element's title
COMMENT_SHOWN_BYTES = 2000
COMMENT_TITLE_BYTES = 8000
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
#: recent tool calls the status item lists on hover; characters of a failed start's reason (the traceback's last
#: line) and of the browser's reason for refusing a tool
RECENT_CALLS = 5
FAILURE_REASON_CHARS = 200
REFUSAL_REASON_CHARS = 300
#: when the bridge's Python starts (docs/loader.md, 1a): once the page has had no long task for START_QUIET_MS in an
#: idle period with at least START_IDLE_LEFT_MS left (a headless Chromium's idle periods last about 15 ms after
#: JupyterLab restored; 20 was never met), or START_LATEST_MS after JupyterLab restored at the latest; the longest
#: wait for an idle period, the pause before looking again, and the wait between two start-up stages
START_QUIET_MS = 500
START_IDLE_LEFT_MS = 5
START_LATEST_MS = 4_000
START_IDLE_WAIT_MS = 1000
START_RECHECK_MS = 100
STEP_IDLE_WAIT_MS = 500
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
#: entries of the site's contribution list loaded (page config and settings together)
CONTRIBUTION_ENTRIES = 20
CONTRIBUTION_FILE_BYTES = 4 * MIB  #: the largest contribution file (a module or a wheel) fetched from the site
#: diagnostics kept in one session (later ones dropped), and the longest name and reason of one
DIAGNOSTICS_KEPT = 50
DIAGNOSTIC_NAME_BYTES = 200
DIAGNOSTIC_REASON_BYTES = 300


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
