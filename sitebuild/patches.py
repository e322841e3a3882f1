"""Patches the build applies to pinned upstream files until upstream fixes them.

Each patch is a text replacement in the built kernel extension, made only where the pinned build's exact text is
found once. Degraded mode: when it is not (another kernel version: the canary, ``.ci/canary``, or a site author's
own), the build warns, names the patch and what the site then lacks, and goes on with the kernel as it is: the site
works, with the upstream race the patch closes (docs/UPSTREAM.md has each one's reproduction). The reply-wait race
stays closed there too: the loader's page-wide ``Atomics.waitAsync`` fix covers it on a JupyterLite page.
The CPython tests check that the default pins' build carries every patch, so a silently skipped patch on the
pinned kernel fails the gate."""

from __future__ import annotations

from pathlib import Path

from sitebuild.util import OUTPUT, write_if_changed

#: The pinned kernel's main-thread messaging (the `coincident` library bundled in the pyodide-kernel extension)
#: waits for each reply from the kernel's worker with ``Atomics.waitAsync(buffer, 0)`` (expected value 0) and calls
#: ``.value.then`` on the result. When the worker has already written the reply, as happens when it answers
#: before the main thread starts waiting, ``waitAsync`` returns ``{async: false, value: "not-equal"}`` (ECMA-262,
#: Atomics.waitAsync), the ``.then`` throws ``A(...).value.then is not a function``, and the kernel's execute
#: reply is lost: JupyterLab keeps the cell running forever. The patch wraps that one call so a synchronous
#: result becomes a resolved promise, exactly what the asynchronous path gives a moment later. The text is
#: the pinned build's (jupyterlite-pyodide-kernel in the dev extra); a new pin must be re-checked: the build
#: warns and leaves the chunk as it is if the text is gone (the module's degraded mode).
KERNEL_EXTENSION = "@jupyterlite/pyodide-kernel-extension"
KERNEL_WAIT_BUGGY = "A=(e,t)=>e?c(t,0):"
KERNEL_WAIT_FIXED = "A=(e,t)=>e?(x=>x.async?x:{value:Promise.resolve(x.value)})(c(t,0)):"


def _patch_once(output: Path, buggy: str, fixed: str, what: str, constant: str, apply: bool = True) -> Path | None:
    """Replace ``buggy`` by ``fixed`` in the one chunk of the built kernel extension that holds either; return it.

    Idempotent: a chunk already patched is left as it is. Degraded mode: unless exactly one chunk of
    ``extensions/@jupyterlite/pyodide-kernel-extension/static/`` holds the unpatched or the patched text once, nothing
    is changed, a warning naming ``constant`` is printed, and None is returned (the build goes on without it).
    ``apply=False`` only looks: the chunk that would be patched, or None (no warning).
    """
    static = output / "extensions" / KERNEL_EXTENSION / "static"
    found = []
    for chunk in sorted(static.glob("*.js")):
        text = chunk.read_text(encoding="utf-8")
        count_buggy, count_fixed = text.count(buggy), text.count(fixed)
        if count_buggy or count_fixed:
            found.append((chunk, text, count_buggy, count_fixed))
    if len(found) != 1 or found[0][2] + found[0][3] != 1:
        if not apply:
            return None
        print(
            f"[build] WARNING: {what} was not found exactly once in {static} "
            f"({[(c.name, b, f) for c, _, b, f in found]}): this kernel is not the pinned one; the site is built "
            f"without this patch (the kernel keeps the upstream race, docs/UPSTREAM.md); re-check {constant}"
        )
        return None
    chunk, text, count_buggy, _ = found[0]
    if count_buggy and apply:
        write_if_changed(chunk, text.replace(buggy, fixed))
        print(f"[build] patched {what} in extensions/{KERNEL_EXTENSION}/static/{chunk.name}")
    return chunk


def patch_kernel_messaging(output: Path = OUTPUT) -> Path | None:
    """Apply the ``KERNEL_WAIT_FIXED`` patch to the built kernel extension's chunk; return the patched file.

    Idempotent: a chunk already patched is left as it is. Unless exactly one chunk of
    ``extensions/@jupyterlite/pyodide-kernel-extension/static/`` holds the unpatched or the patched text once, warns
    and returns None (``_patch_once``'s degraded mode).
    """
    return _patch_once(output, KERNEL_WAIT_BUGGY, KERNEL_WAIT_FIXED, "the kernel's reply wait", "KERNEL_WAIT_BUGGY")


def _patch_both(output: Path, halves: list[tuple[str, str, str, str]]) -> tuple[Path | None, Path | None]:
    """Apply two patches that only work together (the main thread's side and the worker's side of one exchange),
    each ``(buggy, fixed, what, constant)``: both, or, when either text is not found, neither (each missing one
    warns, as ``_patch_once`` does). Returns the two patched files, or (None, None)."""
    if all(_patch_once(output, *half, apply=False) is not None for half in halves):
        first, second = (_patch_once(output, *half) for half in halves)
        return first, second
    for half in halves:
        if _patch_once(output, *half, apply=False) is None:
            _patch_once(output, *half)  # the warning
    print(f"[build] WARNING: so {halves[0][2]} is not patched either (the two halves work only together)")
    return None, None


