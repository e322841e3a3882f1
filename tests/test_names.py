"""What a code cell binds and reads (core/names.py), on the cells of real notebooks: assignments, imports, functions
whose bodies read names when called, IPython's line syntax read for the Python it stands for, and the cells whose
names cannot be read (cell magics, other line magics, star imports, syntax errors, Python 2) marked so, never
guessed."""

from __future__ import annotations

import pytest

from helpers import CORPUS_DIRS, corpus_json, text_of
from webmcp_bridge.core.limits import NAMES_SOURCE_BYTES
from webmcp_bridge.core.names import (
    CELL_MAGIC,
    LINE_MAGIC,
    STAR_IMPORT,
    SYNTAX,
    TOO_LONG,
    CellNames,
    cell_names,
)


def cells_of(notebook: str) -> dict[int, str]:
    """The code cells' sources of a corpus notebook, by their index in the notebook."""
    cells = corpus_json(notebook)["cells"]
    return {i: text_of(c["source"]) for i, c in enumerate(cells) if c["cell_type"] == "code"}


def names(notebook: str, index: int) -> CellNames:
    return cell_names(cells_of(notebook)[index])


CALCULUS = "handson-ml2-math-calculus.ipynb"
BEYOND = "ipython-beyond-plain-python.ipynb"
DEMO = "jupyterlite-demo-python.ipynb"
LECTURE = "sci-python-lecture-1.ipynb"


def test_imports_under_a_line_magic_bind_their_names_and_read_nothing():
    cell = names(CALCULUS, 3)  # %matplotlib inline, then the imports
    assert cells_of(CALCULUS)[3].splitlines()[1] == "%matplotlib inline"
    assert cell.unreadable is None
    assert cell.defines == {"mpl", "plt", "np", "animation"} and cell.reads == set()


def test_a_plotting_cell_reads_the_modules_and_the_helper_it_uses_and_binds_its_own_names():
    cell = names(CALCULUS, 9)  # xs = np.linspace(...); ys = xs**2; plt.plot(xs, ys) ... show(...)
    assert cell.defines == {"xs", "ys"}
    assert cell.reads == {"np", "plt", "show"}


def test_a_name_bound_earlier_in_the_cell_is_not_a_read_but_one_used_first_is():
    cell = names(CALCULUS, 44)  # def f(x): ...; xs = np.linspace(...); ys = f(xs)
    assert {"f", "xs", "ys"} <= cell.defines
    assert "f" not in cell.reads and "xs" not in cell.reads and "np" in cell.reads
    loop = names(BEYOND, 46)  # for i in range(1, 5): size = i*100; print(...)
    assert loop.defines == {"i", "size"} and "i" not in loop.reads


def test_function_bodies_read_their_free_names_when_called_and_the_defining_cell_reads_them_too():
    helpers = names(CALCULUS, 5)  # def get_AB_line(...), def plot_AB_line(...) calling it, def show(...) ...,
    assert helpers.calls["plot_AB_line"] == {"get_AB_line", "plt"}  # then A_pos = np.array(...); plot_AB_line(...)
    assert helpers.calls["show"] == {"plt"}
    assert helpers.calls["get_AB_line"] == set()  # only its parameters and locals
    assert helpers.reads == {"np"}  # where the code stands; get_AB_line is bound before any call can happen
    assert helpers.later == {"plt"}  # the bodies' names, as if called at the end of the cell
    animate = names(CALCULUS, 12)  # def animate_AB_line(...): uses get_AB_line, animation, np, plt, show
    assert animate.calls["animate_AB_line"] == {"animation", "get_AB_line", "np", "plt", "show"}
    assert animate.defines == {"animate_AB_line"}
    caller = names(CALCULUS, 15)  # animate_AB_line(lambda x: np.abs(x), ...)
    assert caller.reads == {"animate_AB_line", "np"} and caller.defines == set()


