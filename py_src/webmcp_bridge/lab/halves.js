// The JS halves on the page for the bridge's worker (docs/WORKER.md, "The remote half"): the worker's Python
// (lab/remote_half.py, through lab/ffi.py load_half) asks for a half by name; this evaluates it on the page's main
// thread, attaches it once to the loader's ctx, keeps it in a table by number and runs the worker's calls of its
// methods. It carries data only: what to call is the worker's Python's decision.
//
// createHalves({ctx (what attach(ctx) receives; null: no half may be attached), sourcesUrl (the halves' sources, same
// origin: the labextension's static/halves/), post(text) (an event to the worker: a callback's call)}) -> {owns(call),
// respond(call), respondAsync(call) (lab/worker.js's responders), dispose() (the halves undo their work once the worker
// is gone), crossings(name) (a half's calls as JSON text {method: count}, also window.webmcpBridge.crossings[name])}.
// Requests (lab/messages.py's envelope; args positional):
//   {target: "halves", method: "load", args: [package, filename, attach]} -> {value: n}: fetched once per file,
//     evaluated as one expression (sourceURL webmcp-bridge/<package path>/<filename>), attached when asked, its
//     methods counted under <filename without .js>; answered by a promise (the worker waits, the page does not).
//   {target: "half:<n>", method, args: [JSON value | {callback: k}]} -> {value: a JSON value}; {callback: k} is passed
//     as a function posting {event: "callback", id: k, args}. A promise answers an asynchronous request once settled
//     and is refused to a synchronous one.
// Errors (worker.js wireError, hostError): "wire" for a request this cannot run (unknown half or method, bad name,
// failed fetch, no attach, an answer not JSON, a promise to a synchronous request), "host" for what the half threw.
import { crossingCounter } from './crossings.js';
import { hostError, isThenable, wireError } from './worker.js';

const PACKAGE = /^[a-z_]+(\.[a-z_]+)*$/;
const FILE = /^[a-z_]+\.js$/;
const METHOD = /^[A-Za-z$][A-Za-z0-9_$]*$/;
const PREFIX = 'half:';

class Refused extends Error {}

const failure = error => (error instanceof Refused ? wireError(error.message) : hostError(error));

// whether `value` is a JSON value (null, a boolean, a finite number, a string, arrays and plain objects of them)
function isJson(value) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.values(value).every(isJson);
}

export function createHalves({ ctx = null, sourcesUrl, post }) {
  const base = new URL(sourcesUrl, location.href);
  const sources = new Map(); // URL -> promise of the source text
  const table = new Map(); // n -> {name, half}
  const counters = new Map(); // name -> crossingCounter
  let next = 0;

  const source = (pkg, file) => {
    const url = new URL(`${pkg.replaceAll('.', '/')}/${file}`, base);
    if (url.origin !== location.origin || !url.href.startsWith(base.href)) throw new Refused(`${url.href} is not under ${base.href}`);
    if (!sources.has(url.href)) {
      const text = fetch(url.href).then(response => {
        if (!response.ok) throw new Refused(`${url.pathname}: HTTP ${response.status}`);
        return response.text();
      });
      sources.set(url.href, text);
      text.catch(() => sources.delete(url.href)); // a failed fetch is tried again next time
    }
    return sources.get(url.href);
  };

  async function load(args) {
    const [pkg, file, attach] = Array.isArray(args) ? args : [];
    if (typeof pkg !== 'string' || !PACKAGE.test(pkg) || typeof file !== 'string' || !FILE.test(file))
      throw new Refused(`${pkg}/${file} is not a half's name`);
    const text = await source(pkg, file);
    // indirect eval: the global scope, as load_half's run_js; the trailing comment leaves the expression's value
    const half = (0, eval)(`${text}\n//# sourceURL=webmcp-bridge/${pkg.replaceAll('.', '/')}/${file}\n`);
    if (half === null || typeof half !== 'object')
      throw new Refused(`${file} is not one expression whose value is an object`);
    if (attach === true) {
      if (ctx === null) throw new Refused(`${file} asks to be attached, and the page has no ctx`);
      if (typeof half.attach !== 'function') throw new Refused(`${file} has no attach(ctx)`);
      half.attach(ctx); // not counted, as on the main thread
    }
    const name = file.slice(0, -3);
    let counter = counters.get(name);
    if (!counter) {
      counter = crossingCounter();
      counters.set(name, counter);
      const status = globalThis.window?.webmcpBridge;
      if (status && status.crossings) status.crossings[name] = counter.json;
    }
    counter.countAll(half);
    table.set(++next, { name, half });
    return { value: next };
  }

  const callbackOf = id => (...args) => {
    let list;
    try { list = JSON.parse(JSON.stringify(args)) ?? []; } catch { list = []; } // cyclic or BigInt: no arguments
    post(JSON.stringify({ event: 'callback', id, args: list }));
  };

  // the half's method and its arguments as the half receives them
  function prepare(call) {
    const n = Number(String(call.target).slice(PREFIX.length));
    const entry = table.get(n);
    if (!entry) throw new Refused(`no half ${call.target}`);
    const method = String(call.method);
    if (!METHOD.test(method) || method === 'attach' || !Object.hasOwn(entry.half, method)
        || typeof entry.half[method] !== 'function')
      throw new Refused(`the half ${entry.name} has no method ${JSON.stringify(method)}`);
    if (!Array.isArray(call.args)) throw new Refused('a half\'s arguments are an array');
    const args = call.args.map(arg => (arg !== null && typeof arg === 'object' && !Array.isArray(arg)
      && Object.keys(arg).length === 1 && Number.isInteger(arg.callback) ? callbackOf(arg.callback) : arg));
    return { entry, method, args };
  }

  const answer = (entry, method, value) => {
    const result = value === undefined ? null : value;
    if (!isJson(result)) throw new Refused(`${entry.name}.${method} returned a value that is not JSON`);
    return { value: result };
  };

  const owns = call => call.target === 'halves' || String(call.target).startsWith(PREFIX);

  // a synchronous request: a value, or (load only) a promise of the answer; settle (an asynchronous request): a
  // method's promise is answered once it settled
  function respond(call, settle = false) {
    try {
      if (call.target === 'halves') {
        if (call.method !== 'load') throw new Refused(`halves has no method ${JSON.stringify(call.method)}`);
        return load(call.args).catch(failure);
      }
      const { entry, method, args } = prepare(call);
      let value;
      try { value = entry.half[method](...args); } catch (error) { return hostError(error); }
      if (!isThenable(value)) return answer(entry, method, value);
      if (settle) return Promise.resolve(value).then(done => answer(entry, method, done), hostError).catch(failure);
      Promise.resolve(value).catch(() => {}); // settles unobserved: its rejection is not the page's error
      throw new Refused(`${entry.name}.${method} returned a promise: await it (lab/ffi.py awaiting)`);
    } catch (error) {
      return failure(error);
    }
  }

  const respondAsync = async call => respond(call, true);

  // The worker is gone (the loader's watchdog): each half's dispose() undoes what it set up on the page, newest first
  // (a failure is logged, the others still go), so the next session starts on a clean page.
  function dispose() {
    for (const { name, half } of [...table.values()].reverse()) {
      if (typeof half.dispose !== 'function') continue;
      try { half.dispose(); } catch (error) { console.error(`[webmcp-bridge] disposing ${name}`, error); }
    }
    table.clear();
  }

  return { owns, respond, respondAsync, dispose, crossings: name => (counters.get(name)?.json() ?? '{}') };
}
