"""jupyter_search over the in-memory host, on real notebooks: an open one (live model, unsaved edits), closed ones
(read from their files, with and without cell ids), text files; the glob, paging, the deadline inside the match
and the windows of long lines, and hidden cells and notebooks answering exactly as no match."""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import time

import pytest

from helpers import Bridge, corpus_json, corpus_text, make_bridge
from webmcp_bridge.access import levels as access
from webmcp_bridge.core import search as core
from webmcp_bridge.core.errors import ToolError
from webmcp_bridge.core.limits import SEARCH_HITS, SEARCH_MATCH_SECONDS, SEARCH_PATTERN_CHARS, SEARCH_WINDOW_CHARS
from webmcp_bridge.core.metadata import METADATA_KEY
from webmcp_bridge.core.uris import cell_uri, output_uri, parse_uri
from webmcp_bridge.tools import search_toolset

EULER = "demo/euler.ipynb"  # opened: ids, outputs
TORCH = "ml/ch13.ipynb"  # closed: ids, a stream output
LECTURE = "ml/lecture-1.ipynb"  # closed: nbformat 4.0, no ids
NOTES = "notes/todo.md"


@pytest.fixture(autouse=True)
def _whole_scans(monkeypatch):
    """The answers compared here are whole scans: a loaded machine must not stop one at SEARCH_SECONDS (the test of
    that bound sets its own)."""
    monkeypatch.setattr("webmcp_bridge.tools.search.SEARCH_SECONDS", 600.0)


def search_bridge(extra: dict[str, str] | None = None) -> Bridge:
    b = make_bridge(
        {EULER: "pytudes-euler.ipynb", TORCH: "mlbook-ch13-lightning.ipynb", LECTURE: "sci-python-lecture-1.ipynb"},
        {
            NOTES: "# To do\n\n- check the PyTorch Lightning version\n- euler_1 is slow?\n",
            "data/table.csv": "name,value\nmillion,1000000\n",
            "data/figure.png": "\x89PNG not really",
            ".hidden/secret.md": "PyTorch Lightning",
            **(extra or {}),
        },
    )
    b.reg.add_toolset(search_toolset())
    b.open(EULER)
    return b


def search(b: Bridge, **args) -> dict:
    return b.ok("jupyter_search", args)


def test_hits_in_an_open_notebook_a_closed_one_and_a_file():
    b = search_bridge()
    found = search(b, query="pytorch lightning")
    paths = {h["path"] for h in found["hits"]}
    assert paths == {TORCH, NOTES}  # the dot folder is not searched
    note = next(h for h in found["hits"] if h["path"] == NOTES)
    assert note == {
        "path": NOTES,
        "kind": "file",
        "line": 3,
        "column": 13,
        "length": 17,
        "snippet": "- check the PyTorch Lightning version",
    }
    cell = next(h for h in found["hits"] if h["kind"] == "source" and h["cellId"] == "9dfd5e76")
    assert cell["uri"] == cell_uri(TORCH, "9dfd5e76") and cell["line"] == 1
    assert parse_uri(cell["uri"]).cell_id == "9dfd5e76"
    assert TORCH not in b.ws.open  # searching a closed notebook does not open it
    assert found["searched"] == {"notebooks": 3, "files": 2, "bytes": found["searched"]["bytes"]}
    assert found["skippedPaths"] == ["data/figure.png"] and found["truncated"] is False
    assert found["nextCursor"] is None and found["windowChars"] is None

    euler = search(b, query=r"euler_1\b", regex=True, caseSensitive=True)["hits"]
    assert [h["path"] for h in euler][-1] == NOTES and {h["path"] for h in euler} == {EULER, NOTES}
    source = euler[0]
    assert source["cellId"] == "cell-0091" and source["snippet"].startswith("def euler_1(N=1000)")
    assert source["cellIndex"] == 7 and source["uri"] == cell_uri(EULER, "cell-0091")


