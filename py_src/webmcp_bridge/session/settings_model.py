"""The one source of the person's settings: a pydantic model carrying each setting's title, description, type,
default and bounds (from :mod:`webmcp_bridge.core.limits`), making both the Settings Editor's draft-07 schema
(:func:`settings_schema`, ``plugin.json``) and the rules ``parse_settings`` repairs against (:func:`setting_rules`).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema, JsonDict, JsonSchemaValue
from pydantic_core import core_schema

from webmcp_bridge.contrib.config import PAGE_CONFIG_KEY
from webmcp_bridge.core.limits import (
    DEFAULT_LIMITS,
    EXECUTION_TIMEOUT_BOUNDS,
    MAX_PATH_BYTES,
    MAX_TOOLSET_WORDS,
    RESULT_BYTES_BOUNDS,
    RUN_TIMEOUT_BOUNDS,
    TOOL_NAME_MAX_CHARS,
)
from webmcp_bridge.propose.proposals import Mode

#: the characters of a tool or toolset name, and of a ``disabledTools`` glob (with ``fnmatch``'s ``* ? [ ] !``)
NAME_CLASS = "A-Za-z0-9_.-"
GLOB_CLASS = r"A-Za-z0-9_.*?\[\]!-"
#: a whole name or glob of 1..TOOL_NAME_MAX_CHARS characters (the same text for Python's ``re`` and the browser's)
NAME_PATTERN = f"^[{NAME_CLASS}]{{1,{TOOL_NAME_MAX_CHARS}}}$"
GLOB_PATTERN = f"^[{GLOB_CLASS}]{{1,{TOOL_NAME_MAX_CHARS}}}$"

ToolName = Annotated[str, Field(pattern=NAME_PATTERN)]
ToolGlob = Annotated[str, Field(pattern=GLOB_PATTERN)]
WorkspacePath = Annotated[str, Field(max_length=MAX_PATH_BYTES)]
_UNIQUE: JsonDict = {"uniqueItems": True}


class SettingsModel(BaseModel):
    """The settings of the plugin ``jupyterlab-webmcp-bridge:plugin`` by stored names (timeouts in seconds,
    ``resultBytes`` in UTF-8 bytes). Not used to validate: ``parse_settings`` repairs key by key by its rules."""

    model_config = ConfigDict(
        extra="forbid",
        title="WebMCP bridge",
        json_schema_extra={
            "description": "How an AI agent in this browser may use the notebooks through WebMCP (the webmcp_bridge "
            "extension)."
        },
    )

    execution_timeout: float = Field(
        DEFAULT_LIMITS.execution_timeout_seconds,
        alias="executionTimeout",
        title="Execution timeout (seconds)",
        description="A tool call still running after this many seconds returns 'pending' to the agent and keeps "
        "running; the agent collects it with jupyter_wait_for_result. A call waiting for your Accept/Deny in "
        "Propose mode counts as running.",
        ge=EXECUTION_TIMEOUT_BOUNDS[0],
        le=EXECUTION_TIMEOUT_BOUNDS[1],
    )
    run_timeout: float = Field(
        DEFAULT_LIMITS.run_timeout_seconds,
        alias="runTimeout",
        title="Cell run limit (seconds)",
        description="How long jupyter_run_cells waits for one cell (unless the agent's call gives its own "
        "timeout). A cell still running then is reported to the agent as running, not failed: it goes on in the "
        "kernel, and the cells after it are not started.",
        ge=RUN_TIMEOUT_BOUNDS[0],
        le=RUN_TIMEOUT_BOUNDS[1],
    )
    result_bytes: int = Field(
        DEFAULT_LIMITS.result_bytes,
        alias="resultBytes",
        title="Result cap (bytes)",
        description="The largest JSON text of one tool result, in UTF-8 bytes; longer results are shortened and "
        "say what was cut. A smaller cap also shrinks the pages of text the agent reads.",
        ge=RESULT_BYTES_BOUNDS[0],
        le=RESULT_BYTES_BOUNDS[1],
    )
    disabled_tools: list[ToolGlob] = Field(
        [],
        alias="disabledTools",
        title="Disabled tools",
        description="Tools the agent may not use, by name (jupyter_run_code) or glob (jupyter_*_comment, "
        "jupyter_*_file). They are removed from the page's WebMCP tools whatever toolsets are on, and refused if "
        "called.",
        json_schema_extra=_UNIQUE,
    )
    toolsets: Annotated[list[ToolName], Field(max_length=MAX_TOOLSET_WORDS)] | None = Field(
        None,
        title="Toolsets",
        description="The toolsets this page registers for the agent (names: notebooks, calls, access, review, "
        "files, batch, code, variables, search, or a toolset of the site's own tools such as course; or 'all', "
        "'default'). Empty (null): the default, notebooks and calls (20 tools with the discovery tool "
        "jupyter_toolsets, which is always there). A page URL's ?toolsets= wins over this; the agent can turn "
        "toolsets on with jupyter_toolsets.",
        json_schema_extra=_UNIQUE,
    )
    contributions: list[WorkspacePath] = Field(
        [],
        title="Site tools (contributions)",
        description="Python modules (.py) or pure-Python wheels (-none-any.whl) of this site's files that add or "
        "change the agent's tools, by workspace path (for example .webmcp/course_tools.py). Read with the site's "
        f"own list ({PAGE_CONFIG_KEY} in jupyter-lite.json); loaded when the page loads. See the README, 'Add your "
        "own tool'.",
        json_schema_extra=_UNIQUE,
    )
    default_mode: Mode = Field(
        "direct",
        alias="defaultMode",
        title="Mode at start-up",
        description="'direct': the agent's changes apply at once. 'propose': every change the agent asks for waits "
        "under its cell for your Accept or Deny. Applied when the page loads; the 'Agent: Propose changes' "
        "command switches it afterwards.",
    )


class _DraftSeven(GenerateJsonSchema):
    """A nullable simple type as ``["array", "null"]`` (as JupyterLab's draft-07 form expects), not ``anyOf``."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if isinstance(inner.get("type"), str):
            return {**inner, "type": [inner["type"], "null"]}
        return super().nullable_schema(schema)


@cache
def _schema() -> dict[str, Any]:
    """The schema, made once (shared: never changed)."""
    return SettingsModel.model_json_schema(by_alias=True, schema_generator=_DraftSeven)


def settings_schema() -> dict[str, Any]:
    """The Settings Editor's JSON schema of the plugin (a fresh copy)."""
    return copy.deepcopy(_schema())


def setting_rules(key: str) -> dict[str, Any]:
    """The (shared, read-only) schema of setting ``key`` by stored name. Raises KeyError for an unknown key."""
    return _schema()["properties"][key]


def schema_text() -> str:
    """:func:`settings_schema` as the build writes it (``plugin.json``: indented JSON, a final newline)."""
    return json.dumps(settings_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
