// The bridge's dedicated worker (docs/WORKER.md, issue 22): started by worker.js on the page's main thread. It
// starts Pyodide with the bridge's wheels as the loader does (the runtime and wheels named by the labextension's
// bridge.json; the page's own runtime when worker.js passes one of the version the wheels are built for), then
// imports webmcp_bridge.lab.wire, which decides everything else. This file only carries data: the messages are
// worker.js's (see there), the crossings' mechanics are below.
//
// self.webmcpBridgeWorker, read by webmcp_bridge/lab/wire.py:
//   syncSend(text)   a synchronous request: waits (Atomics.wait, this thread only) for the page's answer in the
//                    shared buffers and returns its text; null when this worker is not cross-origin isolated
//   asyncSend(text)  an asynchronous request: a promise of the page's answer, sent by message
//   syncByMessage(text)  a synchronous request sent by message ({type: "async", sync: true}: the page answers it
//                    with its synchronous responder, as it would through the buffers): a promise of the answer, which
//                    JSPI's run_sync waits on where there is no shared memory
//   isolated         self.crossOriginIsolated
//
// Every message to the page carries `memory`: the size of this worker's wasm memory in bytes (Pyodide's HEAP8, 0
// before Pyodide is up), so the page can report it without a request of its own (worker.js memoryBytes()).
const OK = 1;
const INITIAL_BYTES = 64 << 10;

let pyodide = null;
let wire = null; // the Python module webmcp_bridge.lab.wire
let entry = null; // its invoke and event functions, kept for the worker's life
let dispatch = null;
let ctl = null; // Int32Array [state, length] over a SharedArrayBuffer
let data = null; // Uint8Array over a SharedArrayBuffer
const decoder = new TextDecoder();
let requests = 0;
const waiting = new Map(); // id -> resolve of an asynchronous request
const early = []; // messages of the page that came before Python was up

// every message to the page, with the wasm memory's size in bytes as it is now
const tell = message => postMessage({ ...message, memory: pyodide ? pyodide._module.HEAP8.length : 0 });

function syncSend(text) {
  Atomics.store(ctl, 0, 0);
  tell({ type: 'sync', text: String(text) });
  for (;;) {
    Atomics.wait(ctl, 0, 0);
    const length = Atomics.load(ctl, 1);
    if (Atomics.load(ctl, 0) === OK) return decoder.decode(data.slice(0, length)); // decode from a copy
    // the answer does not fit: a buffer of at least twice the size, handed over; the page writes it there
    let size = data.length;
    while (size < length) size *= 2;
    data = new Uint8Array(new SharedArrayBuffer(size));
    Atomics.store(ctl, 0, 0);
    tell({ type: 'grow', data });
  }
}

function send(text, sync) {
  return new Promise(resolve => {
    const id = ++requests;
    waiting.set(id, resolve);
    tell({ type: 'async', id, text: String(text), sync });
  });
}

const asyncSend = text => send(text, false);
const syncByMessage = text => send(text, true);

// A held worker (start's hold) fetches and compiles only, until the page's "go": the page's own start is not slowed by
// Python's CPU while JupyterLab is still starting (docs/loader.md, 1a).
let goNow;
const going = new Promise(resolve => { goNow = resolve; });

// The runtime's wasm compiled ahead, while held: Pyodide's own instantiation (its one WebAssembly.instantiateStreaming
// call) is answered once with this module instead of compiling the same bytes again.
function useCompiled(compiled) {
  const instantiateStreaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    WebAssembly.instantiateStreaming = instantiateStreaming;
    Promise.resolve(source).then(response => response.body?.cancel()).catch(() => {});
    const module = await compiled;
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
}

