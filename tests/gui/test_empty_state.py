"""The empty window: a drop zone that takes files and folders, questions to try on the guide a
first run indexes and on the bundled samples, where the shortcuts are; then the conversation
once a question is asked. Real files, real model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QMimeData, QPointF, Qt
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.samples import GUIDE_QUESTIONS, SAMPLES, sample_questions
from tests.documents import write_pdf
from tests.gui.conftest import drop, main_window
from tests.gui.test_first_run import visible_texts
from ui.shortcuts import ShortcutsDialog
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop)


def test_the_drop_zone_takes_files_and_folders(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    assert window.pages.currentWidget() is window.empty_state
    assert "Drop PDFs, e-books, Office files" in window.empty_state.hint.text()
    folder = tmp_path / "reports"
    folder.mkdir()
    inside = write_pdf(folder / "inside.pdf")
    alone = write_pdf(tmp_path / "alone.pdf")
    with_dropped = []
    window.empty_state.paths_dropped.connect(with_dropped.append)
    drop(window.empty_state, folder, alone)
    assert with_dropped == [[folder, alone]]
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert window.documents.status(inside) == "Ready"
    assert window.documents.status(alone) == "Ready"

    mime = QMimeData()
    mime.setText("not a file")
    refused = QDropEvent(
        QPointF(20, 20),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.empty_state.dropEvent(refused)
    assert not refused.isAccepted()
    assert len(with_dropped) == 1


def test_sample_questions_are_offered_and_one_click_asks_it(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    empty = window.empty_state
    assert empty.question_buttons == []
    assert empty.samples_button.isVisibleTo(window)
    assert empty.add_button.isDefault()  # the primary action; the samples are a link
    assert not empty.samples_button.isDefault()

    empty.samples_button.click()  # adds the bundled samples
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    offered = [button.text() for button in empty.question_buttons]
    assert offered == sample_questions(SAMPLES)
    assert "How long are customer invoices kept?" in offered
    assert not empty.samples_button.isVisibleTo(window)

    # Keyboard only: the first question chip takes focus and Space asks it.
    first = empty.question_buttons[0]
    first.setFocus()
    qtbot.keyClick(first, Qt.Key.Key_Space)
    assert window.answering is not None
    loop.run_until_complete(window.answering)
    assert window.pages.currentWidget() is window.turns
    (turn,) = window.turns.cards
    assert turn.asked.text() == "How long are customer invoices kept?"
    assert "seven" in turn.answer.toPlainText().lower()
    assert any(s.document == SAMPLES[0] for s in window.turns.cited_sources())


def test_a_first_run_offers_the_guides_questions_and_one_click_asks_it(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    """On a real first run (the guide indexed, no cloud set up): the guide's two questions to
    click, and no money anywhere in the window, before and after an answer."""

    async def first_start() -> None:
        await window.start(welcome=False)
        assert window.indexing is not None
        await window.indexing  # the guide

    loop.run_until_complete(first_start())
    empty = window.empty_state
    offered = [button.text() for button in empty.question_buttons]
    assert offered == list(GUIDE_QUESTIONS)
    assert empty.try_label.isVisibleTo(window)
    assert not any("$" in text for text in visible_texts(window)), visible_texts(window)

    empty.question_buttons[0].click()  # "Where does Docent keep my documents?"
    assert window.answering is not None
    loop.run_until_complete(window.answering)
    (turn,) = window.turns.cards
    assert turn.asked.text() == GUIDE_QUESTIONS[0]
    assert "sqlite file" in turn.answer.toPlainText().lower()
    assert {s.document for s in window.turns.cited_sources()} == {"welcome-to-docent.md"}
    assert window.session.answers == 1
    # The answer's badge says "free": no money anywhere, the status bar's message included.
    shown = [*visible_texts(window), window.statusBar().currentMessage()]
    assert not any("$" in text for text in shown), shown


def test_the_shortcuts_are_one_click_or_ctrl_slash_away(window: MainWindow, qtbot: QtBot) -> None:
    link = window.empty_state.shortcuts
    assert link.text() == "Keyboard shortcuts: Ctrl+/"
    link.click()
    (dialog,) = [d for d in window.findChildren(ShortcutsDialog) if d.isVisible()]
    assert ("Ctrl+K", "search conversations") in dialog.listed
    assert ("Ctrl+O", "add documents") in dialog.listed
    dialog.close()
    qtbot.waitUntil(lambda: not window.findChildren(ShortcutsDialog))  # deleted on close
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert [d for d in window.findChildren(ShortcutsDialog) if d.isVisible()]
