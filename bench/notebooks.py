"""The benchmark's notebooks, written with nbformat into a folder that only the bench sites add to their content.

Timed calls:
    bench-10.ipynb, bench-100.ipynb, bench-1000.ipynb   cells of a typical analysis notebook: one markdown
        cell in four, code cells of six lines with a short stream output and an execute_result
    bench-large.ipynb   one cell printing a 20 MB stream output, then 50 cells each showing a large PNG
        (incompressible pixels, about 260 KB of base64 each)
Opened (the longest main-thread task while each opens, and during the first calls on it):
    bench-images.ipynb   48 cells each showing a large PNG (12.6 MB of base64 in all)
    bench-stream.ipynb   one cell with a 16 MB stream output
    bench-3000.ipynb     3,000 cells of the typical kind
    bench-v44.ipynb      200 typical cells saved as nbformat 4.4 (no cell ids: JupyterLab assigns them on open)
    bench-mime.ipynb     a cell whose output has a MIME type no renderer knows, with an 8 MB payload

Cell ids are fixed (``c0000`` ...), so both sites see the same ids (bench-v44 has none).
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from pathlib import Path

import nbformat
from nbformat import v4

SIZES = (10, 100, 1000)
STREAM_BYTES = 20 * 1024 * 1024
IMAGES = 50
#: the notebooks opened for the long-task figures: name -> what it stands for
OPENED = {
    "images": "48 large images",
    "stream": "a 16 MB stream output",
    "3000": "3,000 cells",
    "v44": "nbformat 4.4 (ids assigned on open)",
    "mime": "an unknown MIME type, 8 MB",
}
OPENED_QUICK = ("v44", "mime")  # small enough for --quick
IMAGE_SIDE = 256  # px; RGB noise, so the PNG barely compresses: ~197 KB, ~262 KB as base64


def name_for(size: int | str) -> str:
    return f"bench-{size}.ipynb"


def png(width: int, height: int, rng: random.Random) -> bytes:
    """A valid RGB PNG of random pixels (incompressible, so its size is what the test wants)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\0" + rng.randbytes(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def cells_notebook(count: int) -> nbformat.NotebookNode:
    nb = v4.new_notebook()
    for i in range(count):
        cid = f"c{i:04d}"
        if i % 4 == 0:
            nb.cells.append(
                v4.new_markdown_cell(f"## Step {i}\n\nWe look at the data of step {i} and plot it.", id=cid)
            )
            continue
        source = "\n".join(
            [
                "import math",
                f"values = [math.sin(x / {i + 1}) for x in range(50)]",
                "total = sum(values)",
                f"print('step {i}', round(total, 3))",
                "# a comment to make the cell look like real code",
                "total * 2",
            ]
        )
        outputs = [
            v4.new_output("stream", name="stdout", text=f"step {i} {i * 0.137:.3f}\n"),
            v4.new_output("execute_result", data={"text/plain": f"{i * 0.274:.3f}"}, execution_count=i),
        ]
        nb.cells.append(v4.new_code_cell(source, id=cid, execution_count=i, outputs=outputs))
    return nb


