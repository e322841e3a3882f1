"""A static server for a built site, with the headers the site needs."""

from __future__ import annotations

import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sitebuild.util import OUTPUT

#: response headers the site needs on every response: COOP/COEP (SharedArrayBuffer for the kernel's stdin),
#: and a Content-Security-Policy that keeps every load on the site's own origin, so a notebook's remote
#: images or a kernel output's script cannot make the page contact another host; that only the site's own
#: pages may frame it (frame-ancestors: another origin cannot put the person's notebook under its own page);
#: and that no <base> element or form can point the page's URLs or a submission at another origin (these three
#: never fall back to default-src).
HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "credentialless",
    "Content-Security-Policy": "default-src 'self' data: blob: 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'; "
    "frame-ancestors 'self'; base-uri 'self'; form-action 'self'",
}
MIME_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".json": "application/json",
    ".ipynb": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".webmanifest": "application/manifest+json",
}


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files with the site's cross-origin isolation headers and correct MIME types."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    quiet = False
    #: the headers sent on every response (a server made with headers={} stands for a host that sets none)
    site_headers: dict[str, str] = HEADERS

    def end_headers(self):
        """Add the site's headers (and no-cache, so a rebuild is seen at once) to every response."""
        for key, value in self.site_headers.items():
            self.send_header(key, value)
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        """Log requests unless the server is quiet."""
        if not self.quiet:
            super().log_message(format, *args)


class SiteServer(ThreadingHTTPServer):
    """A threaded server that stays quiet when a browser drops a connection mid-response (page reloads)."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def make_server(
    directory: Path = OUTPUT,
    port: int = 0,
    host: str = "127.0.0.1",
    quiet: bool = False,
    headers: dict[str, str] | None = None,
):
    """A threaded HTTP server for `directory` on host:port (port 0 picks a free one); call serve_forever().

    ``headers``: sent on every response; ``None`` sends HEADERS, ``{}`` none (a host like GitHub Pages).
    """
    handler = type(
        "Handler", (SiteHandler,), {"quiet": quiet, "site_headers": HEADERS if headers is None else dict(headers)}
    )

    def factory(*args, **kwargs):
        return handler(*args, directory=str(directory), **kwargs)

    return SiteServer((host, port), factory)


def serve(port: int) -> None:
    """Serve _output/ until interrupted."""
    server = make_server(OUTPUT, port)
    host, bound = server.server_address[:2]
    print(f"[serve] http://{host}:{bound}/lab/index.html  (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
