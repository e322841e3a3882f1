"""``jupyter_get_notebook_map``: a whole notebook's shape in one bounded answer (rows of index, id, type, source bytes,
output count, flags and first line; the headings), over the in-memory host and the real notebooks."""

from __future__ import annotations

import json

from helpers import Bridge, corpus_json, corpus_text, text_of
from test_errors_summary import code, error, notebook
from webmcp_bridge.access.levels import set_cell_level, set_notebook_level
from webmcp_bridge.core.limits import MAP_LINE_BYTES, MAP_MIN_LINE_BYTES, Limits, preview, utf8_len
from webmcp_bridge.core.outline import first_line, headings
from webmcp_bridge.tools.notebook_map import COLUMNS

PATH = "map.ipynb"


def markdown(cell_id: str, source: str) -> dict:
    return {"id": cell_id, "cell_type": "markdown", "metadata": {}, "source": source}


def mapped(cells: list[dict]) -> tuple[Bridge, dict]:
    bridge = Bridge({PATH: notebook(cells)})
    bridge.open(PATH)
    return bridge, bridge.ok("jupyter_get_notebook_map", {"notebookPath": PATH})


def test_a_real_notebook_in_one_answer_as_its_file_says():
    name = "sci-python-lecture-1.ipynb"
    bridge = Bridge({name: corpus_text(name)})
    bridge.open(name)
    result = bridge.call("jupyter_get_notebook_map", {})
    answer = result["structuredContent"]
    cells = corpus_json(name)["cells"]
    assert answer["columns"] == COLUMNS and answer["truncated"] is False and "nextStartIndex" not in answer
    assert answer["cellCount"] == len(cells) == len(answer["cells"]) and answer["hiddenCellCount"] == 0
    listed = (
        bridge.ok("jupyter_get_cells", {"endIndex": 200})["cells"]
        + bridge.ok("jupyter_get_cells", {"startIndex": 200})["cells"]
    )
    for row, cell, read in zip(answer["cells"], cells, listed, strict=True):
        index, cell_id, kind, size, outputs, flags, first = row
        source = text_of(cell["source"])
        assert (index, cell_id, kind, size) == (read["index"], read["id"], cell["cell_type"], utf8_len(source))
        assert outputs == len(cell.get("outputs", []))
        assert ("e" in flags) == any(o["output_type"] == "error" for o in cell.get("outputs", []))
        if kind == "markdown" and headings(source) and source.lstrip().startswith("#"):
            assert first == ""  # the heading is in sections
        else:
            assert first == (first_line(source) if utf8_len(first_line(source)) <= MAP_LINE_BYTES else first)
            assert utf8_len(first) <= MAP_LINE_BYTES
    expected = [
        [i, level, title]
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "markdown"
        for level, title in headings(text_of(cell["source"]))
    ]
    assert answer["sections"] == expected and [1, "Introduction to Python programming"] == expected[0][1:]
    # far smaller than the cells it maps
    assert len(result["content"][0]["text"]) < len(json.dumps(listed)) / 2


def test_headings_flags_and_first_lines():
    cells = [
        markdown("intro", "# Title\n\nSome text."),
        markdown("notes", "Text first.\n\n## Later heading\n```\n# a comment in a fence, not a heading\n```"),
        code("ok", "\n\n   x = 1   \n", [{"output_type": "stream", "name": "stdout", "text": "1\n"}], 1),
        code("bad", "1/0", [error("ZeroDivisionError", "division by zero")], 2),
        code("long", "y = '" + "é" * 200 + "'"),
        {"id": "raw", "cell_type": "raw", "metadata": {}, "source": ""},
    ]
    _, answer = mapped(cells)
    rows = {row[1]: row for row in answer["cells"]}
    assert answer["sections"] == [[0, 1, "Title"], [1, 2, "Later heading"]]
    assert rows["intro"][2:] == ["markdown", len("# Title\n\nSome text."), 0, "", ""]
    assert rows["notes"][6] == "Text first."
    assert rows["ok"][2:] == ["code", len("\n\n   x = 1   \n"), 1, "", "x = 1"]
    assert rows["bad"][4:6] == [1, "e"]
    assert rows["long"][6].endswith("…") and utf8_len(rows["long"][6]) <= MAP_LINE_BYTES
    assert rows["raw"][2:] == ["raw", 0, 0, "", ""]


