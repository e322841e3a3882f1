"""The built site under CPython: the pins, the rewritten pyodide-lock.json, the extension and the server."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import threading
import tomllib
import urllib.request
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sitebuild.patches import KERNEL_EXTENSION, KERNEL_WAIT_BUGGY, KERNEL_WAIT_FIXED, patch_kernel_messaging  # noqa: E402
from sitebuild.serve import make_server  # noqa: E402
from sitebuild.site import KERNEL_PLUGIN, verify_output  # noqa: E402
from sitebuild.site import build as build_site  # noqa: E402
from sitebuild.util import BuildError  # noqa: E402

PYODIDE = "static/pyodide"


@pytest.fixture(scope="module")
def site() -> Path:
    """Build (incrementally) and return _output/."""
    return build_site()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_built_config_keeps_pyodide_url(site):
    """The kernel loads the site's own runtime, and never falls back to a public index."""
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"][KERNEL_PLUGIN]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert kernel["disablePyPIFallback"] is True
    assert (site / PYODIDE / "pyodide.mjs").is_file()
    assert (site / PYODIDE / "pyodide.asm.wasm").is_file()
    assert "jupyterlab-webmcp-bridge" in [e["name"] for e in config["federated_extensions"]]


def test_app_configs_do_not_override_pyodide_url(site):
    """No per-app jupyter-lite.json points the kernel elsewhere."""
    for path in site.glob("*/jupyter-lite.json"):
        data = json.loads(path.read_text()).get("jupyter-config-data", {})
        kernel = data.get("litePluginSettings", {}).get(KERNEL_PLUGIN, {})
        assert kernel.get("pyodideUrl", "./static/pyodide/pyodide.mjs").endswith("static/pyodide/pyodide.mjs"), path


def test_lock_matches_shipped_wheels(site):
    """Every lock entry names a shipped wheel with its real sha256; every dependency is itself shipped."""
    lock = json.loads((site / PYODIDE / "pyodide-lock.json").read_text())
    packages = lock["packages"]
    shipped = {p.name for p in (site / PYODIDE).glob("*.whl")}
    assert {entry["file_name"] for entry in packages.values()} == shipped
    for name, entry in packages.items():
        assert sha256(site / PYODIDE / entry["file_name"]) == entry["sha256"], name
        assert entry["imports"], name
        for dep in entry["depends"]:
            assert dep in packages, f"{name} depends on {dep}, which is not shipped"
    for needed in ("micropip", "comm", "ipython", "jedi", "traitlets", "pydantic", "pydantic-core"):
        assert needed in packages


def test_a_field_the_runtime_adds_to_its_lock_entries_is_kept(site):
    """Pyodide 314.0.7 gave every lock entry a ``tool`` field (the canary's runtime): the rewritten lock keeps a field
    the build does not write, the package's own value or the field's empty value, and the lock's top-level fields."""
    from sitebuild.lock import rewrite_lock
    from sitebuild.pins import read_pins
    from sitebuild.runtime import fetch_pyodide
    from sitebuild.wheels import fetch_wheels

    upstream = json.loads((fetch_pyodide(read_pins()["pyodide"]) / "pyodide-lock.json").read_text())
    upstream["tool"] = {}
    for entry in upstream["packages"].values():
        entry["tool"] = {"by": entry["name"]}
    upstream["packages"] = {k: v for k, v in upstream["packages"].items() if k != "pydantic"}  # one not upstream
    wheels = fetch_wheels(read_pins(), upstream)
    rewritten = rewrite_lock(upstream, wheels)
    assert rewritten["tool"] == {}
    assert rewritten["packages"]["micropip"]["tool"] == {"by": "micropip"}
    assert rewritten["packages"]["pydantic"]["tool"] == {}
    built = json.loads((site / PYODIDE / "pyodide-lock.json").read_text())
    assert "tool" not in built["packages"]["micropip"]  # the pinned runtime's lock has no such field: none added


def test_lock_versions_are_the_pins(site):
    """The versions served are exactly those pinned in pyproject.toml."""
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["webmcp_bridge"]["site"]
    packages = json.loads((site / PYODIDE / "pyodide-lock.json").read_text())["packages"]
    assert set(packages) == {canonicalize_name(n) for n in pins["wheels"]}
    for name, version in pins["wheels"].items():
        assert packages[canonicalize_name(name)]["version"] == version


