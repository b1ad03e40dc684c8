"""Serving the library over Streamable HTTP: on 127.0.0.1 by default, and on any address only to
clients that send the bearer token, generated once and kept in the keychain (or the key file the
user allowed): on 127.0.0.1 too, since every account on the machine reaches 127.0.0.1. Whatever
the address, a request whose Host or Origin header names another host is refused: a web page
that rebinds its own name to this machine's address (DNS rebinding) cannot reach the library.

`HttpService` runs uvicorn on a socket it binds itself, so a port in use is a clear error (not
uvicorn's exit) and the desktop app can run the server on its own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import os
import secrets
import signal
import socket
from collections.abc import Iterator
from types import FrameType

import psutil
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from app.errors import DocentError
from app.secrets import SecretStore

TOKEN_KEY = "serve-mcp:bearer"  # SecretStore name of the bearer token every HTTP client sends


class ServingError(DocentError):
    """The server cannot start as asked; the message says why."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a host name: it may resolve to anything
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 (loopback only from Python 3.13 on)
    return address.is_loopback


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """The Host and Origin values a server bound to `host`:`port` accepts: its own addresses,
    in every spelling a client or a browser writes them, localhost, and this machine's names
    when it is reachable from other machines (never the SDK's default, which protects only the
    exact strings 127.0.0.1, localhost and ::1)."""
    names = {"localhost", host}
    if _unspecified(host):  # 0.0.0.0 or ::, every interface: each one's address
        names |= {
            entry.address.split("%")[0]
            for entries in psutil.net_if_addrs().values()
            for entry in entries
            if entry.family in (socket.AF_INET, socket.AF_INET6)
        }
    if not is_loopback(host):
        # Only a server other machines reach is reached by this machine's name; on a loopback
        # bind that name is one a rebinding page on the network could answer for.
        names |= {socket.gethostname(), socket.getfqdn()}
    hosts = set()
    for name in names:
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            hosts.add(f"{name}:{port}")
            continue
        spellings = {name, address.compressed, address.exploded}
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            spellings.add(f"::ffff:{address.ipv4_mapped}")
        hosts |= {f"[{s}]:{port}" if address.version == 6 else f"{s}:{port}" for s in spellings}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")),
    )


def bearer_token(store: SecretStore, *, renew: bool = False) -> tuple[str, bool]:
    """The token every HTTP client must send, and whether it was just made. Blocks on the
    keychain: call it off the event loop."""
    token = None if renew else store.get(TOKEN_KEY)
    if token:
        return token, False
    if not store.available:
        raise ServingError(
            "serving over HTTP needs a bearer token kept in the keychain (every account on this "
            f"machine can reach 127.0.0.1). {store.describe()} Serve over stdio instead, or "
            "allow the key file in Settings → Cloud."
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
    """uvicorn as a guest on its host's event loop (the desktop app's, under qasync): it says
    when it serves, reports an application that fails to start instead of exiting the process,
    sleeps until told to stop instead of waking every 0.1 s, and handles Ctrl+C and SIGTERM
    only when asked (the CLI), returning normally so the library is closed."""

    def __init__(self, config: uvicorn.Config, *, signals: bool) -> None:
        super().__init__(config)
        self._signals = signals
        self._loop = asyncio.get_running_loop()
        self.ready = asyncio.Event()
        self.exit = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        except SystemExit:  # uvicorn's answer to an application that failed to start
            self.should_exit = True
        finally:
            self.ready.set()

    async def main_loop(self) -> None:
        await self.exit.wait()

    def request_exit(self) -> None:
        self.should_exit = True
        self.exit.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if not self._signals:
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True  # a second Ctrl+C: stop waiting for open streams
        # A signal handler runs between two steps of the loop: wake it up to act on this.
        self._loop.call_soon_threadsafe(self.request_exit)


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
        """Bind, listen and start the application; it serves once this returns."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY only on sockets that say so,
        # and without it every response waited ~40 ms for a delayed ACK (48 ms vs 5 ms a call).
        listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            if os.name == "posix":  # restart on the same port at once, as servers do
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, self.port))
            listener.listen()
        except OSError as error:
            listener.close()
            raise ServingError(
                f"cannot serve on {self.host}:{self.port}: {error.strerror or error}"
            ) from None
        self.port = int(listener.getsockname()[1])
        app = self.server.streamable_http_app(
            host=self.host, transport_security=transport_security(self.host, self.port)
        )
        config = uvicorn.Config(
            app,
            log_config=None,  # the host's logging stays as it is
            log_level="warning",
            lifespan="on",
            date_header=False,  # kept fresh only by the 0.1 s ticks this server does without
            # An open event stream would hold shutdown forever: cut it after a moment.
            timeout_graceful_shutdown=2,
        )
        server = _Server(config, signals=self._signals)
        task = asyncio.ensure_future(server.serve(sockets=[listener]))
        ready = asyncio.ensure_future(server.ready.wait())
        await asyncio.wait((task, ready), return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        await asyncio.gather(ready, return_exceptions=True)
        if not server.started:
            server.request_exit()
            await asyncio.gather(task, return_exceptions=True)
            listener.close()
            raise ServingError(f"the MCP server on {self.url} failed to start (see the log)")
        self._uvicorn, self._task = server, task

    async def wait(self) -> None:
        """Until the server stops (Ctrl+C, or `stop()`)."""
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        if self._uvicorn is None or self._task is None:
            return
        self._uvicorn.request_exit()
        await asyncio.gather(self._task, return_exceptions=True)
        self._uvicorn = None
        self._task = None
