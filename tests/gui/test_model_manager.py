"""Models…: download the real GGUF from a server on 127.0.0.1 with a progress bar, pause, resume,
then use it without restarting; each model's accuracy and speed here, and the one recommended for
this computer, used (downloaded first) in one click; a missing model at start-up is said, and the
bundled one answers."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QLabel

from app.bootstrap import Docent
from app.catalog import Catalog, Evaluation, ModelPart, Speed
from app.llm.speed import decide
from app.paths import Paths
from app.settings import LocalModelSettings, Settings, SpeedCheck
from tests.gui.conftest import close_window, open_window, tooltip_shows
from tests.gui.waiting import until
from tests.integration.test_downloads import GGUF, SLICE, served_model
from tests.model_server import ModelServer, Served, model_server
from ui.settings.model_manager import HERE, NAME, RAM, RIGHT, SIZE, STATE, ModelManager

BUNDLED, LARGER = "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"
MANUALS = "the manuals set's 77 questions, local only"


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
        assert manager.rows["qwen2.5-3b-instruct"].text(SIZE) == "1.93 GB"
        assert manager.rows["qwen2.5-3b-instruct"].text(RAM) == "3 GB"
        assert manager.rows["served-qwen"].text(STATE) == "not downloaded"
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
        assert manager.rows["served-qwen"].text(STATE).startswith("paused at ")
        assert manager.download_button.text() == "Resume"
        assert not manager.use_button.isEnabled()

        task = manager.start_download()
        assert task is not None
        loop.run_until_complete(task)
        assert "downloaded and verified" in manager.status.text()
        assert manager.rows["served-qwen"].text(STATE) == "ready"
        assert [header for _, header in server.requests][1].startswith("bytes=")

        assert manager.use_button.isEnabled()
        manager.use_button.click()
        assert manager.switching is not None
        loop.run_until_complete(manager.switching)
        assert manager.status.text() == "Docent now answers with served-qwen."
        assert manager.rows["served-qwen"].text(STATE) == "in use"
        assert window.model_state.text() == "Local model: served-qwen (ready)"
        assert Settings.load(paths.settings_file).local.chat_model == "served-qwen"
    finally:
        close_window(loop, window)


def larger_model_installed() -> Catalog:
    """The catalog, its larger model's parts in an installed package (never joined here)."""
    catalog = Catalog.load()
    larger = dataclasses.replace(catalog.get(LARGER), parts=(ModelPart("json", "part01.bin"),))
    return Catalog(tuple(larger if m.name == LARGER else m for m in catalog.models))


def measured(catalog: Catalog, speed: Speed) -> SpeedCheck:
    return decide(catalog, speed, 1200, BUNDLED)


def measure_again(loop: qasync.QEventLoop, manager: ModelManager, check: SpeedCheck | None) -> None:
    """A new speed check (as Settings → Measure again), then Models… opened again."""
    settings = manager.docent.settings.model_copy(update={"speed_check": check})
    loop.run_until_complete(manager.docent.apply_settings(settings))
    manager.refresh()


def test_each_model_shows_its_accuracy_and_speed_here_and_the_recommended_one_is_marked(
    loop: qasync.QEventLoop,
) -> None:
    catalog = larger_model_installed()
    # The 2-core reference machine: the 1.5B is not chosen (15.7 s > 6 s), but recommended.
    settings = Settings(speed_check=measured(catalog, Speed(171, 30.5)))
    docent = Docent(Paths.from_environment(), settings, catalog, embeddings=False)
    loop.run_until_complete(docent.open())
    manager = ModelManager(docent)
    try:
        rows = manager.rows
        assert [rows[name].text(RIGHT) for name in (BUNDLED, LARGER, "qwen2.5-7b-instruct")] == [
            "61 %",
            "71 %",
            "",  # never evaluated
        ]
        assert tooltip_shows(rows[LARGER].toolTip(RIGHT)) == f"Docent's evaluation: {MANUALS}"
        # 1200 tokens / (171 x 0.85) and / (90 x 0.85) tokens/s.
        assert rows[BUNDLED].text(HERE) == "first words in 8.3 s, 30.5 tokens/s"
        assert rows[LARGER].text(HERE) == "first words in 15.7 s, 13.6 tokens/s"
        assert rows["qwen2.5-7b-instruct"].text(HERE) == ""  # no reference speed to predict from
        assert rows[LARGER].text(NAME) == "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, GGUF) — recommended"
        assert rows[LARGER].font(NAME).bold()
        assert rows[BUNDLED].text(NAME) == "Qwen2.5-Coder-0.5B-Instruct (Q4, GGUF)"
        assert not manager.recommended.isHidden()
        assert manager.recommended.text() == (
            "Recommended for this computer: Qwen2.5-Coder-1.5B-Instruct, 71 % of answers right "
            "vs 61 % for Qwen2.5-Coder-0.5B-Instruct, first words in about 16 s."
        )
        assert manager.recommended_button.text() == "Use it"
        assert manager.recommended_button.isEnabled()

        # A third of the reference machine's speed: 45 s to the 1.5B's first words.
        measure_again(loop, manager, measured(catalog, Speed(60, 12)))
        assert rows[LARGER].text(HERE) == "first words in 44.7 s, 5.4 tokens/s"
        assert rows[LARGER].text(NAME) == "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, GGUF)"
        assert not rows[LARGER].font(NAME).bold()
        assert manager.recommended.isHidden()
        assert manager.recommended_button.isHidden()

        measure_again(loop, manager, None)  # never measured: accuracy only
        assert [rows[name].text(HERE) for name in (BUNDLED, LARGER)] == ["", ""]
        assert rows[LARGER].text(RIGHT) == "71 %"
        assert manager.recommended.isHidden()
    finally:
        loop.run_until_complete(docent.close())
        manager.deleteLater()


