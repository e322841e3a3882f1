"""Nothing an agent does loses a person's text, in the real JupyterLab: big cells read in pages (a write built
from a cut read is refused), CRLF cells, cells the notebook's author locked."""

from __future__ import annotations

from playwright.sync_api import Page

from lite_site import open_notebook
from test_tools import call, ok

MODEL = "window.jupyterapp.shell.currentWidget.context.model"


def source_of(page: Page, index: int) -> str:
    return page.evaluate(f"(i) => {MODEL}.cells.get(i).sharedModel.getSource()", index)


def editor_text(page: Page, index: int) -> str:
    """What the person's editor shows for cell ``index`` (CodeMirror's document, lines joined by LF)."""
    return page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].editor.model.sharedModel.getSource()", index)


def test_a_250_kb_cell_is_read_in_pages_and_a_cut_write_is_refused(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    only = ok(page, "jupyter_get_cells")["cells"][0]
    # the person's big cell: 16,382 ASCII bytes, then characters of 3 and 4 bytes across the first cut
    text = page.evaluate(f"""() => {{
      let t = "x".repeat(16382) + "日本😀";
      while (new TextEncoder().encode(t).length < 250000) t += "\\n# ドキュメント 🤗 " + t.length;
      {MODEL}.cells.get(0).sharedModel.setSource(t);
      return t;
    }}""")
    first = ok(page, "jupyter_get_cells", {"cellIds": [only["id"]]})["cells"][0]
    assert first["sourceTruncated"] is True and first["nextSourceOffset"] == 16382
    refused, _ = call(page, "jupyter_update_cell", {"cellId": only["id"], "source": first["source"] + "\nprint(1)",
                                                     "expectedSourceHash": first["sourceHash"]})
    assert refused["error"] == "SOURCE_NOT_FULLY_READ" and refused["nextSourceOffset"] == 16382
    assert source_of(page, 0) == text  # nothing changed
    parts, offset = [], 0
    while offset is not None:
        snap = ok(page, "jupyter_get_cells", {"cellIds": [only["id"]], "sourceOffset": offset})["cells"][0]
        parts.append(snap["source"])
        offset = snap["nextSourceOffset"]
    assert "".join(parts) == text
    ok(page, "jupyter_update_cell", {"cellId": only["id"], "source": "".join(parts) + "\nprint(1)", "expectedSourceHash": first["sourceHash"]})
    assert source_of(page, 0) == text + "\nprint(1)"
    # the export continues where it stopped, to the last byte
    doc, offset = [], 0
    while offset is not None:
        part = ok(page, "jupyter_export_notebook", {"offset": offset})
        doc.append(part["document"])
        offset = part["nextOffset"]
    assert len(doc) >= 5 and text + "\nprint(1)" in "".join(doc)
    assert not page_log.own_page_errors()
