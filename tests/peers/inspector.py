"""The MCP Inspector's command-line mode (`@modelcontextprotocol/inspector-cli`, npm, installed in
tests/peers/node by `make peers`): a client nobody here wrote, one request per run."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from tests.peers.everything import NODE, PEERS

INSPECTOR = PEERS / "node" / "node_modules" / "@modelcontextprotocol/inspector-cli/build"


def inspect(target: Sequence[str], *options: str, timeout_s: float = 180) -> Any:
    """Run `options` (`--method …`) against `target` (a URL, or a command for stdio) and return
    the JSON it prints; a failed run raises `InspectorFailed` with what it said."""
    result = subprocess.run(
        # The command (or URL) first; its own arguments after `--`, where none is an option.
        [str(NODE), "index.js", target[0], *options, "--", *target[1:]],
        # It finds its own package.json relative to the working directory: run it from there.
        cwd=INSPECTOR,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if result.returncode != 0:
        raise InspectorFailed(result.stdout + result.stderr)
    return json.loads(result.stdout)


class InspectorFailed(Exception):
    """The inspector exited non-zero; the message is its output."""
