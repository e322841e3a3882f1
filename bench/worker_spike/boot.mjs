// The worker spike's start-up of Python (bench/worker_spike/README in docs/WORKER.md): the same runtime and
// wheels as the bridge's loader (read from the built site's bridge.json), on whichever thread imports this module.
// Not part of the product. startPython({yieldToPage, snapshot, makeSnapshot}) resolves to {pyodide, steps}, steps
// being [name, start ms, end ms] (performance.now() of this thread) of each stage.
const MANIFEST = '/extensions/jupyterlab-webmcp-bridge/static/bridge.json';

export async function startPython({ yieldToPage = null, snapshotKey = null, makeSnapshot = false, skipImports = false } = {}) {
  const steps = [];
  const info = {}; // snapshotReadMs, snapshotBytes when started from a snapshot
  let snapshot = null;
  if (snapshotKey) {
    const began = performance.now();
    snapshot = await fetchKept(snapshotKey);
    if (!snapshot) throw new Error(`no snapshot ${snapshotKey} in this context (run make-* first)`);
    info.snapshotReadMs = Math.round(performance.now() - began);
    info.snapshotBytes = snapshot.byteLength;
  }
  const step = async (name, work) => {
    const began = performance.now();
    const result = await work();
    steps.push([name, began, performance.now()]);
    if (yieldToPage) await yieldToPage();
    return result;
  };
  const manifestUrl = new URL(MANIFEST, self.location.origin);
  const manifest = await step('manifest', async () => (await fetch(manifestUrl)).json());
  const runtimeUrl = new URL(manifest.pyodide, manifestUrl);
  const module = await step('import', () => import(runtimeUrl.href));
  const options = { indexURL: new URL('.', runtimeUrl).href };
  if (snapshot) options._loadSnapshot = snapshot;
  if (makeSnapshot) options._makeSnapshot = true;
  const pyodide = await step('loadPyodide', () => module.loadPyodide(options));
  const wheels = [...manifest.wheels, manifest.wheel].map(w => new URL(w, manifestUrl).href);
  if (snapshot || makeSnapshot) {
    // loadPackage records what it loaded in the runtime's own state, which makeMemorySnapshot then refuses
    // ("Unexpected hiwire entry"): the snapshot modes unpack the same wheels with unpackArchive instead
    const buffers = await step('fetch wheels', () => Promise.all(wheels.map(async url => (await fetch(url)).arrayBuffer())));
    for (const [index, buffer] of buffers.entries()) await step(`unpack ${wheels[index].split('/').pop().split('-')[0]}`, () => pyodide.unpackArchive(buffer, 'wheel'));
  } else {
    const errors = [];
    const quiet = { messageCallback: () => {}, errorCallback: message => errors.push(message) };
    await step('dependencies', () => pyodide.loadPackage(wheels.slice(0, -1), quiet));
    await step('bridge', () => pyodide.loadPackage(wheels.slice(-1), quiet));
    if (errors.length) throw new Error(errors.join(' '));
  }
  const source = await (await fetch(new URL('workload.py', import.meta.url))).text();
  await step('workload', () => pyodide.runPython(source));
  await step('harness', () => writeHarness(pyodide));
  if (!skipImports) {
    const names = pyodide.globals.get('steps')().toJs();
    const importStep = pyodide.globals.get('import_step');
    if (yieldToPage) {
      // the product's main-thread start: one import per task, a yield to the page between them
      for (const name of names) await step(`import ${name}`, () => importStep(name));
    } else {
      await step('imports', () => { for (const name of names) importStep(name); });
    }
    importStep.destroy();
  }
  return { pyodide, steps, snapshot: info };
}

// The test harness's in-memory host (tests/, not in the wheel) that build() makes its notebook in: the files
// workload.py's HARNESS names, served by run.py under /_spike/harness/, written to its HARNESS_DIR.
async function writeHarness(pyodide) {
  const dir = pyodide.globals.get('HARNESS_DIR');
  const names = pyodide.globals.get('HARNESS');
  try {
    const read = async name => (await fetch(new URL(`harness/${name}`, import.meta.url))).text();
    const texts = await Promise.all(names.toJs().map(async name => [name, await read(name)]));
    pyodide.FS.mkdirTree(dir);
    for (const [name, text] of texts) pyodide.FS.writeFile(`${dir}/${name}`, text);
  } finally {
    names.destroy();
  }
}

// build(pyodide, cells): the bridge over an in-memory notebook of `cells` cells, schemas generated; the tool count.
export async function build(pyodide, cells) {
  const fn = pyodide.globals.get('build');
  try { return await fn(cells); } finally { fn.destroy(); }
}

// The answers a host method returns in the crossing measurements, by name: small (a cell's facts), cells (100
// cells' ids, types and sources as notebook.js returns them, made afresh each time), big (about 1 MB of text).
const CELLS = Array.from({ length: 100 }, (_, i) => ({ id: `cell-${i}`, cell_type: 'code', source: `total = sum(range(${i}))\nprint(total)` }));
const BIG = 'x'.repeat(1 << 20);
export function answer(name) {
  if (name === 'small') return JSON.stringify({ id: 'cell-1', cell_type: 'code', revision: 17, dirty: false });
  if (name === 'cells') return JSON.stringify(CELLS);
  if (name === 'big') return BIG;
  return '';
}

export const CALL_ARGS = JSON.stringify({ notebookPath: 'bench.ipynb', startIndex: 0, endIndex: 100, includeOutputs: true });

// IndexedDB (pages and workers have it): where a snapshot made in this browser context is kept for the next page.
// keep(key, bytes) resolves to the bytes kept; fetchKept(key) to the bytes, or null.
function db() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open('worker-spike', 1);
    request.onupgradeneeded = () => request.result.createObjectStore('snapshots');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}
export async function keep(key, bytes) {
  const d = await db();
  return new Promise((resolve, reject) => {
    const tx = d.transaction('snapshots', 'readwrite');
    tx.objectStore('snapshots').put(bytes, key);
    tx.oncomplete = () => resolve(bytes.byteLength); tx.onerror = () => reject(tx.error);
  });
}
export async function fetchKept(key) {
  const d = await db();
  return new Promise((resolve, reject) => {
    const request = d.transaction('snapshots').objectStore('snapshots').get(key);
    request.onsuccess = () => resolve(request.result || null);
    request.onerror = () => reject(request.error);
  });
}
