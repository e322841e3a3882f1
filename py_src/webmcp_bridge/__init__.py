"""webmcp_bridge: WebMCP tools over a live JupyterLab notebook, written in Python for Pyodide.

The packages are layers, lowest first; a module imports only from its own package and from lower layers::

    core < host < calls < (propose, review, changes, sharing) < access < tools < session < lab

- ``core``: primitives (errors, limits, paths, raw cell values, snapshots, bounds); standard library only.
- ``host``: the protocol a notebook application provides, and the in-memory host that implements it.
- ``calls``: the call machinery (registry, pending calls, dialogs); it knows no feature.
- ``propose``, ``review``, ``changes`` (who changed what), ``sharing`` (output text the person shared): features of
  the same rank; none imports another.
- ``access``: the guard every tool goes through (it checks Propose mode's approvals, so it may use ``propose``).
- ``tools``: one module per toolset; ``session``: the one owner of a session (``build_bridge``).
- ``lab``: the JupyterLab side, the only package that imports ``js`` or ``pyodide``.

``tests/test_layers.py`` reads every module's imports and fails on any import against this order.
"""

__version__ = "0.1.0"
