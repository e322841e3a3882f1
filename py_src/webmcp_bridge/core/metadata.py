"""The bridge's own key in notebook and cell metadata, defined once.

Everything the bridge stores in a notebook lives under ``metadata[METADATA_KEY]`` of the notebook (access
level, review threads, ``schemaVersion``) or of a cell (its access level). The access guard
(:mod:`webmcp_bridge.access.guard`) and the review threads (:mod:`webmcp_bridge.review.threads`) give the
shapes; the hosts read and write the key, and the JupyterLab adapter's JS half gets it through ``configure``.
"""

from __future__ import annotations

METADATA_KEY = "webmcp_bridge"
#: the version of the notebook block's shape, written with it
SCHEMA_VERSION = 1
