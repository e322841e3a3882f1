// webmcp-bridge loader: a hand-written JupyterLab federated-extension container (no bundler).
// It declares one plugin that registers the tools from the build's tools.json as soon as JupyterLab activates
// it, and starts the bridge's Pyodide only once JupyterLab is restored and the page is idle (or at once when
// an agent calls a tool), then hands the live application to Python: webmcp_bridge.lab.session.start(ctx).
// In a browser that gives a worker a synchronous way to call the page (cross-origin isolation's SharedArrayBuffer, or
// JSPI) that Pyodide runs in a dedicated worker (startInWorker, below; docs/WORKER.md, "Choosing the thread"), else on the page's
// main thread; ?webmcpBridgeThread=main keeps it on the main thread, ?webmcpBridgeThread=worker asks for the worker
// whatever the page has.
// Every URL is relative to this script's own URL (bridge.json next to it names the rest), so the extension
// works under any base path: a JupyterLite site's extensions/jupyterlab-webmcp-bridge/static/ or a JupyterLab server's
// lab/extensions/jupyterlab-webmcp-bridge/static/. The Python runtime is the page's own when it serves one this bridge can
// use (a JupyterLite site's Pyodide kernel runtime, same origin, same version), else the one shipped beside
// this file: either way no request leaves the page's origin.
(function () {
  'use strict';
  // NAME: the labextension's package name (package.json), the key JupyterLab looks the container up by, the folder
  // this script is served from and the plugin id's prefix; TAG: the prefix of console messages, window events and
  // the status item's id
  const NAME = 'jupyterlab-webmcp-bridge';
  const TAG = 'webmcp-bridge';

  // The pinned jupyterlite-pyodide-kernel (0.8.6) waits for each reply of its kernel worker with
  // `Atomics.waitAsync(...)` and reads `.value.then` on the answer; when the worker has already replied, the
  // answer is synchronous (`{async: false, value: "not-equal"}`), `.then` throws and the execute reply is lost
  // (the cell shows running forever). The demo build patches that expression in the kernel's chunk; on any
  // other site (a site author's `jupyter lite build`) the same fix is made here, before the kernel's code
  // reads `Atomics.waitAsync`: a synchronous answer is handed over as an asynchronous one already resolved to
  // the same value, which is what a correct caller sees a moment later on the asynchronous path.
  // Only a page that needs it gets it: one whose jupyter-config-data lists the Pyodide kernel's extension (a
  // JupyterLite page; JupyterLab's own pages have no such kernel and keep the browser's waitAsync untouched).
  // Degraded mode: a browser without Atomics.waitAsync (the kernel then uses its own fallback) or a page config that
  // cannot be read gets no wrapper. webmcpBridge.waitAsyncFix tells which: "installed", "not needed", "unavailable".
  const KERNEL_EXTENSION = '@jupyterlite/pyodide-kernel-extension';
  function pageRunsPyodideKernel() {
    try {
      const node = document.getElementById('jupyter-config-data');
      const listed = node ? JSON.parse(node.textContent).federated_extensions : null;
      return Array.isArray(listed) && listed.some(entry => entry && entry.name === KERNEL_EXTENSION);
    } catch {
      return false; // an unreadable page config: no wrapper (the degraded mode above)
    }
  }
  let waitAsyncFix = 'not needed';
  if (typeof Atomics === 'undefined' || typeof Atomics.waitAsync !== 'function') {
    waitAsyncFix = 'unavailable';
  } else if (Atomics.waitAsync.webmcpBridge) {
    waitAsyncFix = 'installed';
  } else if (pageRunsPyodideKernel()) {
    const waitAsync = Atomics.waitAsync;
    const answered = function (...args) {
      const answer = waitAsync.apply(Atomics, args);
      return answer.async ? answer : { async: true, value: Promise.resolve(answer.value) };
    };
    answered.webmcpBridge = true;
    answered.original = waitAsync; // for tests that replay the race on the kernel's own code
    Atomics.waitAsync = answered;
    waitAsyncFix = 'installed';
  }
  const KERNEL_PLUGIN = '@jupyterlite/pyodide-kernel-extension:kernel';
  // The page URL's query as it is now: JupyterLab rewrites the URL once it routes (?path= is consumed), and
  // ?toolsets= chooses the tools this page registers (below; Python reads the same text).
  const pageSearch = window.location.search;
  // The thread the bridge's Python is asked to run on, ?webmcpBridgeThread= (read once, as ?toolsets=): "worker" (a
  // dedicated worker, docs/WORKER.md, "Choosing the thread"), "main" (the page's main thread), anything else or none "auto": the
  // worker when the page can give it synchronous crossings (workerCanCross), else the main thread.
  const THREAD_PARAM = 'webmcpBridgeThread';
  const threadParam = new URLSearchParams(pageSearch).get(THREAD_PARAM);
  const threadAsked = threadParam === 'worker' || threadParam === 'main' ? threadParam : 'auto';
  // Whether a worker of this page can call the page synchronously, the condition of its Python's reads and writes
  // of the live notebook: shared memory (a cross-origin isolated page: Atomics.wait on a SharedArrayBuffer) or JSPI
  // (WebAssembly.Suspending: run_sync suspends the worker's Python on a message's answer). A worker has the page's
  // isolation and the same engine, so the page's answer is the worker's (worker_boot.js checks again there).
  function workerCanCross() {
    const shared = self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
    return shared || (typeof WebAssembly === 'object' && typeof WebAssembly.Suspending === 'function');
  }
  const NO_CROSSING = 'the page has neither cross-origin isolation (SharedArrayBuffer) nor JSPI';
  // where a site's build puts the worker's memory snapshot, relative to bridge.json (sitebuild/snapshot.py)
  const SNAPSHOT = 'snapshot/snapshot.json';
  const script = document.currentScript || document.querySelector(`script[src*="${NAME}/static/remoteEntry"]`);
  const manifestUrl = new URL('bridge.json', script.src);
  // tools: how many registrations the browser accepted; failures: [{name, reason}] of those it refused
  // diagnostics: [{name, kind, severity, reason}] of the site's own contributions (Python: setDiagnostics);
  // outputSchema: whether the browser keeps the tools' outputSchema; resources: MCP resource templates registered;
  // prompts: MCP prompts registered
  // thread: where the bridge's Python runs ("main", "worker"; null until it starts), threadAsked: what the URL asked
  // ("auto", "worker", "main");
  // worker: the worker's crossing mode and why it was left ({mode: "sab" | "jspi" | "none", fallback: reason | null})
  // step: the start-up step Python is at while it starts ("runtime", "packages", "tools"; null before it starts and
  // once it is up), shown by the status item and the placeholder panel
  const status = { state: 'loading', tools: 0, failures: [], reason: null, timings: { steps: [] }, recent: [], mode: 'direct', waiting: 0, runtime: null, polyfill: null,
                   diagnostics: [], outputSchema: null, resources: 0, prompts: 0, thread: null, threadAsked, worker: null, step: null };
  // crossings: per JS half, a function giving the calls Python made into it (JSON text {method: count}), counted by
  // the bridge's one crossing counter (crossings.js beside this file, imported when Python starts): as "loader" the
  // answers Python hands back to execute ("result"), each JS half by Python as it loads it (lab/ffi.py load_half,
  // through countCalls(half name, half object), which counts the object's methods in place; in worker mode
  // halves.js counts them the same way). The loader's own functions in ctx are not counted: Python reaches them only
  // through a half (webmcp.js, session.js...), whose call is the one crossing
  let loaderCrossings = null; // the loader's counter, once imported
  window.webmcpBridge = { status, waitAsyncFix, crossings: {} };
  // A counter that counts nothing, for a page where crossings.js cannot be imported (a host that serves it with
  // another MIME type): the bridge still starts, its crossings are not reported.
  const noCounter = () => ({ count() {}, counted: (name, fn) => fn, countAll: api => api, json: () => '{}' });
  async function importCrossings() {
    if (loaderCrossings) return loaderCrossings;
    let crossingCounter = noCounter;
    try {
      ({ crossingCounter } = await import(new URL('crossings.js', script.src).href));
    } catch (error) {
      console.warn(`[${TAG}] crossings.js did not load; crossings are not counted`, error);
    }
    // not writable: a script of the page cannot put its own function where every half loaded later is handed. One
    // counter per half's name: a half loaded again (session.js by session.py, settings.py and others) adds to it.
    const counters = new Map();
    Object.defineProperty(window.webmcpBridge, 'countCalls', {
      value: (name, api) => {
        const key = String(name);
        if (!counters.has(key)) counters.set(key, crossingCounter());
        counters.get(key).countAll(api);
        window.webmcpBridge.crossings[key] = counters.get(key).json;
      },
      writable: false, configurable: false, enumerable: true,
    });
    loaderCrossings = crossingCounter();
    window.webmcpBridge.crossings.loader = loaderCrossings.json;
    return loaderCrossings;
  }
  let statusNode = null;
  // The numbers the loader applies (how many recent calls it lists, how much of a reason it shows) are Python's
  // (webmcp_bridge/core/limits.py LOADER_BOUNDS), written into bridge.json by the build; until bridge.json is
  // read nothing is cut (the only reason then is the browser's own short error for bridge.json itself).
  let bounds = null;

  // The start-up's steps as the person reads them (the status item, the placeholder panel): each of the loader's and
  // the worker's stages belongs to one
  const STEPS = [['runtime', 'Python runtime'], ['packages', 'packages'], ['tools', 'tools']];
  const STEP_OF = { manifest: 'runtime', runtime: 'runtime', compile: 'runtime', snapshot: 'runtime', loadPyodide: 'runtime',
                    dependencies: 'packages', bridge: 'packages', import: 'tools', session: 'tools' };
  // startStep(stage): a start-up stage begins (a loader stage, a worker step, or "session": Python's own start)
  function startStep(stage) {
    const step = STEP_OF[stage];
    if (!step || status.step === step || status.state !== 'loading') return;
    status.step = step;
    render();
  }

  function render() {
    drawPlaceholder();
    if (!statusNode) return;
    const { state, tools, reason } = status;
    let text = `WebMCP: ${state}`;
    if (state === 'loading' && status.step) text = `WebMCP: starting (${STEPS.find(([key]) => key === status.step)[1]})…`;
    else if (state === 'loading') text = 'WebMCP: loading…';
    else if (state === 'ready' && status.failures.length) text = `WebMCP: ready (${tools} of ${tools + status.failures.length} tools)`;
    else if (state === 'ready') text = `WebMCP: ready (${tools} tools)`;
    else if (reason) text += ` (${reason})`;
    if (status.mode === 'propose') text += ' · Propose'; // the person's Direct/Propose switch (Python: setMode)
    if (status.waiting > 0) text += ` · ${status.waiting} waiting`;
    const failed = status.diagnostics.filter(d => d.severity === 'error').length;
    if (failed) text += ` · ${failed} contribution${failed === 1 ? '' : 's'} failed`; // the site's own tool files
    // written only when it differs: each write is a change to the page that makes the browser recompute its
    // styles, and a call that changes nothing shown must not cost a large notebook's page that work
    if (statusNode.textContent !== text) statusNode.textContent = text; // never innerHTML
    const refused = status.failures.map(f => `${f.name} not registered: ${f.reason}`);
    const waiting = state === 'loading' && tools > 0
      ? [status.step ? `${tools} tools registered; calls wait for the bridge to start` : `${tools} tools registered; the bridge starts when the page is idle (a call starts it at once and waits for it)`]
      : [];
    const problems = status.diagnostics.map(d => `${d.severity} (${d.kind}) ${d.name}: ${d.reason}`);
    // how the worker's Python started, after the recent calls: from the site's memory snapshot or not, its restarts
    const started = [];
    const snapshot = status.worker?.snapshot;
    if (snapshot && state !== 'loading') {
      started.push(snapshot.used ? 'started from the site\'s memory snapshot' : `started normally: the memory snapshot: ${snapshot.reason}`);
    }
    const restarted = status.worker?.restarted;
    if (restarted && state !== 'loading') started.push(`restarted ${status.worker.restarts}×, last: ${restarted.reason}`);
    const title = [reason || text, ...waiting, ...refused, ...problems, ...status.recent, ...started].join('\n'); // recent calls, newest first
    if (statusNode.title !== title) statusNode.title = title;
    if (statusNode.dataset.state !== state) statusNode.dataset.state = state;
  }

  // setStatus(state, detail): detail is a short reason (optional) for a state other than "ready". "ready" is
  // shown once every registration has settled, with the count the browser really accepted (Python's count,
  // the detail then, is what it asked for); a later setStatus wins over a "ready" still waiting.
  let statusVersion = 0;
  function setStatus(state, detail) {
    const version = ++statusVersion;
    if (String(state) === 'ready') {
      registrationsSettled().then(() => {
        if (version !== statusVersion) return;
        status.state = 'ready';
        status.reason = null;
        status.step = null;
        render();
      });
      return;
    }
    status.state = String(state);
    if (status.state !== 'loading') status.step = null;
    status.reason = detail == null ? null : String(detail);
    render();
  }

  const cut = (text, key) => (bounds ? text.slice(0, bounds[key]) : text);

  // reportCall(line): the one-line report of a tool call ("tool outcome N ms"), from Python's after-call hook:
  // handed back with the call's answer, or (a call that went pending) reported later; bounds.recentCalls are kept.
  function reportCall(line) {
    status.recent = [String(line), ...status.recent].slice(0, bounds ? bounds.recentCalls : undefined);
    render();
  }

  // setDiagnostics(json): Python reports the problems of the site's own contributions (the whole list each time).
  function setDiagnostics(json) {
    status.diagnostics = JSON.parse(json);
    render();
  }

  // emit(type, detailJson): Python's call and kernel-run events, dispatched on window as 'webmcp-bridge:call' and
  // 'webmcp-bridge:run' CustomEvents whose detail is plain data (parsed JSON) for a site's own scripts.
  const EVENT_TYPES = new Set(['call', 'run']);
  function emit(type, detailJson) {
    dispatchEvent(String(type), JSON.parse(detailJson));
  }
  function dispatchEvent(type, detail) {
    if (!EVENT_TYPES.has(type)) return;
    try {
      window.dispatchEvent(new CustomEvent(`${TAG}:${type}`, { detail }));
    } catch (error) { console.error(`[${TAG}] event listener`, error); }
  }

  // setMode(mode, waiting): Python reports the Direct/Propose mode and how many proposals wait for the person.
  function setMode(mode, waiting) {
    status.mode = String(mode);
    status.waiting = Number(waiting) || 0;
    render();
  }

  function fail(error) {
    console.error(`[${TAG}]`, error);
    // a Python error's message is its traceback: its last line names the exception
    const lines = String((error && error.message) || error).split('\n').filter(line => line.trim());
    const line = lines[0] && lines[0].startsWith('Traceback') ? lines[lines.length - 1] : lines[0];
    setStatus('failed', cut((line || 'unknown error').trim(), 'failureChars'));
  }

  // -- The Agent panel's placeholder ---------------------------------------------------------------------------
  // The Agent panel is Python's (lab/ui/panel.py, drawn by lab/ui/dom.js) and comes once Python is up, seconds after
  // JupyterLab. From activation until then this placeholder stands in its place: a widget with the panel's id, title and
  // rank (bridge.json's panel) in the right sidebar, showing the start-up's steps (STEPS) and then the failure, if the
  // bridge does not start. dom.js's createPanel takes the widget over through ctx.takePanelPlaceholder (below):
  // the same tab, open or closed as the person left it, gets the panel's content. Plain text and JupyterLab's theme
  // variables only; the placeholder draws nothing Python or an agent wrote.
  let placeholder = null; // {widget, line, items: Map(step -> node)} until the panel takes it over
  function addPlaceholder(app, widgets, panel) {
    if (!widgets || !panel || !app.shell || typeof app.shell.add !== 'function') return;
    const widget = new widgets.Widget();
    widget.id = String(panel.id);
    widget.title.label = String(panel.label);
    widget.title.caption = String(panel.caption);
    widget.addClass(`${TAG}-starting`);
    const body = document.createElement('div');
    body.setAttribute('role', 'status');
    body.style.cssText = 'padding: 12px; color: var(--jp-ui-font-color1); font-family: var(--jp-ui-font-family);'
      + ' font-size: var(--jp-ui-font-size1); line-height: 1.6;';
    const heading = document.createElement('h2');
    heading.textContent = String(panel.label);
    heading.style.cssText = 'font-size: var(--jp-ui-font-size2); font-weight: 600; margin: 0 0 8px;';
    const line = document.createElement('p');
    line.style.margin = '0 0 8px';
    const list = document.createElement('ol');
    list.style.cssText = 'margin: 0; padding-left: 20px; color: var(--jp-ui-font-color2);';
    const items = new Map();
    for (const [key] of STEPS) {
      const item = document.createElement('li');
      items.set(key, item);
      list.appendChild(item);
    }
    body.append(heading, line, list);
    widget.node.appendChild(body);
    placeholder = { widget, line, items };
    drawPlaceholder();
    app.shell.add(widget, 'right', { rank: Number(panel.rank) });
  }
  // The placeholder's text, from the status: the step Python is at, done steps checked, or the failure.
  function drawPlaceholder() {
    if (!placeholder) return;
    const { line, items } = placeholder;
    const at = STEPS.findIndex(([key]) => key === status.step);
    let text = 'The agent bridge starts when the page is idle, or at once when an agent calls a tool.';
    if (status.state === 'failed') text = `The agent bridge did not start: ${status.reason || 'unknown error'}`;
    else if (status.state === 'loading' && status.worker?.restarted) text = `The agent bridge is restarting: ${status.reason}.`;
    else if (status.state !== 'loading') text = 'The agent bridge is up; its panel is loading…';
    else if (at >= 0) text = 'The agent bridge is starting…';
    if (line.textContent !== text) line.textContent = text;
    STEPS.forEach(([key, label], index) => {
      const done = status.state === 'ready' || status.state === 'unavailable' || (at >= 0 && index < at);
      const mark = done ? '✓' : index === at && status.state === 'loading' ? '…' : '';
      const shown = `${label[0].toUpperCase()}${label.slice(1)}${mark ? ` ${mark}` : ''}`;
      const item = items.get(key);
      if (item.textContent !== shown) item.textContent = shown;
      item.style.fontWeight = index === at && status.state === 'loading' ? '600' : '';
    });
  }
  // ctx.takePanelPlaceholder(): the placeholder's widget, handed to dom.js's createPanel (once; null afterwards): it
  // empties it, gives it the panel's content and keeps it where it is.
  function takePanelPlaceholder() {
    if (!placeholder) return null;
    const { widget } = placeholder;
    placeholder = null;
    widget.removeClass(`${TAG}-starting`);
    widget.node.replaceChildren();
    return widget;
  }

  let manifestData = null; // bridge.json, once read
  const manifestReady = fetch(manifestUrl).then(response => response.json()).then(manifest => {
    bounds = manifest.bounds;
    manifestData = manifest;
    return manifest;
  });
  // fetched now, so the plugin registers the tools the moment JupyterLab activates it
  // (tools.json: {definitions, toolsets}, see registerStaticTools)
  const toolsReady = manifestReady.then(manifest => fetch(new URL(manifest.tools, manifestUrl))).then(response => response.json());
  toolsReady.catch(() => {}); // reported by registerStaticTools

  // The page's jupyter-config-data (JupyterLite merges the site's jupyter-lite.json into it; {} if none).
  function pageConfig() {
    try {
      const node = document.getElementById('jupyter-config-data');
      return node ? JSON.parse(node.textContent) : {};
    } catch (error) {
      console.warn(`[${TAG}] reading jupyter-config-data`, error);
      return {};
    }
  }

  // Opt-in MCP-B runtime: on a site whose config sets "webmcpBridgePolyfill": true, in a browser without native
  // WebMCP, run the @mcp-b/global script shipped beside this file before any tool is registered. Its tab transport
  // accepts only this page's own origin; its iframe transport is off: in a frame, @mcp-b/global would otherwise
  // serve the parent page, whatever its origin (it announces itself to any parent and answers it). With it off,
  // a framed page serves only clients on its own window. Resolves to true when it was loaded.
  const polyfillReady = (async () => {
    if (document.modelContext || pageConfig().webmcpBridgePolyfill !== true) return false;
    const manifest = await manifestReady;
    window.__webModelContextOptions = {
      autoInitialize: true,
      transport: { tabServer: { allowedOrigins: [window.location.origin] }, iframeServer: false }
    };
    await new Promise((resolve, reject) => {
      const tag = document.createElement('script');
      tag.src = new URL(manifest.polyfill, manifestUrl).href;
      tag.onload = resolve;
      tag.onerror = () => reject(new Error('the MCP-B runtime did not load'));
      document.head.appendChild(tag);
    });
    status.polyfill = 'mcp-b';
    return true;
  })();
  polyfillReady.catch(error => console.error(`[${TAG}] MCP-B runtime`, error));

  // The runtime a JupyterLite page configures for its Pyodide kernel (jupyter-config-data, whose relative URLs
  // JupyterLite has already made absolute), if it is on this page's origin; else null (a JupyterLab server's
  // page has no such setting; a kernel runtime on a CDN is not used, so the bridge stays offline).
  function pageRuntimeUrl() {
    try {
      const url = ((pageConfig().litePluginSettings || {})[KERNEL_PLUGIN] || {}).pyodideUrl;
      if (typeof url !== 'string' || !url) return null;
      const resolved = new URL(url, document.baseURI);
      return resolved.origin === window.location.origin ? resolved : null;
    } catch (error) {
      console.warn(`[${TAG}] reading the page's Pyodide setting`, error);
      return null;
    }
  }

  // The Pyodide module to start: the page's runtime when it is the version the shipped wheels are built for
  // (one download serves the kernel and the bridge), else the shipped one. Returns {module, url}.
  async function findRuntime(manifest) {
    const page = pageRuntimeUrl();
    if (page) {
      try {
        const module = await import(page.href);
        if (module.version === manifest.pyodideVersion) return { module, url: page, source: 'page' };
        console.info(`[${TAG}] the page's Pyodide is ${module.version}, not ${manifest.pyodideVersion}: using the shipped runtime`);
      } catch (error) {
        console.info(`[${TAG}] the page's Pyodide did not load (${error}): using the shipped runtime`);
      }
    }
    const url = new URL(manifest.pyodide, manifestUrl);
    return { module: await import(url.href), url, source: 'shipped' };
  }

  // loadPyodide's options: the runtime's folder, and the standard library shipped beside bridge.json, which holds the
  // bytecode of its sources (made at build time by the same runtime's Python, sitebuild/bytecode.py), so Python's
  // start compiles nothing, whichever runtime of the pinned version runs it (the page's own holds sources only)
  function startOptions(manifest, runtimeUrl) {
    const options = { indexURL: new URL('.', runtimeUrl).href };
    if (manifest.stdlib) options.stdLibURL = new URL(manifest.stdlib, manifestUrl).href;
    return options;
  }

  // -- When the bridge's Python starts ---------------------------------------------------------------------
  // Pyodide on the main thread costs the page its start-up work (fetching and instantiating the runtime, Python's
  // initialization, unpacking the wheels, importing pydantic and the bridge): started while JupyterLab starts,
  // it delayed JupyterLab's own start. So it starts after `app.restored`, once the page has had no long task
  // (>= 50 ms) for bounds.startQuietMs and the browser reports an idle period, at the latest
  // bounds.startLatestMs after restored, and at once when an agent calls a tool (the call waits for Python either
  // way). Between its stages the loader yields to the page (an idle callback; a plain task once a call waits), so
  // input and rendering are served between them. status.timings.startReason says which came first ("idle",
  // "call" or "timeout") and status.timings.steps the [name, start, end] of each stage (ms since navigation
  // start). The waits are Python's (core/limits.py LOADER_BOUNDS), read from bridge.json before the first one.
  let lastLongTaskEnd = 0;
  try {
    new PerformanceObserver(list => {
      for (const entry of list.getEntries()) lastLongTaskEnd = Math.max(lastLongTaskEnd, entry.startTime + entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch { /* no Long Tasks API: the idle callback alone decides */ }
  let callWaiting = false;
  let startNow;
  const startRequested = new Promise(resolve => { startNow = resolve; });
  // without requestIdleCallback: a task standing in for an idle period of 50 ms, the most one lasts
  const idleCallback = window.requestIdleCallback
    ? (fn, timeout) => window.requestIdleCallback(fn, { timeout })
    : (fn, timeout) => setTimeout(() => fn({ didTimeout: false, timeRemaining: () => 50 }), Math.min(timeout, 50));

  // Resolves "idle" once the page has been quiet for bounds.startQuietMs in an idle period, "timeout"
  // bounds.startLatestMs after `since` (bridge.json has been read: start() waits for it).
  function pageIdle(since) {
    return new Promise(resolve => {
      const check = deadline => {
        const now = performance.now();
        if (now - since >= bounds.startLatestMs) resolve('timeout');
        else if (now - lastLongTaskEnd >= bounds.startQuietMs && !deadline.didTimeout
                 && deadline.timeRemaining() >= bounds.startIdleLeftMs) resolve('idle');
        else setTimeout(() => idleCallback(check, bounds.startIdleWaitMs), bounds.startRecheckMs);
      };
      idleCallback(check, bounds.startIdleWaitMs);
    });
  }

  // One yield to the page between start-up stages: an idle callback, or a plain task while an agent's call waits.
  function yieldToPage() {
    return new Promise(resolve => {
      if (callWaiting) setTimeout(resolve, 0);
      else idleCallback(() => resolve(), bounds.stepIdleWaitMs);
    });
  }

  async function step(name, work) {
    startStep(name);
    const began = Math.round(performance.now());
    const result = await work();
    status.timings.steps.push([name, began, Math.round(performance.now())]);
    await yieldToPage();
    return result;
  }

  // The main-thread Pyodide with the bridge's wheels installed, started once (by start(), below).
  let pyodideReady = null;
  function startPyodide() {
    pyodideReady ??= (async () => {
      const manifest = await manifestReady;
      const runtime = await step('runtime', () => findRuntime(manifest));
      status.runtime = { source: runtime.source, url: runtime.url.href };
      const pyodide = await step('loadPyodide', () => runtime.module.loadPyodide(startOptions(manifest, runtime.url)));
      const errors = []; // loadPackage reports failures through errorCallback rather than rejecting
      const options = { messageCallback: () => {}, errorCallback: message => errors.push(message) };
      // the bridge's dependencies from the files shipped beside this script (by URL: whatever the runtime's lock holds)
      await step('dependencies', () => pyodide.loadPackage(manifest.wheels.map(wheel => new URL(wheel, manifestUrl).href), options));
      await step('bridge', () => pyodide.loadPackage(new URL(manifest.wheel, manifestUrl).href, options));
      if (errors.length) throw new Error(errors.join(' '));
      status.timings.pyodideReady = Math.round(performance.now());
      window.webmcpBridge.wasmMemoryBytes = () => pyodide._module.HEAP8.length; // Pyodide's wasm memory, for bench/
      return pyodide;
    })();
    return pyodideReady;
  }

  // WebMCP registration. The build writes the tools' definitions (generated from the same pydantic models) and
  // the toolsets as data to tools.json, so the tools this page's URL chooses are registered as soon as JupyterLab
  // activates this plugin (chosenTools below); a call that arrives
  // before Python is up waits for it. Python then connects: its own definitions are the truth (a tool
  // that differs is registered again, one it lacks is removed) and its dispatcher serves every call.
  // name -> {text: definition JSON, controller: AbortController, registered: Promise<boolean>, settled}; a
  // registration the browser refused is removed (a later connect tries it again) and kept in `refused`
  const tools = new Map();
  const refused = new Map(); // name -> reason
  // Python's dispatcher: one per session. A worker restarted by the watchdog (below) starts a new session, which
  // connects a new dispatcher: calls made meanwhile wait for that one.
  let connected = false; // Python has connected its dispatcher
  function deferred() {
    const made = {};
    made.promise = new Promise((resolve, reject) => { made.resolve = resolve; made.reject = reject; });
    made.promise.catch(() => {}); // each call reports it
    return made;
  }
  let dispatcherState = deferred();
  const dispatcherReady = () => dispatcherState.promise;
  const connectDispatcher = value => dispatcherState.resolve(value);
  const failDispatcher = error => dispatcherState.reject(error);
  let invocations = 0; // each execute gets an id, so an abort of its signal reaches exactly that call
  // Invocations whose execute got no AbortSignal (a runtime that passes none, as the MCP-B polyfill): id -> tool
  // name. WebMCP also tells the page of a cancelled call with a "toolcancel" event on document.modelContext (its
  // toolName only, no invocation): for such a call it is the only word of the cancel. The event stops the one
  // signal-less call of that tool still running; when several are, none (the event cannot say which), and the
  // console says so. A call that has a signal is stopped by its signal alone.
  const unsignalled = new Map();
  let cancelWatched = false;
  function watchToolCancel() {
    const mc = document.modelContext;
    if (cancelWatched || !mc || typeof mc.addEventListener !== 'function') return;
    cancelWatched = true;
    mc.addEventListener('toolcancel', event => {
      const name = event && typeof event.toolName === 'string' ? event.toolName : '';
      const matching = [...unsignalled].filter(([, tool]) => tool === name).map(([id]) => id);
      if (matching.length === 1) {
        dispatcherReady().then(({ cancel }) => cancel(matching[0])).catch(error => console.error(`[${TAG}] abort`, error));
      }
      else if (matching.length > 1) console.warn(`[${TAG}] toolcancel for ${name}: ${matching.length} calls run, none stopped`);
    });
  }

  // The page's WebMCP runtime: "mcp-b" when document.modelContext is an MCP server's (the MCP-B runtime, ours or one
  // the page already had: it lists tools with listTools), else "native" (the browser's). On native WebMCP the known
  // clients (Playwright MCP, chrome-devtools-mcp) show the model a tool's whole result, so each result carries its
  // payload once, as its text block, and no tool is registered with an outputSchema there (one would promise a
  // structuredContent); an MCP server's clients are MCP hosts, which show the model one of the two: both go, and the
  // outputSchema with them (Python decides the results' shape from this: lab/webmcp.py structured_for).
  function webmcpRuntime() {
    const mc = document.modelContext;
    return mc && typeof mc.listTools === 'function' ? 'mcp-b' : 'native';
  }
  // A result of the loader's own (a refusal before Python, or Python not there), shaped as Python shapes its own.
  function errorResult(payload) {
    return shapedResult(payload, true);
  }
  function shapedResult(payload, isError) {
    const result = { content: [{ type: 'text', text: JSON.stringify(payload) }], isError };
    if (webmcpRuntime() !== 'native') result.structuredContent = payload;
    return result;
  }
  // -- Calls made while Python starts: no client waits past a bound ----------------------------------------------
  // Clients give up on a call (Playwright MCP after 30 s) and a slow machine can take longer than that to start Python.
  // A call made before Python is up waits for it at most bounds.startAnswerMs; then the loader answers it "pending"
  // with an id of its own ("s-<n>", bridge.json's startPending: Python's message), and hands the call to Python once
  // it is up with that id (webmcp.py call_options: Python runs it pending under that id from its start), so
  // jupyter_wait_for_result (startPending.collect) collects it as any pending call. A collect of such an id made while
  // Python is still not up waits the same bound and is answered "pending" with the same id again. A call Python takes
  // up within the bound is handed the rest of it (waitSeconds): it goes pending at the bound's end, as a call past
  // the execution timeout does.
  let startPendings = 0;
  const heldIds = new Set(); // the ids the loader answered "pending" with
  const delay = ms => new Promise(resolve => setTimeout(resolve, ms));
  function heldAnswer(manifest, pendingId, tool) {
    const step = STEPS.find(([key]) => key === status.step);
    const message = String(manifest.startPending.message).replace('{tool}', tool)
      .replace('{step}', step ? step[1] : 'waiting to start');
    const payload = { status: 'pending', pendingId, tool, message };
    return shapedResult(payload, false);
  }

  // -- The worker's watchdog ------------------------------------------------------------------------------------
  // In the worker mode one call that never yields (a pattern that backtracks for minutes, a site's tool in a loop)
  // holds the worker's thread: every other call waits, and the Agent panel, answered by the same Python, stops
  // answering the person. While calls run, the loader pings the worker every bounds.workerPingMs; worker_boot.js
  // answers from its own message handler, which cannot run while Python holds the thread. When no answer came for
  // bounds.workerStuckMs of the page's own time (a tick that came late, the page itself busy, is not counted), the
  // worker is stopped and a new one started (restartWorker, set by startInWorker): the calls then running are answered
  // with bridge.json's watchdog error (TIMEOUT, Python's message), the old session's halves are disposed on the page
  // (halves.js dispose), the Agent panel's placeholder says why the bridge restarts until the new session's panel
  // takes it over (the tab open again if it was), and JupyterLab's notification and the status item say so too.
  const running = new Map(); // watched call id -> {tool, lose(info)}
  let watchedCalls = 0;
  let ticker = null;
  let restartWorker = null;
  function watchCall(tool) {
    const id = ++watchedCalls;
    let lose;
    const lost = new Promise(resolve => { lose = resolve; });
    if (status.thread === 'worker' && bridgeWorker) {
      running.set(id, { tool, lose });
      watchWorker();
    }
    return { lost, done: () => running.delete(id) };
  }
  function watchWorker() {
    if (ticker || !bounds) return;
    const worker = bridgeWorker;
    const every = bounds.workerPingMs;
    let waiting = null; // {held: ms of the page's own time without an answer} while a ping waits
    let last = performance.now();
    const stop = () => { clearInterval(ticker); ticker = null; };
    ticker = setInterval(() => {
      const now = performance.now();
      const onTime = now - last < 2 * every;
      last = now;
      if (!worker || worker !== bridgeWorker) return stop();
      if (waiting) {
        if (onTime) waiting.held += every;
        if (waiting.held >= bounds.workerStuckMs) {
          stop();
          restartWorker?.(worker, waiting.held);
        }
        return;
      }
      if (!running.size) return stop();
      const ping = { held: 0 };
      waiting = ping;
      worker.ping().then(() => { if (waiting === ping) waiting = null; });
    }, every);
  }
  // the answer of a call the watchdog ended: bridge.json's watchdog error, {tool}, {tools} and {seconds} filled
  function stuckAnswer({ seconds, tools }, tool) {
    const watchdog = manifestData.watchdog;
    const message = String(watchdog.message).replace('{tool}', tool).replace('{seconds}', String(seconds))
      .replace('{tools}', tools.join(', ') || 'a call');
    const payload = { error: watchdog.error, message, tool, heldSeconds: seconds, running: tools, bridgeRestarted: true };
    return shapedResult(payload, true);
  }

  function registerTool(definition) {
    const controller = new AbortController();
    const execute = async (input, options) => {
      const signal = options && options.signal; // native WebMCP passes {signal}; the polyfill passes nothing
      const invocation = String(++invocations);
      try {
        let held = null; // the loader's options for a call made while Python starts (above), as JSON text
        if (!connected) { // Python is not up yet: start it now if it waits for an idle page, and wait for it
          callWaiting = true;
          startNow('call');
          const manifest = await manifestReady;
          const bound = manifest.bounds.startAnswerMs;
          const began = performance.now();
          const up = await Promise.race([dispatcherReady().then(() => true), delay(bound).then(() => false)]);
          const asked = input && typeof input.pendingId === 'string' ? input.pendingId : null;
          if (!up && definition.name === manifest.startPending.collect && heldIds.has(asked)) {
            return heldAnswer(manifest, asked, definition.name); // still starting: the same call, still pending
          }
          if (!up) {
            const pendingId = `s-${++startPendings}`;
            heldIds.add(pendingId);
            const text = JSON.stringify(input ?? {});
            dispatcherReady().then(({ dispatch }) => dispatch(definition.name, text, null, JSON.stringify({ pendingId })))
              .catch(error => console.error(`[${TAG}] ${definition.name} (${pendingId})`, error));
            return heldAnswer(manifest, pendingId, definition.name);
          }
          held = JSON.stringify({ waitSeconds: Math.max(0, bound - (performance.now() - began)) / 1000 });
        }
        const { dispatch, cancel, inputCap } = await dispatcherReady();
        const inputJson = JSON.stringify(input ?? {});
        // arguments over Python's input cap are refused here, before they are copied into Python: a JSON text of
        // more UTF-16 units than the cap has more UTF-8 bytes than it too (a shorter one is measured exactly there)
        if (inputCap > 0 && inputJson.length > inputCap) {
          const payload = { error: 'TOO_LARGE', message: `The arguments are more than ${inputCap} bytes; the limit is ${inputCap}.`,
                            minBytes: inputJson.length, maxBytes: inputCap };
          return errorResult(payload);
        }
        const abort = () => { // Python stops the call (ABORTED) unless it already returned
          try { cancel(invocation); } catch (error) { console.error(`[${TAG}] abort`, error); }
        };
        if (signal && signal.aborted) abort();
        else if (signal) signal.addEventListener('abort', abort, { once: true });
        else {
          unsignalled.set(invocation, definition.name);
          watchToolCancel();
        }
        const watched = watchCall(definition.name); // the worker's watchdog, while the call runs (below)
        try {
          const answer = await Promise.race([dispatch(definition.name, inputJson, invocation, held), watched.lost]);
          if (answer && answer.stuck) return stuckAnswer(answer.stuck, definition.name);
          const { result, report, event } = JSON.parse(answer);
          loaderCrossings?.count('result'); // the answer crossing back from Python
          if (report) reportCall(report);
          if (event) dispatchEvent('call', event); // the call's page event rides in its answer
          return result;
        } finally {
          watched.done();
          if (signal) signal.removeEventListener('abort', abort);
          unsignalled.delete(invocation);
        }
      } catch (error) { // the bridge did not start: the same error envelope Python returns
        const payload = { error: 'INTERNAL_ERROR', message: `The bridge is not available: ${status.reason || error}` };
        return errorResult(payload);
      }
    };
    // registerTool may throw (a duplicate name, a schema it refuses) or return a promise that rejects
    const attempt = tool => {
      try {
        return Promise.resolve(document.modelContext.registerTool({ ...tool, execute }, { signal: controller.signal }));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    const withSchema = webmcpRuntime() !== 'native';
    let registration = attempt(withSchema ? definition : withoutOutputSchema(definition));
    if (withSchema && definition.outputSchema) {
      // a browser that refuses the outputSchema (one it cannot take, or a runtime that cannot compile it) still
      // gets the tool, without it; the first refusal's reason is kept on the status
      registration = registration.catch(error => {
        if (controller.signal.aborted) throw error;
        return attempt(withoutOutputSchema(definition)).then(value => {
          if (!status.outputSchema || status.outputSchema.state !== 'refused') {
            status.outputSchema = { state: 'refused', reason: cut(`${(error && error.name) || 'Error'}: ${(error && error.message) || error}`, 'refusalChars') };
          }
          return value;
        });
      });
    }
    const entry = { text: JSON.stringify(definition), controller, settled: false };
    entry.registered = registration.then(() => {
      entry.settled = true;
      if (tools.get(definition.name) === entry) refused.delete(definition.name);
      return true;
    }, error => {
      entry.settled = true;
      if (tools.get(definition.name) === entry) {
        tools.delete(definition.name);
        refused.set(definition.name, cut(`${(error && error.name) || 'Error'}: ${(error && error.message) || error}`, 'refusalChars'));
        console.error(`[${TAG}] ${definition.name} not registered`, error);
      }
      return false;
    });
    tools.set(definition.name, entry);
  }

  function withoutOutputSchema(definition) {
    const { outputSchema, ...plain } = definition;
    return plain;
  }

  function unregisterTool(name) {
    tools.get(name).controller.abort(); // WebMCP's rule: unregistering is aborting the registration's signal
    tools.delete(name);
    refused.delete(name);
  }

  // Wait for every registration made so far (and any made meanwhile), then publish the real count and the
  // failures on window.webmcpBridge.status.
  async function registrationsSettled() {
    for (;;) {
      const pending = [...tools.values()].filter(entry => !entry.settled);
      if (!pending.length) break;
      await Promise.all(pending.map(entry => entry.registered));
    }
    status.tools = tools.size;
    status.failures = [...refused].map(([name, reason]) => ({ name, reason }));
    await noteOutputSchemas().catch(error => console.warn(`[${TAG}] reading the registered tools`, error));
  }

  // Whether the page's WebMCP keeps the tools' outputSchema: status.outputSchema = {state: "off" (native WebMCP:
  // registered without one, see webmcpRuntime), "kept" (its listing shows it), "dropped" (registered with it, but
  // the runtime does not keep it), "refused" (a registration was refused with it and made without it; reason)}. The
  // listing is the MCP-B runtime's listTools() when there is one (its getTools() leaves schemas out), else getTools().
  async function noteOutputSchemas() {
    if (status.outputSchema && status.outputSchema.state === 'refused') return;
    const mc = document.modelContext;
    if (!mc) return;
    if (webmcpRuntime() === 'native') { status.outputSchema = { state: 'off' }; return; } // none registered
    const listed = typeof mc.listTools === 'function' ? await mc.listTools() : await mc.getTools();
    const ours = [...listed].find(tool => tools.has(tool.name) && JSON.parse(tools.get(tool.name).text).outputSchema);
    if (ours) status.outputSchema = { state: ours.outputSchema ? 'kept' : 'dropped' };
  }

  // The tools this page's URL chooses, from tools.json's tables (Python decided them; calls/toolsets.py): the
  // comma-separated words of ?<queryKey>= (["default"] without one), each an alias or a toolset name, plus the
  // always-on toolsets. Unknown words are skipped (Python reports them).
  function chosenTools(data) {
    const params = new URLSearchParams(pageSearch);
    const words = params.has(data.queryKey)
      ? params.getAll(data.queryKey).join(',').split(',').map(word => word.trim()).filter(Boolean)
      : ['default'];
    const toolsets = new Set(data.always);
    const own = (table, key) => (Object.hasOwn(table, key) ? table[key] : null); // never a prototype's member
    for (const word of words) for (const name of (own(data.aliases, word) || [word])) toolsets.add(name);
    const names = new Set();
    for (const name of toolsets) for (const tool of (own(data.toolsets, name) || [])) names.add(tool);
    return names;
  }

  async function registerStaticTools() {
    await polyfillReady.catch(() => false);
    if (!document.modelContext) return;
    const data = await toolsReady;
    if (connected) return; // Python connected first: its definitions are the truth
    const chosen = chosenTools(data);
    for (const definition of data.definitions) {
      if (chosen.has(definition.name) && !tools.has(definition.name)) registerTool(definition);
    }
    status.timings.toolsRegistered = Math.round(performance.now());
    await registrationsSettled(); // the count the browser accepted, shown in the status item's tooltip
    render();
  }

  // connect(definitionsJson, dispatch, cancel, inputCap): called by Python once it is ready; returns the number of
  // tools asked for (registrations still settling; setStatus('ready') shows how many the browser accepted).
  // dispatch(name, inputJson, invocation, optionsJson) -> the answer, JSON text {result, report, event}, or (a call that
  // waits); optionsJson: for a call made while Python started (see "Calls made while Python starts"), else nothing
  // a Promise of it; cancel(invocation) when that call's signal aborts; inputCap: Python's cap on one call's
  // arguments (UTF-8 bytes of their JSON text; 0: none), applied here before the text crosses into Python.
  function connect(definitionsJson, dispatch, cancel, inputCap) {
    const wanted = new Map(JSON.parse(definitionsJson).map(d => [d.name, d]));
    for (const name of [...refused.keys()]) if (!wanted.has(name)) refused.delete(name);
    for (const [name, entry] of [...tools]) {
      if (!wanted.has(name) || entry.text !== JSON.stringify(wanted.get(name))) unregisterTool(name);
    }
    for (const [name, definition] of wanted) if (!tools.has(name)) registerTool(definition);
    connected = true;
    connectDispatcher({ dispatch, cancel: cancel || (() => {}), inputCap: Number(inputCap) || 0 });
    return tools.size;
  }

  // connectResources(templatesJson, read): where the runtime has MCP resources (the MCP-B runtime's
  // registerResource; native WebMCP has none), register Python's resource templates [{name, uriTemplate,
  // description, mimeType}], each read answered by read(uri) -> Promise<JSON text {result} | {error}>. Returns how
  // many were registered (0 without resources).
  const resources = [];
  function connectResources(templatesJson, read) {
    disconnectResources();
    const mc = document.modelContext;
    if (!mc || typeof mc.registerResource !== 'function') return 0;
    for (const template of JSON.parse(templatesJson)) {
      try {
        resources.push(mc.registerResource({
          name: template.name, uri: template.uriTemplate, description: template.description, mimeType: template.mimeType,
          read: async url => {
            const reply = JSON.parse(await read(String(url)));
            if (reply.error) throw new Error(`${reply.error.error}: ${reply.error.message}`);
            return reply.result;
          }
        }));
      } catch (error) {
        console.error(`[${TAG}] resource ${template.name} not registered`, error);
      }
    }
    status.resources = resources.length;
    return resources.length;
  }

  // disconnectResources(): Python unregisters the resource templates.
  function disconnectResources() {
    unregisterAll(resources, 'resource');
    status.resources = 0;
  }

  // unregisterAll(handles, kind): unregister and forget every handle (a failure is logged, the rest go on).
  function unregisterAll(handles, kind) {
    for (const handle of handles.splice(0)) {
      try { handle.unregister(); } catch (error) { console.error(`[${TAG}] ${kind}`, error); }
    }
  }

  // connectPrompts(promptsJson): where the runtime has MCP prompts (the MCP-B runtime's registerPrompt; native WebMCP
  // has none), register Python's prompts [{name, title, description, result}]; a get answers with a copy of `result`
  // (the prompt's GetPromptResult, made by Python). Returns how many were registered (0 without prompts).
  const prompts = [];
  function connectPrompts(promptsJson) {
    disconnectPrompts();
    const mc = document.modelContext;
    if (!mc || typeof mc.registerPrompt !== 'function') return 0;
    for (const prompt of JSON.parse(promptsJson)) {
      try {
        prompts.push(mc.registerPrompt({
          name: prompt.name, title: prompt.title, description: prompt.description,
          get: async () => structuredClone(prompt.result)
        }));
      } catch (error) {
        console.error(`[${TAG}] prompt ${prompt.name} not registered`, error);
      }
    }
    status.prompts = prompts.length;
    return prompts.length;
  }

  // disconnectPrompts(): Python unregisters its prompts.
  function disconnectPrompts() {
    unregisterAll(prompts, 'prompt');
    status.prompts = 0;
  }

  // disconnect(): Python unregisters every tool (calls still waiting for it then fail cleanly).
  function disconnect() {
    for (const name of [...tools.keys()]) unregisterTool(name);
    refused.clear();
  }

  // The page's one Python session (webmcp_bridge.lab.session.LabSession, a proxy this loader owns): start()
  // returns it, and a later start stops it first.
  // started(reply): the session's reply {state: "ready"|"unavailable", tools: N, reason, timings} shown, whichever
  // thread Python started on
  function started(reply) {
    status.timings.bridgeReady = Math.round(performance.now());
    status.timings.python = reply.timings; // ms spent in each start-up step on the Python side
    setStatus(reply.state, reply.state === 'ready' ? reply.tools : reply.reason);
  }

  let session = null;

  // The context the bridge's Python gets (lab/session.py's module docstring), in place of `into` (a new object by
  // default): the application, its tracker and document manager, the shared modules, the page's WebMCP (after the
  // optional MCP-B runtime), the site's list of its own tool files (jupyter-config-data, as JSON text: Python reads
  // and checks it), the page's query, and the loader's functions the JS halves call.
  function loaderContext(app, tracker, docManager, modules, into = {}) {
    const pageContributions = JSON.stringify(pageConfig().webmcpBridgeContributions ?? null);
    return Object.assign(into, {
      app, tracker, docManager, modules, kernelTrust, modelContext: document.modelContext ?? null,
      webmcpRuntime: webmcpRuntime(), pageContributions, pageSearch,
      setStatus, setDiagnostics, reportCall, emit, connect, disconnect, setMode,
      connectResources, disconnectResources, connectPrompts, disconnectPrompts, takePanelPlaceholder
    });
  }

  // The moment the bridge's Python starts, on either thread (see "When the bridge's Python starts" above): once
  // JupyterLab is restored and the page idle, or at once on an agent's call, even before JupyterLab is restored (then
  // the worker only fetches and compiles until it is: whenRestored); noted in status.timings once, so a fallback from
  // the worker to the main thread does not wait a second time.
  let startMoment = null;
  let restoredPromise = null;
  function whenRestored(app) {
    restoredPromise ??= Promise.resolve(app.restored).then(() => {
      status.timings.restored = Math.round(performance.now());
    });
    return restoredPromise;
  }
  function startWhen(app) {
    startMoment ??= (async () => {
      await manifestReady; // the waits below are bridge.json's bounds
      const idle = whenRestored(app).then(() => pageIdle(status.timings.restored));
      status.timings.startReason = await Promise.race([idle, startRequested]);
      status.timings.pythonStart = Math.round(performance.now());
    })();
    return startMoment;
  }

  async function start(app, tracker, docManager, modules) {
    await startWhen(app);
    await whenRestored(app); // on the page's main thread nothing of Python's runs while JupyterLab starts
    const pyodide = await startPyodide();
    await polyfillReady.catch(() => false); // without it the bridge starts as "unavailable"
    if (session) { session.stop(); session.destroy(); session = null; }
    const boot = pyodide.pyimport('webmcp_bridge.lab.session');
    await importCrossings();
    const ctx = loaderContext(app, tracker, docManager, modules);
    status.thread = 'main';
    startStep('session');
    session = await boot.start(ctx);
    boot.destroy();
    const reply = JSON.parse(session.reply); // {state: "ready"|"unavailable", tools: N, timings}
    started(reply);
  }

  // -- The bridge's Python in a dedicated worker (the default where workerCanCross; docs/WORKER.md, "Choosing the thread") ---------
  // Its modules are imported at activation; the worker itself starts when the main-thread start would (after
  // app.restored, once the page is idle, or at once when an agent calls a tool): its start-up (the runtime, the
  // wheels, the imports) runs on its own thread and costs the page's main thread no long task, but on a machine of
  // few cores its CPU would slow JupyterLab's own start (the page usable later). The page keeps what is the
  // page's: this loader (the tools, execute, abort, the status item) and the JS halves, which halves.js (beside this
  // file) evaluates here and attaches to the same ctx the main-thread start hands Python (loaderContext); the
  // worker's Python reaches them through worker.js (its requests answered by halves.js, its callbacks sent back as
  // events). The session starts once JupyterLab is restored: worker.js invoke('session_start'), which runs
  // webmcp_bridge.lab.session.start in the worker with a ctx standing for this one (lab/wire.py). A tool call goes
  // through webmcp.js's dispatcher, whose listener is a callback event in the worker; Python answers it later with
  // webmcp.js's answer(id, text), a crossing like any other. A worker that could not start, or that has neither shared
  // memory nor JSPI (mode "none": no synchronous crossing), is stopped and the main-thread start runs instead; the
  // console and status.worker.fallback say why.
  let bridgeWorker = null;
  async function startInWorker(app, tracker, docManager, modules) {
    const manifest = await manifestReady;
    let ready;
    const ctx = {}; // filled by loaderContext once JupyterLab is restored, before any half is loaded and attached
    let halves = null;
    let mine = null; // this start's worker: the halves' callbacks go to it only, never to a later one
    restartWorker = (stuck, heldMs) => {
      if (stuck !== bridgeWorker || stuck !== mine) return;
      restartStuck(stuck, halves, heldMs, [app, tracker, docManager, modules]);
    };
    try {
      const [{ startWorker, wireError }, { createHalves }] = await Promise.all([
        import(new URL(manifest.worker, manifestUrl).href), import(new URL(manifest.halves, manifestUrl).href)]);
      await importCrossings();
      await startWhen(app);
      halves = createHalves({ ctx, sourcesUrl: new URL(manifest.halvesSources, manifestUrl).href,
                              post: text => mine?.event(text) });
      const refuse = call => wireError(`the page answers the JS halves only, not ${String(call.target)}`);
      const runtime = pageRuntimeUrl();
      // started by an agent's call before JupyterLab is restored: the worker fetches and compiles only, until it is
      const hold = status.timings.restored === undefined;
      bridgeWorker = startWorker({
        manifestUrl: manifestUrl.href, runtimeUrl: runtime ? runtime.href : null, hold, onStep: startStep,
        // the site's memory snapshot, when its build made one (docs/loader.md, "A memory snapshot")
        snapshotUrl: new URL(SNAPSHOT, manifestUrl).href,
        respond: call => (halves.owns(call) ? halves.respond(call) : refuse(call)),
        respondAsync: call => (halves.owns(call) ? halves.respondAsync(call) : refuse(call)),
      });
      mine = bridgeWorker;
      whenRestored(app).then(() => mine.go());
      ready = await bridgeWorker.ready;
    } catch (error) {
      ready = { mode: 'none', failed: String((error && error.message) || error).split('\n')[0] };
    }
    // a restart's count and reason kept; snapshot: {used, reason} (whether Python came from the site's memory snapshot)
    status.worker = { ...status.worker, mode: ready.mode, fallback: null, snapshot: ready.snapshot };
    if (ready.mode === 'none') {
      const reason = ready.failed ? `the worker did not start (${cut(ready.failed, 'failureChars')})` : NO_CROSSING;
      console.warn(`[${TAG}] ${reason}: the bridge's Python runs on the page's main thread`);
      status.worker.fallback = reason;
      bridgeWorker?.terminate();
      bridgeWorker = null;
      return start(app, tracker, docManager, modules);
    }
    // the worker's start-up steps, moved from its clock (from its timeOrigin) to the page's
    const shift = ready.timeOrigin - performance.timeOrigin;
    for (const [name, began, ended] of ready.steps) status.timings.steps.push([name, Math.round(began + shift), Math.round(ended + shift)]);
    status.runtime = ready.runtime;
    status.timings.pyodideReady = Math.round(performance.now());
    // the worker's wasm memory as its last message said (for bench/; no request of its own)
    window.webmcpBridge.wasmMemoryBytes = () => bridgeWorker.memoryBytes();
    await polyfillReady.catch(() => false); // without it the bridge starts as "unavailable"
    await whenRestored(app);
    loaderContext(app, tracker, docManager, modules, ctx);
    status.thread = 'worker';
    startStep('session');
    const reply = JSON.parse(await bridgeWorker.invoke('session_start', '{}')); // {state, tools, timings}
    started(reply);
  }

  // Stop the worker the watchdog found held and start a new one (see "The worker's watchdog").
  function restartStuck(worker, halves, heldMs, [app, tracker, docManager, modules]) {
    const seconds = Math.round(heldMs / 1000);
    const tools = [...new Set([...running.values()].map(call => call.tool))];
    bridgeWorker = null;
    worker.terminate();
    for (const call of running.values()) call.lose({ stuck: { seconds, tools } });
    running.clear();
    connected = false;
    dispatcherState = deferred(); // calls from now on wait for the next session's dispatcher
    const panel = manifestData.panel;
    const shown = !!document.getElementById(panel.id)?.checkVisibility?.();
    try { halves?.dispose(); } catch (error) { console.error(`[${TAG}] disposing the stopped worker's halves`, error); }
    const reason = `${tools.join(', ') || 'a call'} held the bridge's Python for more than ${seconds} s: restarted`;
    console.warn(`[${TAG}] ${reason}`);
    status.worker = { ...status.worker, restarts: (status.worker?.restarts || 0) + 1, restarted: { seconds, tools, reason } };
    status.state = 'loading';
    status.step = null;
    status.reason = cut(reason, 'failureChars');
    addPlaceholder(app, modules.widgets, panel);
    if (shown) app.shell.activateById(panel.id);
    render();
    try {
      modules.apputils?.Notification?.warning?.(`Agent bridge: ${reason}.`, { autoClose: 10000 });
    } catch (error) { console.error(`[${TAG}] notification`, error); }
    startInWorker(app, tracker, docManager, modules).catch(error => {
      fail(error);
      failDispatcher(error);
    });
  }

  function addStatusItem(statusBar, widgets) {
    if (!statusBar || !widgets) return;
    const item = new widgets.Widget();
    item.id = 'webmcp-bridge-status';
    item.addClass('webmcp-bridge-status');
    item.addClass('jp-StatusBar-TextItem');
    statusNode = item.node;
    render();
    statusBar.registerStatusItem(`${TAG}:status`, { item, align: 'left', rank: 100 });
  }

  // Federated-extension container: JupyterLab calls init(shareScope), then get('./extension').
  // Each JupyterLab package is taken from the page's share scope ({package: {version: {get, loaded}}}) only in a
  // version within the range package.json declares for it (its "dependencies", which `jupyter labextension list`
  // checks too; the build copies them into bridge.json's "shared"). Ranges are carets (^4.5.0), the only form the
  // build accepts; a pre-release is compared by its release numbers (4.7.0-alpha.1 as 4.7.0), as
  // `jupyter labextension list` compares them, so a JupyterLab pre-release in range is taken.
  let shareScope = {};
  function releaseOf(version) {
    const match = /^(\d+)\.(\d+)\.(\d+)/.exec(String(version));
    return match ? match.slice(1, 4).map(Number) : null;
  }
  function compareReleases(a, b) {
    for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
  }
  // inRange('4.6.4', '^4.5.0') === true: at least the range's version, and the same leftmost non-zero number
  function inRange(version, range) {
    const found = releaseOf(version);
    const low = /^\^\d+\.\d+\.\d+$/.test(range) ? releaseOf(range.slice(1)) : null;
    if (!found || !low || compareReleases(found, low) < 0) return false;
    const fixed = low[0] > 0 ? 1 : low[1] > 0 ? 2 : 3;
    return found.slice(0, fixed).every((part, i) => part === low[i]);
  }
  // shared(pkg, optional): the module of pkg from the share scope, the version already loaded if it is in range,
  // else the newest in range. None in range: an Error naming the range and the versions offered, or null (with a
  // console warning) for an optional package, which the bridge then does without.
  async function shared(pkg, optional) {
    const range = ((await manifestReady).shared || {})[pkg];
    const versions = shareScope[pkg] || {};
    const offered = Object.keys(versions);
    const fitting = range ? offered.filter(version => inRange(version, range)) : [];
    fitting.sort((a, b) => compareReleases(releaseOf(b), releaseOf(a)));
    const chosen = fitting.find(version => versions[version].loaded) || fitting[0];
    if (!chosen) {
      const reason = !range
        ? `${pkg} has no version range in bridge.json`
        : `${pkg} ${range} is needed; this JupyterLab offers ${offered.length ? offered.join(', ') : 'none'}`;
      if (optional && range) {
        console.warn(`[${TAG}] ${reason}: going on without it`);
        return null;
      }
      throw new Error(reason);
    }
    return (await versions[chosen].get())();
  }

  // The plugin that only shows why the bridge could not start (a JupyterLab package out of range, bridge.json
  // unreadable), in the status bar when there is one in range; the page works on without the bridge.
  async function failedPlugin(error) {
    fail(error);
    const [statusbar, widgets] = await Promise.all([shared('@jupyterlab/statusbar', true), shared('@lumino/widgets', true)])
      .catch(() => [null, null]);
    if (!statusbar || !widgets) return [];
    return [{
      id: `${NAME}:plugin`,
      description: 'Shows why the WebMCP bridge could not start.',
      autoStart: true,
      optional: [statusbar.IStatusBar],
      activate(app, statusBar) {
        try {
          addStatusItem(statusBar, widgets);
        } catch (statusError) {
          console.error(`[${TAG}] status item`, statusError);
        }
      }
    }];
  }

  // The kernel model's page half (kernel_trust.js beside this file): in place when the plugin activates, before any
  // notebook opens; the agent's kernel runs are refused without it (notebook.js asks it before each).
  let kernelTrust = null;

  async function extension() {
    try {
      const [notebook, docmanager, cells, widgets, statusbar, apputils, settingregistry, trustModule, ...person] = await Promise.all([
        shared('@jupyterlab/notebook'), shared('@jupyterlab/docmanager'), shared('@jupyterlab/cells'),
        shared('@lumino/widgets', true), shared('@jupyterlab/statusbar', true), shared('@jupyterlab/apputils', true),
        shared('@jupyterlab/settingregistry', true), // its ISettingRegistry token: Python loads the plugin's settings
        import(new URL('kernel_trust.js', script.src).href),
        // the person's side (lab/ui/dom.js): the translator, the layout restorer and state database, the icons
        shared('@jupyterlab/translation', true), shared('@jupyterlab/application', true),
        shared('@jupyterlab/statedb', true), shared('@jupyterlab/ui-components', true)
      ]);
      const [translation, application, statedb, uicomponents] = person;
      const plugin = {
        id: `${NAME}:plugin`,
        description: 'Runs the webmcp_bridge Python package in Pyodide and registers its WebMCP tools.',
        autoStart: true,
        requires: [notebook.INotebookTracker, docmanager.IDocumentManager],
        optional: statusbar ? [statusbar.IStatusBar] : [],
        activate(app, tracker, docManager, statusBar) {
          kernelTrust = trustModule.createKernelTrust({ app, tracker, modules: { apputils, notebook } });
          try {
            addStatusItem(statusBar, widgets);
          } catch (error) {
            console.error(`[${TAG}] status item`, error);
          }
          manifestReady.then(manifest => addPlaceholder(app, widgets, manifest.panel))
            .catch(error => console.error(`[${TAG}] the Agent panel's placeholder`, error));
          registerStaticTools().catch(error => console.error(`[${TAG}] static tool registration`, error));
          let begin = start;
          if (threadAsked === 'worker' || (threadAsked === 'auto' && workerCanCross())) begin = startInWorker;
          else if (threadAsked === 'auto') status.worker = { mode: 'none', fallback: NO_CROSSING };
          const modules = { notebook, cells, widgets, apputils, settingregistry, translation, application, statedb,
                            uicomponents };
          begin(app, tracker, docManager, modules).catch(error => {
            fail(error);
            failDispatcher(error);
          });
        }
      };
      return { __esModule: true, default: [plugin] };
    } catch (error) {
      return { __esModule: true, default: await failedPlugin(error).catch(() => []) };
    }
  }

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init(scope) {
      shareScope = scope || {};
    },
    async get(module) {
      if (module !== './extension') throw new Error(`${NAME} has no module ${module}`);
      const mod = await extension();
      return () => mod;
    }
  };
})();