def test_outputs_are_searched_and_addressed():
    b = search_bridge()
    hits = search(b, query="Your Python version is", glob="ml/*.ipynb")["hits"]
    assert len(hits) == 1
    hit = hits[0]
    assert hit["kind"] == "output" and hit["cellId"] == "a677e37b" and hit["outputIndex"] == 0
    assert hit["uri"] == output_uri(TORCH, "a677e37b", 0) and hit["mimeType"] == "text/plain"
    assert search(b, query="Your Python version is", includeOutputs=False)["hits"] == []
    # an open notebook's outputs: the euler_1 result
    euler = corpus_json("pytudes-euler.ipynb")
    result = "".join(euler["cells"][7]["outputs"][0]["data"]["text/plain"])
    hits = search(b, query=result, glob=EULER, caseSensitive=True)["hits"]
    assert any(h["kind"] == "output" and h["cellId"] == "cell-0091" for h in hits)


def test_the_live_model_is_searched_with_unsaved_edits():
    b = search_bridge()
    nb = b.nb(EULER)
    nb.set_source("cell-0091", "def euler_1(N=1000):\n    return 'unsaved marker'\n")
    hits = search(b, query="unsaved marker")["hits"]
    assert [(h["cellId"], h["line"], h["column"]) for h in hits] == [("cell-0091", 2, 13)]


def test_a_closed_notebook_without_ids_is_addressed_by_index():
    b = search_bridge()
    hits = search(b, query="myprogram.py", glob=LECTURE)["hits"]
    assert hits and all(h["uri"] == f"notebook://{LECTURE}" and "cellId" not in h for h in hits)
    lecture = corpus_json("sci-python-lecture-1.ipynb")
    first = hits[0]["cellIndex"]
    assert "myprogram.py" in "".join(lecture["cells"][first]["source"])


def test_glob_narrows_paths():
    b = search_bridge()
    assert {h["path"] for h in search(b, query="million")["hits"]} == {EULER, "data/table.csv"}
    assert {h["path"] for h in search(b, query="million", glob="*.csv")["hits"]} == {"data/table.csv"}
    assert {h["path"] for h in search(b, query="million", glob="demo/**")["hits"]} == {EULER}
    assert search(b, query="million", glob="nothing/**")["hits"] == []


def test_paging_with_the_cursor_returns_every_hit_once():
    b = search_bridge()
    whole = search(b, query="def ", limit=SEARCH_HITS)
    assert whole["truncated"] is True  # more than one full page in euler
    everything, cursor, pages = [], None, 0
    while True:
        args = {"query": "def ", "limit": 7, **({"cursor": cursor} if cursor else {})}
        page = search(b, **args)
        everything += page["hits"]
        pages += 1
        if not page["truncated"]:
            assert page["nextCursor"] is None
            break
        assert page["stoppedBy"] == "hits" and len(page["hits"]) == 7
        cursor = page["nextCursor"]
    assert everything[:SEARCH_HITS] == whole["hits"]
    keys = [(h["path"], h.get("cellIndex"), h.get("outputIndex"), h["line"], h["column"]) for h in everything]
    assert len(keys) == len(set(keys)) and pages > 10
    expected = sum(
        len(re.findall("def ", "".join(c["source"]), re.IGNORECASE))
        for c in corpus_json("pytudes-euler.ipynb")["cells"]
    )
    assert sum(1 for h in everything if h["path"] == EULER and h["kind"] == "source") == expected


def test_a_call_out_of_time_stops_with_a_cursor_that_continues_exactly(monkeypatch):
    """With no time at all, each call scans one line (or window) and stops: following the cursors gives every
    hit of the whole search once, in order, over a closed notebook, an open one and a file."""
    course = corpus_text("course/word-counts.ipynb")
    b = search_bridge({"course/words.ipynb": course, "course/notes.txt": "word\ncount words\n" + "w" * 3000 + "word\n"})
    b.open("course/words.ipynb")
    b.ws.files["course/closed.ipynb"] = course
    whole = search(b, query=r"w\w*", regex=True, glob="course/*", limit=SEARCH_HITS)
    assert whole["truncated"] is False and len(whole["hits"]) > 10
    monkeypatch.setattr("webmcp_bridge.tools.search.SEARCH_SECONDS", 0.0)
    hits, cursor, calls = [], None, 0
    while True:
        args = {"query": r"w\w*", "regex": True, "glob": "course/*", **({"cursor": cursor} if cursor else {})}
        page = search(b, **args)
        hits += page["hits"]
        calls += 1
        if not page["truncated"]:
            break
        assert page["stoppedBy"] == "time"
        cursor = page["nextCursor"]
    assert hits == whole["hits"] and calls > 10


