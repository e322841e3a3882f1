// The page's timer for the alarm of webmcp_bridge/core/alarm.py (its docstring says why), evaluated by
// lab/deadline.py in the realm the bridge's Python runs in. Python says when and which signal.
//
// (pyodide) => {start(seconds, signum), stop()}: start makes the runtime's interrupt buffer (setInterruptBuffer; CPython
// reads element 0 at each signal check and writes 0 after a non-zero read) read 0 until `seconds` have passed, then
// `signum` once; the buffer set before is consulted first, so an interrupt someone else requests still arrives. stop
// puts that buffer back.
(pyodide => {
  let before = null; // the interrupt buffer set before start(), if any
  let deadline = Infinity;
  let signal = 0;
  let readBefore = false; // the last non-zero read came from `before`
  const buffer = {
    get 0() {
      const other = before ? before[0] : 0;
      readBefore = Boolean(other);
      if (other) return other;
      if (signal && performance.now() >= deadline) {
        const fired = signal;
        signal = 0;
        return fired;
      }
      return 0;
    },
    set 0(value) {
      if (readBefore && !value) before[0] = 0;
      readBefore = false;
    },
  };
  return {
    start(seconds, signum) {
      const current = pyodide._module.Py_EmscriptenSignalBuffer;
      if (current !== buffer) before = current || null;
      deadline = performance.now() + seconds * 1000;
      signal = signum;
      pyodide.setInterruptBuffer(buffer);
    },
    stop() {
      signal = 0;
      pyodide.setInterruptBuffer(before || undefined);
      before = null;
    },
  };
})
