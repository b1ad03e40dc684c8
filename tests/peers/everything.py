"""`@modelcontextprotocol/server-everything` (npm, installed in tests/peers/node by `make setup`)
on 127.0.0.1: over stdio, or as an HTTP server started and stopped by PID."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.processes import free_loopback_port, serving
from app.settings import McpServerSettings

PEERS = Path(__file__).resolve().parent
NODE = PEERS / "node" / "node_modules" / ".bin" / "node"
EVERYTHING = (
    PEERS / "node" / "node_modules" / "@modelcontextprotocol/server-everything/dist/index.js"
)
# server-everything binds every interface and has no host option: this preload pins it to loopback.
LOOPBACK = PEERS / "force-loopback.cjs"


def everything_stdio(**overrides: object) -> McpServerSettings:
    return McpServerSettings.model_validate(
        {
            "name": "everything",
            "transport": "stdio",
            "command": str(NODE),
            "args": ["--require", str(LOOPBACK), str(EVERYTHING), "stdio"],
            "chat_tool": "echo",
            "models": ["echo"],
            **overrides,
        }
    )


@contextmanager
def everything_http(transport: str, log: Path) -> Iterator[str]:
    """transport: 'streamableHttp' (yields …/mcp) or 'sse' (yields …/sse)."""
    port = free_loopback_port()
    command = [str(NODE), "--require", str(LOOPBACK), str(EVERYTHING), transport]
    with serving(command, f"port {port}", log, environment={"PORT": str(port)}, timeout_s=30):
        yield f"http://127.0.0.1:{port}{'/mcp' if transport == 'streamableHttp' else '/sse'}"
