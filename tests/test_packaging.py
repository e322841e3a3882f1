"""How the sdist and the wheel get the labextension (hatch_build.py): staged from a checkout, taken as it is from
an unpacked sdist (so a wheel built from the sdist needs neither npm nor a package index). The real builds, from a
clean clone and offline from the sdist, run in .ci/run."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from hatch_build import COMPLETE, STAGED, prebuilt_labextension  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def unpacked_sdist(root: Path, version: str = "0.1.0", leave_out: str | None = None) -> Path:
    """A folder laid out as an unpacked sdist: PKG-INFO and a staged labextension of ``version``."""
    (root / "PKG-INFO").parent.mkdir(parents=True, exist_ok=True)
    (root / "PKG-INFO").write_text(f"Metadata-Version: 2.4\nName: jupyterlab-webmcp-bridge\nVersion: {version}\n")
    for rel in COMPLETE:
        if rel != leave_out:
            path = root / STAGED / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                json.dumps({"name": "jupyterlab-webmcp-bridge", "version": version}) if rel == "package.json" else "x"
            )
    return root


def test_a_checkout_stages_the_labextension_even_when_a_staged_folder_is_there(tmp_path):
    """No PKG-INFO (a git checkout): the hook stages again, so a stale build/labextension is never shipped."""
    unpacked_sdist(tmp_path).joinpath("PKG-INFO").unlink()
    assert prebuilt_labextension(tmp_path, "0.1.0") is None


def test_an_unpacked_sdist_gives_its_staged_folder(tmp_path):
    assert prebuilt_labextension(unpacked_sdist(tmp_path), "0.1.0") == tmp_path / STAGED


def test_an_sdist_with_an_incomplete_or_other_version_folder_fails_clearly(tmp_path):
    with pytest.raises(RuntimeError, match="lacks static/pyodide/kernel-lock.json"):
        prebuilt_labextension(unpacked_sdist(tmp_path / "a", leave_out="static/pyodide/kernel-lock.json"), "0.1.0")
    with pytest.raises(RuntimeError, match="version '0.0.9', the project '0.1.0'"):
        prebuilt_labextension(unpacked_sdist(tmp_path / "b", version="0.0.9"), "0.1.0")


def test_pyproject_puts_the_staged_folder_in_the_sdist_and_pip_in_the_build_environment():
    sdist = PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]
    assert STAGED in sdist["artifacts"] and STAGED in sdist["include"]
    assert {"LICENSE", "THIRD_PARTY_NOTICES.md"} <= set(sdist["include"])
    # the hook runs for both targets, and `python -m pip download` needs pip inside an isolated build environment
    assert PYPROJECT["tool"]["hatch"]["build"]["hooks"]["custom"]["path"] == "hatch_build.py"
    assert any(r.split(">")[0].split("=")[0] == "pip" for r in PYPROJECT["build-system"]["requires"])
    assert PYPROJECT["project"]["license-files"] == ["LICENSE", "THIRD_PARTY_NOTICES.md"]
