"""Access control through the real registry (every toolset) over the in-memory host.

The person restricts cells and notebooks in their metadata (as the Agent panel does, through the helpers of
webmcp_bridge.access.guard on the raw notebook); the agent only ever calls tools. The canary scan at the end calls
every registered tool with many generated argument combinations and asserts that nothing of the hidden cells
and the hidden notebook shows in any result.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from canary_calls import Pools, calls_for
from helpers import Bridge, check_envelope, corpus_json, corpus_text
from host_memory import MemoryWorkspace
from webmcp_bridge.access.levels import set_cell_level, set_notebook_level
from webmcp_bridge.core.limits import DEFAULT_LIMITS, Limits
from webmcp_bridge.session.bridge import build_bridge
from webmcp_bridge.tools import access_toolset, notebooks_toolset

CANARY = "CANARY-7f3a91-do-not-leak"
WORK = "demo/work.ipynb"
SECRET = "private/hidden-plans.ipynb"
HIDDEN = ("73f8c3d3", "a677e37b")  # two code cells of mlbook-ch13-lightning (index 3 and 5)
READ_ONLY = "9dfd5e76"


def ran(source: str, namespace: dict) -> tuple[list[dict[str, Any]], str]:
    """A stand-in kernel that runs nothing (the scan runs cells in many combinations)."""
    return [{"output_type": "stream", "name": "stdout", "text": "ran\n"}], "ok"


class Agent:
    """The registry with every toolset over a MemoryWorkspace; ``call`` checks the envelope."""

    def __init__(self, files: dict[str, str]) -> None:
        self.ws = MemoryWorkspace(files, executor=ran)
        self.reg = build_bridge(self.ws).registry

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        result = asyncio.run(self.reg.call(name, arguments))
        check_envelope(result, DEFAULT_LIMITS)
        return result

    def ok(self, name: str, arguments: Any = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert result["isError"] is False, result["structuredContent"]
        return result["structuredContent"]

    def error(self, name: str, arguments: Any, code: str) -> dict[str, Any]:
        before = {p: json.dumps(nb.nb, sort_keys=True) for p, nb in self.ws.open.items()}
        result = self.call(name, arguments)
        assert result["isError"] is True and result["structuredContent"]["error"] == code, result["structuredContent"]
        assert before == {p: json.dumps(nb.nb, sort_keys=True) for p, nb in self.ws.open.items()}, (
            f"{name} changed a notebook"
        )
        return result["structuredContent"]


def planted() -> dict[str, str]:
    """The workspace: a real notebook whose cells 3 and 5 hold the canary (source, outputs, a review thread),
    and a hidden notebook that holds it everywhere."""
    work = corpus_json("mlbook-ch13-lightning.ipynb")
    for cell in work["cells"]:
        if cell["id"] in HIDDEN:
            cell["source"] = f"secret = '{CANARY}'\n"
            cell["outputs"] = [
                {"output_type": "stream", "name": "stdout", "text": f"{CANARY}\n"},
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"text/plain": CANARY, "text/html": f"<b>{CANARY}</b>"},
                },
            ]
            cell["metadata"]["webmcp_bridge"] = {"access": "none"}
        if cell["id"] == READ_ONLY:
            cell["metadata"]["webmcp_bridge"] = {"access": "read"}
    visible_thread = {
        "id": "t-visible",
        "status": "open",
        "anchor": {"kind": "cell", "cellId": "7ae19660"},
        "messages": [{"author": "person", "body": "Please check the title.", "time": 1.0}],
    }
    hidden_threads = [
        {
            "id": f"t-{cid}",
            "status": "open",
            "anchor": {"kind": "cell", "cellId": cid},
            "messages": [{"author": "person", "body": f"about {CANARY}", "time": 1.0}],
        }
        for cid in HIDDEN
    ]
    malformed = [{"id": "t-odd", "messages": [{"author": "person", "body": CANARY}]}, f"{CANARY} as a bare string"]
    work["metadata"]["webmcp_bridge"] = {"schemaVersion": 1, "threads": [visible_thread, *hidden_threads, *malformed]}
    secret = corpus_json("jupyterlite-empty.ipynb")
    secret["cells"][0]["source"] = f"print('{CANARY}')"
    secret["metadata"]["webmcp_bridge"] = {
        "schemaVersion": 1,
        "access": "none",
        "threads": [
            {
                "id": "t-s",
                "anchor": {"cellId": secret["cells"][0]["id"]},
                "messages": [{"author": "person", "body": CANARY}],
            }
        ],
    }
    return {
        WORK: json.dumps(work),
        SECRET: json.dumps(secret),
        "notes/readme.txt": "plain notes\n",
        "demo/other.ipynb": json.dumps(corpus_json("jupyterlite-empty.ipynb")),
    }


@pytest.fixture
def agent() -> Agent:
    a = Agent(planted())
    a.ok("jupyter_open_notebook", {"path": WORK})
    return a


def test_hidden_cells_are_renumbered_away_and_only_counted(agent: Agent) -> None:
    raw = agent.ws.open[WORK]
    payload = agent.ok("jupyter_get_cells", {"includeOutputs": True})
    ids = [c["id"] for c in payload["cells"]]
    assert payload["cellCount"] == len(raw.nb["cells"]) - 2 == len(ids)
    assert payload["hiddenCellCount"] == 2
    assert not set(HIDDEN) & set(ids)
    assert [c["index"] for c in payload["cells"]] == list(range(len(ids)))  # no gap where a hidden cell sits
    # the range 2..4 is of visible cells: the real cells 2, 4 and 6
    window = agent.ok("jupyter_get_cells", {"startIndex": 2, "endIndex": 5})["cells"]
    assert [c["id"] for c in window] == ["05edf0fb", "10c32840", "1a1afff8"]


def test_a_hidden_id_gets_exactly_the_unknown_id_error(agent: Agent) -> None:
    for tool, args in [
        ("jupyter_get_cells", {"cellIds": ["{id}"]}),
        ("jupyter_get_cells", {"cellIds": ["7ae19660", "{id}"]}),
        ("jupyter_get_output", {"cellId": "{id}", "outputIndex": 0}),
        ("jupyter_get_output", {"uri": f"notebook://{WORK}/cells/{{id}}/outputs/0"}),
        ("jupyter_update_cell", {"cellId": "{id}", "source": "x", "expectedSourceHash": "0" * 16}),
        ("jupyter_delete_cell", {"cellId": "{id}", "expectedSourceHash": "0" * 16}),
        ("jupyter_move_cell", {"cellId": "7ae19660", "referenceCellId": "{id}"}),
        ("jupyter_insert_cell", {"referenceCellId": "{id}"}),
        ("jupyter_run_cells", {"cellIds": ["{id}"]}),
        ("jupyter_clear_outputs", {"cellIds": ["{id}"]}),
        ("jupyter_focus_cell", {"cellId": "{id}"}),
        ("jupyter_open_notebook", {"path": WORK, "cellId": "{id}"}),
        ("jupyter_get_cell_access", {"cellIds": ["{id}"]}),
    ]:
        hidden = agent.error(tool, json.loads(json.dumps(args).replace("{id}", HIDDEN[0])), "CELL_NOT_FOUND")
        unknown = agent.error(tool, json.loads(json.dumps(args).replace("{id}", "ffffffff")), "CELL_NOT_FOUND")
        assert json.dumps(hidden).replace(HIDDEN[0], "ffffffff") == json.dumps(unknown), tool


def test_an_unknown_id_before_a_hidden_one_is_reported_first(agent: Agent) -> None:
    payload = agent.error("jupyter_get_cells", {"cellIds": ["ffffffff", HIDDEN[1]]}, "CELL_NOT_FOUND")
    assert payload["cellId"] == "ffffffff"


def test_read_cells_refuse_changes_and_runs(agent: Agent) -> None:
    cell = agent.ok("jupyter_get_cells", {"cellIds": [READ_ONLY]})["cells"][0]
    agent.error(
        "jupyter_update_cell",
        {"cellId": READ_ONLY, "source": "x", "expectedSourceHash": cell["sourceHash"]},
        "CELL_ACCESS_DENIED",
    )
    agent.error(
        "jupyter_edit_cell_source", {"cellId": READ_ONLY, "oldText": "##", "newText": "#"}, "CELL_ACCESS_DENIED"
    )
    agent.error(
        "jupyter_delete_cell", {"cellId": READ_ONLY, "expectedSourceHash": cell["sourceHash"]}, "CELL_ACCESS_DENIED"
    )
    agent.error(
        "jupyter_move_cell",
        {"cellId": READ_ONLY, "referenceCellId": "7ae19660", "position": "above"},
        "CELL_ACCESS_DENIED",
    )
    agent.error("jupyter_run_cells", {"cellIds": ["73f8c3d3"[:0] + "7ae19660", READ_ONLY]}, "CELL_ACCESS_DENIED")
    # a read cell may still be read, focused and moved around by others
    agent.ok("jupyter_focus_cell", {"cellId": READ_ONLY})
    access_report = agent.ok("jupyter_get_cell_access", {"cellIds": [READ_ONLY, "7ae19660"]})
    assert [c["access"] for c in access_report["cells"]] == ["read", "write"]


def test_a_read_only_code_cell_is_skipped_by_a_run_of_all_cells() -> None:
    work = corpus_json("mlbook-ch13-lightning.ipynb")
    work["cells"][3]["metadata"]["webmcp_bridge"] = {"access": "read"}
    a = Agent({WORK: json.dumps(work)})
    a.ok("jupyter_open_notebook", {"path": WORK})
    results = a.ok("jupyter_run_cells", {"startIndex": 0, "endIndex": 6, "stopOnError": False})["results"]
    by_id = {r["cellId"]: r for r in results}
    assert by_id["73f8c3d3"]["status"] == "skipped" and by_id["73f8c3d3"]["reason"] == "read-only for the agent"
    assert by_id["a677e37b"]["status"] == "ok"
    cleared = a.ok("jupyter_clear_outputs", {})
    assert "73f8c3d3" in cleared["skippedReadOnly"] and "a677e37b" in cleared["cleared"]


def test_a_read_only_notebook_refuses_every_change(agent: Agent) -> None:
    set_notebook_level(agent.ws.open[WORK], "read")
    first = agent.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    assert agent.ok("jupyter_get_context")["notebook"]["access"] == "read"
    for tool, args in [
        ("jupyter_insert_cell", {"source": "x"}),
        ("jupyter_update_cell", {"cellId": first["id"], "source": "x", "expectedSourceHash": first["sourceHash"]}),
        ("jupyter_run_cells", {}),
        ("jupyter_clear_outputs", {}),
        ("jupyter_kernel_action", {"action": "restart"}),
    ]:
        agent.error(tool, args, "NOTEBOOK_ACCESS_DENIED")
    agent.ok("jupyter_save_notebook")  # saving keeps the person's edits; it changes nothing


def test_inserting_and_moving_next_to_a_hidden_cell_keeps_it_in_place(agent: Agent) -> None:
    raw = agent.ws.open[WORK]
    # visible neighbours of the hidden cell 3: "05edf0fb" (real 2) and "10c32840" (real 4)
    new = agent.ok("jupyter_insert_cell", {"referenceCellId": "05edf0fb", "position": "below", "source": "# new"})[
        "cell"
    ]
    real = [c["id"] for c in raw.nb["cells"]]
    assert real.index(new["id"]) == real.index("05edf0fb") + 1 and new["index"] == 3
    agent.ok("jupyter_move_cell", {"cellId": "7ae19660", "referenceCellId": "10c32840", "position": "above"})
    real = [c["id"] for c in raw.nb["cells"]]
    assert real.index("7ae19660") == real.index("10c32840") - 1
    assert [c["id"] for c in raw.nb["cells"] if c["id"] in HIDDEN] == list(HIDDEN)


def test_focus_on_a_hidden_cell_reads_as_no_focus(agent: Agent) -> None:
    agent.ws.open[WORK].person_set_focus(HIDDEN[0], {"line": 0, "column": 3})
    assert agent.ok("jupyter_get_context")["focus"] == {"cellId": None, "cursor": None, "selection": None}


def test_a_hidden_notebook_is_indistinguishable_from_a_missing_one(agent: Agent) -> None:
    listing = agent.ok("jupyter_list_workspace", {"recursive": True})
    assert SECRET not in [e["path"] for e in listing["entries"]]
    assert "private" in [e["path"] for e in listing["entries"]]  # the folder itself is ordinary
    missing = SECRET.replace("hidden-plans", "no-such-pl")
    for tool, args in [
        ("jupyter_open_notebook", {"path": "{p}"}),
        ("jupyter_get_cells", {"notebookPath": "{p}"}),
        ("jupyter_save_notebook", {"notebookPath": "{p}"}),
        ("jupyter_get_cell_access", {"notebookPath": "{p}"}),
    ]:
        hidden = agent.error(tool, json.loads(json.dumps(args).replace("{p}", SECRET)), "NOTEBOOK_NOT_FOUND")
        absent = agent.error(tool, json.loads(json.dumps(args).replace("{p}", missing)), "NOTEBOOK_NOT_FOUND")
        assert json.dumps(hidden).replace(SECRET, missing) == json.dumps(absent), tool
    agent.error(
        "jupyter_create_notebook", {"name": "hidden-plans", "directory": "private"}, "PATH_EXISTS"
    )  # see docs: the one tell


def test_tools_never_change_access_and_keep_hidden_threads(agent: Agent) -> None:
    raw = agent.ws.open[WORK]
    guarded = agent.reg.context.host.current_notebook()
    block = guarded.bridge_metadata()
    assert [t["id"] for t in block["threads"]] == ["t-visible"]
    guarded.set_bridge_metadata({"schemaVersion": 1, "access": "write", "threads": []})
    stored = raw.bridge_metadata()
    assert "access" not in stored  # the tool's "write" was not taken (the notebook had no level set)
    # the hidden cells' threads and the malformed entries the agent never saw are all kept, untouched
    assert [t["id"] if isinstance(t, dict) else t for t in stored["threads"]] == [
        "t-73f8c3d3",
        "t-a677e37b",
        "t-odd",
        f"{CANARY} as a bare string",
    ]
    # an update of a visible thread keeps every stored entry in its place
    raw.set_bridge_metadata(
        {"schemaVersion": 1, "threads": [{"id": "t-visible", "anchor": {"cellId": "7ae19660"}}, *stored["threads"]]}
    )
    guarded.set_bridge_metadata(
        {
            "threads": [
                {"id": "t-visible", "anchor": {"cellId": "7ae19660"}, "status": "resolved"},
                {"id": "t-new", "anchor": {"cellId": "7ae19660"}},
            ]
        }
    )
    order = [t["id"] if isinstance(t, dict) else t for t in raw.bridge_metadata()["threads"]]
    assert order == ["t-visible", "t-73f8c3d3", "t-a677e37b", "t-odd", f"{CANARY} as a bare string", "t-new"]
    assert raw.bridge_metadata()["threads"][0]["status"] == "resolved"
    set_notebook_level(raw, "read")
    guarded = agent.reg.context.host.current_notebook()
    guarded.set_bridge_metadata({"access": "write"})
    assert raw.bridge_metadata()["access"] == "read"


def test_cell_access_reports_provenance_of_person_and_agent(agent: Agent) -> None:
    raw = agent.ws.open[WORK]
    cell = agent.ok("jupyter_get_cells", {"cellIds": ["a677e37b"[:0] + "7ae19660"]})["cells"][0]
    agent.ok(
        "jupyter_update_cell", {"cellId": "7ae19660", "source": "# Title", "expectedSourceHash": cell["sourceHash"]}
    )
    raw.person_set_source("7ae19660", "# Title!")
    raw.person_set_source("7ae19660", "# Title!!")
    raw.person_set_source(HIDDEN[0], CANARY)
    report = agent.ok("jupyter_get_cell_access", {"startIndex": 0, "endIndex": 2})
    first = report["cells"][0]
    assert first["id"] == "7ae19660" and first["access"] == "write"
    assert [(p["actor"], p["kind"], p["count"]) for p in first["provenance"]] == [
        ("person", "edit", 2),
        ("agent", "edit", 1),
    ]
    assert report["hiddenCellCount"] == 2 and CANARY not in json.dumps(report)


def test_cell_access_takes_ids_or_a_range_not_both(agent: Agent) -> None:
    """The one "ids or a range" rule of every cell-selecting tool (jupyter_get_cells, jupyter_run_cells) holds here
    too."""
    agent.error("jupyter_get_cell_access", {"cellIds": ["7ae19660"], "startIndex": 0}, "INVALID_ARGUMENT")
    assert [c["id"] for c in agent.ok("jupyter_get_cell_access", {"cellIds": ["7ae19660"]})["cells"]] == ["7ae19660"]


def test_cell_access_pages_through_every_cell_under_a_small_result_cap() -> None:
    """Under a small result cap (8 KB, a setting the person may choose) a range's rows do not fit one answer: each
    answer keeps whole rows and nextStartIndex is the first row it left out, so paging lists every cell once."""
    name = "sci-python-lecture-1.ipynb"
    bridge = Bridge({name: corpus_text(name)}, Limits(result_bytes=8192), [notebooks_toolset(), access_toolset()])
    bridge.open(name)
    count, listed, start = len(corpus_json(name)["cells"]), list[int](), 0
    while start is not None:
        page = bridge.ok("jupyter_get_cell_access", {"startIndex": start})
        assert "truncation" not in page and page["truncated"] is ("nextStartIndex" in page)
        assert page["omittedCount"] == count - start - len(page["cells"])
        listed += [cell["index"] for cell in page["cells"]]
        start = page.get("nextStartIndex")
    assert listed == list(range(count))


MISSING = "private/hidden-plXns.ipynb"  # a path of the same length where nothing is


def _hidden_texts() -> list[str]:
    return [CANARY, *HIDDEN, "hidden-plans"]


@pytest.mark.parametrize("current", [WORK, SECRET])
def test_canary_scan_over_every_registered_tool(current: str) -> None:
    """Every tool the registry has, called with many argument combinations (generated from its own
    inputSchema), never returns the canary, a hidden cell's id or the hidden notebook's name."""
    agent = Agent(planted())
    book = agent.reg.context.proposals  # a person who accepts what is shown (code run next to hidden cells is)
    book.subscribe(lambda event, proposal: book.accept(proposal.id) if event == "created" else None)
    agent.ok("jupyter_open_notebook", {"path": WORK})
    asyncio.run(agent.ws.open_notebook(SECRET, activate=False))  # open in the application, hidden from the agent
    raw = agent.ws.open[WORK]
    raw.person_set_focus(HIDDEN[1], {"line": 0, "column": 2})
    raw.person_set_source(HIDDEN[0], f"{CANARY} edited by the person")
    agent.ws.current = current
    visible = [c["id"] for c in raw.nb["cells"] if c["id"] not in HIDDEN]
    pools = Pools(
        cell_ids=[visible[0], READ_ONLY, visible[5], visible[-1]],
        notebook_paths=[None, WORK, SECRET, "demo/other.ipynb"],
        paths=["", "demo", "private", WORK, SECRET, "notes/readme.txt", "private/notes.txt"],
    )
    definitions = agent.reg.definitions()
    calls = 0
    internal = []
    for definition in definitions:
        for args in calls_for(definition, pools, 40):
            result = agent.call(definition["name"], args)
            calls += 1
            text = json.dumps(result)
            if SECRET in json.dumps(args):
                # the agent named the hidden notebook: it must get what a missing notebook gets, nothing more
                twin = json.loads(json.dumps(args).replace(SECRET, MISSING))
                twin_result = agent.call(definition["name"], twin)
                calls += 1
                assert result["isError"], (definition["name"], args)
                assert text.replace(SECRET, MISSING) == json.dumps(twin_result), (definition["name"], args)
                text = json.dumps(twin_result)
            for secret in _hidden_texts():
                assert secret not in text, (definition["name"], args, secret)
            if result["isError"] and result["structuredContent"]["error"] == "INTERNAL_ERROR":
                internal.append((definition["name"], args))
    print(f"canary scan ({current} current): {len(definitions)} tools, {calls} calls, nothing leaked")
    assert not internal, internal[:5]
    assert calls >= 10 * len(definitions)


def test_get_changes_reports_who_changed_what_and_never_a_hidden_cell(agent: Agent) -> None:
    raw = agent.ws.open[WORK]
    start = agent.ok("jupyter_get_changes")["seq"]
    cell = agent.ok("jupyter_get_cells", {"cellIds": ["7ae19660"]})["cells"][0]
    agent.ok(
        "jupyter_update_cell",
        {"cellId": "7ae19660", "source": "# Agent title", "expectedSourceHash": cell["sourceHash"]},
    )
    raw.person_set_source("22959aae", "## Person heading")
    raw.person_set_source("22959aae", "## Person heading!")
    raw.person_set_source(HIDDEN[0], f"{CANARY} while hidden")
    raw.person_delete_cell(HIDDEN[1])
    payload = agent.ok("jupyter_get_changes", {"since": start})
    assert [(c["actor"], c["kind"], c["cellId"], c["count"]) for c in payload["changes"]] == [
        ("agent", "edit", "7ae19660", 1),
        ("person", "edit", "22959aae", 2),
    ]
    assert (
        payload["hiddenChangeCount"] == 2 and CANARY not in json.dumps(payload) and HIDDEN[1] not in json.dumps(payload)
    )
    # following on from the returned seq: nothing new, then the person's next edit only
    assert agent.ok("jupyter_get_changes", {"since": payload["seq"]})["changes"] == []
    raw.person_insert_cell(0, "markdown", "new")
    later = agent.ok("jupyter_get_changes", {"since": payload["seq"]})["changes"]
    assert [(c["actor"], c["kind"]) for c in later] == [("person", "insert")]
    revision = agent.ok("jupyter_get_context")["notebook"]["revision"]
    raw.person_set_source("22959aae", "## again")
    by_revision = agent.ok("jupyter_get_changes", {"sinceRevision": revision})["changes"]
    assert [(c["actor"], c["cellId"]) for c in by_revision] == [("person", "22959aae")]


def test_get_changes_waits_for_the_persons_next_edit() -> None:
    agent = Agent(planted())
    agent.ok("jupyter_open_notebook", {"path": WORK})
    raw = agent.ws.open[WORK]
    seq = agent.ok("jupyter_get_changes")["seq"]

    async def scenario() -> dict[str, Any]:
        async def person() -> None:
            await asyncio.sleep(0.4)
            raw.person_set_source("22959aae", "typed while the agent waited")

        typing = asyncio.ensure_future(person())
        result = await agent.reg.call("jupyter_get_changes", {"since": seq, "wait": 5})
        await typing
        return result["structuredContent"]

    payload = asyncio.run(scenario())
    assert [(c["actor"], c["cellId"]) for c in payload["changes"]] == [("person", "22959aae")]


def test_output_selection_shared_by_the_person(agent: Agent) -> None:
    assert agent.ok("jupyter_get_output_selection")["selection"] is None
    shares = agent.reg.context.shared
    shares.share(WORK, "7ae19660", 0, "Epoch 1: loss 0.42\n" * 2000)
    selection = agent.ok("jupyter_get_output_selection")["selection"]
    assert selection["cellId"] == "7ae19660" and selection["text"].startswith("Epoch 1: loss 0.42")
    assert selection["truncated"] is True and selection["bytes"] == 19 * 2000
    shares.share(WORK, HIDDEN[1], 0, CANARY)  # a share of a hidden cell reads as nothing shared
    assert agent.ok("jupyter_get_output_selection")["selection"] is None


def test_levels_hold_after_the_notebook_is_closed_and_reopened(agent: Agent) -> None:
    other = "demo/other.ipynb"
    agent.ok("jupyter_get_cells", {"notebookPath": other})
    raw = agent.ws.open[other]
    only = raw.nb["cells"][0]["id"]
    set_cell_level(raw, only, "none")
    asyncio.run(raw.save())
    agent.ws.open.pop(other)  # the person closes it; a fresh model starts when it is opened again
    listing = agent.ok("jupyter_get_cells", {"notebookPath": other})
    assert listing["cells"] == [] and listing["hiddenCellCount"] == 1


def test_threads_of_a_hidden_cell_stay_hidden_after_the_cell_is_deleted(agent: Agent) -> None:
    raw = agent.ws.open[WORK]
    before = agent.ok("jupyter_list_comments", {"status": "all"})
    raw.person_delete_cell(HIDDEN[0])
    after = agent.ok("jupyter_list_comments", {"status": "all"})
    assert CANARY not in json.dumps(after) and HIDDEN[0] not in json.dumps(after)
    assert [t["id"] for t in after["threads"]] == [t["id"] for t in before["threads"]]


def test_threads_stamped_hidden_stay_hidden_in_a_later_session() -> None:
    files = planted()
    first = Agent(files)
    first.ok("jupyter_open_notebook", {"path": WORK})
    raw = first.ws.open[WORK]
    set_cell_level(raw, "7ae19660", "none")  # the person hides a cell that has a thread
    raw.person_delete_cell("7ae19660")
    asyncio.run(raw.save())
    later = Agent(dict(first.ws.files))  # a new page: nothing remembered but the file
    later.ok("jupyter_open_notebook", {"path": WORK})
    assert later.ok("jupyter_list_comments", {"status": "all"})["threads"] == []


def test_a_move_that_keeps_the_visible_order_changes_nothing(agent: Agent) -> None:
    # visible 05edf0fb, 10c32840 with the hidden 73f8c3d3 between them
    revision = agent.ok("jupyter_get_context")["notebook"]["revision"]
    agent.ok("jupyter_move_cell", {"cellId": "05edf0fb", "referenceCellId": "10c32840", "position": "above"})
    assert agent.ok("jupyter_get_context")["notebook"]["revision"] == revision


def test_a_write_refused_because_the_cell_changed_and_was_hidden_meanwhile_quotes_nothing_of_it(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the bridge's worker a write's check and the write are two tasks of the page: the person may edit a cell
    and hide it in between. The host then refuses the write with STALE_CELL quoting the cell as it is (the source
    the check read is the write's precondition); the guard reads the levels again and answers as for an unknown cell,
    so the agent gets nothing of the now-hidden text."""
    raw = agent.ws.open[WORK]
    cell = agent.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]
    write = raw.set_source

    def person_between(cell_id: str, source: str, expected: str | None = None) -> Any:
        raw.person_set_source(cell_id, f"x = '{CANARY}'")  # the person's edit, then the cell hidden
        set_cell_level(raw, cell_id, "none")
        return write(cell_id, source, expected)

    with monkeypatch.context() as patched:
        patched.setattr(raw, "set_source", person_between)
        refused = agent.call(
            "jupyter_update_cell", {"cellId": cell["id"], "source": "y", "expectedSourceHash": cell["sourceHash"]}
        )
    assert refused["isError"] is True and refused["structuredContent"]["error"] == "CELL_NOT_FOUND"
    assert CANARY not in json.dumps(refused)

    visible = agent.ok("jupyter_get_cells", {"startIndex": 0, "endIndex": 1})["cells"][0]  # changed, still visible
    delete = raw.delete_cell

    def person_types(cell_id: str, expected: str | None = None) -> Any:
        raw.person_set_source(cell_id, "x = 'typed meanwhile'")
        return delete(cell_id, expected)

    with monkeypatch.context() as patched:
        patched.setattr(raw, "delete_cell", person_types)
        stale = agent.call(
            "jupyter_delete_cell", {"cellId": visible["id"], "expectedSourceHash": visible["sourceHash"]}
        )
    assert stale["structuredContent"]["error"] == "STALE_CELL"  # a visible cell: the usual error, its preview included
