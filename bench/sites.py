"""The two twin sites of the benchmark: ours (the bridge) and theirs (the published reference extension).

Both are built by build_site() from the same JupyterLite, the same offline Pyodide and the same content
(lite/content/ plus the bench notebooks); only the federated extension differs. Theirs is the prebuilt
labextension folder inside the reference's PyPI wheel, fetched once with `pip download`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitebuild.site import build as build_site  # noqa: E402
from sitebuild.util import CACHE  # noqa: E402

REFERENCE = "jupyterlite-webmcp==0.1.1"
REFERENCE_EXT = "jupyterlite_webmcp-0.1.1.data/data/share/jupyter/labextensions/jupyterlite-webmcp/"
BENCH = CACHE / "bench"


def reference_extension() -> Path:
    """The reference's labextension folder, extracted from its wheel (downloaded once)."""
    folder = BENCH / "reference" / "jupyterlite-webmcp"
    if (folder / "package.json").exists():
        return folder
    wheels = BENCH / "reference" / "wheel"
    if not list(wheels.glob("*.whl")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(wheels),
                REFERENCE,
            ],
            check=True,
        )
    wheel = next(wheels.glob("*.whl"))
    tmp = folder.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheel) as whl:
        for name in whl.namelist():
            if name.startswith(REFERENCE_EXT) and not name.endswith("/"):
                dest = tmp / name[len(REFERENCE_EXT) :]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(whl.read(name))
    tmp.rename(folder)
    return folder


def build_sites(content: Path) -> dict[str, Path]:
    """Build both sites with the bench notebooks of `content` added; return {"ours": dir, "theirs": dir}."""
    return {
        "ours": build_site(output=BENCH / "ours", extra_content=(content,)),
        "theirs": build_site(output=BENCH / "theirs", extra_content=(content,), extensions=(reference_extension(),)),
    }
