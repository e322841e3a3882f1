"""Long cells and interrupts, as the agent is told about them: jupyter_run_cells gives up after its limit
(the `timeout` argument, else the runTimeout setting) and reports a cell still running as `running`, with a
reason, never as failed; jupyter_kernel_action interrupt says what happened, and on a kernel that cannot stop
running code (JupyterLite's Pyodide) says so and what to do instead."""

from __future__ import annotations

from helpers import make_bridge
from webmcp_bridge.core.limits import DEFAULT_LIMITS
from webmcp_bridge.session.settings import BridgeSettings, limits_for, parse_settings


def scratch():
    b = make_bridge({"e.ipynb": "jupyterlite-empty.ipynb"})
    b.open("e.ipynb")
    return b


def add(b, source: str) -> str:
    return b.ok("jupyter_insert_cell", {"source": source})["cell"]["id"]


def test_a_cell_still_running_is_reported_running_and_the_next_is_not_run():
    b = scratch()
    slow, after = add(b, "print('slow')"), add(b, "print('after')")
    b.ws.current_notebook().run_seconds[slow] = 30.0  # this cell takes 30 s in the in-memory kernel
    results = b.ok("jupyter_run_cells", {"cellIds": [slow, after], "timeout": 5})["results"]
    assert results[0]["status"] == "running" and "5 s" in results[0]["reason"], results[0]
    assert "jupyter_get_cells" in results[0]["reason"]
    assert results[1] == {"cellId": after, "status": "skipped", "reason": "an earlier cell is still running"}
    b.fails("jupyter_run_cells", {"timeout": 0}, "INVALID_ARGUMENT")


def test_the_run_timeout_is_a_setting():
    settings, problems = parse_settings({"runTimeout": 600})
    assert (
        problems == []
        and settings.run_timeout == 600
        and limits_for(DEFAULT_LIMITS, settings).run_timeout_seconds == 600
    )
    assert BridgeSettings().run_timeout == DEFAULT_LIMITS.run_timeout_seconds == 120
    assert "runTimeout" in parse_settings({"runTimeout": "long"})[1][0]
    b = make_bridge(
        {"e.ipynb": "jupyterlite-empty.ipynb"}, limits=limits_for(DEFAULT_LIMITS, parse_settings({"runTimeout": 2})[0])
    )
    b.open("e.ipynb")
    slow = add(b, "print('slow')")
    b.ws.current_notebook().run_seconds[slow] = 3.0
    result = b.ok("jupyter_run_cells", {"cellIds": [slow]})["results"][0]
    assert result["status"] == "running" and "2 s" in result["reason"], result


def test_interrupt_says_what_happened():
    b = scratch()
    nb = b.ws.current_notebook()
    idle = b.ok("jupyter_kernel_action", {"action": "interrupt"})
    assert idle["interrupted"] is False and "nothing was running" in idle["reason"], idle
    nb.kernel_status = "busy"  # a cell the person started is running
    stopped = b.ok("jupyter_kernel_action", {"action": "interrupt"})
    assert stopped["interrupted"] is True and stopped["kernel"]["status"] == "idle" and "reason" not in stopped, stopped
    nb.kernel_status, nb.interruptible, nb.kernel_display_name = "busy", False, "Python (Pyodide)"
    refused = b.ok("jupyter_kernel_action", {"action": "interrupt"})
    assert refused["interrupted"] is False and refused["kernel"]["status"] == "busy", refused
    assert "Pyodide" in refused["reason"] and "cannot stop code that is already running" in refused["reason"]
    assert "restart" in refused["reason"] and "jupyter_wait_for_result" in refused["reason"]
