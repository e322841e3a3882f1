#!/usr/bin/env python3
"""Build the webmcp_bridge JupyterLite demo site into ``_output/``, and optionally serve it.

A thin command line over the ``sitebuild`` package (one module per job: ``pins``, ``runtime``, ``wheels``,
``lock``, ``extension``, ``site``, ``patches``, ``serve``); tests and the benchmark import those modules
directly.

    python build.py                   # build (incrementally)
    python build.py serve [--port N]  # build, then serve _output/ on 127.0.0.1 with the site's headers
    python build.py --mcp-b [serve]   # the same with the MCP-B runtime on (browsers without native WebMCP)
    python build.py labextension      # only stage the labextension into build/labextension/ (seconds), the
                                      # folder `jupyter labextension develop .` links (CONTRIBUTING.md)
"""

from __future__ import annotations

import argparse
import sys

from sitebuild.extension import stage_labextension
from sitebuild.serve import serve
from sitebuild.site import build
from sitebuild.util import ROOT, BuildError


def main(argv: list[str] | None = None) -> int:
    """Command line: `build.py [--force]` builds; `build.py serve [--port N]` builds and serves."""
    parser = argparse.ArgumentParser(description="Build (and serve) the webmcp_bridge JupyterLite demo site.")
    parser.add_argument("--force", action="store_true", help="rerun jupyter lite build even if inputs are unchanged")
    parser.add_argument(
        "--mcp-b", action="store_true", help="turn on the MCP-B runtime for browsers without native WebMCP"
    )
    sub = parser.add_subparsers(dest="command")
    serve_parser = sub.add_parser("serve", help="build, then serve _output/ on 127.0.0.1")
    serve_parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    serve_parser.add_argument("--force", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub.add_parser(
        "labextension", help="only stage the labextension into build/labextension/ (for jupyter labextension develop)"
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "labextension":
            print(f"[build] labextension staged in {stage_labextension(ROOT / 'build' / 'labextension')}")
            return 0
        build(force=args.force, mcp_b=args.mcp_b)
    except BuildError as exc:
        print(f"[build] FAILED: {exc}", file=sys.stderr)
        return 1
    if args.command == "serve":
        serve(args.port)
    return 0


def run_pypa_build() -> None:
    """Run the PyPA frontend (``python -m build``, package ``build``) that this file shadows when that command is
    typed at the repository's root (``-m`` puts the working folder first on ``sys.path``); exits as it does."""
    import os
    import runpy

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        runpy.run_module("build", run_name="__main__", alter_sys=True)
    except ImportError:
        print("python -m build needs the build package: python -m pip install build", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    # `python build.py` runs this file as a script (no module spec); `python -m build` at the root imports it as the
    # module "build", where the person meant the PyPA frontend (the sdist and the wheel, README)
    if __spec__ is not None and __spec__.name == "build":
        run_pypa_build()
    sys.exit(main())