def test_bridge_manifest(site):
    """bridge.json names the shipped bridge wheel, its dependency wheels and the runtime shipped beside it, and
    the Pyodide version those wheels are built for (the page's runtime is used only when it is that one)."""
    static = site / "extensions" / "jupyterlab-webmcp-bridge" / "static"
    manifest = json.loads((static / "bridge.json").read_text())
    assert (static / manifest["wheel"]).is_file()
    assert manifest["wheel"].startswith("webmcp_bridge-")
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["webmcp_bridge"]["site"]
    assert manifest["pyodideVersion"] == pins["pyodide"]
    assert (static / manifest["pyodide"]).resolve() == (static / "pyodide" / "pyodide.mjs").resolve()
    assert not (static / manifest["pyodide"]).resolve().is_relative_to((site / PYODIDE).resolve())
    shipped = {Path(w).name.split("-")[0] for w in manifest["wheels"]}
    assert shipped == {"pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection"}
    lock = json.loads((static / "pyodide" / "pyodide-lock.json").read_text())
    for wheel in manifest["wheels"]:
        entry = next(e for e in lock["packages"].values() if e["file_name"] == Path(wheel).name)
        assert sha256(static / wheel) == entry["sha256"], wheel


def test_site_holds_exactly_the_bridge_and_the_kernel(site):
    """No labextension of the build's environment leaks into the site: the built config and the extensions/
    folder hold the bridge and the Pyodide kernel, nothing else."""
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    wanted = ["@jupyterlite/pyodide-kernel-extension", "jupyterlab-webmcp-bridge"]
    assert sorted(e["name"] for e in config["federated_extensions"]) == wanted
    assert (
        sorted(
            p.parent.relative_to(site / "extensions").as_posix() for p in (site / "extensions").glob("**/package.json")
        )
        == wanted
    )


def test_a_leaked_extension_fails_the_check(site, tmp_path):
    """verify_output refuses a site that lists an extension nobody asked for."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns("*.whl", "*.wasm", "*.zip"))
    config = json.loads((copy / "jupyter-lite.json").read_text())
    config["jupyter-config-data"]["federated_extensions"].append(
        {"name": "some-other-extension", "load": "static/remoteEntry.js"}
    )
    (copy / "jupyter-lite.json").write_text(json.dumps(config))
    lock = json.loads((site / PYODIDE / "pyodide-lock.json").read_text())
    with pytest.raises(BuildError, match="wanted exactly"):
        verify_output(lock, copy, ("jupyterlab-webmcp-bridge",))


def test_site_config_is_the_repository_file(site):
    """The demo's configuration is the top-level jupyter-lite.json: the built one keeps every setting of it."""
    source = json.loads((ROOT / "jupyter-lite.json").read_text())["jupyter-config-data"]
    built = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert built["appName"] == source["appName"] and built["exposeAppInBrowser"] == source["exposeAppInBrowser"]
    for key, value in source["litePluginSettings"][KERNEL_PLUGIN].items():
        assert built["litePluginSettings"][KERNEL_PLUGIN][key] == value


def test_headers_file(site):
    text = (site / "_headers").read_text()
    assert "Cross-Origin-Opener-Policy: same-origin" in text
    assert "Cross-Origin-Embedder-Policy: credentialless" in text
    assert "Content-Security-Policy: default-src 'self' data: blob:" in text


def test_content_is_shipped(site):
    for name in (
        "jupyterlite-demo-python.ipynb",
        "notebook-running-code.ipynb",
        "jupyterlite-empty.ipynb",
        "ipython-beyond-plain-python.ipynb",
        "handson-ml2-tools-pandas.ipynb",
        "pytudes-euler.ipynb",
    ):
        assert (site / "files" / name).is_file(), name


def test_no_machine_paths_in_config(site):
    """The built configuration holds only site-relative URLs."""
    for path in [site / "jupyter-lite.json", *site.glob("*/jupyter-lite.json")]:
        text = path.read_text()
        assert str(ROOT) not in text and str(Path.home()) not in text, path


def test_second_build_rewrites_nothing(site):
    """Nothing changed: the second build skips every download and `jupyter lite build` (no file of the site
    is written again; how long that takes is measured by the build's own progress output, not here)."""

    def stamps():
        return {p: p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()}

    before = stamps()
    build_site()
    assert stamps() == before


