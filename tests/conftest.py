"""Fixtures of the CPython test suite; the helpers they use (and the tests import) are in helpers.py."""

from __future__ import annotations

import pytest

from helpers import Bridge, make_bridge


@pytest.fixture
def bridge_factory():
    return make_bridge


@pytest.fixture
def running() -> Bridge:
    """The Running Code notebook (nbformat 4.4, no ids, a 500-line stream) open and current."""
    b = make_bridge({"demo/running.ipynb": "notebook-running-code.ipynb"})
    b.open("demo/running.ipynb")
    return b
