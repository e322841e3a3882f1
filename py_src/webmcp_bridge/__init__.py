"""webmcp_bridge: WebMCP tools over a live JupyterLab notebook, written in Python for Pyodide.

The packages are layers, lowest first; a module imports only from its own package and lower layers
(``tests/test_layers.py`` checks it)::

    core < host < calls < (propose, review, changes, sharing) < access < tools < session < lab

``core``: primitives, standard library only; ``host``: the protocol a notebook application provides; ``calls``: the
call machinery, knowing no feature; ``propose``, ``review``, ``changes``, ``sharing``: features of one rank, none
importing another; ``access``: the guard (it checks Propose mode's approvals); ``tools``: one module per toolset;
``session``: ``build_bridge``; ``lab``: the JupyterLab side, the only package that imports ``js`` or ``pyodide``.
"""

__version__ = "0.1.0"
