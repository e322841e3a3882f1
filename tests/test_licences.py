"""The licences the wheel carries: the project's LICENSE and THIRD_PARTY_NOTICES.md in its .dist-info, and a
notices file that names every third-party file the labextension ships (the Pyodide runtime, each pinned wheel
with the licence its metadata declares, @mcp-b/global) at the pinned version."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.package import build_wheel  # noqa: E402
from sitebuild.pins import read_pins  # noqa: E402
from sitebuild.runtime import fetch_mcp_b, fetch_pyodide  # noqa: E402
from sitebuild.wheels import fetch_wheels, wheel_metadata  # noqa: E402

NOTICES = (ROOT / "THIRD_PARTY_NOTICES.md").read_text(encoding="utf-8")
#: the licence names wheels' metadata uses (License, the licence classifier) and their SPDX identifiers
SPDX = {
    "MIT": "MIT",
    "MIT License": "MIT",
    "Apache 2.0": "Apache-2.0",
    "BSD 3-Clause License": "BSD-3-Clause",
    "BSD-2-Clause": "BSD-2-Clause",
    "BSD-3-Clause": "BSD-3-Clause",
    "PSF-2.0": "PSF-2.0",
    "Mozilla Public License Version 2.0": "MPL-2.0",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
}


def wheel_rows() -> dict[str, tuple[str, str]]:
    """The notices' wheel table: name -> (version, licence cell)."""
    rows = {}
    for line in NOTICES.split("## Wheels", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"[0-9][0-9a-z.]*", cells[1]):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def declared_licence(path: Path) -> str | None:
    """The SPDX licence a wheel's metadata declares, "BSD-*" for the bare "BSD License" classifier, or None."""
    meta = wheel_metadata(path)
    if meta.get("License-Expression"):
        return meta["License-Expression"]
    licence = (meta.get("License") or "").strip()
    if licence in SPDX:
        return SPDX[licence]
    for classifier in meta.get_all("Classifier") or []:
        if classifier.startswith("License ::"):
            name = classifier.split("::")[-1].strip()
            return "BSD-*" if name == "BSD License" else SPDX[name]
    return None


def test_every_shipped_wheel_is_listed_with_its_pinned_version_and_declared_licence():
    pins = read_pins()
    lock = json.loads((fetch_pyodide(pins["pyodide"]) / "pyodide-lock.json").read_text(encoding="utf-8"))
    wheels = fetch_wheels(pins, lock)
    rows = wheel_rows()
    assert sorted(rows) == sorted(pins["wheels"])
    for name, path in wheels.items():
        version, licence = rows[name]
        assert version == pins["wheels"][name], name
        declared = declared_licence(path)
        if declared == "BSD-*":
            assert licence.startswith("BSD-"), (name, licence)
        elif declared is not None:
            assert licence.startswith(declared), (name, licence, declared)
        else:  # no licence in the metadata (matplotlib-inline): the licence file inside the wheel says it
            with zipfile.ZipFile(path) as whl:
                text = next(
                    whl.read(n) for n in whl.namelist() if n.endswith("/LICENSE") and ".dist-info/" in n
                ).decode()
            assert text.startswith("BSD 3-Clause License") and licence == "BSD-3-Clause", name


def test_the_runtimes_are_listed_at_their_pinned_versions_with_their_licences():
    pins = read_pins()
    pyodide = json.loads((fetch_pyodide(pins["pyodide"]) / "package.json").read_text(encoding="utf-8"))
    assert pyodide["license"] == "MPL-2.0" and f"**Pyodide** {pins['pyodide']}" in NOTICES and "(MPL-2.0)" in NOTICES
    python = json.loads((fetch_pyodide(pins["pyodide"]) / "pyodide-lock.json").read_text(encoding="utf-8"))["info"][
        "python"
    ]
    assert f"**CPython** {python}" in NOTICES and "(PSF-2.0)" in NOTICES
    mcp_b = fetch_mcp_b(pins["mcp_b_global"])
    assert json.loads((mcp_b / "package.json").read_text(encoding="utf-8"))["license"] == "MIT"
    assert f"**@mcp-b/global** {pins['mcp_b_global']}" in NOTICES


def test_the_wheel_carries_the_licence_and_the_notices():
    with zipfile.ZipFile(build_wheel()) as whl:
        names = whl.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        for rel in ("LICENSE", "THIRD_PARTY_NOTICES.md"):
            assert whl.read(f"{dist_info}/licenses/{rel}") == (ROOT / rel).read_bytes(), rel
        metadata = whl.read(f"{dist_info}/METADATA").decode()
        # the MCP-B runtime's own licence text travels beside it
        assert any(n.endswith("labextensions/jupyterlab-webmcp-bridge/static/mcp-b/LICENSE") for n in names)
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "License-File: THIRD_PARTY_NOTICES.md" in metadata
