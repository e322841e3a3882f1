"""docs/hosting.md's header files say exactly what the development server sends, and the build's _headers file
is the documented one."""

from __future__ import annotations

import json
import re
import sys
import threading
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.serve import HEADERS, make_server  # noqa: E402

BLOCK = re.compile(r"<!-- headers-file: (?P<name>[^ ]+) -->\n```[a-z]*\n(?P<body>.*?)\n```", re.S)


def documented() -> dict[str, str]:
    """Each documented header file, by its name in the doc."""
    return {m["name"]: m["body"] for m in BLOCK.finditer((ROOT / "docs" / "hosting.md").read_text(encoding="utf-8"))}


def parse_headers_file(text: str) -> dict[str, str]:
    """Netlify / Cloudflare Pages `_headers`: a path line, then indented `Name: value` lines; the `/*` rule."""
    rules: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            current = rules.setdefault(line.strip(), {})
        elif line.strip():
            key, _, value = line.strip().partition(":")
            current[key.strip()] = value.strip()
    return rules["/*"]


def parse_vercel(text: str) -> dict[str, str]:
    """vercel.json: the headers of the rule that matches every path."""
    rule = next(r for r in json.loads(text)["headers"] if r["source"] == "/(.*)")
    return {h["key"]: h["value"] for h in rule["headers"]}


def parse_nginx(text: str) -> dict[str, str]:
    """nginx `add_header Name "value" always;` lines."""
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(r'add_header (\S+) "(.*)" always;', line.strip())
        assert match, line
        found[match[1]] = match[2]
    return found


def served_headers() -> dict[str, str]:
    """The site headers build.py's development server sends (on a request for a file it has)."""
    server = make_server(ROOT / "docs", port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/hosting.md") as response:
            return {k: response.headers[k] for k in HEADERS}
    finally:
        server.shutdown()
        server.server_close()


def test_every_documented_header_file_matches_the_server():
    files = documented()
    assert set(files) == {"_headers", "vercel.json", "nginx"}
    served = served_headers()
    assert all(served.values()), served
    assert parse_headers_file(files["_headers"]) == served
    assert parse_vercel(files["vercel.json"]) == served
    assert parse_nginx(files["nginx"]) == served


def test_the_build_writes_the_documented_headers_file(tmp_path):
    from sitebuild.site import write_root_files

    write_root_files(tmp_path)
    assert (tmp_path / "_headers").read_text(encoding="utf-8") == documented()["_headers"] + "\n"


def test_a_server_for_a_host_without_headers_sends_none():
    server = make_server(ROOT / "docs", port=0, quiet=True, headers={})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/hosting.md") as response:
            assert not any(k in response.headers for k in HEADERS)
    finally:
        server.shutdown()
        server.server_close()
