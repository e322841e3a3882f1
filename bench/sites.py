"""The twin sites of the benchmark: ours (the bridge) and theirs (the published reference extension), and with
``--before REV`` the bridge as an earlier commit built it (before_site).

Both are built by build_site() from the same JupyterLite, the same offline Pyodide and the same content
(lite/content/ plus the bench notebooks); only the federated extension differs. Theirs is the prebuilt
labextension folder inside the reference's PyPI wheel, fetched once with `pip download`.
"""

from __future__ import annotations

import os
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


def build_sites(content: Path, prefix: str = "") -> dict[str, Path]:
    """Build both sites with the bench notebooks of `content` added, into .cache/bench/<prefix>ours and
    <prefix>theirs; return {"ours": dir, "theirs": dir}."""
    return {
        "ours": build_site(output=BENCH / f"{prefix}ours", extra_content=(content,)),
        "theirs": build_site(
            output=BENCH / f"{prefix}theirs", extra_content=(content,), extensions=(reference_extension(),)
        ),
    }


def before_site(rev: str, content: Path) -> tuple[Path, str]:
    """The bridge's site as commit ``rev`` built it, with the bench notebooks of ``content`` added: a detached git
    worktree of ``rev`` in ``.cache/bench/before/src`` (kept for the next run; replaced when ``rev`` names another
    commit), built by that checkout's own ``sitebuild`` in a subprocess whose PYTHONPATH is that checkout (its
    ``py_src`` and its root), so the wheel, the loader and the build steps are all the old ones. Its ``.cache``
    starts as a copy of this checkout's downloads (the Pyodide distribution, wheels, npm packages; never the bench
    sites), so nothing is fetched twice. Returns (the built site's folder, the full commit hash); raises
    subprocess.CalledProcessError when git or the old build fails."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    src = BENCH / "before" / "src"
    if src.exists():
        head = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if head != commit:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(src)], check=False)
            shutil.rmtree(src, ignore_errors=True)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=True)
    if not src.exists():
        src.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(src), commit], check=True)
    if not (src / ".cache").exists():

        def downloads_only(folder: str, names: list[str]) -> list[str]:
            top = Path(folder) == CACHE
            return [n for n in names if top and (n == "bench" or n.startswith("lite-dir") or n == "dist.lock")]

        shutil.copytree(CACHE, src / ".cache", symlinks=True, ignore=downloads_only)
    output = BENCH / "before" / "site"
    script = (
        "import sys; from pathlib import Path; from sitebuild.site import build; "
        "build(output=Path(sys.argv[1]), extra_content=(Path(sys.argv[2]),))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(src / "py_src"), str(src)))}
    subprocess.run([sys.executable, "-c", script, str(output), str(content.resolve())], cwd=src, env=env, check=True)
    return output, commit