def test_paging_gives_the_hits_of_one_call_where_matches_could_overlap():
    """A setext heading's underline and a code line hold runs of "=": one call gives the non-overlapping matches
    ``re`` finds, and paging one hit a call gives exactly those (a cursor goes on from the hit's end)."""
    text = "Results\n=======\n\nif a == b:\n    total === 3\n" + "=" * 700 + "\n"
    b = search_bridge({"notes/results.md": text})
    whole = search(b, query="==", glob="notes/results.md", limit=SEARCH_HITS)
    expected = [(n, m.start() + 1) for n, line in enumerate(text.split("\n"), 1) for m in re.finditer("==", line)]
    assert [(h["line"], h["column"]) for h in whole["hits"]] == expected[:SEARCH_HITS]
    paged, cursor = [], None
    while len(paged) < SEARCH_HITS:
        args = {"query": "==", "glob": "notes/results.md", "limit": 1, **({"cursor": cursor} if cursor else {})}
        page = search(b, **args)
        paged += page["hits"]
        cursor = page["nextCursor"]
    assert paged == whole["hits"]


def test_a_cursor_of_another_query_or_a_bad_one_is_refused():
    b = search_bridge()
    cursor = search(b, query="def ", limit=1)["nextCursor"]
    assert b.fails("jupyter_search", {"query": "class ", "cursor": cursor}, "INVALID_ARGUMENT")["field"] == "cursor"
    assert b.fails("jupyter_search", {"query": "def ", "cursor": "nonsense"}, "INVALID_ARGUMENT")["field"] == "cursor"


#: patterns that backtrack without end on some line: the issue's (an alternation under a fixed repeat, before a
#: character no line has) and classic ones, each met by the input that makes it explode
EXPLODING = [
    r"(?:.|..){24}\x00",
    r"(?:.|..){30}\x00",
    r"(?:.|..){20}\x00",
    r"(a+)+$",
    r"(a|aa)*b",
    r"(.*a){20}",
    r"(x+x+)+y",
    r"^(\w+\s?)+$",
]
#: the classic worst inputs, one a line, and a real notebook's JSON text on one long line
ATTACK_LINES = "a" * 40 + "!\n" + "a" * 60 + "\n" + "x" * 60 + "\n" + "word " * 20 + "!\n"


def attacked_bridge() -> Bridge:
    one_line = json.dumps(corpus_json("pytudes-euler.ipynb"), ensure_ascii=False)[:5000]
    return search_bridge({"attack/lines.txt": ATTACK_LINES, "attack/one-line.json": one_line + "\n"})  # searched first


def _alarm_left() -> tuple:
    return signal.getsignal(signal.SIGVTALRM), signal.getitimer(signal.ITIMER_VIRTUAL)


@pytest.mark.parametrize("pattern", EXPLODING)
def test_a_pattern_that_backtracks_without_end_ends_the_search_with_an_error(pattern):
    """The match is stopped inside the engine at its deadline, tried once more, and the call answers
    INVALID_ARGUMENT naming the query, the place and what to do; nothing is left set, and the next call answers."""
    b = attacked_bridge()
    before = _alarm_left()
    error = b.fails("jupyter_search", {"query": pattern, "regex": True}, "INVALID_ARGUMENT")
    assert error["field"] == "query" and error["matchSeconds"] == SEARCH_MATCH_SECONDS
    assert "backtracks too much" in error["message"] and "plain string" in error["message"]
    assert error["path"] in {EULER, TORCH, LECTURE, NOTES, "attack/lines.txt", "attack/one-line.json"}
    assert f"line {error['line']} of " in error["message"]
    assert _alarm_left() == before  # the handler and the timer as they were
    after = search(b, query="pytorch lightning")
    assert {h["path"] for h in after["hits"]} == {TORCH, NOTES}


def _source_hits(name: str, pattern: str) -> list[tuple[int, int, int, int]]:
    """(cell index, line, column, length) of every match of ``pattern`` (ignoring case) in the cell sources of the
    corpus notebook ``name``, line by line, as plain ``re`` finds them."""
    found = []
    for index, cell in enumerate(corpus_json(name)["cells"]):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for number, line in enumerate(source.split("\n"), start=1):
            found += [(index, number, m.start() + 1, m.end() - m.start()) for m in re.finditer(pattern, line, re.I)]
    return found


