"""The site's own contributions in the page (:mod:`webmcp_bridge.contrib`): the files the page configuration
(``webmcpBridgeContributions``) and the setting ``contributions`` name (``contrib.config.parse_entries``), fetched
from the site's own origin and imported before the bridge is built.

A workspace path ``p`` is fetched at ``<base URL>files/<p>`` (the application's own base URL), so JupyterLite serves
the file as the site was built (an edit in the browser's storage does not change what loads) and a JupyterLab server
from its root folder (with its token). A URL not on the page's origin is never requested; redirects are refused (one
could lead elsewhere). Every failure is a diagnostic; none stops the bridge.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import js

from webmcp_bridge.contrib.api import Contribution
from webmcp_bridge.contrib.config import PAGE_CONFIG_KEY, SETTING_KEY, parse_entries
from webmcp_bridge.contrib.loading import Fetch, FetchError, SiteLoader
from webmcp_bridge.core.diagnostics import Diagnostics
from webmcp_bridge.core.limits import CONTRIBUTION_FILE_BYTES, SETTINGS_LOAD_SECONDS
from webmcp_bridge.lab.ffi import is_nullish, load_half
from webmcp_bridge.lab.settings import load_composite, settings_half

#: where the site's modules and wheels are written in Pyodide's in-memory file system (only the loader writes here)
WORKDIR = Path("/tmp/webmcp_bridge_site")


def _page_value(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return "not JSON"  # reported by parse_entries as not a list


async def _setting_value(ctx: Any) -> Any:
    try:
        raw = await asyncio.wait_for(load_composite(settings_half(ctx)), SETTINGS_LOAD_SECONDS)
    except Exception:  # no registry, a broken schema, too slow: the page's list alone (LabSettings says why)
        return None
    return raw.get(SETTING_KEY) if isinstance(raw, dict) else None


def site_fetch(base: str, token: str) -> Fetch:
    """Reads a workspace path's file from ``<base>files/<path>`` (``token``: the server's, "" when none)."""

    async def fetch(path: str) -> bytes:
        url = js.URL.new("files/" + "/".join(str(js.encodeURIComponent(part)) for part in path.split("/")), base)
        if str(url.origin) != str(js.location.origin):
            raise FetchError("its URL is not on this page's origin; nothing was requested")
        headers = {"Authorization": f"token {token}"} if token else {}
        options = {"credentials": "same-origin", "redirect": "error", "cache": "no-cache", "headers": headers}
        try:
            response = await js.fetch(url.href, js.JSON.parse(json.dumps(options)))
        except Exception as exc:
            raise FetchError(
                f"the request failed ({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})"
            ) from None
        if not response.ok:
            raise FetchError(f"HTTP {int(response.status)} for files/{path}")
        length = response.headers.get("content-length")
        if not is_nullish(length) and str(length).isdigit() and int(str(length)) > CONTRIBUTION_FILE_BYTES:
            raise FetchError(f"it is {length} bytes; a contribution file may be at most {CONTRIBUTION_FILE_BYTES}")
        buffer = await response.arrayBuffer()
        return bytes(js.Uint8Array.new(buffer).to_py())

    return fetch


async def site_contributions(ctx: Any, diagnostics: Diagnostics) -> list[Contribution]:
    """The contributions of the files the site names, in discovery order; every problem goes to ``diagnostics``."""
    site = json.loads(str(load_half("webmcp_bridge.lab", "session.js", ctx).site()))
    entries, problems = parse_entries(
        (f"jupyter-config-data {PAGE_CONFIG_KEY}", _page_value(site["pageContributions"])),
        (f"the setting {SETTING_KEY}", await _setting_value(ctx)),
    )
    for name, reason in problems:
        diagnostics.add(name, "config", reason)
    if not entries:
        return []
    fetch = site_fetch(str(site["baseUrl"]), str(site["token"]))
    return await SiteLoader(fetch, WORKDIR, diagnostics).load(entries, pause=lambda: asyncio.sleep(0))
