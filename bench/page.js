// In-page half of bench/run.py. Installed before navigation (page.add_init_script), so it sees the page from its
// first task. It records:
// - long tasks (PerformanceObserver "longtask": every main-thread task of 50 ms or more) and long animation
//   frames ("long-animation-frame", the same stretches with the scripts that ran in them: URL, function,
//   invoker, duration), so a long task can be attributed to the bridge, to the reference or to JupyterLab;
// - the moment the page is usable for a person: JupyterLab's shell restored (`jupyterapp.restored`, the site
//   exposes the app) and the file browser listing its entries;
// - the moments the WebMCP tool list changes (`toolchange`, then getTools()), and, when the context set
//   `window.__benchFirstCall = {name, args}` before this script, the first successful answer of that call,
//   made the moment the tool appears (retried every 50 ms while it answers with an error, e.g. the notebook is
//   not open yet): bench.firstCall {at, attempts, bytes} when its result came, bench.firstAnswer {at, pending} when
//   the first answer that is not an error came (the same moment, or earlier when it was `pending`: then the call is
//   collected with jupyter_wait_for_result, as an agent does, until its result);
// and defines window.__bench.calls(), which times tool calls with performance.now() around
// document.modelContext.executeTool, one call per task.
(() => {
  const bench = (window.__bench = { longtasks: [], loafs: [], toolTimes: [], usable: null, restored: null, listed: null,
    firstCall: null, firstAnswer: null });
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) bench.longtasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch (error) {
    bench.longtaskError = String(error);
  }
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) {
        bench.loafs.push({
          start: e.startTime, duration: e.duration, blocking: e.blockingDuration,
          scripts: (e.scripts || []).map(s => ({
            url: s.sourceURL || '', fn: s.sourceFunctionName || '', invoker: s.invoker || '', type: s.invokerType || '',
            start: s.startTime, duration: s.duration, forcedLayout: s.forcedStyleAndLayoutDuration || 0
          }))
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch (error) {
    bench.loafError = String(error);
  }

  // usable: shell restored and the file browser listing its entries
  function checkUsable() {
    if (bench.usable !== null) return true;
    if (bench.listed === null && document.querySelector('.jp-DirListing-content .jp-DirListing-item')) {
      bench.listed = performance.now();
    }
    if (bench.restored === null && window.jupyterapp && !bench.watchingRestored) {
      bench.watchingRestored = true;
      window.jupyterapp.restored.then(() => { bench.restored = performance.now(); checkUsable(); });
    }
    if (bench.listed !== null && bench.restored !== null) {
      bench.usable = Math.max(bench.listed, bench.restored);
      return true;
    }
    return false;
  }
  const observer = new MutationObserver(() => { if (checkUsable()) observer.disconnect(); });
  observer.observe(document, { childList: true, subtree: true });

  // a result's payload: its structuredContent where it has one, else its text (the bridge on native WebMCP)
  const payloadOf = (result) => {
    if (result.structuredContent) return result.structuredContent;
    try { return JSON.parse(result.content?.[0]?.text ?? 'null'); } catch { return null; }
  };
  const first = window.__benchFirstCall || null;
  let firstStarted = false;
  async function firstCall(tools) {
    const found = tools.find(t => t.name === first.name);
    if (!found || firstStarted) return;
    firstStarted = true;
    for (let attempt = 1; ; attempt++) {
      let text = await document.modelContext.executeTool(found, first.args);
      let result = JSON.parse(text);
      if (!result.isError) {
        const pending = () => payloadOf(result)?.status === 'pending';
        bench.firstAnswer = { at: performance.now(), pending: pending() };
        while (!result.isError && pending()) {
          const wait = (await document.modelContext.getTools()).find(t => t.name === 'jupyter_wait_for_result');
          text = await document.modelContext.executeTool(wait, { pendingId: payloadOf(result).pendingId });
          result = JSON.parse(text);
        }
        bench.firstCall = { at: performance.now(), attempts: attempt, bytes: text.length };
        return;
      }
      bench.firstCallError = text.slice(0, 300);
      await new Promise(resolve => setTimeout(resolve, 50));
    }
  }

  const mc = document.modelContext;
  if (mc) {
    mc.addEventListener('toolchange', async () => {
      const at = performance.now();
      const tools = await mc.getTools();
      bench.toolTimes.push([at, tools.length]);
      if (first) firstCall(tools).catch(error => { bench.firstCallError = String(error); });
    });
  }

  const nextTask = () => new Promise(resolve => setTimeout(resolve, 0));

  // the bridge's tools outside its default set, by toolset: turned on (untimed) the first time a figure needs one
  const TOOLSET_OF = { jupyter_export_notebook: 'files' };
  async function tool(name) {
    let tools = await document.modelContext.getTools();
    const switcher = tools.find(t => t.name === 'jupyter_toolsets');
    if (!tools.some(t => t.name === name) && switcher && TOOLSET_OF[name]) {
      await document.modelContext.executeTool(switcher, { enable: [TOOLSET_OF[name]] });
      tools = await document.modelContext.getTools();
    }
    const found = tools.find(t => t.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  }

  // The first "sourceHash" anywhere in a result's structured content.
  function findHash(node) {
    if (!node || typeof node !== 'object') return null;
    if (typeof node.sourceHash === 'string') return node.sourceHash;
    for (const value of Object.values(node)) {
      const found = findHash(value);
      if (found) return found;
    }
    return null;
  }

  // One call, untimed: the parsed CallToolResult.
  bench.call = async (name, args) => JSON.parse(await document.modelContext.executeTool(await tool(name), args));

  // n calls of one tool. With `sources` (update_cell), each call writes the next of them with the hash the
  // previous call returned. Returns one row per call: ms, UTF-8 bytes of the result, the longest long task
  // overlapping the call (0 if none: the API reports tasks of 50 ms or more), isError, and for the bridge the
  // Python-side duration it reported through its after-call hook.
  bench.calls = async ({ name, args, n, sources }) => {
    const t = await tool(name);
    const encoder = new TextEncoder();
    const rows = [];
    let hash = args.expectedSourceHash;
    for (let i = 0; i < n; i++) {
      await nextTask();
      const input = sources ? { ...args, source: sources[i % sources.length], expectedSourceHash: hash } : args;
      const t0 = performance.now();
      const text = await document.modelContext.executeTool(t, input);
      const t1 = performance.now();
      const result = JSON.parse(text);
      if (sources) hash = findHash(payloadOf(result)) || hash;
      const recent = window.webmcpBridge && window.webmcpBridge.status.recent[0];
      const python = recent ? Number((/ (\d+(?:\.\d+)?) ms$/.exec(recent) || [])[1]) : null;
      rows.push({ t0, t1, ms: t1 - t0, bytes: encoder.encode(text).length, error: !!result.isError,
        errorText: result.isError ? text.slice(0, 300) : null, python });
    }
    await new Promise(resolve => setTimeout(resolve, 200)); // let the observer deliver the last entries
    for (const row of rows) row.longest = bench.longestBetween(row.t0, row.t1);
    return rows;
  };

  // The longest long task overlapping [t0, t1] (0 if none).
  bench.longestBetween = (t0, t1) => {
    let longest = 0;
    for (const [start, duration] of bench.longtasks) {
      if (start < t1 && start + duration > t0) longest = Math.max(longest, duration);
    }
    return longest;
  };

  // Open a notebook the way a person does (JupyterLab's own command; no extension involved), resolved once its
  // document is ready; then bench.rendered(path) says whether every cell is rendered (JupyterLab renders the
  // cells of a long notebook in idle callbacks after it opens).
  bench.open = async path => {
    const widget = await window.jupyterapp.commands.execute('docmanager:open', { path });
    await widget.context.ready;
    return true;
  };
  const panelOf = path => window.jupyterapp.shell.widgets ? [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path) : null;
  bench.rendered = path => {
    const panel = panelOf(path);
    const cells = panel && panel.content && panel.content.widgets;
    return !!cells && cells.length > 0 && cells.every(cell => !cell.isPlaceholder());
  };
  bench.close = async path => {
    const panel = panelOf(path);
    if (panel) { panel.context.model.dirty = false; panel.dispose(); }
  };

  // The long animation frames overlapping [t0, t1], each with its scripts (for attribution in bench/run.py).
  bench.loafsBetween = (t0, t1) => bench.loafs.filter(f => f.start < t1 && f.start + f.duration > t0);

  // Memory after two garbage collections (the browser runs with --js-flags=--expose-gc and
  // --enable-precise-memory-info): the page's JS heap and the bridge's Pyodide wasm memory (0 without it).
  bench.memory = async () => {
    for (let i = 0; i < 2; i++) {
      if (window.gc) window.gc();
      await new Promise(resolve => setTimeout(resolve, 100));
    }
    const wasm = window.webmcpBridge && window.webmcpBridge.wasmMemoryBytes ? window.webmcpBridge.wasmMemoryBytes() : 0;
    return { heap: performance.memory.usedJSHeapSize, wasm };
  };
})();
