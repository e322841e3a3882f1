// The bridge's dedicated worker (docs/WORKER.md), started by worker.js: it starts Pyodide with the bridge's wheels
// (named by the labextension's bridge.json; the page's own runtime when it is the version the wheels are built for),
// then imports webmcp_bridge.lab.wire, which decides everything else. The messages are worker.js's (see there).
//
// self.webmcpBridgeWorker, read by webmcp_bridge/lab/wire.py:
//   syncSend(text)   a synchronous request: waits (Atomics.wait) for the page's answer in the shared buffers and
//                    returns its text; null when this worker is not cross-origin isolated
//   asyncSend(text)  an asynchronous request: a promise of the page's answer, sent by message
//   syncByMessage(text)  a synchronous request by message (the page answers it with its synchronous responder): a
//                    promise, which JSPI's run_sync waits on where there is no shared memory
//   isolated         self.crossOriginIsolated
// Every message to the page carries `memory`: this worker's wasm memory in bytes (0 before Pyodide is up).
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


// A held worker (start's hold) fetches and compiles only, until the page's "go": the page's own start is not slowed by
// Python's CPU while JupyterLab is still starting (docs/loader.md, 1a).
let goNow;
const going = new Promise(resolve => { goNow = resolve; });

// Pyodide's one WebAssembly.instantiateStreaming call, answered once: with the runtime's wasm compiled ahead while
// held (`compiled`: not compiling the same bytes again), and with the memory grown to `growTo` bytes right after the
// instance is made (a snapshot's size: the pinned Pyodide does not size the memory for a snapshot it restores).
function hookInstantiate({ compiled = null, growTo = 0 }) {
  const instantiateStreaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    WebAssembly.instantiateStreaming = instantiateStreaming;
    let made;
    if (compiled) {
      Promise.resolve(source).then(response => response.body?.cancel()).catch(() => {});
      const module = await compiled;
      made = { module, instance: await WebAssembly.instantiate(module, imports) };
    } else {
      made = await instantiateStreaming(source, imports);
    }
    const memory = made.instance.exports.memory;
    const missing = growTo - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / 65536));
    return made;
  };
}

// -- The memory snapshot (docs/loader.md, "A memory snapshot") ---------------------------------------------------------
// A site's build may add beside bridge.json a snapshot of this worker's Python after its imports (snapshot.json, the
// gzipped memory, the wheels' native side modules), made by this file in Chromium (`make`; sitebuild/snapshot.py); it
// replaces Python's initialisation and every import. The side modules must land at the addresses they had: each is
// loaded before the runtime starts, in the snapshot's order, when made and when restored. The wheels' files are
// unpacked again (the file system is not in a snapshot). A snapshot that does not fit fails at its first use, so
// Python is smoke-tested first and any failure starts Python normally; `ready` says which and why.
function preloading(runtime, sideModules) {
  const files = new Map(sideModules.map(side => [side.path, URL.createObjectURL(new Blob([side.bytes]))]));
  return async settings => {
    const create = (await import(new URL('pyodide.asm.mjs', runtime.url).href)).default;
    const locate = settings.locateFile;
    settings.locateFile = path => {
      const found = [...files.keys()].find(relative => String(path).endsWith(`/${relative}`));
      return found ? files.get(found) : locate(path);
    };
    settings.preRun = [...(settings.preRun || []), Module => {
      Module.addRunDependency('webmcp-bridge-side-modules');
      let chain = Promise.resolve();
      for (const side of sideModules) {
        const path = `${Module.API.sitePackages}/${side.path}`;
        chain = chain.then(() => Module.loadDynamicLibrary(path, { loadAsync: true, global: true, nodelete: true }));
      }
      chain.finally(() => Module.removeRunDependency('webmcp-bridge-side-modules')).catch(() => {});
    }];
    return create(settings);
  };
}

