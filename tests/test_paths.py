"""paths.py and every tool's path handling: workspace-relative paths only."""

from __future__ import annotations

import pytest

from helpers import make_bridge
from webmcp_bridge.core.errors import ErrorCode, ToolError
from webmcp_bridge.core.paths import join, normalize_path

BAD_PATHS = [
    "/etc/passwd.ipynb",
    "/a.ipynb",
    "../a.ipynb",
    "demo/../a.ipynb",
    "demo/..",
    "./../a.ipynb",
    "demo/./a.ipynb",
    "demo\\a.ipynb",
    "C:\\Users\\a.ipynb",
    "C:/Users/a.ipynb",
    "a\x00.ipynb",
    "a\n.ipynb",
    "a\r.ipynb",
    "a\t.ipynb",
    "evil\u202egpj.ipynb",
    "a\u200b.ipynb",
    "~/a.ipynb",
    "~",
    "x" * 1025,
    "d/" + "x" * 300 + ".ipynb",
    " a.ipynb",
    "",
]


@pytest.mark.parametrize("path", BAD_PATHS, ids=[repr(p)[:40] for p in BAD_PATHS])
def test_bad_paths_are_invalid(path):
    with pytest.raises(ToolError) as info:
        normalize_path(path)
    assert info.value.code is ErrorCode.INVALID_PATH


@pytest.mark.parametrize(
    "path, expected",
    [
        ("./a/b.ipynb", "a/b.ipynb"),
        ("a//b.ipynb", "a/b.ipynb"),
        ("a/b/", "a/b"),
        ("a.ipynb", "a.ipynb"),
        ("données/日本語.ipynb", "données/日本語.ipynb"),
        ("a..b.ipynb", "a..b.ipynb"),
    ],
)
def test_good_paths_normalize(path, expected):
    assert normalize_path(path) == expected


def test_root_only_when_allowed():
    assert normalize_path("", allow_root=True) == ""
    assert normalize_path("./", allow_root=True) == ""
    with pytest.raises(ToolError):
        normalize_path("")


def test_non_string_path():
    with pytest.raises(ToolError) as info:
        normalize_path(5)  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.INVALID_PATH


def test_join():
    assert join("", "a.ipynb") == "a.ipynb"
    assert join("demo/", "a.ipynb") == "demo/a.ipynb"
    for directory, name in [("", "x/a.ipynb"), ("..", "a.ipynb"), ("/abs", "a.ipynb"), ("", "..")]:
        with pytest.raises(ToolError) as info:
            join(directory, name)
        assert info.value.code is ErrorCode.INVALID_PATH


TOOL_PATH_CASES = [
    ("jupyter_open_notebook", "path"),
    ("jupyter_get_cells", "notebookPath"),
    ("jupyter_export_notebook", "notebookPath"),
    ("jupyter_save_notebook", "notebookPath"),
    ("jupyter_clear_outputs", "notebookPath"),
    ("jupyter_list_workspace", "path"),
]


@pytest.mark.parametrize("tool, key", TOOL_PATH_CASES)
@pytest.mark.parametrize(
    "path",
    [
        "../running.ipynb",
        "/demo/running.ipynb",
        "demo\\running.ipynb",
        "demo/\u202erunning.ipynb",
        "demo/running.ipynb\x00",
        "~/running.ipynb",
    ],
)
def test_tools_refuse_bad_paths(tool, key, path):
    b = make_bridge({"demo/running.ipynb": "notebook-running-code.ipynb"})
    b.open("demo/running.ipynb")
    payload = b.fails(tool, {key: path}, "INVALID_PATH")
    text = str(payload)
    assert "\x00" not in text and "\u202e" not in text  # the bad characters are not echoed back


def test_tools_accept_dot_slash_paths():
    b = make_bridge({"demo/running.ipynb": "notebook-running-code.ipynb"})
    opened = b.ok("jupyter_open_notebook", {"path": "./demo/running.ipynb"})
    assert opened["notebook"]["path"] == "demo/running.ipynb"
    cells = b.ok("jupyter_get_cells", {"notebookPath": "./demo//running.ipynb", "endIndex": 1})
    assert cells["path"] == "demo/running.ipynb"


def test_notebook_path_must_be_a_notebook():
    b = make_bridge({"demo/running.ipynb": "notebook-running-code.ipynb"}, {"notes.txt": "hello"})
    b.fails("jupyter_open_notebook", {"path": "notes.txt"}, "INVALID_PATH")
    b.fails("jupyter_get_cells", {"notebookPath": "demo"}, "INVALID_PATH")
    b.fails("jupyter_open_notebook", {"path": "missing.ipynb"}, "NOTEBOOK_NOT_FOUND")
    b.fails("jupyter_get_cells", {"notebookPath": "demo/missing.ipynb"}, "NOTEBOOK_NOT_FOUND")
