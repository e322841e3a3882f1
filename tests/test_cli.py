"""``jupyter webmcp-bridge mcp-b on|off|status`` (webmcp_bridge_jupyter.cli) on real config folders: the file it
writes is the one JupyterLab's server reads (``labconfig/page_config.json`` of a folder of ``jupyter --paths``),
other keys of that file are kept, a folder that comes first still decides and is named, and a broken file is
refused unchanged. (A JupyterLab server page with the option turned on by this command: test_lab_server.py.)"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import tomllib
from pathlib import Path

import jupyter_core.paths
import pytest

from webmcp_bridge_jupyter import cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """Jupyter's config path made of temporary folders only: ``admin`` (JUPYTER_CONFIG_PATH, first), ``user``
    (JUPYTER_CONFIG_DIR, ``--user``), ``env`` (this environment's, the default); no system folder."""
    made = {name: tmp_path / name for name in ("admin", "user", "env")}
    for folder in made.values():
        folder.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(made["user"]))
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    monkeypatch.delenv("JUPYTER_NO_CONFIG", raising=False)
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "0")
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    monkeypatch.setattr(jupyter_core.paths, "ENV_CONFIG_PATH", [str(made["env"])])
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [])
    monkeypatch.setattr(cli, "ENV_CONFIG_PATH", [str(made["env"])])
    return made


def page_config(folder: Path) -> dict:
    return json.loads((folder / "labconfig" / "page_config.json").read_text())


def test_on_writes_the_key_jupyterlab_reads_and_status_reports_it(folders, capsys):
    assert cli.main(["mcp-b", "status"]) == 0
    assert capsys.readouterr().out.splitlines() == ["MCP-B: off (webmcpBridgePolyfill is set nowhere)"]
    assert cli.main(["mcp-b", "on"]) == 0
    assert page_config(folders["env"]) == {"webmcpBridgePolyfill": True}
    assert not (folders["user"] / "labconfig").exists()
    capsys.readouterr()
    assert cli.main(["mcp-b", "status"]) == 0
    path = folders["env"] / "labconfig" / "page_config.json"
    assert capsys.readouterr().out.splitlines() == [
        f"MCP-B: on (set by {path})",
        f"  {path}: webmcpBridgePolyfill = true",
    ]
    assert cli.main(["mcp-b", "off"]) == 0
    assert page_config(folders["env"]) == {"webmcpBridgePolyfill": False}
    assert cli.effective() == (False, path)


def test_other_keys_of_the_file_are_kept(folders):
    labconfig = folders["user"] / "labconfig"
    labconfig.mkdir()
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": {"some-extension": True}}))
    assert cli.main(["mcp-b", "on", "--user"]) == 0
    assert page_config(folders["user"]) == {
        "disabledExtensions": {"some-extension": True},
        "webmcpBridgePolyfill": True,
    }


def test_user_writes_the_users_config_which_comes_before_the_environments(folders):
    assert cli.main(["mcp-b", "on"]) == 0
    assert cli.main(["mcp-b", "off", "--user"]) == 0
    assert page_config(folders["user"]) == {"webmcpBridgePolyfill": False}
    assert page_config(folders["env"]) == {"webmcpBridgePolyfill": True}
    assert cli.effective() == (False, folders["user"] / "labconfig" / "page_config.json")


def test_a_folder_that_comes_first_still_decides_and_is_named(folders, monkeypatch, capsys):
    admin = folders["admin"] / "labconfig" / "page_config.d"
    admin.mkdir(parents=True)
    (admin / "site.json").write_text(json.dumps({"webmcpBridgePolyfill": True}))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(folders["admin"]))
    assert cli.main(["mcp-b", "off"]) == 1
    err = capsys.readouterr().err
    assert f"MCP-B is still on: {admin / 'site.json'} sets webmcpBridgePolyfill" in err, err
    assert page_config(folders["env"]) == {"webmcpBridgePolyfill": False}  # written all the same, as said


def test_only_true_turns_it_on(folders):
    """The loader runs MCP-B for the JSON value true only; a string "true" is off, as the page sees it."""
    labconfig = folders["user"] / "labconfig"
    labconfig.mkdir()
    (labconfig / "page_config.json").write_text(json.dumps({"webmcpBridgePolyfill": "true"}))
    assert cli.effective() == (False, labconfig / "page_config.json")


def test_a_file_that_is_not_a_json_object_is_refused_unchanged(folders, capsys):
    labconfig = folders["user"] / "labconfig"
    labconfig.mkdir()
    (labconfig / "page_config.json").write_text("[1, 2]")
    assert cli.main(["mcp-b", "on", "--user"]) == 1
    assert "holds a JSON list, not an object" in capsys.readouterr().err
    assert (labconfig / "page_config.json").read_text() == "[1, 2]"
    (labconfig / "page_config.json").write_text("{not json")
    assert cli.main(["mcp-b", "status"]) == 1
    assert "is not valid JSON" in capsys.readouterr().err


def test_a_usage_error_exits_2(folders, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["mcp-b", "maybe"])
    assert exited.value.code == 2
    assert "invalid choice: 'maybe'" in capsys.readouterr().err


def test_the_command_runs_as_a_program_with_the_environments_config_dir(tmp_path):
    """As `jupyter webmcp-bridge` runs it: a new process, JUPYTER_CONFIG_DIR from the environment."""
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path),
        "JUPYTER_PREFER_ENV_PATH": "0",
        "PYTHONPATH": str(ROOT / "py_src"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "webmcp_bridge_jupyter.cli", "mcp-b", "on", "--user"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"into {tmp_path / 'labconfig' / 'page_config.json'}" in done.stdout
    assert page_config(tmp_path) == {"webmcpBridgePolyfill": True}


def test_the_console_script_is_declared_for_jupyter_to_find():
    """`jupyter webmcp-bridge` runs the program `jupyter-webmcp-bridge` found on PATH."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"jupyter-webmcp-bridge": "webmcp_bridge_jupyter.cli:main"}
