// In-page half of bench/run.py. Installed before navigation (page.add_init_script): it records long tasks
// and the moments the WebMCP tool list changes, and defines window.__bench.calls(), which times tool calls
// with performance.now() around document.modelContext.executeTool, one call per task.
(() => {
  const bench = (window.__bench = { longtasks: [], toolTimes: [] });
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) bench.longtasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch (error) {
    bench.longtaskError = String(error);
  }

  const mc = document.modelContext;
  if (mc) {
    mc.addEventListener('toolchange', async () => {
      const at = performance.now();
      const tools = await mc.getTools();
      bench.toolTimes.push([at, tools.length]);
    });
  }

  const nextTask = () => new Promise(resolve => setTimeout(resolve, 0));

  async function tool(name) {
    const found = (await document.modelContext.getTools()).find(t => t.name === name);
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
      if (sources) hash = findHash(result.structuredContent) || hash;
      const recent = window.webmcpBridge && window.webmcpBridge.status.recent[0];
      const python = recent ? Number((/ (\d+) ms$/.exec(recent) || [])[1]) : null;
      rows.push({ t0, t1, ms: t1 - t0, bytes: encoder.encode(text).length, error: !!result.isError,
        errorText: result.isError ? text.slice(0, 300) : null, python });
    }
    await new Promise(resolve => setTimeout(resolve, 200)); // let the observer deliver the last entries
    for (const row of rows) {
      row.longest = 0;
      for (const [start, duration] of bench.longtasks) {
        if (start < row.t1 && start + duration > row.t0) row.longest = Math.max(row.longest, duration);
      }
    }
    return rows;
  };

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
