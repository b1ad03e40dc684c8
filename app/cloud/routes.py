"""The cloud routes Docent has: one MCP session per configured server, plus Docent's own gateway
(started over stdio) when OpenAI-compatible providers are configured. Opened at start-up, kept
alive, closed on quit; their health feeds the router and the status bar."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence

from app.cloud.client import McpChatEngine, McpConnection
from app.cloud.gateway import Provider, keys_environment, providers_environment
from app.cloud.health import Health, HealthState
from app.cloud.oauth import KeychainTokenStorage, LoopbackCallback, oauth_provider
from app.cloud.pricing import PriceTable
from app.llm.engine import ChatEngine, EngineError
from app.processes import free_loopback_port, own_module
from app.routing import CloudModel
from app.secrets import SecretStore, SecretStoreError, provider_key, server_key
from app.settings import CloudSettings, McpServerSettings

GATEWAY = "docent-gateway"


def gateway_server(providers: Sequence[Provider]) -> McpServerSettings:
    """Docent's gateway as an MCP server; its keys travel apart (`keys_environment`), into its
    environment only."""
    return McpServerSettings(
        name=GATEWAY,
        transport="stdio",
        command=sys.executable,
        args=own_module("app.cli", "gateway")[1:],
        env=providers_environment(providers),
        models=[f"{p.name}/{model}" for p in providers for model in p.models],
        progress="text",
    )


class CloudRoutes:
    """Sessions to every enabled server; `models()` is what the router may choose from."""

    def __init__(
        self,
        connections: Sequence[McpConnection],
        prices: PriceTable,
    ) -> None:
        self.connections = list(connections)
        self.prices = prices
        self._by_model: dict[str, tuple[McpConnection, str]] = {}
        for connection in self.connections:
            for model in connection.settings.models:
                self._by_model[_model_id(connection.name, model)] = (connection, model)

    @classmethod
    async def open(
        cls,
        cloud: CloudSettings,
        secrets: SecretStore,
        prices: PriceTable,
        listener: Callable[[Health], None] | None = None,
    ) -> CloudRoutes:
        """Read the keys (off the loop: the keychain may talk D-Bus) and start every session."""

        def key(name: str) -> str | None:
            try:
                return secrets.get(name)
            except SecretStoreError:
                return None  # the server is then reached without a key and says so

        settings: list[tuple[McpServerSettings, str | None, dict[str, str]]] = []
        if cloud.providers:
            providers = [
                Provider(
                    p.name,
                    p.base_url,
                    tuple(p.models),
                    await asyncio.to_thread(key, provider_key(p.name)),
                )
                for p in cloud.providers
            ]
            settings.append((gateway_server(providers), None, keys_environment(providers)))
        for server in cloud.servers:
            if server.enabled:
                secret = await asyncio.to_thread(key, server_key(server.name))
                settings.append((server, secret, {}))
        connections = [
            _connection(server, secret, secrets, listener, environment)
            for server, secret, environment in settings
        ]
        for connection in connections:
            connection.start()
        return cls(connections, prices)

    def models(self) -> list[CloudModel]:
        return [
            CloudModel(
                model_id,
                connection.name,
                connection.health.state is HealthState.READY,
                connection.health.detail,
            )
            for model_id, (connection, _) in self._by_model.items()
        ]

    async def settled(self) -> None:
        """Until every session is ready or has failed once (each bounded by its connect
        timeout)."""
        await asyncio.gather(
            *(c.wait_ready(c.settings.connect_timeout_s) for c in self.connections),
            return_exceptions=True,
        )

    def health(self) -> list[Health]:
        return [connection.health for connection in self.connections]

    def engine(self, model_id: str) -> ChatEngine:
        if model_id not in self._by_model:
            raise EngineError(f"no cloud server serves {model_id}")
        connection, model = self._by_model[model_id]
        return McpChatEngine(connection, model, self.prices.cost, model_id)

    async def close(self) -> None:
        await asyncio.gather(*(connection.close() for connection in self.connections))


# A browser sign-in happens inside the connect step: give the user time for it.
SIGN_IN_TIMEOUT_S = 300.0


def _connection(
    server: McpServerSettings,
    key: str | None,
    secrets: SecretStore,
    listener: Callable[[Health], None] | None,
    secret_environment: dict[str, str],
) -> McpConnection:
    """An HTTP server without a key signs in with OAuth if it asks for it (answers 401)."""
    if server.transport == "stdio" or key:
        return McpConnection(server, key, listener, secret_environment=secret_environment)
    browser = LoopbackCallback(free_loopback_port())
    auth = oauth_provider(
        server.url,
        KeychainTokenStorage(secrets, server.name),
        browser.redirect,
        browser.callback,
        redirect_uri=browser.redirect_uri,
    )
    patient = server.model_copy(
        update={"connect_timeout_s": max(server.connect_timeout_s, SIGN_IN_TIMEOUT_S)}
    )
    return McpConnection(patient, None, listener, auth=auth)


def _model_id(server: str, model: str) -> str:
    """The gateway's models are already `provider/model`; other servers' get their name."""
    return model if server == GATEWAY else f"{server}/{model}"