// the bytes at url, gunzipped when asked
const bytesOf = async (url, gzip = false) => {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${new URL(url).pathname}: HTTP ${response.status}`);
  const body = gzip ? new Response(response.body.pipeThrough(new DecompressionStream('gzip'))) : response;
  return new Uint8Array(await body.arrayBuffer());
};
const sha256 = async bytes => [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
  .map(b => b.toString(16).padStart(2, '0')).join('');

// The snapshot of this site, checked against the wheels it was made with (they are fetched anyway, for their files):
// {info, memory, sideModules, wheels: [bytes]} or {reason} when there is none or it does not fit.
async function fetchSnapshot(snapshotUrl, manifest, manifestUrl) {
  let info;
  try {
    const response = await fetch(snapshotUrl);
    if (!response.ok) return { reason: 'none in this site' };
    info = await response.json();
  } catch {
    return { reason: 'none in this site' };
  }
  const urls = [...manifest.wheels, manifest.wheel].map(w => new URL(w, manifestUrl).href);
  const [memory, wheels, sides] = await Promise.all([
    bytesOf(new URL(info.memory, snapshotUrl).href, true),
    Promise.all(urls.map(url => bytesOf(url))),
    Promise.all(info.sideModules.map(side => bytesOf(new URL(side.file, snapshotUrl).href))),
  ]);
  const names = [...manifest.wheels, manifest.wheel].map(w => w.split('/').pop());
  const hashes = await Promise.all(wheels.map(sha256));
  const stale = names.find((name, i) => info.wheels[name] !== hashes[i]);
  if (stale || names.length !== Object.keys(info.wheels).length) return { reason: `made for other wheels (${stale ?? 'their list'})` };
  if (memory.length !== info.bytes) return { reason: 'its memory is not the size it was made with' };
  return { info, memory, wheels, sideModules: info.sideModules.map((side, i) => ({ path: side.path, bytes: sides[i] })) };
}

// the wheels' files into site-packages, as zip archives (the snapshot holds every module they load already)
function unpackWheels(runtime, wheels) {
  for (const bytes of wheels) runtime.unpackArchive(bytes, 'zip', { extractDir: runtime._api.sitePackages });
}

async function start({ manifestUrl, runtimeUrl, hold, snapshotUrl = null, make = null }) {
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
  self.webmcpBridgeWorker = { syncSend: isolated ? syncSend : null, isolated,
                               asyncSend: text => send(text, false), syncByMessage: text => send(text, true) };
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
  // fetched while held too (it is fetching): the snapshot, when the site has one
  // (cross-origin isolated pages only: restored on a page without, where the worker's crossings wait with JSPI, its
  // Python's first stack switch never came back; the snapshot is made on an isolated page)
  let found = null;
  if (make) found = null; // making one: nothing to restore
  else if (!snapshotUrl) found = Promise.resolve({ reason: 'not asked for' });
  else if (!isolated) found = Promise.resolve({ reason: 'the page is not cross-origin isolated (JSPI crossings)' });
  else found = fetchSnapshot(snapshotUrl, manifest, manifestUrl).catch(error => ({
    reason: String((error && error.message) || error).split('\n')[0] }));
  let compiled = null;
  if (hold) {
    compiled = WebAssembly.compileStreaming(fetch(new URL('pyodide.asm.wasm', runtime.url)));
    compiled.catch(() => {}); // a failed compilation: Pyodide compiles the wasm itself, below
    await step('compile', async () => {
      await going;
      try { await compiled; } catch { compiled = null; /* Pyodide's own instantiation */ }
    });
  }
  // the standard library shipped beside bridge.json holds its bytecode (sitebuild/bytecode.py): nothing is compiled at
  // start, whichever runtime of the pinned version runs
  const boot = { indexURL: new URL('.', runtime.url).href };
  if (manifest.stdlib) boot.stdLibURL = new URL(manifest.stdlib, manifestUrl).href;
  if (make) return makeSnapshot(runtime, boot, manifest, manifestUrl, make, step);
  const restore = found ? await step('snapshot', () => found) : null;
  let snapshot = { used: false, reason: restore?.reason ?? 'not asked for' };
  if (restore?.memory) {
    try {
      hookInstantiate({ compiled, growTo: restore.memory.length });
      pyodide = await step('loadPyodide', () => runtime.module.loadPyodide({
        ...boot, _loadSnapshot: restore.memory, createPyodideModule: preloading(runtime, restore.sideModules) }));
      await step('dependencies', async () => unpackWheels(pyodide, restore.wheels));
      // the smoke test: a snapshot that does not fit fails at its first use
      if (pyodide.runPython(SMOKE) !== true) throw new Error('the smoke test failed');
      snapshot = { used: true, reason: null };
    } catch (error) {
      pyodide = null;
      snapshot = { used: false, reason: `it did not restore: ${String((error && error.message) || error).split('\n').filter(Boolean).pop()}`.slice(0, 300) };
      console.warn(`[webmcp-bridge] the memory snapshot: ${snapshot.reason}; starting Python normally`);
    }
  }
  if (!pyodide) {
    if (compiled && !snapshot.reason?.startsWith('it did not restore')) hookInstantiate({ compiled });
    pyodide = await step('loadPyodide', () => runtime.module.loadPyodide(boot));
    const errors = []; // loadPackage reports failures through errorCallback rather than rejecting
    const options = { messageCallback: () => {}, errorCallback: message => errors.push(message) };
    await step('dependencies', () => pyodide.loadPackage(manifest.wheels.map(w => new URL(w, manifestUrl).href), options));
    await step('bridge', () => pyodide.loadPackage(new URL(manifest.wheel, manifestUrl).href, options));
    if (errors.length) throw new Error(errors.join(' '));
  }
  wire = await step('import', () => pyodide.pyimport('webmcp_bridge.lab.wire'));
  entry = wire.invoke;
  dispatch = wire.event;
  // entered as the calls are (callPromising), so that Python sees whether run_sync can wait there
  const begin = wire.start;
  const mode = typeof begin.callPromising === 'function' ? await begin.callPromising() : begin();
  begin.destroy();
  tell({ type: 'ready', mode, isolated, steps, timeOrigin: performance.timeOrigin, snapshot,
         runtime: { source: runtime.source, url: runtime.url.href } });
  for (const message of early.splice(0)) handle(message);
}

// the smoke test of a restored snapshot: pydantic-core's native module answers, the bridge's modules are there
// (and the state every page would otherwise share with the build that made the snapshot: random's seed, tempfile's
// name sequence, drawn again from the browser's entropy)
const SMOKE = `
import pydantic, random, sys, tempfile
random.seed()
tempfile._name_sequence = None
sys.modules["webmcp_bridge.lab.wire"] is not None and pydantic.TypeAdapter(list[int]).validate_python([1, "2"]) == [1, 2]
`;

// Make the snapshot (sitebuild/snapshot.py): Python started with the side modules preloaded as a restore will
// (`make.sideModules`: [{path, file}] relative to bridge.json), the wheels unpacked, then lab.session.warm() (every
// start-up import, the tools' schemas); the memory is posted back as {type: "snapshot", bytes} (transferred).
async function makeSnapshot(runtime, boot, manifest, manifestUrl, make, step) {
  const sideModules = await Promise.all(make.sideModules.map(async side => ({
    path: side.path, bytes: await bytesOf(new URL(side.file, manifestUrl).href) })));
  const wheels = await Promise.all([...manifest.wheels, manifest.wheel].map(w => bytesOf(new URL(w, manifestUrl).href)));
  pyodide = await step('loadPyodide', () => runtime.module.loadPyodide({
    ...boot, _makeSnapshot: true, createPyodideModule: preloading(runtime, sideModules) }));
  unpackWheels(pyodide, wheels);
  const session = pyodide.pyimport('webmcp_bridge.lab.session');
  session.warm();
  session.destroy();
  const bytes = pyodide.makeMemorySnapshot();
  postMessage({ type: 'snapshot', bytes, memory: bytes.length }, [bytes.buffer]);
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
