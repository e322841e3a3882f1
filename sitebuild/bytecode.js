// Byte-compiles zip archives with the pinned Pyodide's own Python, under Node (the build's side of
// sitebuild/bytecode.py, which runs it):
//
//   node sitebuild/bytecode.js <pyodide package folder> <sitebuild/bytecode_runtime.py> <jobs.json>
//
// jobs.json: [{source, dest, kind, stdlib}] (absolute paths; kind "stdlib" or "wheel"; stdlib: the standard library
// zip the interpreter boots from, null for the runtime's own). Each job gets a fresh interpreter (loadPyodide), so
// an archive's bytecode does not depend on what was compiled before it; the archive goes in and out through the
// interpreter's in-memory file system. Prints one JSON line per job ({dest, added}); a failure exits non-zero with
// its message on stderr.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [folder, runtimeSource, jobsFile] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${folder}/pyodide.mjs`).href);
const code = readFileSync(runtimeSource, 'utf8');
for (const job of JSON.parse(readFileSync(jobsFile, 'utf8'))) {
  const options = { indexURL: `${folder}/`, stdout: () => {}, stderr: () => {} };
  if (job.stdlib) options.stdLibURL = job.stdlib;
  const pyodide = await loadPyodide(options);
  pyodide.FS.writeFile('/tmp/bytecode_runtime.py', code);
  pyodide.FS.writeFile('/tmp/source.zip', readFileSync(job.source));
  let added;
  try {
    added = pyodide.runPython(
      `import sys; sys.path.insert(0, '/tmp'); import bytecode_runtime
bytecode_runtime.add_bytecode('/tmp/source.zip', '/tmp/dest.zip', ${JSON.stringify(job.kind)})`);
  } catch (error) {
    process.stderr.write(`${job.source}: ${String(error && error.message).slice(-2000)}\n`);
    process.exit(1);
  }
  writeFileSync(`${job.dest}.tmp`, pyodide.FS.readFile('/tmp/dest.zip'));
  renameSync(`${job.dest}.tmp`, job.dest); // complete or absent: a later job may boot from it
  process.stdout.write(`${JSON.stringify({ dest: job.dest, added })}\n`);
}
