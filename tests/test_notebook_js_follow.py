"""notebook.js following the open notebooks for the person's side (lab/ui/notebooks.py), run by Node on the file the
wheel ships over stand-ins for JupyterLab's tracker and panels: ``follow`` reports the tracker's current and added
panels, ``watch`` a panel's active cell and closing (no clicks: the cell markers' buttons report theirs through
``ui/dom.js``), all as ``[kind, handle]`` JSON text to one sink; ``activate`` brings a handle's panel to the front;
``unwatch`` and ``follow(null)`` disconnect everything they connected. The real objects are exercised by
playwright-tests/test_panel.py.
"""

from __future__ import annotations

import pytest

from helpers import run_notebook_js

HARNESS = r"""
function panel(id, path) {
  const listeners = [];
  return {
    id, isDisposed: false, disposed: signal(),
    node: { listeners, addEventListener(kind, fn) { listeners.push(fn); },
            removeEventListener(kind, fn) { const i = listeners.indexOf(fn); if (i >= 0) listeners.splice(i, 1); } },
    content: { activeCellChanged: signal(), widgets: [] },
    context: { path, saveState: signal(),
               model: { sharedModel: { ydoc: { on() {} } }, cells: { length: 0, get: () => null, changed: signal() } },
             },
  };
}
const one = panel("id-1", "a.ipynb"), two = panel("id-2", "b.ipynb");
const tracker = { currentWidget: one, currentChanged: signal(), widgetAdded: signal(), find: (t) => [one, two].find(t),
                  filter: () => [one] };
const activated = [];
live.attach({ tracker, app: { shell: { activateById: (id) => activated.push(id) } } });
const events = [];
live.follow((text) => events.push(JSON.parse(text)));
const h1 = live.current();
live.watch(h1);
live.watch(h1);  // watching again adds nothing
const clickListeners = one.node.listeners.length;
one.content.activeCellChanged.emit(one.content);
live.activate(h1);
tracker.widgetAdded.emit(tracker, two);
tracker.currentChanged.emit(tracker, two);
tracker.currentChanged.emit(tracker, null);
const h2 = JSON.parse(live.findViewed("b.ipynb")).handle;
live.watch(h2);
live.unwatch(h2);
const afterUnwatch = { listeners: two.node.listeners.length, active: two.content.activeCellChanged.slots.length,
                       disposed: two.disposed.slots.length };
one.isDisposed = true;
one.disposed.emit(one);
let gone = null;
try { live.revision(h1); } catch (e) { gone = e.name; }
live.unwatch(h1);
live.follow(null);
console.log(JSON.stringify({ h1, h2, events, clickListeners, activated, afterUnwatch, gone,
  oneListeners: one.node.listeners.length,
  trackerSlots: [tracker.currentChanged.slots.length, tracker.widgetAdded.slots.length] }));
"""


@pytest.fixture(scope="module")
def out() -> dict:
    return run_notebook_js(HARNESS)


def test_the_open_notebooks_are_reported_by_handle(out):
    assert out["h1"] == "id-1" and out["h2"] == "id-2"
    assert out["events"] == [
        ["active", "id-1"],
        ["added", "id-2"],
        ["current", "id-2"],
        ["current", None],
        ["closed", "id-1"],
    ]
    assert out["clickListeners"] == 0  # the markers' buttons report their clicks themselves (ui/dom.js)
    assert out["activated"] == ["id-1"]  # activate(handle) brings that panel to the front


def test_unwatching_and_stopping_disconnect_everything(out):
    assert out["afterUnwatch"] == {"listeners": 0, "active": 0, "disposed": 1}  # the table's own disposal slot stays
    assert out["oneListeners"] == 0 and out["trackerSlots"] == [0, 0]
    assert out["gone"] == "NotebookGone"  # a closed panel's handle is dropped from the table
