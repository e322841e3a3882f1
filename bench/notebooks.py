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
The agent jobs of bench/reads.py:
    bench-jobs.ipynb     an analysis in sections (headings, streams, results, an HTML table, a long log), one of
        whose cells failed when it last ran (its traceback saved) and runs once fixed

Cell ids are fixed (``c0000`` ...), so both sites see the same ids (bench-v44 has none).
"""

from __future__ import annotations

import base64
import json
import random
import statistics
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


#: bench-jobs.ipynb: the failing cell's id, the text that makes it fail and what replaces it (the scripted fix)
JOB_FAILING = ("c0017", "total = values.sum()", "total = sum(values)")
#: bench-jobs.ipynb: the section whose outputs bench/reads.py's job summarizes
JOB_SECTION = "Summary statistics"


def jobs_notebook() -> nbformat.NotebookNode:
    """bench-jobs.ipynb: 40 cells of a small sales analysis in sections. Its outputs are the kinds a notebook holds
    (streams, results, an HTML table with its text, a 300-line log, an error with an ANSI traceback); cell
    :data:`JOB_FAILING` raised an AttributeError when it last ran and runs in the site's kernel once fixed."""
    rng = random.Random(11)
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    ids = (f"c{i:04d}" for i in range(1000))
    regions = ["north", "south", "east", "west"]

    def md(text: str) -> None:
        nb.cells.append(v4.new_markdown_cell(text, id=next(ids)))

    def code(source: str, *outputs: dict, count: int | None = None) -> None:
        n = len(nb.cells)
        nb.cells.append(v4.new_code_cell(source, id=next(ids), execution_count=count or n, outputs=list(outputs)))

    def stream(text: str) -> dict:
        return v4.new_output("stream", name="stdout", text=text)

    def result(text: str, html: str | None = None) -> dict:
        data = {"text/plain": text} if html is None else {"text/html": html, "text/plain": text}
        return v4.new_output("execute_result", data=data, execution_count=len(nb.cells))

    sales = [(r, m, rng.randint(80, 400)) for r in regions for m in range(1, 13)]
    md("# Sales analysis\n\nA small analysis of monthly sales per region, written as a course example.")
    md("## Setup\n\nThe standard library is enough: no extra package is needed.")
    code("import math\nimport statistics\nfrom collections import defaultdict")
    code(f"REGIONS = {regions!r}\nMONTHS = range(1, 13)")
    md("## Loading\n\nThe sales are generated, one row per region and month.")
    code(
        f"rows = {sales[:6]!r}  # and so on\nprint(len(rows), 'rows loaded')",
        stream(f"{len(sales)} rows loaded\n"),
    )
    code("rows[:3]", result(repr(sales[:3])))
    md("Each row is `(region, month, units)`.")
    md(f"## {JOB_SECTION}\n\nTotals, means and spreads per region.")
    totals = {r: sum(u for rr, _, u in sales if rr == r) for r in regions}
    code(
        "totals = defaultdict(int)\nfor region, month, units in rows:\n    totals[region] += units\ndict(totals)",
        result(repr(totals)),
    )
    means = {r: round(totals[r] / 12, 1) for r in regions}
    code("means = {r: round(t / 12, 1) for r, t in totals.items()}\nmeans", result(repr(means)))
    table = "\n".join(f"{r:<6} {totals[r]:>6} {means[r]:>7}" for r in regions)
    html = (
        "<table><tr><th>region</th><th>total</th><th>mean</th></tr>"
        + "".join(f"<tr><td>{r}</td><td>{totals[r]}</td><td>{means[r]}</td></tr>" for r in regions)
        + "</table>"
    )
    code("summary_table(totals, means)", result("region  total    mean\n" + table, html))
    spreads = {r: round(statistics.pstdev([u for rr, _, u in sales if rr == r]), 2) for r in regions}
    code(
        "spreads = {r: round(statistics.pstdev(units_of(r)), 2) for r in REGIONS}\nfor r, s in spreads.items():\n"
        "    print(f'{r}: {s}')",
        stream("".join(f"{r}: {s}\n" for r, s in spreads.items())),
    )
    md("The spread is about a quarter of the mean everywhere.")
    log = "".join(
        f"month {m:02d} region {r:<5} units {u:>4} running {i * 7 % 997:>4}\n" for i, (r, m, u) in enumerate(sales * 6)
    )
    code(
        "for i, (region, month, units) in enumerate(rows * 6):\n    print(f'month {month:02d} region {region:<5} "
        "units {units:>4} running {i * 7 % 997:>4}')",
        stream(log),
    )
    md("## A check that failed\n\nThe next cell was written in a hurry.")
    failing_id, bad, _ = JOB_FAILING
    ansi = "\x1b[0;31m{}\x1b[0m".format
    traceback = [
        ansi("-" * 75),
        ansi("AttributeError") + " " * 28 + "Traceback (most recent call last)",
        "Cell \x1b[0;32mIn[17], line 2\x1b[0m\n      1 values = [3, 1, 4, 1, 5]\n\x1b[0;32m----> 2\x1b[0m total = "
        "\x1b[43mvalues\x1b[49m\x1b[43m.\x1b[49m\x1b[43msum\x1b[49m()",
        ansi("AttributeError") + ": 'list' object has no attribute 'sum'",
    ]
    error = v4.new_output(
        "error", ename="AttributeError", evalue="'list' object has no attribute 'sum'", traceback=traceback
    )
    while len(nb.cells) < int(failing_id[1:]):
        md("A note on the check.")
    nb.cells.append(
        v4.new_code_cell(
            f"values = [3, 1, 4, 1, 5]\n{bad}\nprint(total)", id=failing_id, execution_count=17, outputs=[error]
        )
    )
    next(ids)
    md("## Results\n\nWhat the totals say.")
    best = max(totals, key=totals.get)
    code("best = max(totals, key=totals.get)\nprint('best region:', best)", stream(f"best region: {best}\n"))
    code("sorted(totals.items(), key=lambda kv: -kv[1])", result(repr(sorted(totals.items(), key=lambda kv: -kv[1]))))
    for r in regions:
        md(f"### {r.title()}\n\nMonthly units of the {r} region.")
        code(
            f"[units for region, month, units in rows if region == {r!r}]",
            result(repr([u for rr, _, u in sales if rr == r])),
        )
    md("## Notes\n\n- generated data\n- no plots: the outputs are text")
    return nb


OPENED_MAKERS = {
    "images": images_notebook,
    "stream": stream_notebook,
    "3000": lambda: cells_notebook(3000),
    "v44": v44_notebook,
    "mime": mime_notebook,
}


def write_job_notebook(folder: Path) -> Path:
    """Write bench-jobs.ipynb (:func:`jobs_notebook`) into ``folder`` (again each time: it is small); return its
    path."""
    folder.mkdir(parents=True, exist_ok=True)
    nb = jobs_notebook()
    nbformat.validate(nb)
    path = folder / name_for("jobs")
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")  # plain json, as write_notebooks (below) says
    return path


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
