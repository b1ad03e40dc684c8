"""Settings: invalid values are refused next to their field; valid ones are saved and applied."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.bootstrap import Docent
from ui.settings_dialog import SettingsDialog


@pytest.fixture
def docent(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[Docent]:
    instance = Docent.from_environment(embeddings=False)
    loop.run_until_complete(instance.open())
    yield instance
    loop.run_until_complete(instance.close())


def test_an_invalid_number_is_refused_next_to_its_field(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    dialog = SettingsDialog(docent)
    dialog.numbers["local.n_ctx"].setValue(100)
    assert loop.run_until_complete(dialog.submit()) is False
    error = dialog.errors["local.n_ctx"]
    assert not error.isHidden()
    assert error.text() == "Input should be greater than or equal to 512"
    assert not docent.paths.settings_file.exists()
    dialog.deleteLater()


def test_a_missing_model_file_is_refused(docent: Docent, loop: qasync.QEventLoop) -> None:
    dialog = SettingsDialog(docent)
    dialog.model.setText("/nowhere/model.gguf")
    assert loop.run_until_complete(dialog.submit()) is False
    assert dialog.errors["local.chat_model"].text() == (
        "the chat model file /nowhere/model.gguf does not exist"
    )
    dialog.deleteLater()


def test_valid_settings_are_saved_and_applied_without_restart(
    docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    own_model = tmp_path / "mine.gguf"
    own_model.write_bytes(b"GGUF")
    dialog = SettingsDialog(docent)
    dialog.model.setText(str(own_model))
    dialog.numbers["local.n_threads"].setValue(3)
    dialog.numbers["retrieval.top_k"].setValue(6)
    assert loop.run_until_complete(dialog.submit()) is True
    saved = json.loads(docent.paths.settings_file.read_text())
    assert saved["local"]["n_threads"] == 3
    assert saved["local"]["chat_model"] == str(own_model)
    assert saved["retrieval"]["top_k"] == 6
    assert docent.settings.local.n_threads == 3
    assert docent.chat_model().name == "mine"  # the next question loads this model
    dialog.deleteLater()
