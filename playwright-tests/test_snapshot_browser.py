"""The bridge worker's memory snapshot, as the site's build made it (sitebuild/snapshot.py): Python starts from it
(no initialisation, no import) and answers the agent as a normal start does; a snapshot that does not fit (here its
memory damaged in transit) fails its smoke test, the worker starts Python normally, and the status item says why.

The service worker is blocked so that the worker's fetch of the snapshot reaches the test's route."""

from __future__ import annotations

import gzip

from lite_site import bridge_status, lab_url, wait_for_bridge
from test_start import CALL, HeldRuntime

NOTEBOOK = "notebook-running-code.ipynb"
MEMORY = "**/extensions/jupyterlab-webmcp-bridge/static/snapshot/memory.bin.gz"


def answers_as_usual(page) -> None:
    cells, failed = page.evaluate(CALL, ["jupyter_get_cells", {"startIndex": 0, "endIndex": 8}])
    assert failed is False and len(cells["cells"]) == 8, cells
    code = next(c for c in cells["cells"] if c["type"] == "code")
    updated, failed = page.evaluate(
        CALL,
        [
            "jupyter_update_cell",
            {"cellId": code["id"], "source": "print('from the agent')", "expectedSourceHash": code["sourceHash"]},
        ],
    )
    assert failed is False and updated["cell"]["id"] == code["id"], updated
    assert updated["cell"]["sourceHash"] != code["sourceHash"], updated
    stale, failed = page.evaluate(
        CALL, ["jupyter_update_cell", {"cellId": code["id"], "source": "x", "expectedSourceHash": "0" * 16}]
    )
    assert failed is True and stale["error"] == "STALE_CELL", stale  # pydantic-core's validation and the errors


def test_python_starts_from_the_sites_snapshot_and_answers_as_usual(browser, site_url):
    held = HeldRuntime(browser)
    held.release()
    try:
        held.page.goto(lab_url(site_url, NOTEBOOK))
        status = wait_for_bridge(held.page)
        assert status["state"] == "ready", status
        assert status["worker"]["snapshot"] == {"used": True, "reason": None}, status["worker"]
        names = [name for name, _began, _ended in status["timings"]["steps"]]
        assert "snapshot" in names and "bridge" not in names, names  # no wheel installed, nothing imported
        assert "started from the site's memory snapshot" in held.page.locator("#webmcp-bridge-status").get_attribute(
            "title"
        )
        answers_as_usual(held.page)
        assert held.page_errors() == []
    finally:
        held.close()


def test_a_broken_snapshot_is_caught_before_use_and_python_starts_normally_saying_why(browser, site_url):
    held = HeldRuntime(browser)
    held.release()

    def damaged(route) -> None:
        memory = bytearray(gzip.decompress(route.fetch().body()))
        quarter = len(memory) // 4
        memory[quarter : 2 * quarter] = bytes(quarter)  # a quarter of Python's memory gone: its objects with it
        route.fulfill(body=gzip.compress(bytes(memory), compresslevel=1), content_type="application/gzip")

    held.context.route(MEMORY, damaged)
    try:
        held.page.goto(lab_url(site_url, NOTEBOOK))
        status = wait_for_bridge(held.page)
        assert status["state"] == "ready", status
        snapshot = status["worker"]["snapshot"]
        assert snapshot["used"] is False and snapshot["reason"].startswith("it did not restore"), snapshot
        title = held.page.locator("#webmcp-bridge-status").get_attribute("title")
        assert "started normally: the memory snapshot: it did not restore" in title, title
        names = [name for name, _began, _ended in bridge_status(held.page)["timings"]["steps"]]
        assert "bridge" in names, names  # the wheels installed and imported: a normal start
        answers_as_usual(held.page)
        assert held.page_errors() == []
    finally:
        held.close()
