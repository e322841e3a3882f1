"""The build of the product's wheel and of the demo site, one module per job.

``pins`` (every version, from pyproject.toml), ``runtime`` (the npm Pyodide and MCP-B runtimes), ``wheels``
(pinned in-browser wheels, the bridge's own wheel), ``lock`` (pyodide-lock.json for the wheels served),
``extension`` (the prebuilt labextension the wheel carries), ``package`` (the wheel, ``pip wheel .``),
``site`` (the demo site from the wheel, and its checks), ``patches`` (the kernel patch), ``serve`` (a static
server with the site's headers), ``util`` (paths and helpers). ``build.py`` is its command line.

It sits at the repository root, not in ``py_src/``: it is the developer's tool, not part of the product, so
the wheel never installs it; the wheel's build hook (``hatch_build.py``) imports it from the source tree, and
the sdist includes it.
"""