def test_heading_titles_lose_their_closing_run_and_long_runs_of_spaces_read_in_one_pass():
    """A closing ``#`` run after a space or tab is not part of the title (CommonMark: ``##### ##`` is an empty
    heading). A heading line holding thousands of spaces is read in one pass (a backtracking parse took seconds)."""
    gap = " " * 12_000
    cells = [
        markdown("long", f"# Results{gap}(see below)\n\nThe table."),
        markdown("closed", f"## Method{gap}##\n### Data ###\n#### C# #\n##### ##\n###### Plan#"),
    ]
    _, answer = mapped(cells)
    assert answer["sections"] == [
        [0, 1, preview(f"Results{gap}(see below)", MAP_LINE_BYTES)],
        [1, 2, "Method"],
        [1, 3, "Data"],
        [1, 4, "C#"],
        [1, 5, ""],
        [1, 6, "Plan#"],
    ]
    assert [row[6] for row in answer["cells"]] == ["", ""]  # both start with a heading


def test_stale_outputs_and_read_only_cells_are_flagged():
    cells = [
        code("a", "x = 1", [], 5),
        code("b", "print(x)", [{"output_type": "stream", "name": "stdout", "text": "1\n"}], 3),
    ]
    bridge, answer = mapped(cells)
    flags = {row[1]: row[5] for row in answer["cells"]}
    assert flags == {"a": "", "b": "s"}  # a ran after b: b's output may not be what the notebook now makes
    set_cell_level(bridge.nb(PATH), "a", "read")
    flags = {row[1]: row[5] for row in bridge.ok("jupyter_get_notebook_map")["cells"]}
    assert flags == {"a": "r", "b": "s"}
    set_notebook_level(bridge.nb(PATH), "read")
    whole = bridge.ok("jupyter_get_notebook_map")
    assert whole["access"] == "read" and {row[5] for row in whole["cells"]} == {"", "s"}  # said once, not per row


def test_hidden_cells_give_what_they_give_everywhere():
    """A hidden cell's row, its headings and its error are not there, the others are numbered among what the agent
    sees: the map of the notebook with a hidden cell is the map of the notebook without it, but hiddenCellCount."""
    secret = [markdown("s-head", "# CANARY secret section"), code("s-code", "1/0", [error("CANARY", "CANARY")], 1)]
    shown = [markdown("head", "# Shown"), code("c", "x = 2", [], 2)]
    bridge, _ = mapped([shown[0], *secret, shown[1]])
    for cell_id in ("s-head", "s-code"):
        set_cell_level(bridge.nb(PATH), cell_id, "none")
    hidden = bridge.ok("jupyter_get_notebook_map")
    assert "CANARY" not in json.dumps(hidden) and "s-head" not in json.dumps(hidden)
    _, without = mapped(shown)
    assert hidden == {**without, "path": hidden["path"], "hiddenCellCount": 2}


