"""The interface between the bridge's Python and the page, declared once: each JS half's methods.

A JS half (:func:`webmcp_bridge.lab.ffi.load_half`) is the only way Python reaches the page, on the main thread as
from the worker (where each call is a message, docs/WORKER.md, "The remote half"). :data:`HALVES` names every half
by its file under ``lab/`` and the methods its object offers Python, ``attach`` aside (the loader's ctx, handed
once by ``load_half``). ``tests/test_page_interface.py`` holds both sides to it: each half's object, evaluated by
Node, offers exactly these methods, and every method name the modules of ``lab/`` call on a half is one of them.
"""

from __future__ import annotations

#: file (relative to ``lab/``) -> the methods of its half, sorted
HALVES: dict[str, tuple[str, ...]] = {
    "notebook.js": (
        "accessState", "activate", "agentKernels", "applyEdits", "bridgeMetadata", "captureOutput",
        "cellBridgeMetadata", "cellCount", "cellIds", "cellInfos", "cells", "clearOutputs", "configure", "confirm",
        "current", "currentViewed", "deleteCell", "dirty", "dispose", "documents", "encodeCapture", "executeAsAgent",
        "findViewed", "focus", "follow", "highlightOutput", "insertCell", "kernel", "kernelAction", "kernelOwner",
        "language", "listen", "moveCell", "open", "outputBinary", "outputBytes", "outputSelection",
        "panels", "path", "releaseCapture", "resizeImage", "restartAgentKernels", "revision", "runCode", "runDone",
        "runFinish", "runStates", "savedNotebook", "setBridgeMetadata", "setCellBridgeMetadata", "setCellType",
        "setFocus", "setSource", "takeChanges", "takeChangesWithStamp", "unwatch", "watch",
    ),
    "host.js": (
        "configure", "cookie", "fileText", "listDir", "notebookMetadata", "openText", "saveModel", "serverRoot", "stat",
        "writeText",
    ),
    "tabs.js": ("configure", "fresh", "save", "state"),
    "dialogs.js": ("available", "click", "dispose", "snapshot", "unwatch", "watch"),
    "commands.js": ("add", "askText", "dispose", "separator", "setStates", "setToggled", "watchMenu"),
    "session.js": (
        "dispose", "emit", "facts", "loadSettings", "readStorage", "setDiagnostics", "setMode", "setStatus", "site",
        "unwatchSettings", "warn", "watchSettings", "writeStorage",
    ),
    "webmcp.js": (
        "answer", "answerRead", "connect", "connectPrompts", "connectResources", "disconnect", "disconnectPrompts",
        "disconnectResources", "dispose", "emit", "fail", "reportCall", "runtime",
    ),
    "ui/dom.js": (
        "activate", "applyMarkers", "clearDraft", "configure", "configureBoxes", "createPanel", "disableBox",
        "dispose", "disposePanel", "draw", "expandBox", "fields", "placeBoxes", "prepare", "removeBox",
        "revealBox", "rows", "set", "showBox", "style", "translate", "watchBoxes", "webmcpAvailable",
    ),
}  # fmt: skip
