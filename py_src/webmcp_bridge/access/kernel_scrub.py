"""What the kernel keeps of hidden cells, and the code that clears it before the agent's code runs there.

A ``none`` cell runs in the same IPython as the agent's code, which keeps every cell's source and result where any
code can read them. So before the agent's code runs in a notebook with hidden cells, the host runs :func:`scrub_code`
(outside the history, printing nothing), given each hidden cell's execution count and the SHA-256 of its stripped
source (sources never cross into the kernel). What it clears (input and output history, ``_``-names, the history
database and its write-behind caches, compiled sources, the last exception) and what stays reachable are
docs/TOOLS.md, "Hidden cells and the kernel". The shell is ``InteractiveShell.instance()``, never a ``get_ipython``
the namespace could replace. Defence in depth, not the boundary: the run rule (:mod:`webmcp_bridge.access.run_consent`)
is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence


def source_digest(source: str) -> str:
    """SHA-256 (hex) of the stripped source: how the kernel recognises a hidden text it is never sent."""
    return hashlib.sha256(source.strip().encode("utf-8", "surrogatepass")).hexdigest()


def scrub_code(counts: Sequence[int], sources: Sequence[str]) -> str:
    """Code that clears the kernel's memory of hidden cells last run at ``counts`` with ``sources`` (only their
    digests and stripped lengths go in). Run with ``store_history`` false: it prints and keeps nothing, and leaves a
    kernel without IPython alone."""
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
