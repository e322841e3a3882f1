// The worker spike's dedicated worker: Python (Pyodide + the bridge's wheels) off the page's main thread.
// Messages from the page: {type: 'start', snapshotKey?, makeSnapshot?, skipImports?}, {type: 'snapshot', id, key}, {type: 'dispatch', id, name,
// args}, {type: 'time', id, kind: 'sync'|'async'|'jspi'|'jspi_task', answer, n}, {type: 'asyncReply', id, text}.
// To the page: {type: 'ready', steps, tools, memory}, {type: 'answer', id, text}, {type: 'sync', name} (the page
// writes the answer into the shared buffer and notifies), {type: 'async', id, name}, {type: 'error', message}.
import { startPython, build, keep } from './boot.mjs';

let pyodide = null;
// synchronous crossing: ctl[0] is 0 while the page has not answered, 1 once it has; ctl[1] the answer's bytes
let ctl = null;
let data = null;
const decoder = new TextDecoder();

// syncCall(name): the page's answer, waiting on the shared buffer (the worker's thread blocks; the page's does not)
self.syncCall = name => {
  Atomics.store(ctl, 0, 0);
  postMessage({ type: 'sync', name });
  Atomics.wait(ctl, 0, 0);
  return decoder.decode(data.slice(0, Atomics.load(ctl, 1)));
};

// asyncCall(name): a promise of the page's answer, by message
let sequence = 0;
const waiting = new Map();
self.asyncCall = name => new Promise(resolve => {
  const id = ++sequence;
  waiting.set(id, resolve);
  postMessage({ type: 'async', id, name });
});

self.onmessage = async event => {
  const message = event.data;
  try {
    if (message.type === 'start') {
      if (typeof SharedArrayBuffer !== 'undefined' && self.crossOriginIsolated) {
        ctl = new Int32Array(new SharedArrayBuffer(8));
        data = new Uint8Array(new SharedArrayBuffer(4 << 20));
      }
      const started = await startPython(message);
      pyodide = started.pyodide;
      const tools = message.makeSnapshot ? 0 : await build(pyodide, 100);
      postMessage({ type: 'ready', steps: started.steps, tools, memory: pyodide._module.HEAP8.length, snapshot: started.snapshot,
                    ctl, data, isolated: self.crossOriginIsolated });
    } else if (message.type === 'snapshot') {
      postMessage({ type: 'answer', id: message.id, size: await keep(message.key, pyodide.makeMemorySnapshot()) });
    } else if (message.type === 'dispatch') {
      const fn = pyodide.globals.get('dispatch');
      let answer = fn(message.name, message.args);
      fn.destroy();
      if (typeof answer !== 'string') answer = await answer;
      postMessage({ type: 'answer', id: message.id, text: answer });
    } else if (message.type === 'ping') {
      postMessage({ type: 'answer', id: message.id, text: '' });
    } else if (message.type === 'time') {
      const fn = pyodide.globals.get(`time_${message.kind}`);
      const target = message.kind === 'sync' ? self.syncCall : self.asyncCall;
      // run_sync (JSPI) needs Python entered through callPromising
      let text = message.kind.startsWith('jspi') ? fn.callPromising(target, message.answer, message.n) : fn(target, message.answer, message.n);
      if (typeof text !== 'string') text = await text;
      fn.destroy();
      postMessage({ type: 'answer', id: message.id, text });
    } else if (message.type === 'asyncReply') {
      const resolve = waiting.get(message.id);
      waiting.delete(message.id);
      resolve(message.text);
    }
  } catch (error) {
    postMessage({ type: 'error', message: String(error && error.stack || error) });
  }
};
