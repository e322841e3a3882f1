"""Hidden cells through the kernel, under a real IPython (the InteractiveShell and HistoryManager ipykernel runs,
with its SQLite history database): after the scrub, nothing the agent's code can read in the kernel holds a
hidden cell's source or result, and IPython keeps working (``_`` follows new results, history is written)."""

from __future__ import annotations

import contextlib
import io
import linecache
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from webmcp_bridge.access.kernel_scrub import scrub_code

CANARY = "CANARY-hidden-5e1d"
HIDDEN = [
    f"# {CANARY} one\nhidden_total = 41 + 1\n'result-' + {CANARY!r}",  # a result that is a string
    f"def hidden_helper():\n    '''{CANARY} two'''\n    return [hidden_total, 'also-{CANARY}']\nhidden_helper()",
]
#: what agent code would print to look for hidden text: every history place IPython offers
PROBE = """
import inspect, linecache, sys
hm = get_ipython().history_manager
dh = get_ipython().displayhook
print(repr(In), repr(_ih), repr(Out), repr(_oh), repr(_i), repr(_ii), repr(_iii), repr(_), repr(__), repr(___))
print(repr(dh._), repr(dh.__), repr(dh.___), repr(hm._i), repr(hm._ii), repr(hm._iii), repr(hm._i00))
print([v for k, v in globals().items() if re.fullmatch(r"_i?\\d+", k)])
print(get_ipython().user_ns_hidden)
print(hm.input_hist_raw, hm.input_hist_parsed, hm.output_hist, hm.output_hist_reprs)
print(list(hm.search("*")), list(hm.search("*", raw=False, output=True)))
print(list(hm.get_tail(50, include_latest=True)), list(hm.get_tail(50, raw=False, output=True, include_latest=True)))
print(list(hm.get_range(output=True)), list(hm.get_range(raw=False)))
print(hm.db.execute("SELECT * FROM history").fetchall(), hm.db.execute("SELECT * FROM output_history").fetchall())
# cells, not files
print([e[2] for e in linecache.cache.values() if isinstance(e, tuple) and len(e) > 2 and e[1] is None])
try:
    print(inspect.getsource(hidden_helper))
except (OSError, TypeError) as exc:
    print("no source:", type(exc).__name__)
print(get_ipython().last_execution_result.info.raw_cell)
"""


@pytest.fixture
def shell(tmp_path):
    """A fresh IPython shell whose history goes to a SQLite file of its own, as ipykernel's does."""
    config = Config()
    config.HistoryManager.hist_file = str(tmp_path / "history.sqlite")
    config.HistoryManager.db_log_output = True  # outputs written to the database too: the harder case
    InteractiveShell.clear_instance()
    for name in [
        n for n, e in linecache.cache.items() if len(e) > 1 and e[1] is None
    ]:  # cells of an earlier test's shell
        del linecache.cache[name]
    ip = InteractiveShell.instance(config=config)
    ip.user_ns["re"] = re
    yield ip
    ip.history_manager.end_session()
    InteractiveShell.clear_instance()


def run(ip: InteractiveShell, code: str, store: bool = True) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = ip.run_cell(code, store_history=store)
    assert result.success, (result.error_before_exec, result.error_in_exec, out.getvalue())
    return out.getvalue()


def person_runs(ip: InteractiveShell, flush: bool) -> list[int]:
    """The person runs a visible cell, the two hidden ones, and another visible one; returns the hidden counts.
    ``flush``: the history is written to the database first (else it waits in IPython's write-behind cache)."""
    ip.history_manager.db_cache_size = 0 if flush else 1000
    run(ip, "visible_a = 'seen'\nvisible_a")
    counts = []
    for source in HIDDEN:
        counts.append(ip.execution_count)
        run(ip, source)
    run(ip, "len(visible_a)")  # the hidden results move to __ and ___
    if flush:
        ip.history_manager.writeout_cache()
    return counts


@pytest.mark.parametrize("flush", [True, False], ids=["written to the database", "still in the write-behind cache"])
def test_after_the_scrub_no_history_place_holds_a_hidden_cell(shell, flush):
    counts = person_runs(shell, flush)
    before = run(shell, PROBE, store=False)
    assert CANARY in before and "hidden_total" in before  # the probe does find them without the scrub
    assert "42" in before
    run(shell, scrub_code(counts, HIDDEN), store=False)
    after = run(shell, PROBE, store=False)
    assert CANARY not in after and "hidden_total" not in after and "hidden_helper()" not in after, after
    assert "no source: OSError" in after  # inspect.getsource of what a hidden cell defined
    assert "visible_a" in after  # the visible cells' history is still there
    # what hidden cells defined stays reachable (documented): the kernel is shared
    assert run(shell, "print(hidden_total, hidden_helper()[0])", store=False).strip() == "42 42"


def test_ipython_keeps_working_after_the_scrub(shell):
    counts = person_runs(shell, flush=True)
    run(shell, scrub_code(counts, HIDDEN), store=False)
    run(shell, "6 * 7")
    run(shell, "'after'")
    assert (shell.user_ns["_"], shell.user_ns["__"]) == ("after", 42)  # _ and __ follow new results again
    shell.history_manager.writeout_cache()
    assert [source for _, _, source in shell.history_manager.search("*after*")] == ["'after'"]
    # a second scrub (the agent runs again) finds nothing more and breaks nothing
    run(shell, scrub_code(counts, HIDDEN), store=False)
    run(shell, "1 + 1")
    assert (shell.user_ns["_"], shell.user_ns["__"], shell.user_ns["___"]) == (2, "after", 42)


def test_the_scrub_carries_no_hidden_text_into_the_kernel():
    code = scrub_code([3, 4], HIDDEN)
    assert CANARY not in code and "hidden_total" not in code
    compile(code, "<scrub>", "exec")


def test_a_hidden_cells_exception_is_gone_and_a_shadowed_get_ipython_does_not_stop_the_scrub(shell):
    """A hidden cell that raised leaves its exception in sys.last_value / last_exc / last_traceback (what %tb and
    pdb.pm() show: its message, frames and locals); agent code that shadowed get_ipython in the namespace does
    not turn the scrub off."""
    run(shell, "visible_a = 1")
    hidden = f"hidden_local = {CANARY!r}\nraise ValueError('boom ' + hidden_local)"
    count = shell.execution_count
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        shell.run_cell(hidden, store_history=True)
    probe = (
        "import sys, traceback\n"
        "print(repr(getattr(sys, 'last_value', None)), repr(getattr(sys, 'last_exc', None)))\n"
        "tb = getattr(sys, 'last_traceback', None)\n"
        "print(tb.tb_frame.f_locals.get('hidden_local') if tb else None)\n"
    )
    assert CANARY in run(shell, probe, store=False)  # reachable without the scrub
    run(shell, "get_ipython = lambda: None", store=False)  # the agent's earlier code shadows the name
    run(shell, scrub_code([count], [hidden]), store=False)
    after = run(shell, probe, store=False)
    assert CANARY not in after and after.startswith("None None"), after
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        shell.run_cell("%tb", store_history=False)
    assert CANARY not in out.getvalue() and "boom" not in out.getvalue()
    assert CANARY not in repr(shell.user_ns.get("In")) and CANARY not in repr(shell.history_manager.input_hist_raw)
