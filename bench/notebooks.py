"""The benchmark's notebooks, written with nbformat into a folder that only the bench sites add to their content.

    bench-10.ipynb, bench-100.ipynb, bench-1000.ipynb   cells of a typical analysis notebook: one markdown
        cell in four, code cells of six lines with a short stream output and an execute_result
    bench-large.ipynb   one cell printing a 20 MB stream output, then 50 cells each showing a large PNG
        (incompressible pixels, about 260 KB of base64 each)

Cell ids are fixed (``c0000`` ...), so both sites see the same ids.
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
            nb.cells.append(v4.new_markdown_cell(f"## Step {i}\n\nWe look at the data of step {i} and plot it.", id=cid))
            continue
        source = "\n".join([
            "import math",
            f"values = [math.sin(x / {i + 1}) for x in range(50)]",
            "total = sum(values)",
            f"print('step {i}', round(total, 3))",
            "# a comment to make the cell look like real code",
            "total * 2",
        ])
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
    nb.cells.append(v4.new_code_cell("for n in range(N):\n    print(f'log line {n:08d}: ...')", id="c0001",
                                     execution_count=1, outputs=[v4.new_output("stream", name="stdout", text=text)]))
    for i in range(IMAGES):
        data = {"image/png": base64.b64encode(png(IMAGE_SIDE, IMAGE_SIDE, rng)).decode(),
                "text/plain": "<Figure size 640x480 with 1 Axes>"}
        nb.cells.append(v4.new_code_cell(f"plt.imshow(noise({i}))\nplt.show()", id=f"c{i + 2:04d}", execution_count=i + 2,
                                         outputs=[v4.new_output("display_data", data=data)]))
    return nb


def write_notebooks(folder: Path, sizes=SIZES, large: bool = True) -> list[str]:
    """Write the notebooks into `folder` (only those missing); return their names."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {name_for(n): (lambda n=n: cells_notebook(n)) for n in sizes}
    if large:
        wanted[name_for("large")] = large_notebook
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
