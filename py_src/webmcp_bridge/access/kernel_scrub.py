"""What the kernel keeps of hidden cells, and the code that clears it before the agent's code runs there.

The kernel is shared: a cell the person set to ``none`` runs in the same IPython as the agent's code
(``jupyter_run_code``, and the cells the agent runs). IPython keeps every run cell's source and result in
places any code can read, so before the agent's code runs in a notebook with hidden cells, the host runs
:func:`scrub_code` in the kernel (outside the kernel's history; it prints nothing). For each hidden cell (its
execution count, and the SHA-256 of its stripped source: the sources themselves never cross into the
kernel) it clears:

- the input history: ``In`` / ``_ih`` and the history manager's ``input_hist_parsed`` / ``input_hist_raw``
  (entries blanked, so the numbering stays), ``_i``/``_ii``/``_iii``/``_i00`` in the namespace and on the
  history manager (which shifts them into the namespace after each run), ``_iN``;
- the results: ``Out`` / ``_oh``, the history manager's ``output_hist`` / ``output_hist_reprs``, ``_N``, and
  ``_``/``__``/``___`` when they hold a hidden cell's result (blanked in the namespace and on the display hook,
  which shifts them after each run, so they keep updating normally afterwards); and the same names in
  ``user_ns_hidden``, where IPython keeps a second reference to what it pushed into the namespace;
- IPython's history database (SQLite, ``HistoryManager.db``: under ipykernel every input is written there,
  and ``history_manager.search`` / ``get_tail`` / ``%history -g`` read it): the rows of the hidden counts of the
  current session, and the rows of any session whose source is a hidden source; the rows still waiting in
  the write-behind caches are dropped under the caches' own locks, so the saving thread cannot write them
  afterwards;
- the compiled cells' sources: ``linecache`` entries of hidden cells (``inspect.getsource`` of a function a
  hidden cell defined then fails) and the source caches of ``executing`` / ``stack_data`` (IPython's
  tracebacks), by the cell's file name or the source's digest;
- the last exception, whoever raised it: ``sys.last_type`` / ``last_value`` / ``last_traceback`` /
  ``last_exc`` (what ``%tb``, ``pdb.pm()`` and ``traceback.print_last()`` read: a hidden cell's error would
  show its frames and locals), the Pyodide kernel's ``_last_traceback``, the traceback the shell's
  ``InteractiveTB`` keeps, and ``last_execution_result`` when it is a hidden cell's or holds an exception.

The shell is found through IPython's own singleton (``InteractiveShell.instance()``), not a ``get_ipython``
name that code in the namespace could have replaced.

This is defence in depth, not the boundary: code the person accepted runs with the kernel's rights and could
prepare the kernel beforehand (patch IPython, hook ``pre_run_cell``, wrap builtins). What keeps hidden things
from the agent is the run rule (:mod:`webmcp_bridge.access.run_consent`): while anything is hidden, every run
the agent starts is shown to the person first.

What the agent's code can still reach: the objects hidden cells created (variables, functions and their
byte code, classes, imports, open files), whatever they wrote to files or printed into other cells' outputs,
and a hidden cell's text run at a count the scrub does not know (the person edited the cell and ran it again:
only its current count and source are known). docs/TOOLS.md says so to the agent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence


def source_digest(source: str) -> str:
    """The SHA-256 (hex) of a source with surrounding whitespace stripped: how the scrub recognises a hidden
    cell's text in the kernel without sending the text there."""
    return hashlib.sha256(source.strip().encode("utf-8", "surrogatepass")).hexdigest()


def scrub_code(counts: Sequence[int], sources: Sequence[str]) -> str:
    """The Python code that clears the kernel's memory of these hidden cells (see the module docstring).

    Args:
        counts: the execution counts the hidden cells were last run at.
        sources: their sources (only digests, and the stripped lengths as a prefilter for the database scan,
            go into the code).

    Returns: code to run with ``store_history`` false; it prints nothing, defines nothing that stays (it
    deletes its own function), and leaves a kernel without IPython alone."""
    texts = [s for s in sources if s.strip()]
    digests = sorted({source_digest(s) for s in texts})
    lengths = sorted({len(s.strip()) for s in texts})
    return SCRUB.replace("ARGUMENTS", ", ".join(json.dumps(v) for v in ([int(c) for c in counts], digests, lengths)))


