"""``jupyter webmcp-bridge``: the bridge's settings that live in Jupyter's config files (README, "Browsers without
native WebMCP").

``jupyter webmcp-bridge mcp-b on|off|status [--user]`` writes the page-config key ``webmcpBridgePolyfill`` into
``labconfig/page_config.json`` of this environment's config folder or, with ``--user``, the user's; the server
merges that file from every folder of ``jupyter --paths`` (the first listed wins) into pages loaded afterwards.
``status`` prints the merged value and every file that sets it. Not a Settings Editor setting: the loader starts
MCP-B before any plugin reads settings. Exit status: 0 when the merged value is what was asked, 1 when another
folder's file still decides otherwise (or a file cannot be read), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from jupyter_core.paths import ENV_CONFIG_PATH, jupyter_config_dir, jupyter_config_path

#: the page-config key the loader reads (lite/extension/static/remoteEntry.js, ``polyfillReady``)
POLYFILL_KEY = "webmcpBridgePolyfill"
#: JupyterLab's page-config section (jupyterlab_server: ``ConfigManager(config_dir_name="labconfig")``)
CONFIG_DIR_NAME = "labconfig"
SECTION = "page_config"


def config_files(config_dir: str | os.PathLike[str]) -> list[Path]:
    """The existing page-config files of one config folder, lowest priority first (as ``BaseJSONConfigManager``:
    ``page_config.d/*.json`` sorted, then ``page_config.json``)."""
    folder = Path(config_dir) / CONFIG_DIR_NAME
    drop_ins = sorted((folder / f"{SECTION}.d").glob("*.json")) if (folder / f"{SECTION}.d").is_dir() else []
    main = folder / f"{SECTION}.json"
    return [p for p in [*drop_ins, main] if p.is_file()]


def read_json(path: Path) -> dict[str, Any]:
    """A config file's object ({} when empty). Raises ValueError naming the file when it is no JSON object."""
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds a JSON {type(data).__name__}, not an object")
    return data


def settings_of_key(key: str = POLYFILL_KEY) -> list[tuple[Path, Any]]:
    """Every ``(file, value)`` that sets ``key``, in the order the server applies them (the last wins)."""
    found = []
    for folder in reversed(jupyter_config_path()):
        for path in config_files(folder):
            data = read_json(path)
            if key in data:
                found.append((path, data[key]))
    return found


def effective(key: str = POLYFILL_KEY) -> tuple[bool, Path | None]:
    """Whether the merged page config is ``true`` itself (as the loader asks), and the file deciding (None: off)."""
    settings = settings_of_key(key)
    if not settings:
        return False, None
    path, value = settings[-1]
    return value is True, path


def write_value(config_dir: str | os.PathLike[str], value: bool, key: str = POLYFILL_KEY) -> Path:
    """Set ``key`` in ``<config_dir>/labconfig/page_config.json`` (made if missing, other keys kept); returns it.
    Raises ValueError, changing nothing, when the file holds no JSON object."""
    path = Path(config_dir) / CONFIG_DIR_NAME / f"{SECTION}.json"
    data = read_json(path) if path.is_file() else {}
    data[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _state(on: bool) -> str:
    return "on" if on else "off"


def mcp_b(action: str, user: bool) -> int:
    """``jupyter webmcp-bridge mcp-b <action>``: print what it did and the merged state; return the exit status."""
    if action == "status":
        on, decider = effective()
        print(f"MCP-B: {_state(on)}" + (f" (set by {decider})" if decider else f" ({POLYFILL_KEY} is set nowhere)"))
        for path, value in settings_of_key():
            print(f"  {path}: {POLYFILL_KEY} = {json.dumps(value)}")
        return 0
    wanted = action == "on"
    folder = jupyter_config_dir() if user else ENV_CONFIG_PATH[0]
    path = write_value(folder, wanted)
    print(f"wrote {POLYFILL_KEY}: {json.dumps(wanted)} into {path}")
    on, decider = effective()
    if on != wanted:
        print(
            f"MCP-B is still {_state(on)}: {decider} sets {POLYFILL_KEY} and comes first in `jupyter --paths`",
            file=sys.stderr,
        )
        return 1
    print(
        f"MCP-B: {_state(on)} for JupyterLab and Notebook 7 pages loaded from now on (a running server: reload the "
        "page)"
    )
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: ``jupyter webmcp-bridge mcp-b on|off|status [--user]``."""
    top = argparse.ArgumentParser(
        prog="jupyter webmcp-bridge", description="Settings of the WebMCP bridge kept in Jupyter's config files."
    )
    commands = top.add_subparsers(dest="command", required=True)
    sub = commands.add_parser(
        "mcp-b",
        help="the MCP-B runtime for browsers without native WebMCP (JupyterLab and Notebook 7 servers)",
        description=f"Turn the MCP-B runtime on or off: {POLYFILL_KEY} in labconfig/page_config.json.",
    )
    sub.add_argument("action", choices=["on", "off", "status"])
    sub.add_argument(
        "--user",
        action="store_true",
        help="write into the user's config (jupyter --config-dir) instead of this environment's "
        "(<sys.prefix>/etc/jupyter)",
    )
    return top


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``jupyter-webmcp-bridge`` console script; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        return mcp_b(args.action, args.user)
    except (OSError, ValueError) as exc:
        print(f"jupyter webmcp-bridge: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
