"""The Python half of the worker spike: run inside Pyodide (on the page's main thread or in a dedicated worker).

Not part of the product and not imported by it. ``bench/worker_spike/spike.js`` and ``worker.js`` evaluate this
file with ``runPython`` once the runtime and the wheels are loaded, then call its functions:

- ``steps()``: the start-up import steps the product's session uses (``webmcp_bridge.lab.session.STEPS``).
- ``import_step(name)``: import one of them (a pydantic internal a newer pydantic lacks is skipped, as there).
- ``build(cells)``: the bridge over an in-memory notebook of ``cells`` code cells (``bench.ipynb``, opened),
  every tool's schemas generated; returns the number of tool definitions. The in-memory host is the test harness's
  (``tests/``, not in the wheel): ``boot.mjs`` writes the files :data:`HARNESS` names into :data:`HARNESS_DIR` of
  the runtime's file system (``run.py`` serves them under ``/_spike/harness/``), which ``build`` puts on ``sys.path``.
- ``dispatch(name, arguments_json)``: one tool call through the registry, started eagerly as the product's
  dispatcher does; returns the answer's JSON text (or, a call that waits, its task).
- ``time_sync(fn, arg, n)`` / ``time_async(fn, arg, n)`` / ``time_jspi(fn, arg, n)``: ``n`` calls of a JS function
  (synchronous; returning a promise that is awaited; returning a promise waited for with ``run_sync``), each timed
  with ``time.perf_counter``; returns JSON text, a list of ms per call.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time
from typing import Any

#: the test harness's files the in-memory host is made of (in ``tests/``), and where the runtime holds them
HARNESS = ("host_memory.py", "host_memory_dialogs.py", "host_memory_render.py", "png_codec.py")
HARNESS_DIR = "/spike_harness"

_state: dict[str, Any] = {}


def steps() -> list[str]:
    from webmcp_bridge.lab.session import STEPS

    return list(STEPS)


def import_step(name: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError:
        if not name.startswith("pydantic."):
            raise


def notebook_json(cells: int) -> str:
    """An nbformat 4.5 notebook of ``cells`` small code cells, each with one stream output."""
    body = [
        {
            "cell_type": "code",
            "id": f"cell-{i}",
            "source": f"total = sum(range({i}))\nprint(total)",
            "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{i * (i - 1) // 2}\n"}],
            "execution_count": i + 1,
        }
        for i in range(cells)
    ]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": body})


async def build(cells: int) -> int:
    if HARNESS_DIR not in sys.path:
        sys.path.insert(0, HARNESS_DIR)
    from host_memory import MemoryWorkspace
    from webmcp_bridge.session.bridge import build_bridge

    workspace = MemoryWorkspace({"bench.ipynb": notebook_json(cells)})
    bridge = build_bridge(workspace)
    await workspace.open_notebook("bench.ipynb", True)
    for tool in bridge.registry.tools():
        tool.input_schema()
        tool.output_schema()
        await asyncio.sleep(0)
    _state["bridge"] = bridge
    return len(bridge.registry.definitions())


def dispatch(name: str, arguments: str) -> Any:
    from webmcp_bridge.calls.pending import start_eagerly
    from webmcp_bridge.calls.registry import result_json

    async def serve() -> str:
        return result_json(await _state["bridge"].registry.call(str(name), str(arguments)))

    task = start_eagerly(serve())
    return task.result() if task.done() else task


def time_sync(fn: Any, arg: str, n: int) -> str:
    times = []
    for _ in range(int(n)):
        began = time.perf_counter()
        answer = fn(arg)
        len(str(answer))  # the answer as a Python str, as a host method uses it
        times.append((time.perf_counter() - began) * 1000)
    return json.dumps(times)


async def time_async(fn: Any, arg: str, n: int) -> str:
    times = []
    for _ in range(int(n)):
        began = time.perf_counter()
        answer = await fn(arg)
        len(str(answer))
        times.append((time.perf_counter() - began) * 1000)
    return json.dumps(times)


def time_jspi(fn: Any, arg: str, n: int) -> str:
    """As :func:`time_sync`, over a JS function returning a promise, waited for synchronously with
    ``pyodide.ffi.run_sync`` (JS Promise Integration: the wasm stack is suspended, no SharedArrayBuffer). Must be
    entered through ``callPromising``; JSON ``null`` when this runtime cannot (no JSPI in the browser)."""
    from pyodide.ffi import can_run_sync, run_sync

    if not can_run_sync():
        return json.dumps(None)
    times = []
    for _ in range(int(n)):
        began = time.perf_counter()
        answer = run_sync(fn(arg))
        len(str(answer))
        times.append((time.perf_counter() - began) * 1000)
    return json.dumps(times)


async def time_jspi_task(fn: Any, arg: str, n: int) -> str:
    """:func:`time_jspi` inside an asyncio task after a real suspension (a tool call resumed by the event loop, not
    by the entry that ``callPromising`` made): whether ``run_sync`` still can wait there."""
    await asyncio.sleep(0.001)
    return time_jspi(fn, arg, n)
