"""Settings' "Test connection": can Docent reach this provider or MCP server, and how fast?"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import httpx

from app.cloud.client import McpConnection
from app.cloud.health import HealthState
from app.llm.engine import EngineError
from app.settings import McpServerSettings, ProviderSettings


@dataclass(frozen=True, slots=True)
class Probe:
    ok: bool
    latency_s: float
    detail: str

    def describe(self) -> str:
        took = f"{self.latency_s * 1000:.0f} ms"
        return f"OK in {took}: {self.detail}" if self.ok else f"failed after {took}: {self.detail}"


@dataclass(frozen=True, slots=True)
class ModelListing:
    """What GET {base_url}/models answered: the models served (None: it answered without a
    list), or why it could not be read (`error`)."""

    latency_s: float
    models: tuple[str, ...] | None = None
    error: str = ""


async def list_models(base_url: str, key: str | None) -> ModelListing:
    """GET {base_url}/models: reachable, key accepted, and which models it serves."""
    base_url = base_url.rstrip("/")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.perf_counter()
    try:
        async with httpx.AsyncClient(timeout=10.0) as client:
            response = await client.get(f"{base_url}/models", headers=headers)
    except (httpx.HTTPError, httpx.InvalidURL) as error:  # InvalidURL: "https://" alone
        reason = (
            "no answer within 10 s"
            if isinstance(error, httpx.TimeoutException)
            else (f"cannot reach {base_url}")
        )
        return ModelListing(time.perf_counter() - started, error=reason)
    took = time.perf_counter() - started
    if response.status_code in (401, 403):
        return ModelListing(took, error=f"the key was rejected (HTTP {response.status_code})")
    if response.status_code != 200:
        return ModelListing(took, error=f"HTTP {response.status_code} from {base_url}/models")
    try:
        served = tuple(sorted({str(item["id"]) for item in response.json().get("data", [])}))
    except (ValueError, KeyError, TypeError, AttributeError):
        return ModelListing(took)
    return ModelListing(took, served)


async def probe_provider(provider: ProviderSettings, key: str | None) -> Probe:
    """The provider's model list, checked against the models configured for it."""
    listing = await list_models(provider.base_url, key)
    took = listing.latency_s
    if listing.error:
        return Probe(False, took, listing.error)
    if listing.models is None:
        return Probe(True, took, "reachable (it does not list its models)")
    missing = [model for model in provider.models if model not in listing.models]
    if missing and listing.models:
        return Probe(True, took, f"reachable, but it does not list {', '.join(missing)}")
    return Probe(True, took, f"{len(listing.models)} models served")


async def probe_server(server: McpServerSettings, key: str | None) -> Probe:
    """Open a session, list its tools, close it: what Docent does at start-up, timed."""
    connection = McpConnection(server, key, backoff_s=(3600.0,))
    started = time.perf_counter()
    connection.start()
    with contextlib.suppress(EngineError):  # the health says why
        await connection.wait_ready(server.connect_timeout_s)
    took = time.perf_counter() - started
    health = connection.health
    await connection.close()
    if health.state is HealthState.READY:
        return Probe(True, took, f"{len(connection.tools)} tools, including {server.chat_tool!r}")
    return Probe(False, took, health.detail or str(health.state))