async function start({ manifestUrl, runtimeUrl, hold }) {
  const steps = [];
  const step = async (name, work) => {
    tell({ type: 'step', name });
    const began = performance.now();
    const result = await work();
    steps.push([name, Math.round(began), Math.round(performance.now())]);
    return result;
  };
  const isolated = self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
  if (isolated) {
    ctl = new Int32Array(new SharedArrayBuffer(8));
    data = new Uint8Array(new SharedArrayBuffer(INITIAL_BYTES));
    tell({ type: 'buffers', ctl, data });
  }
  self.webmcpBridgeWorker = { syncSend: isolated ? syncSend : null, asyncSend, syncByMessage, isolated };
  const manifest = await step('manifest', async () => (await fetch(manifestUrl)).json());
  const runtime = await step('runtime', async () => {
    if (runtimeUrl && new URL(runtimeUrl).origin === self.location.origin) {
      try {
        const module = await import(runtimeUrl);
        if (module.version === manifest.pyodideVersion) return { module, url: new URL(runtimeUrl), source: 'page' };
      } catch { /* the shipped runtime, below */ }
    }
    const url = new URL(manifest.pyodide, manifestUrl);
    return { module: await import(url.href), url, source: 'shipped' };
  });
  if (hold) {
    const compiled = WebAssembly.compileStreaming(fetch(new URL('pyodide.asm.wasm', runtime.url)));
    compiled.catch(() => {}); // a failed compilation: Pyodide compiles the wasm itself, below
    await step('compile', async () => {
      await going;
      try { await compiled; useCompiled(compiled); } catch { /* Pyodide's own instantiation */ }
    });
  }
  // the standard library shipped beside bridge.json holds its bytecode (sitebuild/bytecode.py): nothing is compiled at
  // start, whichever runtime of the pinned version runs
  const boot = { indexURL: new URL('.', runtime.url).href };
  if (manifest.stdlib) boot.stdLibURL = new URL(manifest.stdlib, manifestUrl).href;
  pyodide = await step('loadPyodide', () => runtime.module.loadPyodide(boot));
  const errors = []; // loadPackage reports failures through errorCallback rather than rejecting
  const options = { messageCallback: () => {}, errorCallback: message => errors.push(message) };
  await step('dependencies', () => pyodide.loadPackage(manifest.wheels.map(w => new URL(w, manifestUrl).href), options));
  await step('bridge', () => pyodide.loadPackage(new URL(manifest.wheel, manifestUrl).href, options));
  if (errors.length) throw new Error(errors.join(' '));
  wire = await step('import', () => pyodide.pyimport('webmcp_bridge.lab.wire'));
  entry = wire.invoke;
  dispatch = wire.event;
  // entered as the calls are (callPromising), so that Python sees whether run_sync can wait there
  const begin = wire.start;
  const mode = typeof begin.callPromising === 'function' ? await begin.callPromising() : begin();
  begin.destroy();
  tell({ type: 'ready', mode, isolated, steps, timeOrigin: performance.timeOrigin,
         runtime: { source: runtime.source, url: runtime.url.href } });
  for (const message of early.splice(0)) handle(message);
}

async function invoke({ id, name, text }) {
  try {
    // entered through callPromising, so that JSPI's run_sync can suspend inside the call
    let answer = typeof entry.callPromising === 'function' ? await entry.callPromising(name, text) : entry(name, text);
    if (typeof answer !== 'string') answer = await answer;
    tell({ type: 'invoked', id, text: String(answer) });
  } catch (error) {
    tell({ type: 'invoked', id, error: String((error && error.message) || error) });
  }
}

function handle(message) {
  if (message.type === 'go') {
    goNow();
  } else if (message.type === 'ping') {
    tell({ type: 'pong', id: message.id }); // answered whenever this thread is free: not while Python holds it
  } else if (message.type === 'answer') {
    const resolve = waiting.get(message.id);
    waiting.delete(message.id);
    if (resolve) resolve(message.text);
  } else if (!wire) {
    early.push(message);
  } else if (message.type === 'event') {
    dispatch(message.text);
  } else if (message.type === 'invoke') {
    invoke(message);
  }
}

self.onmessage = event => {
  const message = event.data;
  if (message.type !== 'start') return handle(message);
  start(message).catch(error => tell({ type: 'failed', message: String((error && error.stack) || error) }));
};
