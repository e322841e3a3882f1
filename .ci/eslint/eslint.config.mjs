// ESLint's recommended rules on the project's JavaScript: the JS halves the bridge's Python loads into the page
// (py_src/webmcp_bridge/lab), the labextension's loader and the benchmark's page script. Each file is a classic
// script evaluated in the browser (no modules, no bundler), so the globals are the browser's.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: { ...globals.browser },
    },
    rules: {
      // `const { dropped, ...kept } = object` is how a key is left out of a copy
      "no-unused-vars": ["error", { ignoreRestSiblings: true }],
    },
  },
  {
    // the worker's two ends are ES modules: worker.js is imported by the page, worker_boot.js is the module
    // worker it starts, whose globals are a dedicated worker's; crossings.js is imported by worker.js and the loader,
    // halves.js (the remote halves' page side) by the page beside worker.js, kernel_trust.js by the loader
    files: ["py_src/webmcp_bridge/lab/worker.js", "py_src/webmcp_bridge/lab/crossings.js",
            "py_src/webmcp_bridge/lab/halves.js", "py_src/webmcp_bridge/lab/kernel_trust.js"],
    languageOptions: { sourceType: "module" },
  },
  {
    files: ["py_src/webmcp_bridge/lab/worker_boot.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.worker } },
  },
  {
    // the build's own script, run by Node: sitebuild/bytecode.js byte-compiles with the pinned Pyodide
    files: ["sitebuild/*.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
  },
];
