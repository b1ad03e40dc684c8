"""Cloud routes follow the settings while Docent runs: no restart to use a new server."""

from __future__ import annotations

from app.cloud.health import HealthState
from app.settings import CloudSettings
from tests.integration.conftest import opened, run
from tests.peers.everything import everything_stdio


def test_a_server_added_in_settings_is_connected_without_a_restart() -> None:
    async def scenario() -> list[tuple[str, HealthState]]:
        async with opened(embeddings=False) as docent:
            await docent.cloud_session.start()  # at start-up, with nothing configured yet
            assert docent.cloud is None
            cloud = CloudSettings(servers=[everything_stdio()])
            await docent.apply_settings(docent.settings.model_copy(update={"cloud": cloud}))
            assert docent.cloud is not None
            await docent.cloud.settled()
            return [(health.server, health.state) for health in docent.cloud.health()]

    assert run(scenario()) == [("everything", HealthState.READY)]
