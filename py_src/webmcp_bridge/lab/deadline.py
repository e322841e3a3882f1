"""The page's timer for :mod:`webmcp_bridge.core.alarm` (why it is one: that module's docstring): ``deadline.js``
evaluated here, in the realm this Python runs in (the page's main thread, or the bridge's worker: never through the
worker's wire, whose halves run on the page), and installed with :func:`~webmcp_bridge.core.alarm.use_page_timer`.
"""

from __future__ import annotations

from importlib import resources

from webmcp_bridge.core.alarm import use_page_timer


def install() -> None:
    """Make the runtime's interrupt buffer the alarm's timer (once per start of the bridge; again replaces it)."""
    import pyodide_js
    from pyodide.code import run_js

    source = resources.files(__package__).joinpath("deadline.js").read_text(encoding="utf-8")
    timer = run_js(f"{source}\n//# sourceURL=webmcp-bridge/webmcp_bridge/lab/deadline.js\n")(pyodide_js)
    use_page_timer(timer.start, timer.stop)
