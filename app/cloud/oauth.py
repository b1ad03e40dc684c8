"""OAuth 2.1 for MCP servers that ask for it, through the SDK's `OAuthClientProvider`.

The SDK does the protocol (metadata discovery, dynamic registration, PKCE, refresh, scope
step-up); Docent supplies where the tokens live (the keychain, never a file), how the user is
sent to sign in (the browser) and how the answer comes back (a one-shot listener on 127.0.0.1,
RFC 8252 §7.3). Tokens and client secrets never reach logs or exception messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import Awaitable, Callable
from html import escape
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, BaseModel, ValidationError

from app.secrets import SecretStore

_Model = TypeVar("_Model", bound=BaseModel)

RedirectHandler = Callable[[str], Awaitable[None]]
CallbackHandler = Callable[[], Awaitable[AuthorizationCodeResult]]


def tokens_key(server: str) -> str:
    return f"oauth:{server}:tokens"


def client_key(server: str) -> str:
    return f"oauth:{server}:client"


class KeychainTokenStorage:
    """The SDK's `TokenStorage`: one server's tokens and client registration in the keychain,
    as JSON. Keychain calls block on D-Bus, so they run in a thread."""

    def __init__(self, secrets: SecretStore, server: str) -> None:
        self._secrets = secrets
        self.server = server

    async def _load(self, name: str, model: type[_Model]) -> _Model | None:
        stored = await asyncio.to_thread(self._secrets.get, name)
        if stored is None:
            return None
        try:
            return model.model_validate_json(stored)
        except ValidationError:
            # Unreadable (an older format, a hand edit): treat as absent so the user signs in
            # again. Pydantic's message would quote the stored secret, so it is not raised.
            return None

    async def _save(self, name: str, value: BaseModel) -> None:
        await asyncio.to_thread(self._secrets.set, name, value.model_dump_json(exclude_none=True))

    async def get_tokens(self) -> OAuthToken | None:
        return await self._load(tokens_key(self.server), OAuthToken)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._save(tokens_key(self.server), tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return await self._load(client_key(self.server), OAuthClientInformationFull)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._save(client_key(self.server), client_info)

    async def forget(self) -> None:
        """Sign out: the next connection starts the authorization afresh."""
        for name in (tokens_key(self.server), client_key(self.server)):
            await asyncio.to_thread(self._secrets.delete, name)


def oauth_provider(
    server_url: str,
    storage: KeychainTokenStorage,
    redirect_handler: RedirectHandler,
    callback_handler: CallbackHandler,
    *,
    redirect_uri: str,
    client_name: str = "Docent",
    client_metadata_url: str | None = None,
) -> OAuthClientProvider:
    """An `httpx2.Auth` that signs in to `server_url` when it answers 401 (or 403 for more scope).

    `client_metadata_url` is Docent's client ID metadata document (SEP-991), used instead of
    dynamic registration where the authorization server supports it.
    """
    metadata = OAuthClientMetadata(
        client_name=client_name,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        # A desktop app cannot keep a secret: a public client, protected by PKCE.
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )


_PAGE = (
    "<!doctype html><meta charset='utf-8'><title>Docent</title>"
    "<p style='font-family:sans-serif'>{message}</p>"
)


class LoopbackCallback:
    """Sends the user to sign in with the browser and receives the redirect on 127.0.0.1.

    `redirect` (the SDK's redirect handler) starts listening before it opens the browser, so the
    answer cannot arrive before anyone listens; `callback` waits for it and stops listening.
    """

    def __init__(
        self,
        port: int,
        path: str = "/callback",
        open_url: Callable[[str], object] = webbrowser.open,
        timeout_s: float = 300.0,
    ) -> None:
        self.redirect_uri = f"http://127.0.0.1:{port}{path}"
        self._port = port
        self._path = path
        self._open_url = open_url
        self._timeout_s = timeout_s
        self._server: asyncio.Server | None = None
        self._answer: asyncio.Future[AuthorizationCodeResult] | None = None

    async def redirect(self, authorization_url: str) -> None:
        await self._stop()
        self._answer = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self._port)
        # Opening a browser may block (it spawns a process): not on the event loop.
        await asyncio.to_thread(self._open_url, authorization_url)

    async def callback(self) -> AuthorizationCodeResult:
        if self._answer is None:
            raise OAuthFlowError("the browser was never sent to sign in")
        try:
            async with asyncio.timeout(self._timeout_s):
                return await self._answer
        except TimeoutError:
            raise OAuthFlowError(
                f"no sign-in answer from the browser within {self._timeout_s:g} s"
            ) from None
        finally:
            await self._stop()

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await reader.readline()
            while (await reader.readline()).strip():  # the headers: not needed
                pass
            parts = request_line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
            if target is None or target.path != self._path:
                await _respond(writer, "404 Not Found", "Not found.")
                return
            query = {name: values[0] for name, values in parse_qs(target.query).items()}
            answer = self._answer
            if answer is None or answer.done():
                await _respond(writer, "409 Conflict", "Docent is not waiting for a sign-in.")
            elif "code" in query:
                answer.set_result(
                    AuthorizationCodeResult(
                        code=query["code"], state=query.get("state"), iss=query.get("iss")
                    )
                )
                await _respond(writer, "200 OK", "Signed in. You can close this window.")
            else:
                reason = query.get("error_description") or query.get("error") or "no code"
                answer.set_exception(OAuthFlowError(f"the sign-in was refused: {reason}"))
                await _respond(writer, "400 Bad Request", f"Sign-in failed: {reason}")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the browser went away; the timeout in `callback` still applies
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _respond(writer: asyncio.StreamWriter, status: str, message: str) -> None:
    body = _PAGE.format(message=escape(message)).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
