"""Models…: download the real GGUF from a server on 127.0.0.1 with a progress bar, pause, resume,
then use it without restarting; a missing model at start-up is said, and the bundled one answers."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.bootstrap import Docent
from app.catalog import Catalog
from app.paths import Paths
from app.settings import LocalModelSettings, Settings
from tests.gui.conftest import close_window, open_window
from tests.gui.waiting import until
from tests.integration.test_downloads import GGUF, served_model
from tests.model_server import ModelServer, Served, model_server


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with model_server() as running:
        yield running


def test_download_with_progress_pause_resume_then_use_it_without_restart(
    qapp: QApplication, loop: qasync.QEventLoop, server: ModelServer, tmp_path: Path
) -> None:
    model = served_model(server, "served-qwen", Served(GGUF))
    paths = dataclasses.replace(Paths.from_environment(), models_dir=tmp_path / "models")
    docent = Docent(paths, Settings(), Catalog((*Catalog.load().models, model)), embeddings=False)
    window = open_window(loop, docent)
    try:
        manager = window.open_models()
        assert manager.rows["qwen2.5-3b-instruct"].text(1) == "1.93 GB"
        assert manager.rows["qwen2.5-3b-instruct"].text(2) == "3 GB"
        assert manager.rows["served-qwen"].text(4) == "download"
        manager.select("served-qwen")
        manager.download_button.click()
        assert manager.downloading is not None
        assert not manager.progress.isHidden()

        async def pause_once_it_moves() -> None:
            # Clicked while the loop runs, as in the app: a cancel delivered by Qt while no
            # loop runs would reach httpx outside any loop.
            await until(manager.changed, lambda: manager.progress.value() > 100)
            assert " MB/s · " in manager.status.text()
            manager.pause_button.click()
            await until(manager.changed, lambda: manager.downloading is None)

        loop.run_until_complete(pause_once_it_moves())
        assert manager.status.text().endswith("paused. Resume continues where it stopped.")
        assert manager.rows["served-qwen"].text(4).startswith("paused at ")
        assert manager.download_button.text() == "Resume"
        assert not manager.use_button.isEnabled()

        task = manager.start_download()
        assert task is not None
        loop.run_until_complete(task)
        assert "downloaded and verified" in manager.status.text()
        assert manager.rows["served-qwen"].text(4) == "ready"
        assert [header for _, header in server.requests][1].startswith("bytes=")

        assert manager.use_button.isEnabled()
        manager.use_button.click()
        assert manager.switching is not None
        loop.run_until_complete(manager.switching)
        assert manager.status.text() == "Docent now answers with served-qwen."
        assert manager.rows["served-qwen"].text(4) == "in use"
        assert window.model_state.text() == "Local model: served-qwen (ready)"
        assert Settings.load(paths.settings_file).local.chat_model == "served-qwen"
    finally:
        close_window(loop, window)


def test_a_missing_model_at_start_up_is_said_and_the_bundled_one_is_used(
    qapp: QApplication, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    gone = tmp_path / "moved-away.gguf"
    settings = Settings(local=LocalModelSettings(chat_model=str(gone)))
    docent = Docent(Paths.from_environment(), settings, embeddings=False)
    window = open_window(loop, docent)
    try:
        loop.run_until_complete(window.start())
        assert window.model_notice is not None
        assert window.model_notice.isVisible()
        assert window.model_notice.text() == (
            f"The local model {gone} cannot be used: the chat model file {gone} does not exist. "
            "Docent answers with the bundled qwen2.5-coder-0.5b instead; choose another model "
            "in Models…"
        )
        assert window.model_state.text() == "Local model: qwen2.5-coder-0.5b (idle)"
    finally:
        close_window(loop, window)
