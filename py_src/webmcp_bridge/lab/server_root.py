"""Paths that resolve outside a Jupyter server's root: asked of the server, refused before any contents call.

A Jupyter server follows symbolic links and its contents API does not mark them, so a link inside the root that
points outside it would let an agent read or write there. When the wheel's server extension
(``webmcp_bridge_jupyter.server``) is loaded, the page config holds ``webmcpBridgeOutsideUrl`` and
:class:`ServerRoot` asks it; in JupyterLite (no links) nothing is asked. A request that fails refuses the path.
The page's facts come from ``host.js``; the request is made with the global ``fetch``, which a worker has too.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from webmcp_bridge.core.errors import ErrorCode, ToolError

#: the page config key the server extension sets (webmcp_bridge_jupyter.server.PAGE_CONFIG_KEY); host.js reads it
PAGE_CONFIG_KEY = "webmcpBridgeOutsideUrl"

#: a POST of JSON text: (url, headers, body) -> (HTTP status, the answer's text); raises on a failed request
Post = Callable[[str, dict[str, str], str], Awaitable[tuple[int, str]]]


def outside_root(path: str) -> ToolError:
    """The refusal of a path whose real location is outside the server's root (the INVALID_PATH of ``..``)."""
    return ToolError(
        ErrorCode.INVALID_PATH,
        f"{path!r} leads outside the workspace (a symbolic link to a place outside "
        "the server's root); only paths inside it are allowed.",
        path=path,
    )


async def page_post(url: str, headers: dict[str, str], body: str) -> tuple[int, str]:
    """POST ``body`` (JSON text) to ``url`` with the global ``fetch`` (same-origin credentials): ``(status, text)``.
    Raises what the request raised."""
    import js

    options = {"method": "POST", "credentials": "same-origin", "headers": headers, "body": body}
    response = await js.fetch(url, js.JSON.parse(json.dumps(options)))
    return int(response.status), str(await response.text())


class ServerRoot:
    """Which paths lead outside the server's root, asked of ``url`` (the server extension's; None: nothing is asked)
    with the server's ``token`` (else the page's cookie authenticates) and the ``_xsrf`` cookie (``cookie(name)``,
    read at each request) as the ``X-XSRFToken`` header, as JupyterLab's own requests; ``post`` makes the request."""

    def __init__(
        self,
        url: str | None,
        token: str | None,
        cookie: Callable[[str], Any],
        post: Post = page_post,
    ) -> None:
        self.url = url if isinstance(url, str) and url else None
        self.token = token if isinstance(token, str) and token else None
        self._cookie = cookie
        self._post = post

    async def outside(self, paths: Sequence[str]) -> set[str]:
        """The subset of ``paths`` that resolves outside the root; empty without a server extension. Raises
        ToolError(INVALID_PATH) naming the first path when the server cannot answer."""
        if self.url is None or not paths:
            return set()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"token {self.token}"
        xsrf = self._cookie("_xsrf")
        if isinstance(xsrf, str) and xsrf:
            headers["X-XSRFToken"] = xsrf
        try:
            status, text = await self._post(self.url, headers, json.dumps({"paths": list(paths)}))
            if not 200 <= status < 300:
                raise ValueError(f"HTTP {status}")
            outside = json.loads(text)["outside"]
            found = {str(p) for p in outside}
        except Exception as exc:  # a failed request, an answer of another shape: the path is refused
            raise ToolError(
                ErrorCode.INVALID_PATH,
                f"The server could not tell whether {paths[0]!r} stays inside the workspace "
                f"({str(exc)[:100]}); nothing was done.",
                path=paths[0],
            ) from None
        return found

    async def check(self, path: str) -> None:
        """Raise :func:`outside_root` when ``path`` resolves outside the root (nothing to ask for the root itself)."""
        if path and path in await self.outside([path]):
            raise outside_root(path)