@pytest.mark.parametrize(
    "pattern",
    [r"(a+)+$", r"(a|aa)*b", r"(\w)\1", r"(?<=def )euler_\d+", r"(?!def)\bd\w+\("],
)
def test_where_a_classic_pattern_does_not_explode_it_answers_what_re_finds(pattern):
    """On the real notebook's sources these patterns finish in time: the answer is plain ``re``'s, line by line
    (back-references and lookarounds included: the deadline bounds them too)."""
    b = search_bridge()
    found = search(b, query=pattern, regex=True, glob=EULER, includeOutputs=False, limit=SEARCH_HITS)
    expected = _source_hits("pytudes-euler.ipynb", pattern)
    assert expected, pattern  # the notebook has matches for each
    got = [(h["cellIndex"], h["line"], h["column"], h["length"]) for h in found["hits"]]
    assert got == expected[:SEARCH_HITS]
    assert found["truncated"] is (len(expected) > SEARCH_HITS)


def test_bad_queries():
    b = search_bridge()
    b.fails("jupyter_search", {"query": "(", "regex": True}, "INVALID_ARGUMENT")
    b.fails("jupyter_search", {"query": "a*", "regex": True}, "INVALID_ARGUMENT")  # matches the empty string
    for empty_somewhere in (r"\b", "(?=c)", r"\w*(?=\()"):  # empty hits at some places: refused too
        b.fails("jupyter_search", {"query": empty_somewhere, "regex": True}, "INVALID_ARGUMENT")
    b.fails("jupyter_search", {"query": "x" * (SEARCH_PATTERN_CHARS + 1)}, "INVALID_ARGUMENT")


def test_allowed_regular_expressions_find_what_re_finds():
    b = search_bridge()
    hits = search(b, query=r"def euler_\d+\(", regex=True, glob=EULER, limit=SEARCH_HITS)
    assert hits["windowChars"] == SEARCH_WINDOW_CHARS and hits["hits"]
    source = "".join("".join(c["source"]) + "\n" for c in corpus_json("pytudes-euler.ipynb")["cells"])
    assert len(hits["hits"]) == min(SEARCH_HITS, len(re.findall(r"def euler_\d+\(", source, re.IGNORECASE)))


def test_a_long_line_is_matched_in_windows_so_a_slow_pattern_still_answers():
    """``\\w+\\(`` is quadratic in a word's length: on a 20,000-character word each match sees one window, and
    the match at the line's end is found (its length at most a window)."""
    b = search_bridge({"notes/word.txt": "a" * 20000 + "(\n"})
    found = search(b, query=r"\w+\(", regex=True, glob="notes/word.txt")
    assert found["windowChars"] == SEARCH_WINDOW_CHARS and found["truncated"] is False
    [hit] = found["hits"]
    assert hit["column"] + hit["length"] - 1 == 20001 and hit["length"] <= SEARCH_WINDOW_CHARS
    # a plain string cannot match more than half a window: nothing is missed, and the result says so
    assert search(b, query="aaa(", glob="notes/word.txt")["windowChars"] is None


#: a long line of hex (pure word characters) in a quoted string, and one ending in hex
HEX = bytes(range(256)).hex() * 2
LONG_LINES = f"blob = '{HEX}'\ndigest = {HEX}\n"


@pytest.mark.parametrize("pattern", [r"\w+$", r"\w+\Z", r"[0-9a-f]+\b", r"= \w+\b"])
def test_anchors_and_word_boundaries_see_the_end_of_a_long_line_not_of_its_window(pattern):
    """On lines over a window long, ``$``, ``\\Z`` and ``\\b`` hold where they hold in the whole line: no hit
    where a window ends inside the hex, and the matches ``re`` finds (one over 1,000 characters) are reported."""
    b = search_bridge({"data/blob.py": LONG_LINES})
    found = search(b, query=pattern, regex=True, glob="data/blob.py", limit=SEARCH_HITS)
    got = [(h["line"], h["column"], h["length"]) for h in found["hits"]]
    lines = LONG_LINES.split("\n")
    expected = [(n, m.start() + 1, len(m[0])) for n, line in enumerate(lines, 1) for m in re.finditer(pattern, line)]
    assert got == expected


