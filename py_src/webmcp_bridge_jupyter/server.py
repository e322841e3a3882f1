"""A Jupyter server extension naming the paths that resolve outside the server's root (docs/hosting.md, "Paths in a
server"): jupyter_server follows symbolic links without marking them, and the bridge refuses every path outside the
workspace. ``POST {base_url}webmcp-bridge/outside`` ``{"paths": [...]}`` (at most :data:`MAX_PATHS`) answers
``{"outside": [...]}`` by ``os.path.realpath``; authorized as a contents read; 400 for a malformed body. Loading it
puts ``webmcpBridgeOutsideUrl`` into the page config. Without a ``root_dir`` nothing is outside.
"""

from __future__ import annotations

import json
import os
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

#: the route under the server's base URL
ROUTE = "webmcp-bridge/outside"
#: the page config key that tells the page where to ask
PAGE_CONFIG_KEY = "webmcpBridgeOutsideUrl"
#: paths per request (a folder listing is asked in one request)
MAX_PATHS = 10_000


def outside_paths(root_dir: str, paths: list[str]) -> list[str]:
    """The API paths (root-relative, '/'-separated) whose real location is not inside the real ``root_dir`` (one
    escaping by ``..`` too)."""
    root = os.path.realpath(root_dir)
    found = []
    for path in paths:
        real = os.path.realpath(os.path.join(root_dir, *path.strip("/").split("/")))
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            found.append(path)
    return found


class OutsideHandler(APIHandler):
    """``POST`` a list of API paths, get back those that resolve outside the root."""

    auth_resource = "contents"

    @web.authenticated
    @authorized(action="read")
    def post(self) -> None:
        try:
            body = json.loads(self.request.body or b"{}")
            paths = body["paths"]
        except (ValueError, KeyError, TypeError):
            raise web.HTTPError(400, 'expected a JSON body {"paths": [...]}') from None
        if not (isinstance(paths, list) and len(paths) <= MAX_PATHS and all(isinstance(p, str) for p in paths)):
            raise web.HTTPError(400, f"paths must be a list of at most {MAX_PATHS} strings")
        root_dir = getattr(self.contents_manager, "root_dir", None)
        self.finish(json.dumps({"outside": outside_paths(root_dir, paths) if root_dir else []}))


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """jupyter_server's discovery hook: this module is the extension."""
    return [{"module": "webmcp_bridge_jupyter.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the handler and tell the page config where it is."""
    web_app = serverapp.web_app
    url = url_path_join(web_app.settings["base_url"], ROUTE)
    web_app.add_handlers(".*$", [(url, OutsideHandler)])
    web_app.settings.setdefault("page_config_data", {})[PAGE_CONFIG_KEY] = url
