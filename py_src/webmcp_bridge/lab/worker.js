// The page's main-thread side of the bridge's worker (docs/WORKER.md): starts the dedicated worker (worker_boot.js
// beside this file), answers its requests in the envelope of webmcp_bridge/lab/messages.py, sends it events and counts
// the crossings. It carries data only: what a request means is decided by the responder the caller gives (a plain
// function, or halves.js's: docs/WORKER.md, "The remote half").
//
// startWorker(options) starts one worker. Options: manifestUrl (the labextension's bridge.json, absolute), bootUrl
// (default: worker_boot.js beside this module), runtimeUrl (the page's own Pyodide, same origin; null: the shipped
// one), hold (fetch and compile only until go()), snapshotUrl (the site's snapshot.json: used when it fits, docs/
// loader.md "A memory snapshot"), onStep(name) (each start-up step begun, for the loader's status), respond(call)
// (a call {id, target, method, args} -> {value} | {error: {kind, code, message, details}}, for every synchronous
// request; a promise it returns is published once settled: the worker waits, the page never does) and respondAsync
// (the same for an asynchronous request; default: respond). Returns {ready (resolves to ready's facts once Python is
// up, rejects with its start failure), go(), ping() (resolves once the worker's thread answered: the loader's
// watchdog), invoke(name, text) (one of lab/wire.py ENTRIES: a promise of its answer), event(text), crossings()
// (JSON text {method: count}), memoryBytes() (the worker's wasm memory as its last message said), terminate()}.
// The messages each way are the `type`s handled below and in worker_boot.js's handle.
//
// The synchronous buffers: ctl = Int32Array [state, length], data = Uint8Array of UTF-8 bytes. state 0: asked, not
// answered; 1: answered, `length` bytes in data; 2: the answer is `length` bytes, more than data holds ("grow", then
// the same answer is written there). The state is published last (Atomics.store, then Atomics.notify). The page never
// waits for the worker; only the worker blocks.
import { crossingCounter } from './crossings.js';

// the body of a failed answer: a request the other side could not read or refuses ("wire"), or what the answering
// JS threw ("host", its name as the code); Python raises them again as WireError and HostFailure
export const wireError = message => ({ error: { kind: 'wire', code: 'WireError', message: String(message), details: {} } });
export const hostError = error => ({ error: { kind: 'host', code: String((error && error.name) || 'Error'),
                                              message: String((error && error.message) || error), details: {} } });

export const isThenable = value => value !== null && (typeof value === 'object' || typeof value === 'function')
  && typeof value.then === 'function';

const OK = 1;
const TOO_BIG = 2;

export function startWorker({ manifestUrl, bootUrl = new URL('worker_boot.js', import.meta.url).href, runtimeUrl = null,
                              hold = false, snapshotUrl = null, onStep = () => {}, respond, respondAsync = respond }) {
  const worker = new Worker(bootUrl, { type: 'module', name: 'webmcp-bridge' });
  const encoder = new TextEncoder();
  const crossings = crossingCounter();
  let ctl = null;
  let data = null;
  let pending = null; // the encoded answer that waits for a bigger buffer
  let invocations = 0;
  let memory = 0; // the worker's wasm memory in bytes, as its last message said
  const invoked = new Map(); // id -> {resolve, reject}
  const pings = new Map(); // id -> resolve
  let pinged = 0;
  let readyResolve, readyReject;
  const ready = new Promise((resolve, reject) => { readyResolve = resolve; readyReject = reject; });

  const answerOf = (message, body) => JSON.stringify({ id: message.id, ...body });
  // the answer's text to a request's text (a promise of it when the responder's answer is one), the request counted
  const answer = (text, sync) => {
    let message;
    try { message = JSON.parse(text); } catch { return JSON.stringify({ id: -1, ...wireError('the request is not JSON') }); }
    crossings.count(String(message.method));
    try {
      const body = (sync ? respond : respondAsync)(message);
      if (isThenable(body)) return body.then(b => answerOf(message, b), error => answerOf(message, hostError(error)));
      return answerOf(message, body);
    } catch (error) { return answerOf(message, hostError(error)); }
  };
  // write an answer's bytes into the shared buffer when they fit, else ask for a bigger one; the state last
  const publish = bytes => {
    const fits = bytes.length <= data.length;
    if (fits) data.set(bytes); // TextEncoder.encodeInto refuses shared memory: encode, then copy
    pending = fits ? null : bytes;
    Atomics.store(ctl, 1, bytes.length);
    Atomics.store(ctl, 0, fits ? OK : TOO_BIG);
    Atomics.notify(ctl, 0);
  };

  worker.onmessage = async event => {
    const m = event.data;
    if (Number.isFinite(m.memory)) memory = m.memory;
    if (m.type === 'sync') {
      const text = answer(m.text, true);
      publish(encoder.encode(typeof text === 'string' ? text : await text));
    } else if (m.type === 'grow') {
      data = m.data;
      if (pending) publish(pending);
    } else if (m.type === 'async') {
      worker.postMessage({ type: 'answer', id: m.id, text: await answer(m.text, m.sync) });
    } else if (m.type === 'buffers') {
      ctl = m.ctl;
      data = m.data;
    } else if (m.type === 'step') {
      onStep(String(m.name));
    } else if (m.type === 'pong') {
      pings.get(m.id)?.();
      pings.delete(m.id);
    } else if (m.type === 'ready') {
      readyResolve({ mode: m.mode, isolated: m.isolated, steps: m.steps, timeOrigin: m.timeOrigin, runtime: m.runtime,
                     snapshot: m.snapshot ?? null });
    } else if (m.type === 'invoked') {
      const call = invoked.get(m.id);
      invoked.delete(m.id);
      if (!call) return;
      if (m.error != null) call.reject(new Error(m.error));
      else call.resolve(m.text);
    } else if (m.type === 'failed') {
      readyReject(new Error(m.message));
      for (const call of invoked.values()) call.reject(new Error(m.message));
      invoked.clear();
    }
  };
  worker.onerror = event => {
    event.preventDefault();
    readyReject(new Error(`the bridge's worker failed: ${event.message || 'no script'}`));
  };
  worker.postMessage({ type: 'start', manifestUrl: String(manifestUrl), runtimeUrl: runtimeUrl == null ? null : String(runtimeUrl),
                       hold: !!hold, snapshotUrl: snapshotUrl == null ? null : String(snapshotUrl) });
  let held = !!hold;

  return {
    ready,
    go: () => {
      if (!held) return;
      held = false;
      worker.postMessage({ type: 'go' });
    },
    ping: () => new Promise(resolve => {
      const id = ++pinged;
      pings.set(id, resolve);
      worker.postMessage({ type: 'ping', id });
    }),
    invoke: (name, text) => new Promise((resolve, reject) => {
      const id = ++invocations;
      invoked.set(id, { resolve, reject });
      worker.postMessage({ type: 'invoke', id, name: String(name), text: String(text) });
    }),
    event: text => worker.postMessage({ type: 'event', text: String(text) }),
    crossings: crossings.json,
    memoryBytes: () => memory,
    terminate: () => worker.terminate(),
  };
}