def test_windows_find_each_short_match_of_a_long_line_once():
    query = core.compile_query(r"x\d+y", regex=True, case_sensitive=True)
    line = "".join(f"{'-' * 300}x{i}y" for i in range(40))
    found = [h.column - 1 for h in core.scan(line, query) if isinstance(h, core.LineHit)]
    assert found == [m.start() for m in re.finditer(r"x\d+y", line)]
    # resuming at the end of the tenth hit gives the rest
    tenth = [h for h in core.scan(line, query) if isinstance(h, core.LineHit)][9]
    rest = [
        h.column - 1
        for h in core.scan(line, query, (1, tenth.column - 1 + tenth.length))
        if isinstance(h, core.LineHit)
    ]
    assert rest == found[10:]


def test_a_glob_that_backtracks_too_much_ends_the_search_with_an_error():
    """Seven '*' in one name before a character the name lacks: the glob's match is stopped at the query's deadline
    (tried once more), the call answers INVALID_ARGUMENT naming the glob, nothing is left set, the next answers."""
    b = search_bridge({"data/" + "a" * 60: "banana\n"})
    before = _alarm_left()
    started = time.monotonic()
    error = b.fails("jupyter_search", {"query": "banana", "glob": "*a*a*a*a*a*a*a*b"}, "INVALID_ARGUMENT")
    assert time.monotonic() - started < 2 and error["field"] == "glob" and "backtracks too much" in error["message"]
    assert _alarm_left() == before
    assert [h["path"] for h in search(b, query="banana", glob="data/a*")["hits"]] == ["data/" + "a" * 60]


def test_snippets_are_bounded():
    line = "é" * 500 + "NEEDLE" + "✓" * 500
    cut = core.snippet(line, 500, 506)
    assert "NEEDLE" in cut and cut.startswith("…") and cut.endswith("…")
    assert len(cut.encode()) <= core.SEARCH_SNIPPET_BYTES


def test_globs():
    assert core.path_matcher("*.py").fullmatch("a/b/c.py") and core.path_matcher("*.py").fullmatch("c.py")
    m = core.path_matcher("data/**/*.csv")
    assert m.fullmatch("data/x.csv") and m.fullmatch("data/a/b/x.csv") and not m.fullmatch("other/x.csv")
    assert core.path_matcher("**") is None and core.path_matcher(None) is None
    assert core.path_matcher("a/[!b]?.txt").fullmatch("a/cd.txt") and not core.path_matcher("a/[!b]?.txt").fullmatch(
        "a/bd.txt"
    )


def test_the_query_is_checked_before_anything_is_read():
    for bad in ("(", "(a*)*", "x" * (SEARCH_PATTERN_CHARS + 1)):
        with pytest.raises(ToolError):
            core.compile_query(bad, regex=True, case_sensitive=False)


# -- hidden cells and notebooks: the same answer as no match -------------------------------------------------


def _hide_saved_cell(text: str, cell_id: str) -> str:
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell.get("id") == cell_id:
            cell.setdefault("metadata", {})[METADATA_KEY] = {"access": "none"}
    return json.dumps(nb)


def _without_cell(text: str, cell_id: str) -> str:
    nb = json.loads(text)
    nb["cells"] = [c for c in nb["cells"] if c.get("id") != cell_id]
    return json.dumps(nb)


def _hide_saved_notebook(text: str) -> str:
    nb = json.loads(text)
    nb["metadata"][METADATA_KEY] = {"schemaVersion": 1, "access": "none"}
    return json.dumps(nb)


QUERIES = [
    {"query": "PyTorch"},
    {"query": "python_environment_check"},
    {"query": "Your Python version"},
    {"query": r"torch\w*", "regex": True},
    {"query": "import", "limit": 3},
    {"query": "million"},
]


def _answers(b: Bridge) -> list[dict]:
    return [search(b, **q) for q in QUERIES]


def test_a_hidden_cell_of_a_closed_notebook_answers_as_if_it_were_not_there():
    torch = corpus_text("mlbook-ch13-lightning.ipynb")
    hidden = search_bridge()
    hidden.ws.files[TORCH] = _hide_saved_cell(torch, "a677e37b")  # python_environment_check, its output
    absent = search_bridge()
    absent.ws.files[TORCH] = _without_cell(torch, "a677e37b")
    answers = _answers(hidden)
    assert answers == _answers(absent)
    assert answers[1]["hits"] == [] and answers[2]["hits"] == []
    assert TORCH not in hidden.ws.open