def test_the_recommended_model_is_downloaded_and_used_in_one_click(
    loop: qasync.QEventLoop, server: ModelServer, tmp_path: Path
) -> None:
    served = dataclasses.replace(
        served_model(server, "served-qwen", Served(GGUF)),
        evaluation=Evaluation(0.8, MANUALS),
        reference_speed=Speed(120, 20),  # 11.8 s to the first words on the reference machine
    )
    catalog = Catalog((*larger_model_installed().models, served))
    paths = dataclasses.replace(Paths.from_environment(), models_dir=tmp_path / "models")
    settings = Settings(speed_check=measured(catalog, Speed(171, 30.5)))
    docent = Docent(paths, settings, catalog, embeddings=False)
    loop.run_until_complete(docent.open())
    manager = ModelManager(docent)
    try:
        assert manager.recommended.text().startswith(
            "Recommended for this computer: served-qwen, 80 % of answers right vs 61 %"
        )
        assert manager.recommended_button.text() == "Download and use it"
        manager.recommended_button.click()
        assert manager.downloading is not None
        assert not manager.recommended_button.isEnabled()

        async def switched() -> None:
            await until(manager.changed, lambda: docent.settings.local.chat_model == served.name)

        loop.run_until_complete(switched())
        assert manager.switching is None
        assert manager.status.text() == "Docent now answers with served-qwen."
        assert manager.rows["served-qwen"].text(STATE) == "in use"
        assert manager.recommended.isHidden()  # nothing in the catalog answers better
        assert Settings.load(paths.settings_file).local.chat_model == "served-qwen"
    finally:
        loop.run_until_complete(manager.close_async())
        loop.run_until_complete(docent.close())
        manager.deleteLater()


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


class FileManager(QObject):
    """Stands in for the desktop's file manager: Qt hands it the file: URLs it is asked to
    open (QDesktopServices.setUrlHandler), so no real one starts."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toLocalFile())


def test_open_models_folder_shows_the_folder_instead_of_printing_its_path(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    file_manager = FileManager()
    QDesktopServices.setUrlHandler("file", file_manager, "open")
    manager = ModelManager(docent)
    try:
        folder = str(docent.paths.models_dir)
        assert all(folder not in label.text() for label in manager.findChildren(QLabel))
        manager.folder_button.click()
        assert file_manager.opened == [folder]
    finally:
        QDesktopServices.unsetUrlHandler("file")
        manager.deleteLater()


def test_two_managers_asked_for_one_model_download_it_once(
    qapp: QApplication, loop: qasync.QEventLoop, server: ModelServer, tmp_path: Path
) -> None:
    """Two Models managers (two windows) download the same model: the second says another
    download has it and waits, then finds it downloaded; the server sent it once."""
    model = served_model(server, "served-qwen", Served(GGUF, length=SLICE, delay_s=0.05))
    paths = dataclasses.replace(Paths.from_environment(), models_dir=tmp_path / "models")
    docent = Docent(paths, Settings(), Catalog((*Catalog.load().models, model)), embeddings=False)
    loop.run_until_complete(docent.open())
    first, second = ModelManager(docent), ModelManager(docent)
    try:
        for manager in (first, second):
            manager.select("served-qwen")

        async def both() -> None:
            one = first.start_download()
            await until(first.changed, lambda: first.progress.value() > 0)
            two = second.start_download()
            assert one is not None
            assert two is not None
            await until(second.changed, lambda: second.status.text().startswith("Another"))
            assert second.status.text().startswith(
                "Another Docent window or command is downloading it: "
            )
            await asyncio.gather(one, two)

        loop.run_until_complete(both())
        for manager in (first, second):
            assert "downloaded and verified" in manager.status.text()
            assert manager.rows["served-qwen"].text(STATE) == "ready"
        assert server.requests == [("served-qwen", None)]
    finally:
        for manager in (first, second):
            loop.run_until_complete(manager.close_async())
            manager.deleteLater()
        loop.run_until_complete(docent.close())
