"""The bridge's hooks into Jupyter's CPython tools, never loaded in the page: :mod:`webmcp_bridge_jupyter.lite_addon`
(a ``jupyter lite build`` addon pointing the kernel at the shipped runtime) and :mod:`webmcp_bridge_jupyter.server`
(a server extension naming paths that resolve outside the root).
"""
