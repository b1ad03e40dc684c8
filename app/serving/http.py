"""Serving the library over Streamable HTTP: on 127.0.0.1 by default; any other address only with
a bearer token, generated once, kept in the keychain and shown once.

`HttpService` runs uvicorn on a socket it binds itself, so a port in use is a clear error (not
uvicorn's exit) and the desktop app can run the server on its own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer

from app.errors import DocentError
from app.secrets import SecretStore

DEFAULT_PORT = 8765
TOKEN_KEY = "serve-mcp:bearer"  # SecretStore name of the bearer token for non-loopback binds
_PATHS = (
    "DOCENT_HOME",
    "DOCENT_CONFIG_DIR",
    "DOCENT_DATA_DIR",
    "DOCENT_CACHE_DIR",
    "DOCENT_MODELS_DIR",
)


class ServingError(DocentError):
    """The server cannot start as asked; the message says why."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def bearer_token(store: SecretStore, *, renew: bool = False) -> tuple[str, bool]:
    """The token clients of a non-loopback bind must send, and whether it was just made (then,
    and only then, it is shown). Blocks on the keychain: call it off the event loop."""
    token = None if renew else store.get(TOKEN_KEY)
    if token:
        return token, False
    if not store.available:
        raise ServingError(
            "serving on an address other than 127.0.0.1 needs a bearer token kept in the "
            f"keychain. {store.describe()}"
        )
    token = secrets.token_urlsafe(32)
    store.set(TOKEN_KEY, token)
    return token, True


class StaticBearer:
    """A `TokenVerifier` that accepts exactly one token (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="docent-bearer", scopes=[])
        return None

    def __repr__(self) -> str:  # never print the token
        return "StaticBearer(…)"


class _Server(uvicorn.Server):
    """uvicorn that leaves signal handling to its host (the desktop app) when asked."""

    def __init__(self, config: uvicorn.Config, *, signals: bool) -> None:
        super().__init__(config)
        self._signals = signals

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if self._signals:
            with super().capture_signals():
                yield
        else:
            yield


class HttpService:
    """`server` over Streamable HTTP at http://host:port/mcp until `stop()`.

    `signals=True` (the CLI): Ctrl+C stops it gracefully. Port 0 picks a free port.
    """

    def __init__(self, server: MCPServer, host: str, port: int, *, signals: bool = False) -> None:
        self.server = server
        self.host = host
        self.port = port
        self._signals = signals
        self._uvicorn: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    async def start(self) -> None:
        """Bind and listen; a client may connect once this returns."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            listener = socket.create_server((self.host, self.port), family=family)
        except OSError as error:
            raise ServingError(
                f"cannot serve on {self.host}:{self.port}: {error.strerror or error}"
            ) from None
        self.port = int(listener.getsockname()[1])
        app = self.server.streamable_http_app(host=self.host)
        config = uvicorn.Config(
            app,
            log_config=None,  # the host's logging stays as it is
            log_level="warning",
            lifespan="on",
            # An open event stream would hold shutdown forever: cut it after a moment.
            timeout_graceful_shutdown=2,
        )
        self._uvicorn = _Server(config, signals=self._signals)
        self._task = asyncio.ensure_future(self._uvicorn.serve(sockets=[listener]))

    async def wait(self) -> None:
        """Until the server stops (Ctrl+C, or `stop()`)."""
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        if self._uvicorn is None or self._task is None:
            return
        self._uvicorn.should_exit = True
        await asyncio.gather(self._task, return_exceptions=True)
        self._uvicorn = None
        self._task = None


def stdio_command() -> list[str]:
    """How another program starts this Docent's MCP server over stdio."""
    if getattr(sys, "frozen", False):  # the installed app: its own executable
        return [sys.executable, "serve-mcp"]
    script = Path(sys.executable).with_name("docent")
    if script.is_file():
        return [str(script), "serve-mcp"]
    return [sys.executable, "-m", "app.cli", "serve-mcp"]


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
    return json.dumps({"mcpServers": {"docent": entry}}, indent=2)
