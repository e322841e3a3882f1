"""The bridge's own key in notebook and cell metadata (the access level, review threads, ``schemaVersion``; shapes
in :mod:`webmcp_bridge.access.guard` and :mod:`webmcp_bridge.review.threads`)."""

from __future__ import annotations

METADATA_KEY = "webmcp_bridge"
SCHEMA_VERSION = 1  #: the version of the notebook block's shape, written with it