def test_a_hidden_cell_of_an_open_notebook_answers_as_if_it_were_not_there():
    hidden = search_bridge()
    access.set_cell_level(hidden.nb(EULER), "e7a05459-c235-44cb-8997-a85be0074339", "none")  # million = 1_000_000
    absent = search_bridge()
    absent.nb(EULER).delete_cell("e7a05459-c235-44cb-8997-a85be0074339")
    answers = _answers(hidden)
    assert answers == _answers(absent)
    assert not any(
        h["path"] == EULER and h.get("cellIndex") == 4 and "1_000_000" in h["snippet"] for h in answers[5]["hits"]
    )


def test_a_notebook_opened_since_its_listing_is_searched_live_never_from_its_file(monkeypatch):
    """The search's listing said the notebook was closed; it is open when the search reaches it, with a cell the
    person hid there (not saved yet) and an unsaved edit: the host gives no saved copy of an open notebook, so the
    search reads it live, as the person has it."""
    b = search_bridge()
    nb = b.nb(EULER)
    access.set_cell_level(nb, "e7a05459-c235-44cb-8997-a85be0074339", "none")  # million = 1_000_000
    nb.set_source("cell-0091", "def euler_1(N=1000):\n    return 'unsaved marker'\n")
    listing = type(b.ws).list_dir

    async def listed_before_it_was_opened(self, path):
        entries = await listing(self, path)
        return None if entries is None else [dataclasses.replace(e, open=False) for e in entries]

    monkeypatch.setattr(type(b.ws), "list_dir", listed_before_it_was_opened)
    assert not any(h["path"] == EULER and "1_000_000" in h["snippet"] for h in search(b, query="million")["hits"])
    assert [h["cellId"] for h in search(b, query="unsaved marker")["hits"]] == ["cell-0091"]


@pytest.mark.parametrize("listed_as", ["notebook", "file"])
def test_a_notebook_opened_and_hidden_since_its_listing_is_not_listed(monkeypatch, listed_as):
    """The folder's listing said the notebook was closed (or, from a contents manager that types it so, a file); the
    person has opened it since and hidden it there, not saved yet: the listing the agent gets does not name it."""
    b = search_bridge()
    nb = b.nb(EULER)
    access.set_notebook_level(nb, "none")  # live only: the saved file says nothing
    listing = type(b.ws).list_dir

    async def listed_before_it_was_opened(self, path):
        entries = await listing(self, path)
        return None if entries is None else [dataclasses.replace(e, open=False, type=listed_as) for e in entries]

    monkeypatch.setattr(type(b.ws), "list_dir", listed_before_it_was_opened)
    assert EULER not in json.dumps(b.ok("jupyter_list_workspace", {"path": "demo"}))
    assert all(h["path"] != EULER for h in search(b, query="euler")["hits"])


def test_a_hidden_notebook_answers_as_if_it_were_not_there():
    torch = corpus_text("mlbook-ch13-lightning.ipynb")
    hidden = search_bridge()
    hidden.ws.files[TORCH] = _hide_saved_notebook(torch)
    absent = search_bridge()
    del absent.ws.files[TORCH]
    assert _answers(hidden) == _answers(absent)
    # open, and hidden by the person while open: the same
    opened = search_bridge()
    opened.open(TORCH)
    access.set_notebook_level(opened.ws.open[TORCH], "none")
    assert _answers(opened) == _answers(absent)


def test_a_hidden_notebook_too_large_to_read_is_not_reported():
    torch = corpus_text("mlbook-ch13-lightning.ipynb")
    big = json.loads(_hide_saved_notebook(torch))
    big["cells"].append({"cell_type": "raw", "id": "big", "metadata": {}, "source": "x" * (17 * 1024 * 1024)})
    hidden = search_bridge({"ml/big.ipynb": json.dumps(big)})
    absent = search_bridge()
    assert _answers(hidden) == _answers(absent)
    # a visible one is reported as skipped
    big["metadata"][METADATA_KEY] = {}
    visible = search_bridge({"ml/big.ipynb": json.dumps(big)})
    assert "ml/big.ipynb" in search(visible, query="no such text")["skippedPaths"]
