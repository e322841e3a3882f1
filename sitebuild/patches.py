"""Patches the build applies to pinned upstream files until upstream fixes them."""

from __future__ import annotations

from pathlib import Path

from sitebuild.util import OUTPUT, BuildError, write_if_changed

#: The pinned kernel's main-thread messaging (the `coincident` library bundled in the pyodide-kernel extension)
#: waits for each reply from the kernel's worker with ``Atomics.waitAsync(buffer, 0)`` (expected value 0) and calls
#: ``.value.then`` on the result. When the worker has already written the reply, as happens when it answers
#: before the main thread starts waiting, ``waitAsync`` returns ``{async: false, value: "not-equal"}`` (ECMA-262,
#: Atomics.waitAsync), the ``.then`` throws ``A(...).value.then is not a function``, and the kernel's execute
#: reply is lost: JupyterLab keeps the cell running forever. The patch wraps that one call so a synchronous
#: result becomes a resolved promise, exactly what the asynchronous path gives a moment later. The text is
#: the pinned build's (jupyterlite-pyodide-kernel in the dev extra); a new pin must be re-checked, and the
#: build fails if the text is gone.
KERNEL_EXTENSION = "@jupyterlite/pyodide-kernel-extension"
KERNEL_WAIT_BUGGY = "A=(e,t)=>e?c(t,0):"
KERNEL_WAIT_FIXED = "A=(e,t)=>e?(x=>x.async?x:{value:Promise.resolve(x.value)})(c(t,0)):"


def patch_kernel_messaging(output: Path = OUTPUT) -> Path:
    """Apply the ``KERNEL_WAIT_FIXED`` patch to the built kernel extension's chunk; return the patched file.

    Idempotent: a chunk already patched is left as it is. Raises BuildError unless exactly one chunk of
    ``extensions/@jupyterlite/pyodide-kernel-extension/static/`` holds the unpatched or the patched text once.
    """
    static = output / "extensions" / KERNEL_EXTENSION / "static"
    found = []
    for chunk in sorted(static.glob("*.js")):
        text = chunk.read_text(encoding="utf-8")
        buggy, fixed = text.count(KERNEL_WAIT_BUGGY), text.count(KERNEL_WAIT_FIXED)
        if buggy or fixed:
            found.append((chunk, text, buggy, fixed))
    if len(found) != 1 or found[0][2] + found[0][3] != 1:
        raise BuildError(f"the kernel's Atomics.waitAsync call was not found exactly once in {static} "
                         f"({[(c.name, b, f) for c, _, b, f in found]}); re-check KERNEL_WAIT_BUGGY for this pin")
    chunk, text, buggy, _ = found[0]
    if buggy:
        write_if_changed(chunk, text.replace(KERNEL_WAIT_BUGGY, KERNEL_WAIT_FIXED))
        print(f"[build] patched the kernel's reply wait in extensions/{KERNEL_EXTENSION}/static/{chunk.name}")
    return chunk
