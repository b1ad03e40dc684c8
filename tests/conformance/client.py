"""The client the MCP conformance suite runs: `python -m tests.conformance.client SERVER_URL`.

The suite (`@modelcontextprotocol/conformance`) starts a scenario server, runs this command with
`MCP_CONFORMANCE_SCENARIO` (and for some scenarios `MCP_CONFORMANCE_CONTEXT`, JSON with
credentials), and grades the traffic. Connections go through Docent's own `McpConnection`, and
authorization through `app.cloud.oauth` (tokens in `KeychainTokenStorage`, here over an in-memory
keyring so no real keychain is touched). Only the elicitation scenario uses the SDK's `Client`
directly: Docent's connection offers no elicitation (it never asks its user on a server's behalf).

Exits 0 when the scenario went as it should, 1 with the reason on stderr otherwise, always within
the suite's 30 s. Credentials from the context are never printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import keyring.backend
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData
from pydantic import AnyUrl

from app.cloud.client import McpConnection
from app.cloud.oauth import KeychainTokenStorage, oauth_provider
from app.errors import DocentError
from app.llm.engine import EngineError
from app.secrets import SecretStore
from app.settings import McpServerSettings

DEADLINE_S = 25.0  # the suite kills its client at 30 s
SERVER_NAME = "conformance"
# Nothing listens here: the headless handler reads the code from the redirect's Location.
REDIRECT_URI = "http://127.0.0.1:33418/callback"
# The client ID metadata document URL auth/basic-cimd expects; the suite never fetches it there.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"

# The tool each scenario's server lists (Docent's connection needs its chat tool to be there).
TOOLS = {
    "initialize": None,  # its server lists no tools at all
    "tools_call": "add_numbers",
    "sse-retry": "test_reconnection",
}
AUTH_TOOL = "test-tool"
# Scenarios in which the correct outcome is a refused connection, with what the refusal says.
MUST_REFUSE = {
    # The resource metadata names another resource: no authorization may start.
    "auth/resource-mismatch": "does not match expected",
    # 403 insufficient_scope whatever is granted: give up rather than loop. (The SDK reports an
    # HTTP error on a request without its status.)
    "auth/scope-retry-limit": "Server returned an error response",
}


class ScenarioFailed(DocentError):
    """The scenario did not go as the specification says it should."""


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that lives and dies with this process: the storage round trip is real, the
    user's keychain is never touched."""

    priority = 0  # below 1: Docent's system_keychain() never mistakes it for a keychain

    def __init__(self) -> None:
        super().__init__()
        self._secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._secrets.pop((service, username), None)


def memory_storage() -> KeychainTokenStorage:
    store = SecretStore(MemoryKeyring(), Path(os.devnull))  # with a backend, no file is used
    return KeychainTokenStorage(store, SERVER_NAME)


