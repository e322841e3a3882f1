// The worker spike's page (page.html?mode=...): starts the bridge's Python on the main thread or in a dedicated
// worker and measures what the page's main thread pays. Not part of the product; driven by run.py, which reads
// window.__spike once it has `done` (or `error`).
// Modes: main (today's shape: Pyodide on the main thread, one import per task), worker, main-snapshot and
// worker-snapshot (start from a memory snapshot made earlier in this browser context by make-main / make-worker,
// kept in IndexedDB); &variant=bare|imports says what the snapshot holds (the interpreter and the unpacked
// wheels; or also every start-up import).
import { startPython, build, answer, CALL_ARGS, keep, fetchKept } from './boot.mjs';

const params = new URLSearchParams(location.search);
const mode = params.get('mode') || 'main';
const variant = params.get('variant') || 'bare';
const N = Number(params.get('n') || 200);
const out = window.__spike = { mode, variant, isolated: self.crossOriginIsolated, done: false };

const longTasks = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) longTasks.push([e.startTime, e.duration]); })
  .observe({ type: 'longtask', buffered: true });
const tasksIn = (from, to) => {
  const inside = longTasks.filter(([start]) => start >= from && start < to).map(([, d]) => d);
  return { count: inside.length, longestMs: Math.round(Math.max(0, ...inside)), totalMs: Math.round(inside.reduce((a, b) => a + b, 0)) };
};
const heap = () => { if (window.gc) window.gc(); return performance.memory ? performance.memory.usedJSHeapSize : null; };
const pause = ms => new Promise(resolve => setTimeout(resolve, ms));
const median = xs => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : null; };
const summary = xs => ({ p50: +median(xs).toFixed(3), p95: +[...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)].toFixed(3) });

// -- the worker and its messages
function startWorker() {
  const worker = new Worker(new URL('worker.mjs', import.meta.url), { type: 'module' });
  let shared = null; // {ctl, data} once the worker is ready
  const encoder = new TextEncoder();
  let sequence = 0;
  const replies = new Map();
  let readyResolve, readyReject;
  const ready = new Promise((resolve, reject) => { readyResolve = resolve; readyReject = reject; });
  worker.onmessage = event => {
    const m = event.data;
    if (m.type === 'sync') { // answer into the shared buffer, then wake the worker
      // TextEncoder cannot write into shared memory: encode, then copy the bytes in
      const bytes = encoder.encode(answer(m.name));
      shared.data.set(bytes);
      Atomics.store(shared.ctl, 1, bytes.length);
      Atomics.store(shared.ctl, 0, 1);
      Atomics.notify(shared.ctl, 0);
    } else if (m.type === 'async') {
      worker.postMessage({ type: 'asyncReply', id: m.id, text: answer(m.name) });
    } else if (m.type === 'ready') {
      shared = m.ctl ? { ctl: m.ctl, data: m.data } : null;
      readyResolve(m);
    } else if (m.type === 'answer') {
      replies.get(m.id)(m);
      replies.delete(m.id);
    } else if (m.type === 'error') {
      readyReject(new Error(m.message));
      for (const resolve of replies.values()) resolve({ error: m.message });
    }
  };
  const ask = message => new Promise(resolve => {
    const id = ++sequence;
    replies.set(id, resolve);
    worker.postMessage({ ...message, id });
  });
  return { worker, ready, ask };
}

