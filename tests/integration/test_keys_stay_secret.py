"""A provider's key reaches its gateway and nothing else: whatever the provider is called, no
settings object holds it, so no validation error or log can show it."""

from __future__ import annotations

import pytest

from app.cloud.health import HealthState
from app.paths import Paths
from app.secrets import SecretStore, provider_key
from app.settings import CloudSettings, ProviderSettings
from tests.integration.conftest import opened, run

KEY = "sk-live-7d41c0ffee9a2b58e6"


@pytest.mark.usefixtures("keychain")
@pytest.mark.parametrize("name", ["tokenhub", "key", "auth"])
def test_a_provider_of_any_name_gets_its_key_and_nothing_shows_it(
    name: str, isolated_paths: Paths
) -> None:
    """`key` made the gateway's own variable DOCENT_GATEWAY_KEY_KEY look like a credential to
    the settings validator, which refused it and printed the key in its error."""
    SecretStore.open(isolated_paths.config_dir, plaintext_consent=False).set(
        provider_key(name), KEY
    )
    provider = ProviderSettings(name=name, base_url="http://127.0.0.1:9/v1", models=["m"])

    async def scenario() -> list[HealthState]:
        async with opened(embeddings=False) as docent:
            routes = await docent.open_cloud_routes(CloudSettings(providers=[provider]))
            try:
                await routes.settled()
                assert all(KEY not in repr(c.settings) for c in routes.connections)
                return [health.state for health in routes.health()]
            finally:
                await routes.close()

    assert run(scenario()) == [HealthState.READY]