class FollowAuthorization:
    """The browser's part, headless: the scenario's authorization server approves at once, so
    following the authorization URL yields a redirect whose Location carries code and state."""

    def __init__(self) -> None:
        self._answer: AuthorizationCodeResult | None = None

    async def redirect(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.get(authorization_url, follow_redirects=False)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise ScenarioFailed(f"authorization answered HTTP {response.status_code}, no redirect")
        query = {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}
        if "code" not in query:
            raise ScenarioFailed(f"authorization refused: {query.get('error', 'no code')}")
        self._answer = AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        answer, self._answer = self._answer, None
        if answer is None:
            raise ScenarioFailed("no authorization code was received")
        return answer


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible values for a tool's declared arguments (numbers 1, 2, …; text; true)."""
    values: dict[str, Any] = {}
    for index, (name, spec) in enumerate((schema.get("properties") or {}).items(), start=1):
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(spec, dict) and "default" in spec:
            values[name] = spec["default"]
        elif kind in ("number", "integer"):
            values[name] = index
        elif kind == "boolean":
            values[name] = True
        elif kind == "array":
            values[name] = []
        elif kind == "object":
            values[name] = {}
        else:
            values[name] = "docent"
    return values


@contextlib.asynccontextmanager
async def connection(
    url: str, tool: str | None, auth: httpx2.Auth | None = None
) -> AsyncIterator[McpConnection]:
    """Docent's connection to the scenario server, started and (always) closed."""
    settings = McpServerSettings(
        name=SERVER_NAME,
        transport="streamable-http",
        url=url,
        chat_tool=tool or "chat",
        models=["none"],
        connect_timeout_s=DEADLINE_S - 5,
    )
    # One attempt: a retry after the back-off would outlive the suite's deadline.
    connected = McpConnection(settings, auth=auth, backoff_s=(DEADLINE_S,))
    connected.start()
    try:
        yield connected
    finally:
        await connected.close()


async def call_its_tool(connected: McpConnection) -> None:
    """Connect, list, and call the scenario's tool with arguments its schema asks for."""
    client = await connected.wait_ready(DEADLINE_S)
    listed = await client.list_tools()
    tool = next(tool for tool in listed.tools if tool.name == connected.settings.chat_tool)
    result = await connected.call_tool(tool.name, sample_arguments(tool.input_schema), None)
    if result.is_error:
        raise ScenarioFailed(f"{tool.name} failed: {result.content}")


async def connect_without_tools(url: str) -> None:
    async with connection(url, None) as connected:
        try:
            await connected.wait_ready(DEADLINE_S)
        except EngineError:
            # Docent refuses a server without its chat tool, but only after the handshake and a
            # successful tools/list: that refusal, for that reason, is this scenario's success.
            expected = f"it has no tool named {connected.settings.chat_tool!r} (it has: none)"
            if connected.health.detail != expected:
                raise
            return
        raise ScenarioFailed(f"expected no tools, got {connected.tools}")


async def accept_with_defaults(
    context: ClientRequestContext, params: ElicitRequestParams
) -> ElicitResult | ErrorData:
    """SEP-1034: accept, filling every field the form gives a default for."""
    content: dict[str, Any] = {}
    if isinstance(params, ElicitRequestFormParams):
        for name, spec in (params.requested_schema.get("properties") or {}).items():
            if isinstance(spec, dict) and "default" in spec:
                content[name] = spec["default"]
    return ElicitResult(action="accept", content=content)


async def elicitation(url: str) -> None:
    async with (
        httpx2.AsyncClient(timeout=DEADLINE_S) as http,
        Client(
            streamable_http_client(url, http_client=http),
            elicitation_callback=accept_with_defaults,
        ) as client,
    ):
        listed = await client.list_tools()
        for tool in listed.tools:
            result = await client.call_tool(tool.name, sample_arguments(tool.input_schema))
            if result.is_error:
                raise ScenarioFailed(f"{tool.name} failed: {result.content}")


async def authorization_code(
    url: str, scenario: str, context: dict[str, Any]
) -> OAuthClientProvider:
    storage = memory_storage()
    if context.get("client_id"):
        # Pre-registered (the server offers no dynamic registration): the record an
        # administrator would have given Docent, kept where registrations are kept.
        secret = context.get("client_secret")
        await storage.set_client_info(
            OAuthClientInformationFull(
                client_id=context["client_id"],
                client_secret=secret,
                redirect_uris=[AnyUrl(REDIRECT_URI)],
                token_endpoint_auth_method="client_secret_basic" if secret else "none",
            )
        )
    browser = FollowAuthorization()
    return oauth_provider(
        url,
        storage,
        browser.redirect,
        browser.callback,
        redirect_uri=REDIRECT_URI,
        client_metadata_url=CIMD_URL if scenario == "auth/basic-cimd" else None,
    )


async def discovered_issuer(url: str) -> str:
    """The authorization server the resource names (RFC 9728): SEP-990 takes the issuer as
    configuration, which an administrator would have looked up this way."""
    parts = urlsplit(url)
    metadata_url = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource"
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.get(metadata_url + parts.path)
        response.raise_for_status()
    return str(response.json()["authorization_servers"][0])


def identity_assertion(context: dict[str, Any]) -> Any:
    """SEP-990 leg 1: trade the IdP's ID token for an ID-JAG (RFC 8693 token exchange)."""

    async def exchange(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(
                context["idp_token_endpoint"],
                data={
                    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "requested_token_type": ID_JAG,
                    "subject_token": context["idp_id_token"],
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "audience": audience,
                    "resource": resource,
                    "client_id": context["idp_client_id"],
                },
            )
        if response.status_code != 200:
            raise ScenarioFailed(
                f"the IdP refused the token exchange (HTTP {response.status_code})"
            )
        return str(response.json()["access_token"])

    return exchange


async def machine_auth(url: str, scenario: str, context: dict[str, Any]) -> httpx2.Auth:
    """The client-credentials family: no user, credentials from the context."""
    storage = memory_storage()
    with warnings.catch_warnings():
        # The suite names no issuer; without one the SDK (deprecatedly) trusts discovery.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if scenario == "auth/client-credentials-jwt":
            signer = SignedJWTParameters(
                issuer=context["client_id"],
                subject=context["client_id"],
                signing_key=context["private_key_pem"],
                signing_algorithm=context.get("signing_algorithm", "ES256"),
            )
            return PrivateKeyJWTOAuthProvider(
                url, storage, context["client_id"], signer.create_assertion_provider()
            )
        if scenario == "auth/cross-app-access-complete-flow":
            return IdentityAssertionOAuthProvider(
                url,
                storage,
                client_id=context["client_id"],
                client_secret=context["client_secret"],
                issuer=await discovered_issuer(url),
                assertion_provider=identity_assertion(context),
                token_endpoint_auth_method="client_secret_basic",
            )
        return ClientCredentialsOAuthProvider(
            url, storage, context["client_id"], context["client_secret"], "client_secret_basic"
        )


MACHINE_AUTH = {
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/cross-app-access-complete-flow",
}


async def authorized(url: str, scenario: str, context: dict[str, Any]) -> None:
    if scenario in MACHINE_AUTH:
        auth = await machine_auth(url, scenario, context)
    else:
        auth = await authorization_code(url, scenario, context)
    async with connection(url, AUTH_TOOL, auth) as connected:
        try:
            await call_its_tool(connected)
        except EngineError as error:
            if scenario in MUST_REFUSE and MUST_REFUSE[scenario] in str(error):
                print(f"refused, as it should be: {error}", file=sys.stderr)
                return
            raise
    if scenario in MUST_REFUSE:
        raise ScenarioFailed("the connection succeeded where it must be refused")


async def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    async with asyncio.timeout(DEADLINE_S):
        if scenario == "elicitation-sep1034-client-defaults":
            await elicitation(url)
        elif scenario.startswith("auth/"):
            await authorized(url, scenario, context)
        elif scenario not in TOOLS:
            raise ScenarioFailed("unknown scenario")
        elif TOOLS[scenario] is None:
            await connect_without_tools(url)
        else:
            async with connection(url, TOOLS[scenario]) as connected:
                await call_its_tool(connected)


def main(argv: list[str]) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if len(argv) != 2:
        print("usage: python -m tests.conformance.client SERVER_URL", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(scenario, argv[1], context))
    except Exception as error:  # any failure: one line with the reason, exit 1
        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        print(f"{scenario}: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
