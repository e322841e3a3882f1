"""The top-level module named after the distribution ``jupyterlab-webmcp-bridge``, for JupyterLab's own tools.

``jupyter labextension develop .`` (JupyterLab 4.6 hands it to jupyter-builder) imports the module named after
the project (``-`` read as ``_``) and calls :func:`_jupyter_labextension_paths` to find the built labextension,
which it links into the environment's ``share/jupyter/labextensions/``. An installed wheel needs none of this:
it carries the labextension as data (``share/jupyter/labextensions/jupyterlab-webmcp-bridge/``).

The bridge itself is the ``webmcp_bridge`` package, run in the page by Pyodide; the CPython hooks (the
JupyterLite build addon, the server extension, the ``jupyter webmcp-bridge`` command) are
``webmcp_bridge_jupyter``.
"""

from __future__ import annotations

from pathlib import Path

#: the labextension's name (its package.json), the folder JupyterLab serves it from
LABEXTENSION_NAME = "jupyterlab-webmcp-bridge"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """JupyterLab's discovery hook: ``[{"src": folder, "dest": name}]``.

    ``src`` is the labextension a development checkout stages in ``build/labextension/`` (``python build.py`` or
    ``pip wheel .`` writes it: ``hatch_build.py``), as an absolute path; it exists only in a checkout, which is
    the one place ``jupyter labextension develop`` is run.
    """
    checkout = Path(__file__).resolve().parents[2]
    return [{"src": str(checkout / "build" / "labextension"), "dest": LABEXTENSION_NAME}]
