"""Fixtures of the CPython test suite; the helpers they use (and the tests import) are in helpers.py."""

from __future__ import annotations

import pytest

from helpers import CHECKED_OUTPUTS, HOST_ROUTE, Bridge, check_output_schema, make_bridge
from webmcp_bridge.calls.registry import Registry


@pytest.fixture(autouse=True)
def every_result_matches_its_output_schema(monkeypatch):
    """Every successful result any test gets from a registry tool with an output model is checked against the tool's
    outputSchema, closed (helpers.check_output_schema): the schemas are checked on every real result of the suite."""
    original = Registry.call

    async def checked(self, name, arguments=None, **options):
        result = await original(self, name, arguments, **options)
        tool = next((t for t in self.tools() if t.name == name), None) if isinstance(name, str) else None
        if tool is not None and tool.output_model is not None and result.get("isError") is False:
            check_output_schema(tool, result)
            CHECKED_OUTPUTS[tool.name] = CHECKED_OUTPUTS.get(tool.name, 0) + 1
        return result

    monkeypatch.setattr(Registry, "call", checked)


#: the tests that build their bridge with helpers.Bridge (make_bridge, the ``running`` and ``bridge_factory``
#: fixtures) run twice: over the in-memory host directly and over the host wire (docs/WORKER.md, "Tests")
BRIDGE_NAMES = ("make_bridge", "Bridge")
BRIDGE_FIXTURES = ("running", "bridge_factory")


def pytest_generate_tests(metafunc):
    uses_bridge = any(name in vars(metafunc.module) for name in BRIDGE_NAMES) or any(
        name in metafunc.fixturenames for name in BRIDGE_FIXTURES
    )
    # test_wire.py chooses its routes itself
    if uses_bridge and "host_route" in metafunc.fixturenames and metafunc.module.__name__ != "test_wire":
        metafunc.parametrize("host_route", ["direct", "wire"], indirect=True)


@pytest.fixture(autouse=True)
def host_route(request):
    """The route of the test's bridges to their host (helpers.HOST_ROUTE): "wire" or "direct" (the default of
    tests that build no helpers.Bridge)."""
    route = getattr(request, "param", "direct")
    HOST_ROUTE["route"] = route
    yield route
    HOST_ROUTE["route"] = "direct"


@pytest.fixture
def bridge_factory():
    return make_bridge


@pytest.fixture
def running() -> Bridge:
    """The Running Code notebook (nbformat 4.4, no ids, a 500-line stream) open and current."""
    b = make_bridge({"demo/running.ipynb": "notebook-running-code.ipynb"})
    b.open("demo/running.ipynb")
    return b
