"""The demo's notebooks render whole with no network: every image a markdown cell or an HTML output shows is a file
of lite/content/ (or the cell's attachment), never an address on another origin, which the site's policy blocks
and the person would see as a broken image. And they render as saved: no output's data is stored as a list of
lines (nbformat allows it; JupyterLite 0.8 renders such a list joined with commas, jupyterlite/jupyterlite#1105:
a row of ", , ," above every pandas table)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

CONTENT = Path(__file__).resolve().parents[1] / "lite" / "content"
NOTEBOOKS = sorted(CONTENT.rglob("*.ipynb"))
#: an image in markdown (``![alt](src "title")``) or in HTML (``<img ... src="...">``)
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)")
HTML_IMAGE = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"']?([^\"'\s>]+)", re.IGNORECASE)


def images(notebook: dict) -> list[str]:
    """Every image source the notebook's markdown cells and HTML outputs name."""
    found = []
    for cell in notebook["cells"]:
        texts = ["".join(cell["source"])] if cell["cell_type"] == "markdown" else []
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html")
            if html:
                texts.append("".join(html))
        for text in texts:
            found += MARKDOWN_IMAGE.findall(text) + HTML_IMAGE.findall(text)
    return found


def test_the_demo_has_notebooks_with_images_to_check():
    assert len(NOTEBOOKS) >= 6
    # the check sees images: a data URI and a relative file count as shown, a remote address does not
    sample = {"cells": [{"cell_type": "markdown", "source": ['![](https://x.test/a.png) <img src="b.png">']}]}
    assert images(sample) == ["https://x.test/a.png", "b.png"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_image_of_a_demo_notebook_is_in_the_site(path: Path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    broken = []
    for source in images(notebook):
        parts = urlsplit(source)
        if parts.scheme in ("data", "attachment"):
            continue
        if parts.scheme or parts.netloc or not (path.parent / unquote(parts.path)).is_file():
            broken.append(source)
    assert broken == [], f"{path.name} shows images the offline site cannot serve: {broken}"


def lines_lists(notebook: dict) -> list[str]:
    """Where an output's data or stream text is stored as a list of lines: ["cell <i> output <j> <mime type or
    'stream'>", ...]."""
    found = []
    for i, cell in enumerate(notebook["cells"]):
        for j, output in enumerate(cell.get("outputs", [])):
            data = output.get("data", {})
            found += [f"cell {i} output {j} {mime}" for mime, v in data.items() if isinstance(v, list)]
            if isinstance(output.get("text"), list):
                found.append(f"cell {i} output {j} stream")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_output_of_a_demo_notebook_is_stored_as_a_list_of_lines(path: Path):
    sample = {"cells": [{"outputs": [{"data": {"text/html": ["<b>", "</b>"]}}, {"text": ["a\n", "b\n"]}]}]}
    assert lines_lists(sample) == ["cell 0 output 0 text/html", "cell 0 output 1 stream"]
    found = lines_lists(json.loads(path.read_text(encoding="utf-8")))
    assert found == [], f"{path.name} stores outputs as lists of lines, shown with commas by JupyterLite: {found[:5]}"
