"""Cell ids of notebooks saved without them (nbformat <= 4.4) are given on open, kept by save (written
as nbformat 4.5) and found again when the saved file is reopened."""

from __future__ import annotations

import json

import nbformat
import pytest

from helpers import Bridge, corpus_json, corpus_text, text_of

NO_IDS = [
    "notebook-running-code.ipynb",
    "ipython-beyond-plain-python.ipynb",
    "sci-python-lecture-0.ipynb",
    "handson-ml2-math-calculus.ipynb",
    "hf-quicktour-ar.ipynb",
    "nbconvert-widget-list.ipynb",
]


def cells(b: Bridge, path: str) -> list[dict]:
    return b.ok("jupyter_get_cells", {"notebookPath": path, "endIndex": 10_000})["cells"]


def all_cells(b: Bridge, path: str) -> list[dict]:
    out, start = [], 0
    while True:
        payload = b.ok("jupyter_get_cells", {"notebookPath": path, "startIndex": start, "includeSource": False})
        out.extend(payload["cells"])
        if not payload["cells"] or out[-1]["index"] + 1 >= payload["cellCount"]:
            return out
        start = out[-1]["index"] + 1


def test_running_code_ids_survive_save_and_reopen():
    name = "notebook-running-code.ipynb"
    original = corpus_json(name)
    assert (original["nbformat"], original["nbformat_minor"]) == (4, 4)
    assert not any("id" in c for c in original["cells"])

    first = Bridge({"demo/running.ipynb": corpus_text(name)})
    first.ok("jupyter_open_notebook", {"path": "demo/running.ipynb"})
    before = cells(first, "demo/running.ipynb")
    ids = [c["id"] for c in before]
    assert len(ids) == 28 and len(set(ids)) == 28 and all(ids)
    assert cells(first, "demo/running.ipynb") == before  # stable across reads
    saved = first.ok("jupyter_save_notebook")
    assert saved == {**saved, "saved": True, "path": "demo/running.ipynb"}
    text = first.ws.files["demo/running.ipynb"]

    on_disk = json.loads(text)
    assert (on_disk["nbformat"], on_disk["nbformat_minor"]) == (4, 5)
    assert [c["id"] for c in on_disk["cells"]] == ids
    nbformat.validate(on_disk)  # against the nbformat 4.5 schema, which requires ids
    assert nbformat.reads(text, as_version=4).nbformat_minor == 5

    second = Bridge({"demo/running.ipynb": text})
    second.ok("jupyter_open_notebook", {"path": "demo/running.ipynb"})
    after = cells(second, "demo/running.ipynb")
    assert [c["id"] for c in after] == ids
    assert [(c["sourceHash"], c["type"], c["source"]) for c in after] == [
        (c["sourceHash"], c["type"], c["source"]) for c in before
    ]
    # a hash read before the save still addresses the same cell after the reopen
    target = before[5]
    second.ok(
        "jupyter_update_cell",
        {"cellId": target["id"], "source": "print(a * 2)", "expectedSourceHash": target["sourceHash"]},
    )


def test_content_is_preserved_by_the_round_trip():
    name = "notebook-running-code.ipynb"
    b = Bridge({"r.ipynb": corpus_text(name)})
    b.ok("jupyter_open_notebook", {"path": "r.ipynb"})
    b.ok("jupyter_save_notebook")
    saved = json.loads(b.ws.files["r.ipynb"])
    original = corpus_json(name)
    assert saved["metadata"] == original["metadata"]
    assert len(saved["cells"]) == len(original["cells"])
    for got, want in zip(saved["cells"], original["cells"], strict=True):
        assert got["cell_type"] == want["cell_type"]
        assert text_of(got["source"]) == text_of(want["source"])
        assert got["metadata"] == want["metadata"]
        if want["cell_type"] == "code":
            assert got["outputs"] == want["outputs"] and got["execution_count"] == want["execution_count"]


@pytest.mark.parametrize("name", NO_IDS)
def test_every_older_corpus_notebook_round_trips(name):
    b = Bridge({"n.ipynb": corpus_text(name)})
    b.ok("jupyter_open_notebook", {"path": "n.ipynb"})
    ids = [c["id"] for c in all_cells(b, "n.ipynb")]
    assert len(set(ids)) == len(corpus_json(name)["cells"])
    b.ok("jupyter_save_notebook")
    text = b.ws.files["n.ipynb"]
    nb = json.loads(text)
    assert nb["nbformat_minor"] == 5
    nbformat.validate(nb)
    reopened = Bridge({"n.ipynb": text})
    reopened.ok("jupyter_open_notebook", {"path": "n.ipynb"})
    assert [c["id"] for c in all_cells(reopened, "n.ipynb")] == ids


def test_existing_ids_are_kept():
    name = "mlbook-ch13-lightning.ipynb"
    want = [c["id"] for c in corpus_json(name)["cells"]]
    b = Bridge({"m.ipynb": corpus_text(name)})
    b.ok("jupyter_open_notebook", {"path": "m.ipynb"})
    assert [c["id"] for c in all_cells(b, "m.ipynb")] == want
    b.ok("jupyter_save_notebook")
    nb = json.loads(b.ws.files["m.ipynb"])
    assert [c["id"] for c in nb["cells"]] == want
    nbformat.validate(nb)


def test_edits_then_save_validate():
    b = Bridge({"e.ipynb": corpus_text("jupyterlite-empty.ipynb")})
    b.ok("jupyter_open_notebook", {"path": "e.ipynb"})
    new = [
        b.ok("jupyter_insert_cell", {"source": s, "cellType": t})["cell"]["id"]
        for s, t in [("x = 1", "code"), ("# مرحبا 🤗", "markdown"), ("raw", "raw")]
    ]
    b.ok("jupyter_run_cells", {"cellIds": [new[0]]})
    b.ok("jupyter_save_notebook")
    nb = json.loads(b.ws.files["e.ipynb"])
    nbformat.validate(nb)
    assert [c["id"] for c in nb["cells"]][1:] == new
    assert nb["cells"][2]["source"] == "# مرحبا 🤗"
