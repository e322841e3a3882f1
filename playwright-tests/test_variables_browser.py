"""jupyter_list_variables and jupyter_inspect_variable on the demo site (JupyterLite's Pyodide kernel), as the agent
calls them through native WebMCP: what the cells defined is listed and inspected without the notebook changing,
the kernel's own count and input history stay as they were (the Pyodide kernel stores every request, so the
bridge's program takes itself out), an object planted to leak a secret through its ``__repr__``/``__len__`` and a
replaced ``builtins.repr`` are not run, an expression is refused, and with a hidden cell the person sees the
inspection and decides (the run rule)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from lite_site import KERNEL_TIMEOUT_MS, open_notebook
from test_more_tools import assert_clean, error, settle
from test_propose_browser import box_for, finish_call, start_call
from test_safety import MODEL, open_planted
from test_tools import ok

#: what the probe cell prints: IPython's count, the length of its input history, whether the bridge's program
#: is in that history, and how often the planted object's code ran
PROBE = (
    "ip = get_ipython()\n"
    "print(ip.execution_count, len(In), any(('webmcp' + '_bridge: read-only') in entry for entry in In), "
    "'_webmcp_inspect' in globals(), len(globals().get('ran', ())))"
)
#: what code the agent ran earlier could leave: an object whose repr and len hand over a secret (and record that
#: they ran), and builtins.repr replaced to do the same for it
PLANTED = (
    "import builtins\n"
    "ran = []\n"
    "class Leak:\n"
    "    def __repr__(self):\n"
    "        ran.append('__repr__')\n"
    "        return 'SECRET-TEXT'\n"
    "    def __len__(self):\n"
    "        ran.append('__len__')\n"
    "        return 1\n"
    "leak = Leak()\n"
    "_real_repr = builtins.repr\n"
    "def _spy(value):\n"
    "    if value is leak:\n"
    "        ran.append('builtins.repr')\n"
    "    return _real_repr(value)\n"
    "builtins.repr = _spy\n"
)


def run_cell(page: Page, cell_id: str) -> dict:
    result = ok(page, "jupyter_run_cells", {"cellIds": [cell_id]}, timeout=KERNEL_TIMEOUT_MS)["results"][0]
    assert result["status"] == "ok", result
    return result


def printed(page: Page, cell_id: str) -> str:
    cell = ok(page, "jupyter_get_cells", {"cellIds": [cell_id], "includeOutputs": True})["cells"][0]
    return cell["outputs"][0]["preview"]


def test_the_agent_lists_and_inspects_the_pyodide_kernels_variables_and_leaves_no_trace(page, page_log, site_url):
    open_notebook(page, site_url, "jupyterlite-empty.ipynb")
    first = ok(page, "jupyter_get_cells")["cells"][0]
    ok(
        page,
        "jupyter_update_cell",
        {
            "cellId": first["id"],
            "source": "radius = 2.5\nnames = ['ada', 'grace']\nscores = {'ada': 3, 'grace': 4}\n"
            "def area(r, scale=1):\n    'The area of a disc.'\n    return 3.14159 * r * r * scale\n" + PLANTED,
            "expectedSourceHash": first["sourceHash"],
        },
    )
    probe = ok(page, "jupyter_insert_cell", {"source": PROBE})["cell"]
    run_cell(page, first["id"])
    run_cell(page, probe["id"])
    count, entries, *_ = printed(page, probe["id"]).split()
    settle(page)
    before = ok(page, "jupyter_get_cells", {"includeOutputs": True})
    revision = ok(page, "jupyter_get_context")["notebook"]["revision"]

    listed = ok(page, "jupyter_list_variables", timeout=KERNEL_TIMEOUT_MS)
    by_name = {v["name"]: v for v in listed["variables"]}
    assert {"radius", "names", "scores", "area", "ip"} <= set(by_name) and "In" not in by_name, listed
    assert by_name["radius"] == {"name": "radius", "type": "float", "repr": "2.5", "reprTruncated": False}
    assert by_name["names"]["length"] == 2 and by_name["names"]["repr"] == "['ada', 'grace']"
    assert listed["path"] == "jupyterlite-empty.ipynb" and listed["nextOffset"] is None
    assert by_name["leak"] == {"name": "leak", "type": "__main__.Leak", "repr": "<__main__.Leak object>",
                               "reprTruncated": False}  # fmt: skip
    assert "SECRET-TEXT" not in str(listed) and "SECRET-TEXT" not in str(
        ok(page, "jupyter_inspect_variable", {"name": "leak"})
    )
    scores = ok(page, "jupyter_inspect_variable", {"name": "scores"})
    assert scores["defined"] is True and scores["length"] == 2
    assert scores["items"] == [
        {"key": "'ada'", "type": "int", "repr": "3"},
        {"key": "'grace'", "type": "int", "repr": "4"},
    ]
    area = ok(page, "jupyter_inspect_variable", {"name": "area"})
    assert area["signature"] == "(r, scale=1)" and area["doc"] == "The area of a disc."
    assert ok(page, "jupyter_inspect_variable", {"name": "Out"}) == {
        "path": "jupyterlite-empty.ipynb",
        "name": "Out",
        "defined": False,
    }
    error(page, "jupyter_inspect_variable", {"name": "__import__('os').getcwd()"}, "INVALID_ARGUMENT")

    # nothing of the notebook changed, nothing was shown in it
    assert ok(page, "jupyter_get_cells", {"includeOutputs": True}) == before
    assert ok(page, "jupyter_get_context")["notebook"]["revision"] == revision
    # the kernel's count and history as if only the person's cells had run: the probe, run again, is one run later
    run_cell(page, probe["id"])
    assert printed(page, probe["id"]).split() == [str(int(count) + 1), str(int(entries) + 1), "False", "False", "0"]
    assert_clean(page_log, site_url)


def test_with_a_hidden_cell_the_person_sees_the_inspection_and_decides(page, page_log, site_url):
    open_planted(
        page,
        site_url,
        "hidden-vars.ipynb",
        [
            {
                "cell_type": "code",
                "id": "hid",
                "metadata": {"webmcp_bridge": {"access": "none"}},
                "source": "pin_code = 'PIN-4417'",
                "outputs": [],
                "execution_count": None,
            },
            {
                "cell_type": "code",
                "id": "vis",
                "metadata": {},
                "source": "x = 1",
                "outputs": [],
                "execution_count": None,
            },
        ],
    )
    # the person runs both cells
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(f"() => {MODEL}.cells.get(1).executionCount != null", timeout=KERNEL_TIMEOUT_MS)

    # Direct mode, yet the inspection waits for the person, who sees the bridge's program
    start_call(page, "list", "jupyter_list_variables", {})
    box = box_for(page, tool="jupyter_list_variables")
    expect(box).to_contain_text("Show the kernel's variables to the agent")
    expect(box).to_contain_text("# webmcp_bridge: read-only inspection of the kernel's variables")
    box.locator(".webmcp-bridge-proposal-deny").click()
    denied, result = finish_call(page, "list")
    assert result["isError"] is False and denied["status"] == "denied", denied
    assert "PIN-4417" not in str(result) and "pin_code" not in str(result)

    # accepted: the person let the agent see the kernel's variables, the hidden cell's included
    start_call(page, "one", "jupyter_inspect_variable", {"name": "pin_code"})
    box = box_for(page, tool="jupyter_inspect_variable")
    box.locator(".webmcp-bridge-proposal-expand").click()
    box.locator(".webmcp-bridge-proposal-accept").click()
    shown, _ = finish_call(page, "one", timeout=KERNEL_TIMEOUT_MS)
    assert shown["defined"] is True and shown["repr"] == "'PIN-4417'", shown
    assert_clean(page_log, site_url)
