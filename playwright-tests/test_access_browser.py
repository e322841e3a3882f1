"""Access control in the real JupyterLab, acting as the agent through native WebMCP.

The person's side is played on the live application (``window.jupyterapp``): a notebook written to the
workspace with restricted cells (a canary string in their sources, outputs and review threads), a hidden
notebook, the person typing in a hidden cell and focusing it. The agent's side only calls tools. The canary
scan calls every tool the page registered, with argument combinations generated from each tool's own
inputSchema (tests/canary_calls.py), so a tool added later is scanned with no change here.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from playwright.sync_api import Page

from lite_site import open_notebook, result_payload

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from canary_calls import Pools, calls_for  # noqa: E402

CANARY = "CANARY-b04e2c-do-not-leak"
WORK = "planted/work.ipynb"
SECRET = "planted/hidden-plans.ipynb"
MISSING = "planted/hidden-plXns.ipynb"  # same length, nothing there
HIDDEN = ("hid-code", "hid-md")
READ_ONLY = "ro-md"
VISIBLE = ("v-title", "v-code", "v-print", "v-last")


def cell(cell_id: str, kind: str, source: str, **extra) -> dict:
    base = {"cell_type": kind, "id": cell_id, "metadata": extra.pop("metadata", {}), "source": source}
    if kind == "code":
        base.update(outputs=extra.pop("outputs", []), execution_count=extra.pop("execution_count", None))
    return base


def planted_notebooks() -> dict[str, dict]:
    none = {"webmcp_bridge": {"access": "none"}}
    canary_outputs = [
        {"output_type": "stream", "name": "stdout", "text": f"{CANARY}\n"},
        {
            "output_type": "execute_result",
            "execution_count": 3,
            "metadata": {},
            "data": {"text/plain": f"'{CANARY}'", "text/html": f"<b>{CANARY}</b>"},
        },
    ]
    threads = [
        {
            "id": "t-visible",
            "status": "open",
            "anchor": {"kind": "cell", "cellId": "v-title"},
            "messages": [{"author": "person", "body": "Is the title right?", "time": 1.0}],
        }
    ]
    threads += [
        {
            "id": f"t-{cid}",
            "status": "open",
            "anchor": {"kind": "cell", "cellId": cid},
            "messages": [{"author": "person", "body": f"about {CANARY}", "time": 1.0}],
        }
        for cid in HIDDEN
    ]
    kernelspec = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    work = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": kernelspec,
            "language_info": {"name": "python"},
            "webmcp_bridge": {"schemaVersion": 1, "threads": threads},
        },
        "cells": [
            cell("v-title", "markdown", "# Planted"),
            cell("v-code", "code", "x = 1"),
            cell(
                "hid-code",
                "code",
                f"secret = '{CANARY}'\nsecret",
                metadata=none,
                outputs=canary_outputs,
                execution_count=3,
            ),
            cell("ro-md", "markdown", "Read-only notes", metadata={"webmcp_bridge": {"access": "read"}}),
            cell("v-print", "code", "print('visible')"),
            cell("hid-md", "markdown", f"Private: {CANARY}", metadata=none),
            cell("v-last", "code", "y = x + 1"),
        ],
    }
    secret = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": kernelspec, "webmcp_bridge": {"schemaVersion": 1, "access": "none"}},
        "cells": [cell("s-1", "code", f"print('{CANARY}')")],
    }
    return {WORK: work, SECRET: secret}


PLANT = """async ({files}) => {
  const contents = window.jupyterapp.serviceManager.contents;
  try { await contents.get('planted'); } catch (e) {
    const dir = await contents.newUntitled({type: 'directory', path: ''});
    await contents.rename(dir.path, 'planted');
  }
  for (const [path, content] of Object.entries(files)) await contents.save(path, {type: 'notebook', format: 'json',
    content});
}"""

PERSON = """({canary, hidden}) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.context.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.id === hidden) { c.sharedModel.setSource(`${canary} typed by the person`); panel.content.activeCellIndex = i;
      }
  }
}"""

RUN_CALLS = """async ({calls}) => {
  const mc = document.modelContext;
  const tools = Object.fromEntries((await mc.getTools()).map(t => [t.name, t]));
  const out = [];
  for (const [name, input] of calls) {
    try {
      const r = await mc.executeTool(tools[name], input);
      out.push(typeof r === 'string' ? r : JSON.stringify(r));
    } catch (e) { out.push(JSON.stringify({thrown: String(e)})); }
  }
  return out;
}"""


def call(page: Page, name: str, args: dict) -> dict:
    return json.loads(page.evaluate(RUN_CALLS, {"calls": [[name, args]]})[0])


def collected_text(page: Page, text: str) -> str:
    """A result as it finally is: a call that went pending (slow behind a busy kernel) is collected with
    jupyter_wait_for_result, as an agent would, so it is compared by what it answered, never counted as "same"."""
    for _ in range(20):
        content = result_payload(json.loads(text))
        if content.get("status") != "pending":
            return text
        text = page.evaluate(RUN_CALLS, {"calls": [["jupyter_wait_for_result", {"pendingId": content["pendingId"]}]]})[
            0
        ]
    raise AssertionError(f"still pending after 20 collections: {text[:300]}")


def payload(result: dict) -> dict:
    return result_payload(result)


def open_planted(page: Page, site_url: str) -> None:
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    page.evaluate(PLANT, {"files": planted_notebooks()})
    open_notebook(page, site_url, WORK)  # in front once JupyterLab has restored the one opened before


def test_read_and_none_levels_in_jupyterlab(page, page_log, site_url):
    open_planted(page, site_url)
    listing = payload(call(page, "jupyter_get_cells", {"includeOutputs": True}))
    assert [c["id"] for c in listing["cells"]] == ["v-title", "v-code", "ro-md", "v-print", "v-last"]
    assert [c["index"] for c in listing["cells"]] == [0, 1, 2, 3, 4] and listing["hiddenCellCount"] == 2
    hidden = call(page, "jupyter_get_output", {"cellId": "hid-code", "outputIndex": 0})
    unknown = call(page, "jupyter_get_output", {"cellId": "zz-nope", "outputIndex": 0})
    assert hidden["isError"] and json.dumps(payload(hidden)).replace("hid-code", "zz-nope") == json.dumps(
        payload(unknown)
    )
    ro = listing["cells"][2]
    denied = call(
        page, "jupyter_update_cell", {"cellId": "ro-md", "source": "changed", "expectedSourceHash": ro["sourceHash"]}
    )
    assert payload(denied)["error"] == "CELL_ACCESS_DENIED"
    assert (
        page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.cells.get(3).sharedModel.getSource()")
        == "Read-only notes"
    )
    # inserting below the visible cell just above a hidden one lands right there; the hidden cell keeps its place
    new = payload(call(page, "jupyter_insert_cell", {"referenceCellId": "v-code", "source": "z = 3"}))["cell"]
    ids = page.evaluate(
        "() => { const c = window.jupyterapp.shell.currentWidget.context.model.cells; return Array.from({length: "
        "c.length}, (_, i) => c.get(i).id); }"
    )
    assert ids[:4] == ["v-title", "v-code", new["id"], "hid-code"]
    comments_visible = json.dumps(call(page, "jupyter_get_context", {}))
    assert CANARY not in comments_visible
    # the hidden notebook is missing for the agent, exactly as a path where nothing is
    listing = payload(call(page, "jupyter_list_workspace", {"path": "planted"}))
    assert [e["path"] for e in listing["entries"]] == [WORK]
    a, b = call(page, "jupyter_open_notebook", {"path": SECRET}), call(page, "jupyter_open_notebook", {"path": MISSING})
    assert payload(a)["error"] == "NOTEBOOK_NOT_FOUND" and json.dumps(a).replace(SECRET, MISSING) == json.dumps(b)
    # a read-only notebook: the person sets it, every change is refused
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.context.model.sharedModel.setMetadata('webmcp_bridge', "
        "{schemaVersion: 1, access: 'read'})"
    )
    refused = call(page, "jupyter_run_cells", {})
    assert payload(refused)["error"] == "NOTEBOOK_ACCESS_DENIED"
    assert payload(call(page, "jupyter_get_context", {}))["notebook"]["access"] == "read"
    assert not page_log.own_page_errors()


def canary_scan(page: Page, calls_per_tool: int) -> tuple[int, int]:
    """Call every tool the page registered with up to ``calls_per_tool`` argument combinations drawn from its
    inputSchema (the planted notebook open, the person typing in a hidden cell): no call throws, no result holds
    the canary, a hidden id or the hidden notebook's name, and naming the hidden notebook gets exactly what a
    path with nothing there gets. Returns (tools, calls)."""
    tools = page.webmcp.tools()
    definitions = [
        {
            "name": t["name"],
            "inputSchema": json.loads(t["inputSchema"]) if isinstance(t["inputSchema"], str) else t["inputSchema"],
        }
        for t in tools
    ]
    pools = Pools(
        cell_ids=list(VISIBLE[:2]) + [READ_ONLY, VISIBLE[3]],
        notebook_paths=[None, WORK, SECRET],
        paths=["", "planted", WORK, SECRET, "planted/notes.txt"],
        texts=["x", "print(2)", ""],
    )
    started = time.monotonic()
    calls: list[tuple[str, dict]] = [
        (d["name"], args) for d in definitions for args in calls_for(d, pools, calls_per_tool)
    ]
    # the agent naming the hidden notebook must get what a path with nothing there gets
    twins = [
        (name, json.loads(json.dumps(args).replace(SECRET, MISSING)))
        for name, args in calls
        if SECRET in json.dumps(args)
    ]
    results: list[str] = []
    # kernel actions last: a shutdown or restart in the middle would leave later runs waiting for a kernel
    # (pending at 20 s each) instead of running and showing what they return
    batch = sorted(calls + twins, key=lambda call: call[0] == "jupyter_kernel_action")
    for start in range(0, len(batch), 25):
        results.extend(page.evaluate(RUN_CALLS, {"calls": batch[start : start + 25]}))
    by_call = dict(zip((json.dumps(c) for c in batch), results, strict=True))
    leaks, thrown = [], []
    for (name, args), text in zip(batch, results, strict=True):
        result = json.loads(text)
        if "thrown" in result:
            thrown.append((name, args, result["thrown"][:200]))
            continue
        if SECRET in json.dumps(args):
            twin = collected_text(
                page, by_call[json.dumps((name, json.loads(json.dumps(args).replace(SECRET, MISSING))))]
            )
            same = text.replace(SECRET, MISSING) == twin
            if not (result["isError"] and same):
                leaks.append((name, args, "differs from a missing path"))
            text = twin
        for secret in (CANARY, *HIDDEN, "hidden-plans"):
            if secret in text:
                leaks.append((name, args, secret))
    print(f"canary scan: {len(definitions)} tools, {len(batch)} calls, {time.monotonic() - started:.0f} s")
    assert not thrown, thrown[:3]
    assert not leaks, leaks[:5]
    return len(definitions), len(batch)


def test_canary_scan_over_every_registered_tool_in_jupyterlab(page, page_log, site_url):
    open_planted(page, site_url)
    page.evaluate(PERSON, {"canary": CANARY, "hidden": "hid-md"})  # typing in a hidden cell, focus on it
    tools, calls = canary_scan(page, 6)
    assert calls >= 5 * tools