#: The kernel's files under /drive are the page's contents, reached from the kernel's worker by a synchronous
#: request to the main thread (``processDriveRequest``). When the contents manager rejects one there (a stat of a
#: file that is gone: ``getattr`` does not catch, unlike ``lookup``), the main thread rethrows the error as an
#: uncaught page error and answers nothing; the worker's drive code then reads a field of ``undefined`` inside
#: the Emscripten ``stat`` call, a JavaScript TypeError in the middle of a system call, and Pyodide stops for good
#: ("Pyodide has suffered a fatal error ... at Object.stat"; a later ``loadPackage`` then fails with
#: "importlib.invalidate_caches is not a function"): the kernel never starts, or dies. The two patches make
#: such a failure what a file system does: the main thread logs it (console.warn, naming the request) and
#: answers nothing, and the worker turns a missing answer into ENOENT, an OSError in Python.
DRIVE_MAIN_BUGGY = "await this._contentsProcessor.processDriveRequest(e)}"
DRIVE_MAIN_FIXED = (
    'await this._contentsProcessor.processDriveRequest(e).catch(t=>{console.warn("kernel drive request failed",'
    "e&&e.method,e&&e.path,String(t))})}"
)
DRIVE_WORKER_BUGGY = "request(e){return B.processDriveRequest(e)}"
DRIVE_WORKER_FIXED = (
    "request(e){let t=B.processDriveRequest(e);"
    "if(void 0===t)throw new this.FS.ErrnoError(this.ERRNO_CODES.ENOENT);return t}"
)


def patch_kernel_drive(output: Path = OUTPUT) -> tuple[Path | None, Path | None]:
    """Apply the ``DRIVE_MAIN_FIXED`` and ``DRIVE_WORKER_FIXED`` patches; return (main chunk, worker file).
    Idempotent; both or neither: a text not found is a warning and (None, None) (``_patch_both``)."""
    return _patch_both(
        output,
        [
            (DRIVE_MAIN_BUGGY, DRIVE_MAIN_FIXED, "the main thread's drive requests", "DRIVE_MAIN_BUGGY"),
            (DRIVE_WORKER_BUGGY, DRIVE_WORKER_FIXED, "the kernel worker's drive requests", "DRIVE_WORKER_BUGGY"),
        ],
    )


#: The kernel's messaging (``coincident``) hands a reply's text from one thread to the other through a shared buffer
#: in two steps: the length with a flag (``buffer[0] = 1``, then ``Atomics.notify``), then the text itself, written
#: into a new buffer one UTF-16 unit at a time from index 0, then notified. The reader waits while ``buffer[0]``
#: (the first two units) is 0. The writer's first unit makes it non-zero: a reader that only starts waiting once
#: the copy has begun (its thread was descheduled between posting its request and waiting, as on a busy machine)
#: is answered "not-equal" at once and reads a half-written text: "Bad control character in string literal in
#: JSON" in the worker during a drive request, a Pyodide fatal error, and the kernel never starts
#: ("importlib.invalidate_caches is not a function"), or a reply lost in the other direction. The patches write
#: the text from its third unit on and publish its first two last, with ``Atomics.store`` (which also orders the
#: writes before it for the reader), and set the length flag with ``Atomics.store`` too; on both sides (the main
#: thread's chunk and the worker).
TRANSFER_MAIN_BUGGY = (
    "u[0]=1}else{let e=a.get(s);a.delete(s);for(let t=new d(u.buffer),n=0;n<e.length;n++)t[n]=e.charCodeAt(n)}"
)
TRANSFER_MAIN_FIXED = (
    "Atomics.store(u,0,1)}else{let e=a.get(s);a.delete(s);for(let t=new d(u.buffer),n=2;n<e.length;n++)"
    "t[n]=e.charCodeAt(n);Atomics.store(u,0,e.charCodeAt(0)|(e.length>1?e.charCodeAt(1):0)<<16)}"
)
TRANSFER_WORKER_BUGGY = (
    "o[0]=1}else{let e=n.get(s);n.delete(s);for(let t=new Pe(o.buffer),i=0;i<e.length;i++)t[i]=e.charCodeAt(i)}"
)
TRANSFER_WORKER_FIXED = (
    "Atomics.store(o,0,1)}else{let e=n.get(s);n.delete(s);for(let t=new Pe(o.buffer),i=2;i<e.length;i++)"
    "t[i]=e.charCodeAt(i);Atomics.store(o,0,e.charCodeAt(0)|(e.length>1?e.charCodeAt(1):0)<<16)}"
)


def patch_kernel_transfer(output: Path = OUTPUT) -> tuple[Path | None, Path | None]:
    """Apply the ``TRANSFER_MAIN_FIXED`` and ``TRANSFER_WORKER_FIXED`` patches; return (main chunk, worker file).
    Idempotent; both or neither: a text not found is a warning and (None, None) (``_patch_both``)."""
    return _patch_both(
        output,
        [
            (TRANSFER_MAIN_BUGGY, TRANSFER_MAIN_FIXED, "the main thread's reply transfer", "TRANSFER_MAIN_BUGGY"),
            (
                TRANSFER_WORKER_BUGGY,
                TRANSFER_WORKER_FIXED,
                "the kernel worker's reply transfer",
                "TRANSFER_WORKER_BUGGY",
            ),
        ],
    )
