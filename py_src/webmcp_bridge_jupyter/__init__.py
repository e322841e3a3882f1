"""The bridge's hooks into Jupyter's own CPython tools, shipped in the same wheel as the bridge.

- :mod:`webmcp_bridge_jupyter.lite_addon`: a ``jupyter lite build`` addon, off unless a site turns it on, that
  points the site's Pyodide kernel at the runtime the labextension ships (a site that loads nothing from another
  origin, its kernel included).
- :mod:`webmcp_bridge_jupyter.server`: a Jupyter server extension that tells the page which paths resolve
  outside the server's root (symbolic links), so the bridge refuses them.

Neither is ever loaded in the page: the bridge itself is the ``webmcp_bridge`` package, run by Pyodide.
"""
