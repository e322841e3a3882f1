"""Paths that resolve outside a Jupyter server's root: asked of the server, refused before any contents call.

A JupyterLab or Notebook 7 server follows symbolic links, and its contents API does not mark them, so a link
inside the root that points outside it would let an agent read or write there. The wheel's server extension
(``webmcp_bridge_jupyter.server``) resolves paths on the server's disk; when it is loaded, the page config holds
``webmcpBridgeOutsideUrl`` and :class:`ServerRoot` asks it. In JupyterLite (contents in the browser, no links)
there is no such key and nothing is asked. A request that fails refuses the path (never guesses it is inside).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import js
from pyodide.ffi import JsException

from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.lab.ffi import is_nullish, js_object

#: the page config key the server extension sets (webmcp_bridge_jupyter.server.PAGE_CONFIG_KEY)
PAGE_CONFIG_KEY = "webmcpBridgeOutsideUrl"


def outside_root(path: str) -> ToolError:
    """The refusal of a path whose real location is outside the server's root (the INVALID_PATH of ``..``)."""
    return ToolError(
        ErrorCode.INVALID_PATH,
        f"{path!r} leads outside the workspace (a symbolic link to a place outside "
        "the server's root); only paths inside it are allowed.",
        path=path,
    )


def _page_config_url() -> str | None:
    node = js.document.getElementById("jupyter-config-data")
    if is_nullish(node):
        return None
    try:
        url = json.loads(str(node.textContent)).get(PAGE_CONFIG_KEY)
    except ValueError:
        return None
    return url if isinstance(url, str) and url else None


def _cookie(name: str) -> str | None:
    for part in str(js.document.cookie).split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class ServerRoot:
    """Which paths lead outside the server's root.

    Args:
        server_settings: JupyterLab's ``serviceManager.serverSettings`` (its ``token`` authenticates the request;
            else the page's cookie does, with the ``_xsrf`` cookie as JupyterLab's own requests send it).
    """

    def __init__(self, server_settings: Any) -> None:
        self.url = _page_config_url()
        self.settings = server_settings

    async def outside(self, paths: Sequence[str]) -> set[str]:
        """The subset of ``paths`` (normalized workspace paths) that resolves outside the root; empty without a
        server extension. Raises ToolError(INVALID_PATH) naming the first path when the server cannot answer."""
        if self.url is None or not paths:
            return set()
        headers = {"Content-Type": "application/json"}
        token = getattr(self.settings, "token", None)
        if not is_nullish(token) and str(token):
            headers["Authorization"] = f"token {token}"
        xsrf = _cookie("_xsrf")
        if xsrf:
            headers["X-XSRFToken"] = xsrf
        try:
            response = await js.fetch(
                self.url,
                js_object(
                    {
                        "method": "POST",
                        "credentials": "same-origin",
                        "headers": headers,
                        "body": json.dumps({"paths": list(paths)}),
                    }
                ),
            )
            if not response.ok:
                raise ValueError(f"HTTP {response.status}")
            outside = json.loads(str(await response.text()))["outside"]
        except (JsException, ValueError, KeyError, TypeError) as exc:
            raise ToolError(
                ErrorCode.INVALID_PATH,
                f"The server could not tell whether {paths[0]!r} stays inside the workspace "
                f"({str(exc)[:100]}); nothing was done.",
                path=paths[0],
            ) from None
        return {str(p) for p in outside}

    async def check(self, path: str) -> None:
        """Raise :func:`outside_root` when ``path`` resolves outside the root (nothing to ask for the root itself)."""
        if path and path in await self.outside([path]):
            raise outside_root(path)
