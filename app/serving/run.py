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


def serve_mcp(
    transport: Transport,
    host: str | None,
    port: int | None,
    new_token: bool,
    print_config: bool = False,
    library: str | None = None,
) -> int:
    """`library`: as `Docent.from_environment` takes it (None: the one the settings name)."""
    if transport == "stdio" and (host is not None or port is not None or new_token):
        raise ServingError("--host, --port and --new-token apply to --transport streamable-http")
    host = host or "127.0.0.1"
    port = DEFAULT_MCP_PORT if port is None else port
    if print_config:
        return asyncio.run(_print_config(transport, host, port))
    return asyncio.run(_serve(transport, host, port, new_token, library))


async def _serve(
    transport: Transport, host: str, port: int, new_token: bool, library: str | None
) -> int:
    docent = Docent.from_environment(library=library)
    try:
        verifier = None
        if transport == "streamable-http":
            # Before the library and its embedder load: a refusal comes at once.
            verifier = StaticBearer(await _token(docent, host, port, new_token))
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


async def _print_config(transport: Transport, host: str, port: int) -> int:
    """The `mcpServers` entry for a client, on stdout (with the token: for the user to paste)."""
    if transport == "stdio":
        print(client_config())
        return 0
    docent = Docent.from_environment(embeddings=False)
    token, _ = await asyncio.to_thread(bearer_token, await docent.secret_store())
    print(client_config(_client_url(host, port), token))
    return 0


def _client_url(host: str, port: int) -> str:
    """The URL a client uses: the bound address, or a placeholder for every interface."""
    if is_loopback(host):
        return f"http://{host}:{port}/mcp"
    return f"http://HOST:{port}/mcp"


async def _token(docent: Docent, host: str, port: int, renew: bool) -> str:
    """The bearer token from the keychain; a new one is shown, this once."""
    store = await docent.secret_store()
    token, made = await asyncio.to_thread(bearer_token, store, renew=renew)
    where = store.where()
    if made:
        _say(
            f"A new bearer token for this server (shown only now; it is kept {where}, and "
            "`docent serve-mcp --print-config` prints a client's configuration with it; "
            f"`--new-token` replaces it):\n\n    {token}\n\n"
            "A client's configuration"
            + (", with this machine's address for the host" if not is_loopback(host) else "")
            + ":\n"
            + client_config(_client_url(host, port), token)
        )
    else:
        _say(
            f"Clients must send the bearer token kept {where} (`docent serve-mcp "
            "--print-config` prints a client's configuration with it; `--new-token` replaces it)."
        )
    return token


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
