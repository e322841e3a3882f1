"""webmcp_bridge: WebMCP tools over a live JupyterLab notebook, written in Python for Pyodide."""

__version__ = "0.1.0"
