#!/usr/bin/env python3
"""Build the webmcp_bridge JupyterLite demo site into ``_output/``, and optionally serve it.

A thin command line over the ``sitebuild`` package (one module per job: ``pins``, ``runtime``, ``wheels``,
``lock``, ``extension``, ``site``, ``patches``, ``serve``). The names tests and the benchmark use are
re-exported here, so ``import build`` keeps giving them.

    python build.py                   # build (incrementally)
    python build.py serve [--port N]  # build, then serve _output/ on 127.0.0.1 with the site's headers
    python build.py --mcp-b [serve]   # the same with the MCP-B runtime on (browsers without native WebMCP)
"""

from __future__ import annotations

import argparse
import sys

from packaging.utils import canonicalize_name

from sitebuild.patches import KERNEL_EXTENSION, KERNEL_WAIT_BUGGY, KERNEL_WAIT_FIXED, patch_kernel_messaging
from sitebuild.serve import HEADERS, make_server, serve
from sitebuild.site import KERNEL_PLUGIN, build, verify_output
from sitebuild.util import CACHE, OUTPUT, ROOT, BuildError

__all__ = [
    "CACHE", "HEADERS", "KERNEL_EXTENSION", "KERNEL_PLUGIN", "KERNEL_WAIT_BUGGY", "KERNEL_WAIT_FIXED", "OUTPUT", "ROOT",
    "BuildError", "build", "canonicalize_name", "main", "make_server", "patch_kernel_messaging", "serve", "verify_output",
]


def main(argv: list[str] | None = None) -> int:
    """Command line: `build.py [--force]` builds; `build.py serve [--port N]` builds and serves."""
    parser = argparse.ArgumentParser(description="Build (and serve) the webmcp_bridge JupyterLite demo site.")
    parser.add_argument("--force", action="store_true", help="rerun jupyter lite build even if inputs are unchanged")
    parser.add_argument("--mcp-b", action="store_true", help="turn on the MCP-B runtime for browsers without native WebMCP")
    sub = parser.add_subparsers(dest="command")
    serve_parser = sub.add_parser("serve", help="build, then serve _output/ on 127.0.0.1")
    serve_parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    serve_parser.add_argument("--force", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        build(force=args.force, mcp_b=args.mcp_b)
    except BuildError as exc:
        print(f"[build] FAILED: {exc}", file=sys.stderr)
        return 1
    if args.command == "serve":
        serve(args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
