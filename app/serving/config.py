"""The configuration a user pastes into another MCP client to reach this Docent: cheap to import
(the desktop app shows it without loading the MCP SDK)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from app.processes import own_module

_PATHS = (
    "DOCENT_HOME",
    "DOCENT_CONFIG_DIR",
    "DOCENT_DATA_DIR",
    "DOCENT_CACHE_DIR",
    "DOCENT_MODELS_DIR",
)


def stdio_command() -> list[str]:
    """How another program starts this Docent's MCP server over stdio."""
    if getattr(sys, "frozen", False):  # the installed app: its own executable
        return [sys.executable, "serve-mcp"]
    script = Path(sys.executable).with_name("docent")
    if script.is_file():
        return [str(script), "serve-mcp"]
    return own_module("app.cli", "serve-mcp")


def client_config(url: str | None = None, token: str | None = None) -> str:
    """The `mcpServers` entry a user pastes into another MCP client (Claude Desktop, Cursor,
    VS Code, …): over stdio, or at `url` (with `token` as its bearer) for a running server."""
    entry: dict[str, Any]
    if url is None:
        command, *args = stdio_command()
        entry = {"command": command, "args": args}
        # The child must find this library, wherever it was moved.
        if environment := {name: os.environ[name] for name in _PATHS if name in os.environ}:
            entry["env"] = environment
    else:
        entry = {"type": "http", "url": url}
        if token:
            entry["headers"] = {"Authorization": f"Bearer {token}"}
    return json.dumps({"mcpServers": {"docent": entry}}, indent=2, ensure_ascii=False)
