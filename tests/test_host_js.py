"""host.js (the JS half of lab/host.py), run by Node on the file the wheel ships, over a stand-in contents manager
and document manager: it answers paths with JSON text (a file's facts, a folder's entries, a file's text, a saved
notebook's bridge block), null where the contents service has nothing, and a write's failure as {error} cut to the
length Python configured; an editor open on a text file is read and written through its live model. The real
objects are exercised by playwright-tests/test_tools.py and test_attacks_files.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_node

HOST_JS = Path(__file__).resolve().parents[1] / "py_src" / "webmcp_bridge" / "lab" / "host.js"

HARNESS = r"""
const fs = require("fs");
const files = eval(fs.readFileSync(process.argv[1], "utf8"));
const store = {
  "": { type: "directory", path: "", name: "", content: [
    { type: "notebook", path: "a.ipynb", name: "a.ipynb", last_modified: "T1" },
    { type: "file", path: "t.txt", name: "t.txt" },
    { type: "directory", path: "d", name: "d" }] },
  "a.ipynb": { type: "notebook", path: "a.ipynb", name: "a.ipynb", size: 120, last_modified: "T1", format: "json",
               content: { metadata: { webmcp_bridge: { access: "hidden" } },
                          cells: [{ metadata: {} }, { metadata: { webmcp_bridge: { access: "none" } } }, null] } },
  "t.txt": { type: "file", path: "t.txt", name: "t.txt", size: 5, last_modified: "T2", format: "text",
             content: "hello" },
  "b64.txt": { type: "file", path: "b64.txt", name: "b64.txt", format: "base64",
               content: Buffer.from("é ok").toString("base64") },
  "bin.dat": { type: "file", path: "bin.dat", name: "bin.dat", format: "base64",
               content: Buffer.from([0xff, 0xfe]).toString("base64") },
  "j.json": { type: "file", path: "j.json", name: "j.json", format: "json", content: { a: [1, 2] } },
};
const saved = [];
const contents = {
  async get(path, options) {
    if (!(path in store)) throw new Error(`${path} not found`);
    const model = { ...store[path] };
    if (!options.content) delete model.content;
    return model;
  },
  async save(path, model) {
    if (path.startsWith("ro/")) throw new Error("Forbidden: " + "x".repeat(500));
    saved.push([path, model]);
    return model;
  },
};
let editorText = "live text";
const editor = { context: {
  contentsModel: { type: "file", format: "text" },
  model: { sharedModel: { getSource: () => editorText, setSource: (t) => { editorText = t; } } },
  saves: 0, async save() { this.saves++; },
} };
const docs = { findWidget: (path) => (path === "open.txt" ? editor : undefined) };
globalThis.document = {
  getElementById: (id) => (id === "jupyter-config-data"
    ? { textContent: JSON.stringify({ webmcpBridgeOutsideUrl: "/base/webmcp-bridge/outside" }) } : null),
  cookie: "theme=dark; _xsrf=2|ab=cd|9; empty",
};
files.attach({ app: { serviceManager: { contents, serverSettings: { token: "" } } }, docManager: docs });
files.configure("webmcp_bridge", 100);
(async () => {
  const out = {
    root: JSON.parse(files.serverRoot("webmcpBridgeOutsideUrl")),
    rootOtherKey: JSON.parse(files.serverRoot("noSuchKey")),
    xsrf: files.cookie("_xsrf"), noCookie: files.cookie("session"), bare: files.cookie("empty"),
    stat: JSON.parse(await files.stat("a.ipynb")), statMissing: await files.stat("nope"),
    statDir: JSON.parse(await files.stat("")),
    list: JSON.parse(await files.listDir("")), listFile: await files.listDir("t.txt"),
    meta: JSON.parse(await files.notebookMetadata("a.ipynb")), metaText: await files.notebookMetadata("t.txt"),
    text: JSON.parse(await files.fileText("t.txt")), b64: JSON.parse(await files.fileText("b64.txt")),
    bin: JSON.parse(await files.fileText("bin.dat")), json: JSON.parse(await files.fileText("j.json")),
    nb: JSON.parse(await files.fileText("a.ipynb")), missing: await files.fileText("nope"),
    live: files.openText("open.txt"), notOpen: files.openText("t.txt"),
    writeOpen: JSON.parse(await files.writeText("open.txt", "new")),
    writeClosed: JSON.parse(await files.writeText("w.txt", "w")),
    writeFailed: JSON.parse(await files.writeText("ro/x.txt", "w")),
    saveModel: JSON.parse(await files.saveModel("n.ipynb",
                                                JSON.stringify({ type: "notebook", format: "json", content: {} }))),
  };
  Object.assign(out, { editorText, editorSaves: editor.context.saves, saved });
  console.log(JSON.stringify(out));
})();
"""


@pytest.fixture(scope="module")
def out() -> dict:
    return run_node(HARNESS, str(HOST_JS))


def test_facts_of_files_and_folders(out):
    assert out["root"] == {"url": "/base/webmcp-bridge/outside", "token": None}  # JupyterLite's settings: no token
    assert out["stat"] == {"path": "a.ipynb", "name": "a.ipynb", "type": "notebook", "size": 120, "lastModified": "T1"}
    assert out["statDir"]["type"] == "directory" and out["statDir"]["size"] is None
    assert out["statMissing"] is None  # a rejection of the contents service answers null
    # a listing's modification times let the run rule read a saved notebook again only when it changed
    assert out["list"] == [
        ["a.ipynb", "a.ipynb", "notebook", "T1"],
        ["t.txt", "t.txt", "file", None],
        ["d", "d", "directory", None],
    ]
    assert out["listFile"] is None  # not a folder
    # the notebook's block and its cells' blocks (those that have one): what the run rule reads of a closed notebook
    assert out["meta"] == {"value": {"access": "hidden"}, "cells": [{"access": "none"}]} and out["metaText"] is None


def test_a_files_text_as_found(out):
    assert out["text"] == {"kind": "text", "text": "hello"}
    assert out["b64"] == {"kind": "text", "text": "é ok"}  # base64 that is strict UTF-8
    assert out["bin"] == {"kind": "binary"}
    assert json.loads(out["json"]["text"]) == {"a": [1, 2]}
    assert out["nb"] == {"kind": "notebook"} and out["missing"] is None


def test_an_open_editor_is_read_and_written_through_its_live_model(out):
    assert out["live"] == "live text" and out["notOpen"] is None
    assert out["writeOpen"] == {} and out["editorText"] == "new" and out["editorSaves"] == 1
    assert out["writeClosed"] == {}
    assert ["w.txt", {"type": "file", "format": "text", "content": "w"}] in out["saved"]


def test_a_failed_write_is_reported_cut_to_the_configured_length(out):
    error = out["writeFailed"]["error"]
    assert error.startswith("Forbidden: ") and len(error) == 100
    assert out["saveModel"] == {} and out["saved"][-1][0] == "n.ipynb"


def test_the_server_roots_facts_come_from_the_page_config_and_cookie(out):
    """serverRoot reads the page config's string under the key Python names (null under another); cookie finds a
    cookie by exact name, its value kept whole (an '=' inside it too), null when the page has none."""
    assert out["rootOtherKey"] == {"url": None, "token": None}
    assert out["xsrf"] == "2|ab=cd|9" and out["noCookie"] is None and out["bare"] == ""
