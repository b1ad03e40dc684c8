"""`docent serve-mcp`: the library as an MCP server over stdio or Streamable HTTP, until the client
closes stdin or Ctrl+C. Messages go to stderr: over stdio, stdout belongs to the protocol."""

from __future__ import annotations

import asyncio
import sys
from typing import Literal

from app.bootstrap import Docent
from app.serving.config import client_config
from app.serving.http import (
    HttpService,
    ServingError,
    StaticBearer,
    bearer_token,
    is_loopback,
)
from app.serving.tools import build_server
from app.settings import DEFAULT_MCP_PORT

Transport = Literal["stdio", "streamable-http"]


def serve_mcp(transport: Transport, host: str | None, port: int | None, new_token: bool) -> int:
    if transport == "stdio" and (host is not None or port is not None or new_token):
        raise ServingError("--host, --port and --new-token apply to --transport streamable-http")
    host = host or "127.0.0.1"
    if new_token and is_loopback(host):
        raise ServingError("--new-token applies to a bind other than 127.0.0.1 (no token there)")
    port = DEFAULT_MCP_PORT if port is None else port
    return asyncio.run(_serve(transport, host, port, new_token))


async def _serve(transport: Transport, host: str, port: int, new_token: bool) -> int:
    docent = Docent.from_environment()
    try:
        verifier = None
        if transport == "streamable-http" and not is_loopback(host):
            # Before the library and its embedder load: a refusal comes at once.
            verifier = StaticBearer(await _token(docent, port, new_token))
        await docent.open()
        await docent.cloud_session.start()
        server = build_server(docent, verifier)
        if transport == "stdio":
            await server.run_stdio_async()
            return 0
        service = HttpService(server, host, port, signals=True)
        await service.start()
        _say(f"Docent MCP server on {service.url} (Ctrl+C stops it)")
        await service.wait()
        return 0
    finally:
        await docent.close()


async def _token(docent: Docent, port: int, renew: bool) -> str:
    """The bearer token from the keychain; a new one is shown, this once."""
    store = await docent.secret_store()
    token, made = await asyncio.to_thread(bearer_token, store, renew=renew)
    if made:
        _say(
            "A new bearer token for this server (shown only now; it is kept in the keychain, "
            f"and `docent serve-mcp --new-token` replaces it):\n\n    {token}\n\n"
            "A client's configuration, with this machine's address for the host:\n"
            + client_config(f"http://HOST:{port}/mcp", token)
        )
    else:
        _say(
            "Clients must send the bearer token kept in the keychain "
            "(`docent serve-mcp --new-token` replaces it and shows the new one)."
        )
    return token


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
