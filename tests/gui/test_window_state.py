"""The window comes back as it was left: geometry and splitters; a damaged state file is
ignored, not a reason to fail."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.gui.conftest import main_window
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def reopened(window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot) -> MainWindow:
    """A new window on the same Docent, as the next start builds it, shown."""
    again = MainWindow(window.docent)
    qtbot.addWidget(again)
    with qtbot.waitExposed(again):
        again.show()
    loop.run_until_complete(again.background.close())  # it starts no work: nothing to wait for
    return again


def sizes(window: MainWindow) -> list[list[int]]:
    return [splitter.sizes() for splitter in window.splitters]


def test_resized_splitters_come_back_in_a_new_window(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    window.resize(window.screen().availableSize() * 0.9)  # a restored geometry fits the screen
    defaults = sizes(window)
    outer, sidebar = window.splitters
    outer.setSizes([200, 500])
    sidebar.setSizes([60, 600, 300])
    resized = sizes(window)
    assert all(now != before for now, before in zip(resized, defaults, strict=True))
    window.save_state()
    assert sizes(reopened(window, loop, qtbot)) == resized


def test_damaged_splitter_states_are_ignored(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    defaults = sizes(window)
    state_file = window.docent.paths.config_dir / "window.json"
    garbage = base64.b64encode(b"not a splitter's state").decode("ascii")
    state_file.write_text(json.dumps({"geometry": "%%%", "splitters": ["%%%", garbage]}))
    assert sizes(reopened(window, loop, qtbot)) == defaults
