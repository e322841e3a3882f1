"""The distribution's metadata, on the wheel ``pip wheel .`` builds from this checkout (``sitebuild.package``):
one version source, the classifiers the JupyterLab extension manager finds prebuilt extensions by, the declared
dependency of the server extension, and the packages it installs under CPython: never ``webmcp_bridge``, which
PyPI's project ``webmcp-bridge`` installs too (CONTRIBUTING.md, "Names")."""

from __future__ import annotations

import json
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import webmcp_bridge  # noqa: E402
from sitebuild.package import build_wheel  # noqa: E402
from sitebuild.pins import VERSION_FILE, project_version, read_pins  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LABEXTENSION = "jupyterlab_webmcp_bridge-{v}.data/data/share/jupyter/labextensions/jupyterlab-webmcp-bridge/"


@pytest.fixture(scope="module")
def wheel() -> zipfile.ZipFile:
    with zipfile.ZipFile(build_wheel()) as whl:
        yield whl


def metadata(whl: zipfile.ZipFile):
    name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(whl.read(name).decode())


def test_the_suite_tests_this_checkouts_packages():
    """pyproject's ``pythonpath`` puts this checkout's ``py_src`` first: beside another checkout's editable install
    (or an installed wheel), the imports are still this checkout's."""
    import jupyterlab_webmcp_bridge

    for module in (webmcp_bridge, jupyterlab_webmcp_bridge):
        assert Path(module.__file__).resolve().is_relative_to(ROOT / "py_src")


def test_the_version_is_written_once():
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert ROOT / PYPROJECT["tool"]["hatch"]["version"]["path"] == VERSION_FILE
    assert project_version() == webmcp_bridge.__version__ == read_pins()["project"]["version"]
    assert "version" not in json.loads((ROOT / "lite" / "extension" / "package.json").read_text())


def test_the_wheel_carries_that_version_everywhere(wheel):
    version = project_version()
    assert metadata(wheel)["Version"] == version
    package = json.loads(wheel.read(LABEXTENSION.format(v=version) + "package.json"))
    assert package["name"] == "jupyterlab-webmcp-bridge" and package["version"] == version
    assert LABEXTENSION.format(v=version) + f"static/webmcp_bridge-{version}-py3-none-any.whl" in wheel.namelist()


def test_the_extension_manager_finds_it_and_the_licence_is_an_spdx_expression(wheel):
    meta = metadata(wheel)
    classifiers = meta.get_all("Classifier")
    for wanted in (
        "Framework :: Jupyter",
        "Framework :: Jupyter :: JupyterLab :: 4",
        "Framework :: Jupyter :: JupyterLab :: Extensions",
        "Framework :: Jupyter :: JupyterLab :: Extensions :: Prebuilt",
        "Programming Language :: Python :: 3.11",
    ):
        assert wanted in classifiers
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639: not both
    assert "jupyterlab-extension" in meta["Keywords"].split(",")


def test_the_server_extension_dependency_is_declared(wheel):
    assert metadata(wheel).get_all("Requires-Dist")[0] == "jupyter-server<3,>=2.4"


def test_under_cpython_it_installs_only_its_hooks_never_webmcp_bridge(wheel):
    top = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" not in name and ".data/" not in name}
    assert top == {"jupyterlab_webmcp_bridge", "webmcp_bridge_jupyter"}
    assert top == set(PYPROJECT["tool"]["check-wheel-contents"]["toplevel"])
    entry_points = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "jupyter-webmcp-bridge = webmcp_bridge_jupyter.cli:main" in entry_points


def test_labextension_develop_finds_the_checkouts_staged_folder():
    """`jupyter labextension develop .` imports the module named after the distribution and links what its
    `_jupyter_labextension_paths` names (CONTRIBUTING.md, "The development loop")."""
    import jupyterlab_webmcp_bridge
    from sitebuild.extension import EXTENSION_NAME

    assert jupyterlab_webmcp_bridge.__name__ == PYPROJECT["project"]["name"].replace("-", "_")
    assert jupyterlab_webmcp_bridge._jupyter_labextension_paths() == [
        {"src": str(ROOT / "build" / "labextension"), "dest": EXTENSION_NAME}
    ]