def test_server_headers_and_types(site):
    """build.py's server sends COOP/COEP on every response and the right MIME types."""
    server = make_server(site, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    wheel = json.loads((site / "extensions/jupyterlab-webmcp-bridge/static/bridge.json").read_text())["wheel"]
    expected = {
        f"/{PYODIDE}/pyodide.mjs": "text/javascript",
        f"/{PYODIDE}/pyodide.asm.wasm": "application/wasm",
        f"/{PYODIDE}/pyodide-lock.json": "application/json",
        f"/extensions/jupyterlab-webmcp-bridge/static/{wheel}": "application/zip",
    }
    try:
        for url, mime in expected.items():
            with urllib.request.urlopen(base + url) as response:
                assert response.headers["Content-Type"].split(";")[0] == mime, url
                assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
                assert response.headers["Cross-Origin-Embedder-Policy"] == "credentialless"
                assert response.headers["Content-Security-Policy"].startswith("default-src 'self' data: blob:")
    finally:
        server.shutdown()
        server.server_close()


def test_build_restores_a_dropped_pyodide_url():
    """If anything drops pyodideUrl from the built config, the next build puts it back (and says so). On a site of
    its own: the demo site's _output/ is read by the other tests of this file, which another test process may run
    meanwhile (test_second_build_rewrites_nothing would see this test's write)."""
    output = ROOT / ".cache" / "site-dropped-url"
    build_site(output=output)
    path = output / "jupyter-lite.json"
    config = json.loads(path.read_text())
    del config["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]["pyodideUrl"]
    path.write_text(json.dumps(config))
    build_site(output=output)
    kernel = json.loads(path.read_text())["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"


def test_the_loader_gets_its_numbers_from_the_bounds_module(site):
    """bridge.json hands the loader the numbers it applies, as webmcp_bridge.core.limits has them (the loader
    writes none of its own)."""
    from webmcp_bridge.core import limits
    from webmcp_bridge.core.limits import LOADER_BOUNDS

    manifest = json.loads((site / "extensions/jupyterlab-webmcp-bridge/static/bridge.json").read_text())
    assert (
        manifest["bounds"]
        == LOADER_BOUNDS
        == {
            "recentCalls": limits.RECENT_CALLS,
            "failureChars": limits.FAILURE_REASON_CHARS,
            "refusalChars": limits.REFUSAL_REASON_CHARS,
            "startQuietMs": limits.START_QUIET_MS,
            "startIdleLeftMs": limits.START_IDLE_LEFT_MS,
            "startLatestMs": limits.START_LATEST_MS,
            "startIdleWaitMs": limits.START_IDLE_WAIT_MS,
            "startRecheckMs": limits.START_RECHECK_MS,
            "stepIdleWaitMs": limits.STEP_IDLE_WAIT_MS,
            "startAnswerMs": limits.START_ANSWER_MS,
            "workerPingMs": limits.WORKER_PING_MS,
            "workerStuckMs": limits.WORKER_STUCK_MS,
        }
    )
    # the words of a call the loader answers pending while Python starts, and the panel its placeholder stands for
    from webmcp_bridge.calls.pending import START_PENDING_MESSAGE
    from webmcp_bridge.lab.ui import panel

    assert manifest["startPending"] == {"message": START_PENDING_MESSAGE, "collect": "jupyter_wait_for_result"}
    from webmcp_bridge.core.errors import WATCHDOG_MESSAGE

    assert manifest["watchdog"] == {"error": "TIMEOUT", "message": WATCHDOG_MESSAGE}
    assert manifest["panel"] == {
        "id": panel.WIDGET_ID,
        "label": panel.LABEL,
        "caption": panel.CAPTION,
        "rank": panel.RANK,
    }
    loader = (ROOT / "lite/extension/static/remoteEntry.js").read_text(encoding="utf-8")
    for key in LOADER_BOUNDS:
        assert f"'{key}'" in loader or f"bounds.{key}" in loader, key


def test_static_tool_definitions_match_the_registry(site):
    """tools.json, which the loader registers before Python starts, is exactly the registry's definitions and its
    toolsets as data (the loader selects from them by name only)."""
    from helpers import tool_definitions
    from webmcp_bridge.session.bridge import DEFAULT_TOOLSETS, build_bridge, tools_manifest

    static = json.loads((site / "extensions/jupyterlab-webmcp-bridge/static/tools.json").read_text())
    assert static == tools_manifest() and static["definitions"] == tool_definitions()
    sizes = {ts.name: len(ts.tools) for ts in build_bridge(None).registry.toolsets()}  # type: ignore[arg-type]
    assert len(static["definitions"]) == sum(sizes.values()) == sum(len(names) for names in static["toolsets"].values())
    assert static["aliases"]["default"] == list(DEFAULT_TOOLSETS) and static["always"] == ["toolsets"]
    assert static["queryKey"] == "toolsets"
    assert (
        sizes["notebooks"] == 17 and sizes["calls"] == 2 and sizes["review"] == 7
    )  # calls: wait_for_result, answer_dialog


def test_the_settings_schema_is_generated_from_the_model(site):
    """The Settings Editor's schema the site serves is the settings model's (session/settings_model.py), written by
    the build as tools.json is: the labextension's plugin.json and the entry JupyterLite folds into
    all_federated.json."""
    from webmcp_bridge.session.settings import PLUGIN_ID
    from webmcp_bridge.session.settings_model import schema_text, settings_schema

    written = site / "extensions/jupyterlab-webmcp-bridge/schemas/jupyterlab-webmcp-bridge/plugin.json"
    assert written.read_text(encoding="utf-8") == schema_text()
    federated = json.loads((site / "build/schemas/all_federated.json").read_text(encoding="utf-8"))
    assert [entry["schema"] for entry in federated if entry["id"] == PLUGIN_ID] == [settings_schema()]


def test_a_hand_written_settings_schema_is_refused(tmp_path, monkeypatch):
    """A copy of plugin.json put back into lite/extension/ would be a second source: the staging step stops."""
    import sitebuild.extension as extension

    source = tmp_path / "extension"
    shutil.copytree(ROOT / "lite/extension", source)
    copy = source / "schemas/jupyterlab-webmcp-bridge/plugin.json"
    copy.parent.mkdir(parents=True)
    copy.write_text("{}")
    monkeypatch.setattr(extension, "EXTENSION_SRC", source)
    with pytest.raises(BuildError, match="generated from webmcp_bridge.session.settings_model"):
        extension.stage_labextension(tmp_path / "staged")


def test_the_kernel_reply_wait_is_patched_once_and_a_changed_kernel_is_built_unpatched_with_a_warning(
    site, tmp_path, capsys
):
    """The built kernel chunk carries the reply-wait patch once (patch_kernel_messaging), applied to the
    chunk exactly as the pinned jupyterlite-pyodide-kernel installs it; a kernel without that text is left as it is,
    with a warning (the degraded mode: the build goes on). (That the patched chunk works is replayed in a browser:
    test_site.py's early-reply test.)"""
    built = patch_kernel_messaging(site)
    assert built is not None  # the build already patched it: left as it is
    text = built.read_text(encoding="utf-8")
    assert text.count(KERNEL_WAIT_FIXED) == 1 and KERNEL_WAIT_BUGGY not in text

    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / KERNEL_EXTENSION / "static" / built.name
    original = installed.read_text(encoding="utf-8")
    assert original.count(KERNEL_WAIT_BUGGY) == 1
    static = tmp_path / "extensions" / KERNEL_EXTENSION / "static"
    static.mkdir(parents=True)
    (static / built.name).write_text(original, encoding="utf-8")
    patch_kernel_messaging(tmp_path)
    patched = (static / built.name).read_text(encoding="utf-8")  # (the built chunk also carries the transfer patch)
    assert patched == original.replace(KERNEL_WAIT_BUGGY, KERNEL_WAIT_FIXED) and patched.count(KERNEL_WAIT_FIXED) == 1

    changed = original.replace(KERNEL_WAIT_BUGGY, "A=(e,t)=>e?d(t,0):")
    (static / built.name).write_text(changed, encoding="utf-8")
    capsys.readouterr()
    assert patch_kernel_messaging(tmp_path) is None
    assert "WARNING" in capsys.readouterr().out and (static / built.name).read_text(encoding="utf-8") == changed
    # two chunks with the text: not the build that was checked either; neither is changed
    (static / built.name).write_text(original, encoding="utf-8")
    (static / f"copy-{built.name}").write_text(original, encoding="utf-8")
    assert patch_kernel_messaging(tmp_path) is None
    assert "re-check KERNEL_WAIT_BUGGY" in capsys.readouterr().out
    assert (static / built.name).read_text(encoding="utf-8") == original


def test_the_kernel_drive_and_transfer_patches_apply_once_to_the_pinned_files_and_a_changed_kernel_only_warns(
    site, tmp_path, capsys
):
    """The drive-request and reply-transfer patches (sitebuild.patches) are in the built kernel extension once each,
    made on the files exactly as the pinned jupyterlite-pyodide-kernel installs them; a kernel without the text
    is built without that patch, with a warning. (That they work is replayed in a browser: test_site.py.)"""
    from sitebuild import patches

    pairs = [
        (patches.DRIVE_MAIN_BUGGY, patches.DRIVE_MAIN_FIXED),
        (patches.DRIVE_WORKER_BUGGY, patches.DRIVE_WORKER_FIXED),
        (patches.TRANSFER_MAIN_BUGGY, patches.TRANSFER_MAIN_FIXED),
        (patches.TRANSFER_WORKER_BUGGY, patches.TRANSFER_WORKER_FIXED),
    ]
    built_static = site / "extensions" / KERNEL_EXTENSION / "static"
    built = "".join(p.read_text(encoding="utf-8") for p in sorted(built_static.glob("*.js")))
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / KERNEL_EXTENSION / "static"
    original = {p.name: p.read_text(encoding="utf-8") for p in sorted(installed.glob("*.js"))}
    for buggy, fixed in pairs:
        assert built.count(fixed) == 1 and buggy not in built, buggy
        assert "".join(original.values()).count(buggy) == 1, buggy
    static = tmp_path / "extensions" / KERNEL_EXTENSION / "static"
    static.mkdir(parents=True)
    for name, text in original.items():
        (static / name).write_text(text, encoding="utf-8")
    patches.patch_kernel_drive(tmp_path)
    patches.patch_kernel_transfer(tmp_path)
    patches.patch_kernel_transfer(tmp_path)  # applied again: left as it is
    again = "".join(p.read_text(encoding="utf-8") for p in sorted(static.glob("*.js")))
    for buggy, fixed in pairs:
        assert again.count(fixed) == 1 and buggy not in again
    worker = next(name for name, text in original.items() if patches.TRANSFER_WORKER_BUGGY in text)
    (static / worker).write_text(original[worker].replace(patches.TRANSFER_WORKER_BUGGY, "o[0]=2}"), encoding="utf-8")
    capsys.readouterr()
    main_chunk = next(name for name, text in original.items() if patches.TRANSFER_MAIN_BUGGY in text)
    (static / main_chunk).write_text(original[main_chunk], encoding="utf-8")  # its half unpatched again
    # the two halves work only together: neither is patched, the build goes on with a warning
    assert patches.patch_kernel_transfer(tmp_path) == (None, None)
    assert "re-check TRANSFER_WORKER_BUGGY" in capsys.readouterr().out
    assert (static / main_chunk).read_text(encoding="utf-8").count(patches.TRANSFER_MAIN_BUGGY) == 1


def test_the_site_ships_the_workers_memory_snapshot_made_for_its_own_wheels(site):
    """The built site carries the bridge worker's memory snapshot (sitebuild/snapshot.py) beside bridge.json, made for
    exactly the wheels it serves, with each wheel's native module beside it as the worker preloads it."""
    import gzip
    import zipfile

    static = site / "extensions" / "jupyterlab-webmcp-bridge" / "static"
    manifest = json.loads((static / "bridge.json").read_text())
    index = json.loads((static / "snapshot" / "snapshot.json").read_text())
    served = {Path(name).name: sha256(static / name) for name in (*manifest["wheels"], manifest["wheel"])}
    assert index["wheels"] == served
    with gzip.open(static / "snapshot" / index["memory"]) as memory:
        assert len(memory.read()) == index["bytes"]
    core = next(static / name for name in manifest["wheels"] if Path(name).name.startswith("pydantic_core-"))
    assert [side["path"] for side in index["sideModules"]] == [
        name for name in zipfile.ZipFile(core).namelist() if name.endswith(".so")
    ]
    for side in index["sideModules"]:
        assert (static / "snapshot" / side["file"]).read_bytes() == zipfile.ZipFile(core).read(side["path"])
