"""The module named after the distribution, for ``jupyter labextension develop .``, which imports it and calls
:func:`_jupyter_labextension_paths` to link the built labextension (an installed wheel carries it as data). The
bridge is ``webmcp_bridge``; the CPython hooks are ``webmcp_bridge_jupyter``.
"""

from __future__ import annotations

from pathlib import Path

#: the labextension's name (its package.json), the folder JupyterLab serves it from
LABEXTENSION_NAME = "jupyterlab-webmcp-bridge"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """JupyterLab's discovery hook: ``[{"src": folder, "dest": name}]``, ``src`` the absolute ``build/labextension/``
    of a checkout (the one place ``develop`` runs)."""
    checkout = Path(__file__).resolve().parents[2]
    return [{"src": str(checkout / "build" / "labextension"), "dest": LABEXTENSION_NAME}]