def large_notebook() -> nbformat.NotebookNode:
    rng = random.Random(5)
    nb = v4.new_notebook()
    nb.cells.append(v4.new_markdown_cell("# A notebook with a 20 MB output and 50 large images", id="c0000"))
    line = "log line %08d: the quick brown fox jumps over the lazy dog, again and again\n"
    text = "".join(line % n for n in range(STREAM_BYTES // len(line % 0)))
    nb.cells.append(
        v4.new_code_cell(
            "for n in range(N):\n    print(f'log line {n:08d}: ...')",
            id="c0001",
            execution_count=1,
            outputs=[v4.new_output("stream", name="stdout", text=text)],
        )
    )
    for i in range(IMAGES):
        data = {
            "image/png": base64.b64encode(png(IMAGE_SIDE, IMAGE_SIDE, rng)).decode(),
            "text/plain": "<Figure size 640x480 with 1 Axes>",
        }
        nb.cells.append(
            v4.new_code_cell(
                f"plt.imshow(noise({i}))\nplt.show()",
                id=f"c{i + 2:04d}",
                execution_count=i + 2,
                outputs=[v4.new_output("display_data", data=data)],
            )
        )
    return nb


def images_notebook(count: int = 48) -> nbformat.NotebookNode:
    rng = random.Random(7)
    nb = v4.new_notebook()
    nb.cells.append(v4.new_markdown_cell(f"# {count} large images", id="c0000"))
    for i in range(count):
        data = {
            "image/png": base64.b64encode(png(IMAGE_SIDE, IMAGE_SIDE, rng)).decode(),
            "text/plain": "<Figure size 640x480 with 1 Axes>",
        }
        nb.cells.append(
            v4.new_code_cell(
                f"plt.imshow(noise({i}))\nplt.show()",
                id=f"c{i + 1:04d}",
                execution_count=i + 1,
                outputs=[v4.new_output("display_data", data=data)],
            )
        )
    return nb


def stream_notebook(size: int = 16 * 1024 * 1024) -> nbformat.NotebookNode:
    nb = v4.new_notebook()
    nb.cells.append(v4.new_markdown_cell("# A 16 MB stream output", id="c0000"))
    line = "log line %08d: the quick brown fox jumps over the lazy dog, again and again\n"
    text = "".join(line % n for n in range(size // len(line % 0)))
    nb.cells.append(
        v4.new_code_cell(
            "for n in range(N):\n    print(f'log line {n:08d}: ...')",
            id="c0001",
            execution_count=1,
            outputs=[v4.new_output("stream", name="stdout", text=text)],
        )
    )
    return nb


def v44_notebook(count: int = 200) -> nbformat.NotebookNode:
    """Typical cells saved as nbformat 4.4: no cell ids (JupyterLab assigns them when it opens the notebook)."""
    nb = cells_notebook(count)
    nb.nbformat_minor = 4
    for cell in nb.cells:
        del cell["id"]
    return nb


def mime_notebook(size: int = 8 * 1024 * 1024) -> nbformat.NotebookNode:
    """One output whose MIME type no renderer knows, with a large payload (JupyterLab falls back to text/plain)."""
    rng = random.Random(9)
    payload = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(4096)) * (size // 4096)
    nb = v4.new_notebook()
    nb.cells.append(v4.new_markdown_cell("# An output of an unknown MIME type", id="c0000"))
    data = {"application/vnd.bench.unknown+json": {"payload": payload}, "text/plain": "<BenchObject>"}
    nb.cells.append(
        v4.new_code_cell(
            "BenchObject()",
            id="c0001",
            execution_count=1,
            outputs=[v4.new_output("execute_result", data=data, execution_count=1)],
        )
    )
    return nb


OPENED_MAKERS = {
    "images": images_notebook,
    "stream": stream_notebook,
    "3000": lambda: cells_notebook(3000),
    "v44": v44_notebook,
    "mime": mime_notebook,
}


def write_notebooks(folder: Path, sizes=SIZES, large: bool = True, opened=tuple(OPENED)) -> list[str]:
    """Write the notebooks into `folder` (only those missing; any other file there is removed); return their names."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {name_for(n): (lambda n=n: cells_notebook(n)) for n in sizes}
    if large:
        wanted[name_for("large")] = large_notebook
    for key in opened:
        wanted[name_for(key)] = OPENED_MAKERS[key]
    for name, make in wanted.items():
        path = folder / name
        if not path.exists():
            nb = make()
            nbformat.validate(nb)
            tmp = path.with_suffix(".tmp")
            # plain json, not nbformat.write: it would store multi-line text as a list of lines, which
            # JupyterLite 0.8.6 loads into the live model joined with commas
            tmp.write_text(json.dumps(nb, indent=1), encoding="utf-8")
            tmp.rename(path)
    for stale in folder.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    return sorted(wanted)
