"""`@modelcontextprotocol/server-everything` (npm, installed in tests/peers/node by `make setup`)
on 127.0.0.1: over stdio, or as an HTTP server started and stopped by PID."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.settings import McpServerSettings
from tests.peers.openai_compatible import free_port

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
def everything_http(transport: str) -> Iterator[str]:
    """transport: 'streamableHttp' (yields …/mcp) or 'sse' (yields …/sse)."""
    port = free_port()
    process = subprocess.Popen(
        [str(NODE), "--require", str(LOOPBACK), str(EVERYTHING), transport],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    listening = threading.Event()
    output: list[str] = []

    def drain() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if f"port {port}" in line:
                listening.set()
        listening.set()

    reader = threading.Thread(target=drain, name="server-everything-log")
    reader.start()
    try:
        if not listening.wait(30) or process.poll() is not None:
            raise RuntimeError("server-everything did not start:\n" + "".join(output))
        path = "/mcp" if transport == "streamableHttp" else "/sse"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        reader.join()
        assert process.stdout is not None
        process.stdout.close()
