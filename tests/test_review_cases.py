"""Cases found by trying to break the bridge: each one a behaviour an agent would hit."""

from __future__ import annotations

import asyncio
import base64
import json

from helpers import Bridge, corpus_json, make_bridge
from host_memory import MemoryNotebook


def nb_with(cells: list[dict]) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def code(cid: str, source: str, outputs: list | None = None) -> dict:
    return {
        "cell_type": "code",
        "id": cid,
        "metadata": {},
        "source": source,
        "outputs": outputs or [],
        "execution_count": None,
    }


def test_focus_outside_the_source_is_refused_and_moves_nothing(running: Bridge):
    cell = running.ok("jupyter_get_cells", {"startIndex": 3, "endIndex": 4})["cells"][0]
    before = running.nb("demo/running.ipynb").focus()
    for args in (
        {"cursor": {"line": 1_000_000, "column": 0}},
        {"cursor": {"line": 0, "column": 1_000_000}},
        {"selection": {"start": {"line": 0, "column": 0}, "end": {"line": 50, "column": 0}}},
    ):
        payload = running.fails("jupyter_focus_cell", {"cellId": cell["id"], **args}, "INVALID_ARGUMENT")
        assert "past" in payload["message"]
    assert running.nb("demo/running.ipynb").focus() == before
    end = len(cell["source"].split("\n")[0])
    assert (
        running.ok("jupyter_focus_cell", {"cellId": cell["id"], "cursor": {"line": 0, "column": end}})["focus"][
            "cellId"
        ]
        == cell["id"]
    )


def test_focus_columns_count_utf16_units_as_the_editor_does():
    b = Bridge({"e.ipynb": nb_with([code("a", "x = '🤗'")])})
    b.open("e.ipynb")
    assert len("x = '🤗'") == 7  # code points; the editor counts 8 UTF-16 units (🤗 is a surrogate pair)
    assert b.ok("jupyter_focus_cell", {"cellId": "a", "cursor": {"line": 0, "column": 8}})
    b.fails("jupyter_focus_cell", {"cellId": "a", "cursor": {"line": 0, "column": 9}}, "INVALID_ARGUMENT")


def test_integers_beyond_32_bits_are_invalid_arguments(running: Bridge):
    cell = running.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    for args in (
        {"cellId": cell["id"], "outputIndex": 2**53},
        {"cellId": cell["id"], "outputIndex": 0, "offset": 2**53},
    ):
        running.fails("jupyter_get_output", args, "INVALID_ARGUMENT")
    running.fails("jupyter_get_cells", {"startIndex": 2**40}, "INVALID_ARGUMENT")


def test_a_bmp_output_is_not_reported_as_too_large():
    bmp = base64.b64encode(b"BM" + b"0" * 60).decode()
    outputs = [{"output_type": "display_data", "metadata": {}, "data": {"image/bmp": bmp}}]
    b = Bridge({"b.ipynb": nb_with([code("a", "", outputs)])})
    b.open("b.ipynb")
    payload = b.fails("jupyter_get_output", {"cellId": "a", "outputIndex": 0}, "OUTPUT_NOT_FOUND")
    assert "cannot be returned" in payload["message"]


def test_the_image_is_the_default_representation_of_a_figure():
    figure = corpus_json("handson-ml2-math-calculus.ipynb")["cells"][5]["outputs"][
        0
    ]  # text/plain "<Figure size 432x288 ...>"
    outputs = [
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"text/plain": "<Figure size 640x480>", "image/png": figure["data"]["image/png"]},
        }
    ]
    b = Bridge({"f.ipynb": nb_with([code("a", "", outputs)])})
    b.open("f.ipynb")
    result = b.call("jupyter_get_output", {"cellId": "a", "outputIndex": 0})
    assert result["structuredContent"]["mimeType"] == "image/png" and result["content"][1]["mimeType"] == "image/png"
    text = b.ok("jupyter_get_output", {"cellId": "a", "outputIndex": 0, "mimeType": "text/plain"})
    assert text["text"] == "<Figure size 640x480>"


def test_hidden_and_drive_names_are_refused():
    b = Bridge({})
    for name in (".", "..", ".ipynb", ".hidden"):
        b.fails("jupyter_create_notebook", {"name": name}, "INVALID_PATH")
    b.fails("jupyter_create_notebook", {"name": "x:y"}, "INVALID_PATH")
    b.fails("jupyter_open_notebook", {"path": "RTC:notes.ipynb"}, "INVALID_PATH")
    assert b.ws.files == {}


def test_repeated_ids_are_read_once():
    b = Bridge({"r.ipynb": nb_with([code("a", "1"), code("b", "2")])})
    b.open("r.ipynb")
    cells = b.ok("jupyter_get_cells", {"cellIds": ["b", "a", "b"]})["cells"]
    assert [c["id"] for c in cells] == ["b", "a"]


def test_every_agent_write_moves_the_revision(running: Bridge):
    nb = running.nb("demo/running.ipynb")
    cell = running.ok("jupyter_get_cells", {"startIndex": 3, "endIndex": 4})["cells"][0]
    seen = [nb.revision()]
    updated = running.ok(
        "jupyter_update_cell", {"cellId": cell["id"], "source": "a = 1", "expectedSourceHash": cell["sourceHash"]}
    )
    seen.append(updated["notebook"]["revision"])
    edited = running.ok("jupyter_edit_cell_source", {"cellId": cell["id"], "oldText": "1", "newText": "2"})
    seen.append(edited["notebook"]["revision"])
    assert seen == sorted(set(seen)), seen


def test_a_cell_deleted_while_it_runs_still_reports_its_run():
    ws_files = {"d.ipynb": nb_with([code("a", "print('ran')"), code("b", "print('next')")])}
    b = Bridge(ws_files)
    b.open("d.ipynb")
    original = MemoryNotebook.run_cell

    async def run_then_lose_cell(self, cell_id, timeout):
        outcome = await original(self, cell_id, timeout)
        if cell_id == "a":
            self.person_delete = self.delete_cell(cell_id)  # the person deletes it while it runs
        return outcome

    MemoryNotebook.run_cell = run_then_lose_cell
    try:
        results = b.ok("jupyter_run_cells", {"cellIds": ["a", "b"]})["results"]
    finally:
        MemoryNotebook.run_cell = original
    assert results[0]["cellId"] == "a" and results[0]["status"] == "ok" and "deleted" in results[0]["reason"]
    assert (
        results[1]["cellId"] == "b" and results[1]["status"] == "ok" and results[1]["outputs"][0]["preview"] == "next\n"
    )


def test_arguments_summary_of_a_huge_call_is_bounded():
    b = make_bridge({})
    events = []
    b.reg.on_before(events.append)
    b.call("jupyter_get_cells", json.dumps({"notebookPath": "x" * 3_000_000}))
    assert len(events[0].arguments.encode()) <= 200
    asyncio.run(asyncio.sleep(0))