def test_a_notebook_too_long_for_one_answer_continues_where_it_stopped():
    """3,000 cells with long first lines: the first lines are cut shorter first (never below the floor), then the
    answer stops at a whole row with nextStartIndex, and the next answers go on from there to the end."""
    cells = [
        markdown(f"h{i}", f"## Part {i}") if i % 100 == 0 else code(f"c{i:04d}", f"value_{i} = '{'w' * 120}'")
        for i in range(3000)
    ]
    bridge, first = mapped(cells)
    text = bridge.call("jupyter_get_notebook_map", {})["content"][0]["text"]
    assert utf8_len(text) <= bridge.limits.result_bytes
    assert first["truncated"] is True and first["nextStartIndex"] == len(first["cells"]) < 3000
    lines = [row[6] for row in first["cells"] if row[6]]
    assert all(MAP_MIN_LINE_BYTES <= utf8_len(line) < MAP_LINE_BYTES for line in lines)
    rows, sections, start = list(first["cells"]), list(first["sections"]), first["nextStartIndex"]
    while start is not None:
        page = bridge.ok("jupyter_get_notebook_map", {"startIndex": start})
        assert page["cells"][0][0] == start
        rows += page["cells"]
        sections += page["sections"]
        start = page.get("nextStartIndex")
    assert [row[0] for row in rows] == list(range(3000)) and [s[0] for s in sections] == list(range(0, 3000, 100))
    assert bridge.ok("jupyter_get_notebook_map", {"startIndex": 5000})["cells"] == []


def paged(bridge: Bridge) -> tuple[list[int], list[list]]:
    """The cell indices and the sections of every answer from startIndex 0 on, each answer starting where the last
    one said and holding at least one row."""
    rows: list[int] = []
    sections: list[list] = []
    start = 0
    while start is not None:
        page = bridge.ok("jupyter_get_notebook_map", {"startIndex": start})
        assert page["cells"][0][0] == start and page["truncated"] is ("nextStartIndex" in page)
        rows += [row[0] for row in page["cells"]]
        sections += page["sections"]
        start = page.get("nextStartIndex")
    return rows, sections


def test_small_result_caps_page_every_row_and_heading():
    """At the smallest result caps the headings count against the cap with their rows: every answer holds whole rows
    with their headings (titles cut like first lines) and goes on, until every cell and heading was listed once."""
    cells = [markdown(f"m{i}", f"## {i}. A section heading of ordinary length\n\nSome text.") for i in range(200)]
    for cap in (4096, 8192):
        bridge = Bridge({PATH: notebook(cells)}, Limits(result_bytes=cap))
        bridge.open(PATH)
        rows, sections = paged(bridge)
        assert rows == list(range(200)) and [s[:2] for s in sections] == [[i, 2] for i in range(200)]
        assert all(s[2].startswith(f"{s[0]}. A section") and utf8_len(s[2]) >= MAP_MIN_LINE_BYTES for s in sections)


def test_headings_past_the_bound_start_the_next_answer_and_too_many_in_one_cell_are_too_large():
    """The cell whose headings would pass the 300 of one answer starts the next one: no heading is dropped. A cell
    with more headings than one answer holds is TOO_LARGE, naming where the map goes on."""
    cells = [markdown(f"m{i}", f"## Section {i}\ntext") for i in range(400)]
    bridge = Bridge({PATH: notebook(cells)})
    bridge.open(PATH)
    first = bridge.ok("jupyter_get_notebook_map", {})
    assert (
        first["truncated"] is True and first["nextStartIndex"] == len(first["cells"]) == len(first["sections"]) == 300
    )
    rows, sections = paged(bridge)
    assert rows == list(range(400)) and sections == [[i, 2, f"Section {i}"] for i in range(400)]
    many = "\n".join(f"### Step {i}" for i in range(301))
    bridge = Bridge({PATH: notebook([markdown("a", "# Steps"), markdown("b", many), code("c", "x = 1")])})
    bridge.open(PATH)
    assert bridge.ok("jupyter_get_notebook_map", {})["nextStartIndex"] == 1
    refused = bridge.fails("jupyter_get_notebook_map", {"startIndex": 1}, "TOO_LARGE")
    assert refused["nextStartIndex"] == 2 and "jupyter_get_cells" in refused["message"]
    assert [row[1] for row in bridge.ok("jupyter_get_notebook_map", {"startIndex": 2})["cells"]] == ["c"]
