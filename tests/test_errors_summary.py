"""``jupyter_get_context`` with ``includeErrors``: the cells of the current notebook whose last run raised, over the
in-memory host (its stand-in kernel runs cells with exec: an exception becomes an error output)."""

from __future__ import annotations

import json

from helpers import Bridge, corpus_json
from webmcp_bridge.access.levels import set_cell_level
from webmcp_bridge.core.limits import ERROR_MESSAGE_BYTES, ERRORS_LISTED, utf8_len
from webmcp_bridge.tools.workspace import error_name

PATH = "errors.ipynb"


def code(cell_id: str, source: str, outputs: list[dict] | None = None, count: int | None = None) -> dict:
    return {
        "id": cell_id,
        "cell_type": "code",
        "metadata": {},
        "source": source,
        "execution_count": count,
        "outputs": outputs or [],
    }


def error(ename: str, evalue: str) -> dict:
    return {
        "output_type": "error",
        "ename": ename,
        "evalue": evalue,
        "traceback": [f"\x1b[31m{ename}\x1b[0m: {evalue}"],
    }


def notebook(cells: list[dict]) -> str:
    nb = corpus_json("jupyterlite-empty.ipynb")
    nb["cells"] = cells
    return json.dumps(nb)


def agent(cells: list[dict]) -> Bridge:
    bridge = Bridge({PATH: notebook(cells)})
    bridge.open(PATH)
    return bridge


def errors(bridge: Bridge) -> dict:
    result = bridge.call("jupyter_get_context", {"includeErrors": True})
    assert result["isError"] is False
    return result["structuredContent"]["errors"]


def test_lists_the_cells_whose_last_run_raised_in_order():
    bridge = agent(
        [
            code("ok", "x = 1", [{"output_type": "stream", "name": "stdout", "text": "fine\n"}], 1),
            {"id": "md", "cell_type": "markdown", "metadata": {}, "source": "# ValueError: not code"},
            code(
                "bad",
                "1/0",
                [
                    {"output_type": "stream", "name": "stdout", "text": "before\n"},
                    error("ZeroDivisionError", "division by zero"),
                ],
                2,
            ),
            code("never", "y = 2"),
            code("key", "d['k']", [error("KeyError", "'k'")], 3),
        ]
    )
    summary = errors(bridge)
    assert summary == {
        "path": PATH,
        "uri": f"notebook://{PATH}",
        "count": 2,
        "truncated": False,
        "cells": [
            {
                "cellId": "bad",
                "index": 2,
                "executionCount": 2,
                "ename": "ZeroDivisionError",
                "evalue": "division by zero",
                "outputIndex": 1,
            },
            {
                "cellId": "key",
                "index": 4,
                "executionCount": 3,
                "ename": "KeyError",
                "evalue": "'k'",
                "outputIndex": 0,
            },
        ],
    }
    # the notebook's address and the cell's output index read the error's traceback
    first = summary["cells"][0]
    out = bridge.ok(
        "jupyter_get_output", {"uri": f"{summary['uri']}/cells/{first['cellId']}/outputs/{first['outputIndex']}"}
    )
    assert "ZeroDivisionError" in out["text"] and "\x1b" not in out["text"]


def test_without_the_flag_there_is_no_errors_key_and_without_errors_an_empty_list():
    bridge = agent([code("ok", "x = 1", [], 1)])
    assert "errors" not in bridge.ok("jupyter_get_context")
    assert errors(bridge) == {"path": PATH, "uri": f"notebook://{PATH}", "count": 0, "truncated": False, "cells": []}


def test_follows_the_runs_a_fixed_cell_leaves_the_list():
    bridge = agent([code("a", "raise ValueError('bad ' * 3)"), code("b", "z = 3")])
    bridge.ok("jupyter_run_cells", {"stopOnError": False})
    [listed] = errors(bridge)["cells"]
    assert (listed["cellId"], listed["ename"], listed["evalue"]) == ("a", "ValueError", "bad bad bad ")
    cell = bridge.ok("jupyter_get_cells", {"cellIds": ["a"]})["cells"][0]
    bridge.ok("jupyter_update_cell", {"cellId": "a", "source": "w = 4", "expectedSourceHash": cell["sourceHash"]})
    assert errors(bridge)["count"] == 1  # edited but not run again: its last run still raised
    bridge.ok("jupyter_run_cells", {"cellIds": ["a"]})
    assert errors(bridge)["cells"] == []


def test_long_messages_are_bounded_and_stripped_of_ansi():
    bridge = agent([code("long", "raise", [error("RuntimeError", "\x1b[1m" + "é" * 5000 + "\x1b[0m")], 1)])
    [listed] = errors(bridge)["cells"]
    assert utf8_len(listed["evalue"]) <= ERROR_MESSAGE_BYTES and listed["evalue"].endswith("…")
    assert "\x1b" not in listed["evalue"] and listed["evalue"].startswith("éé")


def test_many_errors_are_counted_past_the_list():
    cells = [code(f"c{i}", "1/0", [error("ZeroDivisionError", str(i))], i + 1) for i in range(ERRORS_LISTED + 7)]
    summary = errors(agent(cells))
    assert summary["count"] == ERRORS_LISTED + 7 and summary["truncated"] is True
    assert [c["cellId"] for c in summary["cells"]] == [f"c{i}" for i in range(ERRORS_LISTED)]


def test_hidden_cells_are_never_listed_and_indices_count_visible_cells():
    bridge = agent(
        [
            code("secret", "1/0", [error("ZeroDivisionError", "CANARY-secret")], 1),
            code("shown", "1/0", [error("NameError", "name 'q' is not defined")], 2),
        ]
    )
    before = errors(bridge)
    assert [c["cellId"] for c in before["cells"]] == ["secret", "shown"]
    set_cell_level(bridge.ws.open[PATH], "secret", "none")
    after = errors(bridge)
    assert after == {
        "path": PATH,
        "uri": f"notebook://{PATH}",
        "count": 1,
        "truncated": False,
        "cells": [{**before["cells"][1], "index": 0}],
    }
    assert "CANARY" not in json.dumps(bridge.ok("jupyter_get_context", {"includeErrors": True}))
    # exactly what the same notebook without that cell gives
    plain = agent([code("shown", "1/0", [error("NameError", "name 'q' is not defined")], 2)])
    assert errors(plain) == after


def test_no_current_notebook_gives_null():
    bridge = Bridge({PATH: notebook([code("a", "1/0", [error("ZeroDivisionError", "x")], 1)])})
    assert bridge.ok("jupyter_get_context", {"includeErrors": True})["errors"] is None


def test_the_pyodide_kernels_class_repr_names_are_plain_names():
    assert error_name("<class 'ValueError'>") == "ValueError"
    assert error_name("<class '__main__.NotReady'>") == "NotReady"
    assert error_name("KeyError") == "KeyError" and error_name("<class weird") == "<class weird"
    bridge = agent([code("p", "1/0", [error("<class 'ZeroDivisionError'>", "division by zero")], 1)])
    assert errors(bridge)["cells"][0]["ename"] == "ZeroDivisionError"