def test_a_class_body_reads_where_it_stands_and_its_methods_when_called():
    square = names(DEMO, 36)  # class Square: color = ...; def _repr_html_(self): ...; square = Square(); display(...)
    assert square.defines == {"Square", "square"}
    assert square.reads == {"display"}
    assert square.calls["Square"] == set()


def test_a_store_into_an_object_rebinds_the_name_it_is_reached_by():
    cell = names(DEMO, 37)  # square.color = 'OliveDrab'; update_display(square, ...)
    assert cell.defines == {"square"}
    assert cell.reads == {"square", "update_display"}


def test_top_level_await_parses_as_ipython_runs_it():
    cell = names(DEMO, 50)  # res = await fetch(...); text = await res.text(); obj = json.loads(text); JSON(obj)
    assert cell.unreadable is None
    assert cell.defines == {"res", "text", "obj"} and cell.reads == {"fetch", "json", "JSON"}
    assert names(DEMO, 21).defines == {"name"}  # name = await input(...)


def test_shell_escapes_help_and_nameless_line_magics_are_read_for_the_python_they_stand_for():
    assert names(BEYOND, 34).defines == {"files"}  # files = !ls
    assert names(BEYOND, 38).reads == {"enumerate", "files", "print"}  # a later cell reads them
    assert names(BEYOND, 43).reads == {"list", "range"}  # %timeit keeps the code it times
    assert names(BEYOND, 9) == CellNames()  # collections.Counter??
    assert names(BEYOND, 62).reads == {"mod"}  # %xmode plain, then mod.g(0)
    assert names(DEMO, 57).defines == {"current_path"}  # current_path = %pwd
    assert names(DEMO, 55) == CellNames()  # %cd /home


@pytest.mark.parametrize(
    ("notebook", "index", "reason"),
    [
        (BEYOND, 44, CELL_MAGIC),  # %%timeit
        (BEYOND, 48, CELL_MAGIC),  # %%bash
        (BEYOND, 59, CELL_MAGIC),  # %%writefile mod.py (a module the next cell imports)
        (BEYOND, 72, LINE_MAGIC),  # %debug
        (BEYOND, 56, SYNTAX),  # a doctest session pasted as is
        (DEMO, 19, SYNTAX),  # print(
        (LECTURE, 23, STAR_IMPORT),  # from math import *
        (LECTURE, 6, SYNTAX),  # cat scripts/hello-world.py (automagic)
        (LECTURE, 224, CELL_MAGIC),  # %%file mymodule.py
        (LECTURE, 246, LINE_MAGIC),  # %load_ext version_information, then its magic
    ],
)
def test_cells_whose_names_cannot_be_read_say_why_and_bind_or_read_nothing(notebook: str, index: int, reason: str):
    cell = names(notebook, index)
    assert cell.unreadable == reason
    assert cell.defines == set() and cell.reads == set() and not cell.calls


def test_a_source_over_the_bound_is_not_parsed():
    long = "\n".join(cells_of(CALCULUS).values())
    while len(long.encode()) <= NAMES_SOURCE_BYTES:
        long += "\n" + long
    assert cell_names(long).unreadable == TOO_LONG


def test_every_code_cell_of_every_notebook_in_the_repository_is_read_or_says_why_not():
    reasons = {CELL_MAGIC, LINE_MAGIC, STAR_IMPORT, SYNTAX, TOO_LONG}
    read = unreadable = 0
    for folder in CORPUS_DIRS:
        for path in sorted(folder.glob("*.ipynb")):
            for source in cells_of(path.name).values():
                cell = cell_names(source)
                if cell.unreadable is None:
                    read += 1
                    for name in cell.defines | cell.reads | set(cell.calls):
                        assert name.isidentifier(), (path.name, name)
                else:
                    unreadable += 1
                    assert cell.unreadable in reasons, (path.name, cell.unreadable)
    assert read > 600 and unreadable < read // 20, (read, unreadable)  # 641 and 29 today