#: The scrub, run in the kernel. Every step is guarded: a kernel without a piece (the Pyodide kernel keeps no
#: history database) skips it.
SCRUB = """
def _webmcp_scrub(counts, digests, lengths):
    import hashlib, linecache, sys
    # the shell from IPython's own singleton, not a get_ipython name the namespace may have shadowed
    shell_class = getattr(sys.modules.get("IPython.core.interactiveshell"), "InteractiveShell", None)
    try:
        ip = shell_class.instance() if shell_class is not None and shell_class.initialized() else None
    except Exception:
        ip = None
    if ip is None:
        return
    counts, digests = set(counts), set(digests)
    ns, hm, dh = ip.user_ns, getattr(ip, "history_manager", None), getattr(ip, "displayhook", None)
    def secret(text):
        if not isinstance(text, str) or not text.strip():
            return False
        if text.lstrip().startswith("def _webmcp_scrub("):  # the Pyodide kernel keeps even this run's source
            return True
        return hashlib.sha256(text.strip().encode("utf-8", "surrogatepass")).hexdigest() in digests
    # the input history
    lists = [getattr(hm, name, None) for name in ("input_hist_parsed", "input_hist_raw")]
    lists += [ns.get("In"), ns.get("_ih")]
    for entries in [x for x in lists if isinstance(x, list)]:
        for i, text in enumerate(entries):
            if i in counts or secret(text):
                counts.add(i)
                entries[i] = ""
    for name in ("_i", "_ii", "_iii", "_i00"):
        if secret(ns.get(name)):
            ns[name] = ""
        if secret(getattr(hm, name, None)):
            setattr(hm, name, "")
    # the last exception, which may be a hidden cell's (its frames, locals and message): what %tb, pdb and
    # traceback.print_last() show, and the shell's own copies of it and of the last cell's source
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            try:
                delattr(sys, name)
            except Exception:
                pass
    if getattr(ip, "_last_traceback", None) is not None:
        ip._last_traceback = None
    itb = getattr(ip, "InteractiveTB", None)
    if getattr(itb, "tb", None) is not None:
        itb.tb = None
    last = getattr(ip, "last_execution_result", None)
    if last is not None and (getattr(last, "execution_count", None) in counts
                             or secret(getattr(getattr(last, "info", None), "raw_cell", None))
                             or getattr(last, "error_in_exec", None) is not None):
        ip.last_execution_result = None
    # the results
    results = []
    for i in counts:
        ns.pop("_i" + str(i), None)
        if ("_" + str(i)) in ns:
            results.append(ns.pop("_" + str(i)))
        for outputs in (ns.get("Out"), ns.get("_oh"), getattr(hm, "output_hist", None),
                        getattr(hm, "output_hist_reprs", None)):
            if isinstance(outputs, dict) and i in outputs:
                results.append(outputs.pop(i))
    for name in ("_", "__", "___"):
        held = [ns.get(name), getattr(dh, name, None)]
        if any(v is r for v in held for r in results if v is not None and v != "") or any(secret(v) for v in held):
            ns[name] = ""
            if dh is not None and hasattr(dh, name):
                setattr(dh, name, "")
    # IPython keeps what it pushed into the namespace (_iN, _N, _i.., _..) in user_ns_hidden too: the same values
    hidden_ns = getattr(ip, "user_ns_hidden", None)
    if isinstance(hidden_ns, dict):
        touched = ["_i", "_ii", "_iii", "_i00", "_", "__", "___"]
        touched += ["_i" + str(i) for i in counts] + ["_" + str(i) for i in counts]
        for name in touched:
            if name not in hidden_ns:
                continue
            if name in ns:
                hidden_ns[name] = ns[name]
            else:
                del hidden_ns[name]
    # the history database and its write-behind caches
    db = getattr(hm, "db", None)
    session = getattr(hm, "session_number", None)
    try:
        import sqlite3
    except ImportError:
        sqlite3 = None
    locks = [getattr(hm, name, None) for name in ("db_input_cache_lock", "db_output_cache_lock")]
    locks = [lock for lock in locks if hasattr(lock, "acquire")]
    for lock in locks:
        lock.acquire()
    try:
        for cache in (getattr(hm, "db_input_cache", None), getattr(hm, "db_output_cache", None)):
            if isinstance(cache, list):
                cache[:] = [e for e in cache
                            if not (isinstance(e, tuple) and e and (e[0] in counts or any(secret(x) for x in e[1:])))]
        if sqlite3 is not None and isinstance(db, sqlite3.Connection):
            rows = set()
            if session is not None and counts:
                marks = ",".join("?" * len(counts))
                rows.update(db.execute(f"SELECT session, line FROM history WHERE session = ? AND line IN ({marks})",
                                       (session, *sorted(counts))).fetchall())
            if lengths:
                marks = ",".join("?" * len(lengths))
                for s, line, source, raw in db.execute(
                        "SELECT session, line, source, source_raw FROM history "
                        "WHERE length(trim(source_raw, ' \\t\\n\\r\\f\\v')) IN "
                        f"({marks}) OR length(trim(source, ' \\t\\n\\r\\f\\v')) IN ({marks})", (*lengths, *lengths)):
                    if secret(source) or secret(raw):
                        rows.add((s, line))
            if rows:
                with db:
                    db.executemany("DELETE FROM history WHERE session = ? AND line = ?", sorted(rows))
                    db.executemany("DELETE FROM output_history WHERE session = ? AND line = ?", sorted(rows))
    finally:
        for lock in reversed(locks):
            lock.release()
    # the compiled cells' sources
    named = getattr(getattr(ip, "compile", None), "_filename_map", None)
    names = {name for name, count in (named.items() if isinstance(named, dict) else ()) if count in counts}
    for name, entry in list(linecache.cache.items()):
        if (isinstance(entry, tuple) and len(entry) > 2 and isinstance(entry[2], list)
                and secret("".join(map(str, entry[2])))):
            names.add(name)
    for name in names:
        linecache.cache.pop(name, None)
    if "executing" in sys.modules:
        classes = [getattr(sys.modules["executing"], "Source", None)]
        while classes:
            cls = classes.pop()
            if not isinstance(cls, type):
                continue
            classes.extend(cls.__subclasses__())
            for key, value in list(vars(cls).items()):
                if "source_cache" in key and isinstance(value, dict):
                    for found in list(value):
                        filename = found[0] if isinstance(found, tuple) else found
                        lines = found[1] if isinstance(found, tuple) and len(found) > 1 else ()
                        if filename in names or secret("".join(map(str, lines))):
                            value.pop(found, None)
_webmcp_scrub(ARGUMENTS)
del _webmcp_scrub
"""