async function run() {
  out.heapBefore = heap();
  const began = performance.now();
  out.navigationToStartMs = Math.round(began);
  const snapshotKey = `${mode.includes('worker') ? 'worker' : 'main'}-${variant}`;
  const fromSnapshot = mode.endsWith('-snapshot');
  const making = mode.startsWith('make-');
  const options = { snapshotKey: fromSnapshot ? snapshotKey : null, makeSnapshot: making,
                    skipImports: (making && variant === 'bare') || (fromSnapshot && variant === 'imports') };
  const onMain = !mode.includes('worker');
  let pyodide = null;
  let worker = null;
  if (onMain) {
    const yieldToPage = () => new Promise(resolve => setTimeout(resolve, 0));
    const started = await startPython({ ...options, yieldToPage });
    pyodide = started.pyodide;
    Object.assign(out, started.snapshot);
    out.steps = started.steps.map(([n, a, b]) => [n, Math.round(b - a)]);
    out.tools = making ? 0 : await build(pyodide, 100);
    out.wasmBytes = pyodide._module.HEAP8.length;
  } else {
    worker = startWorker();
    worker.worker.postMessage({ type: 'start', ...options });
    const ready = await worker.ready;
    Object.assign(out, ready.snapshot);
    out.steps = ready.steps.map(([n, a, b]) => [n, Math.round(b - a)]);
    out.tools = ready.tools;
    out.wasmBytes = ready.memory;
    out.workerIsolated = ready.isolated;
  }
  const readyAt = performance.now();
  out.readyMs = Math.round(readyAt - began);
  out.startTasks = tasksIn(began, readyAt);
  if (making) {
    const t = performance.now();
    // made and kept in IndexedDB by the thread that runs Python (a worker's never crosses to the page)
    const reply = onMain ? { size: await keep(snapshotKey, pyodide.makeMemorySnapshot()) }
      : await worker.ask({ type: 'snapshot', key: snapshotKey });
    out.makeSnapshotMs = Math.round(performance.now() - t);
    if (!reply.size) throw new Error(`the snapshot was not made: ${reply.error}`);
    out.snapshotBytes = reply.size;
    out.done = true;
    return;
  }
  await pause(500);
  out.heapAfter = heap();
  out.heapAddedBytes = out.heapBefore == null ? null : out.heapAfter - out.heapBefore;

  // -- crossings and calls, the page idle otherwise
  const callsBegan = performance.now();
  const crossings = {};
  const calls = [];
  const pings = [];
  if (onMain) {
    const timeSync = pyodide.globals.get('time_sync');
    for (const name of ['small', 'cells', 'big']) crossings[`ffi ${name}`] = summary(JSON.parse(timeSync(answer, name, name === 'big' ? 20 : N)));
    timeSync.destroy();
    const dispatch = pyodide.globals.get('dispatch');
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      let text = dispatch('jupyter_get_cells', CALL_ARGS);
      if (typeof text !== 'string') text = await text;
      calls.push(performance.now() - t);
      if (i === 0) out.callBytes = text.length;
      await pause(0);
    }
    dispatch.destroy();
  } else {
    if (out.workerIsolated) {
      for (const name of ['small', 'cells', 'big']) {
        const reply = await worker.ask({ type: 'time', kind: 'sync', answer: name, n: name === 'big' ? 20 : N });
        crossings[`sync ${name}`] = summary(JSON.parse(reply.text));
      }
    }
    for (const kind of ['async', 'jspi', 'jspi_task']) {
      for (const name of ['small', 'cells', 'big']) {
        const reply = await worker.ask({ type: 'time', kind, answer: name, n: name === 'big' ? 20 : Math.min(N, 100) });
        if (reply.error) throw new Error(reply.error);
        const times = JSON.parse(reply.text);
        if (times) crossings[`${kind} ${name}`] = summary(times);
        else out[kind] = false; // run_sync cannot wait there
      }
    }
    for (let i = 0; i < 50; i++) {
      let t = performance.now();
      await worker.ask({ type: 'ping' });
      pings.push(performance.now() - t);
      t = performance.now();
      const reply = await worker.ask({ type: 'dispatch', name: 'jupyter_get_cells', args: CALL_ARGS });
      calls.push(performance.now() - t);
      if (i === 0) out.callBytes = reply.text.length;
    }
  }
  out.crossings = crossings;
  out.call = summary(calls);
  if (pings.length) out.roundTrip = summary(pings);
  out.callTasks = tasksIn(callsBegan, performance.now());
  out.done = true;
}

run().catch(error => { out.error = String(error && error.stack || error); out.done = true; });
