"""docs/ARCHITECTURE.md's map of the code names every module the product ships, and names none that is gone.

The map is the first fenced block after the layers: a tree in which a line's first word is a file (``errors.py``)
or a folder (``core/``), indented under its folder; ``a.py + a.js`` names two files, ``propose/proposals.py`` a file
in a folder below the current one. Every ``.py`` and ``.js`` file that ``git ls-files`` lists under ``py_src/``
(``__init__.py`` aside: a package's marker, named by its folder) must be named there at its own path.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = re.compile(r"[\w.-]+(?:/[\w.-]+)*(?:\.(?:py|js|css)|/)")


def map_lines() -> list[str]:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("```\n", 2)[1]
    return block.splitlines()


def named_paths() -> set[str]:
    """Every path the map names, relative to the repository's root."""
    named: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, path ending in "/")
    for line in map_lines():
        indent = len(line) - len(line.lstrip(" "))
        words = line.split()
        if not words or not ENTRY.fullmatch(words[0]):
            continue
        while folders and folders[-1][0] >= indent:
            folders.pop()
        base = folders[-1][1] if folders else ""
        entries = [words[0]]
        rest = words[1:]
        while len(rest) >= 2 and rest[0] == "+" and ENTRY.fullmatch(rest[1]):
            entries.append(rest[1])
            rest = rest[2:]
        for entry in entries:
            named.add(base + entry)
        if words[0].endswith("/"):
            folders.append((indent, base + words[0]))
    return named


def shipped_modules() -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "py_src"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {p for p in listed if p.endswith((".py", ".js")) and not p.endswith("/__init__.py")}


def test_every_shipped_module_is_on_the_map():
    missing = sorted(shipped_modules() - named_paths())
    assert missing == [], f"docs/ARCHITECTURE.md's map does not name: {missing}"


def test_the_map_names_no_file_that_is_gone():
    gone = sorted(p for p in named_paths() if not p.endswith("/") and not (ROOT / p).exists())
    assert gone == [], f"docs/ARCHITECTURE.md's map names files that do not exist: {gone}"
