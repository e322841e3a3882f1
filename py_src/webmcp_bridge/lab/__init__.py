"""The JupyterLab side: adapters over the live application, reached through Pyodide's FFI."""
