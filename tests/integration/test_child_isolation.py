"""Docent's children never import code from the folder Docent was started in: a project folder
with its own `app` package (every Flask project has one) stays inert, and the keys the gateway
holds never meet it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cloud.health import HealthState
from app.settings import CloudSettings, ProviderSettings
from tests.documents import write_pdf
from tests.integration.conftest import index_all, opened, run

# The marker's path is written into the code: the gateway's environment holds no variable of ours.
PLANTED = """
import os, pathlib
pathlib.Path({marker!r}).write_text(
    "ran with: " + ",".join(sorted(k for k in os.environ if k.startswith("DOCENT_GATEWAY")))
)
"""


@pytest.fixture
def project_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder: a project with an `app` package and an `app.py` that tell on
    themselves when imported."""
    project = tmp_path / "flask-project"
    (project / "app").mkdir(parents=True)
    marker = tmp_path / "planted-code-ran"
    (project / "app" / "__init__.py").write_text(PLANTED.format(marker=str(marker)))
    (project / "app.py").write_text(PLANTED.format(marker=str(marker)))
    monkeypatch.chdir(project)
    return marker


def test_the_gateway_and_the_reader_start_clean_from_a_project_folder(
    project_folder: Path, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    provider = ProviderSettings(name="tokenless", base_url="http://127.0.0.1:9/v1", models=["m"])

    async def scenario() -> tuple[list[HealthState], list[str]]:
        async with opened(embeddings=False) as docent:
            routes = await docent.open_cloud_routes(CloudSettings(providers=[provider]))
            try:
                await routes.settled()
                states = [health.state for health in routes.health()]
            finally:
                await routes.close()
            events = await index_all(docent, [report])
            return states, [type(event).__name__ for event in events]

    states, events = run(scenario())
    assert states == [HealthState.READY]
    assert events[-1] == "FileIndexed"
    assert not project_folder.exists(), project_folder.read_text()
