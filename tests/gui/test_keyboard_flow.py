"""The whole window by keyboard alone: add a document, ask, reach the answer's citations and
sources, open the cited page and close it, with the real library and the real local model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QApplication, QFileDialog, QLabel, QWidget
from pytestqt.qtbot import QtBot

from tests.documents import write_pdf
from tests.gui.conftest import main_window
from ui.answer.page_preview import PagePreview
from ui.answer.source_cards import SourceCard
from ui.window.main_window import MainWindow

QUESTION = "How long must customer invoices be kept?"


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop, qtbot: QtBot) -> Iterator[MainWindow]:
    for shown in main_window(loop):
        qtbot.waitUntil(shown.isActiveWindow)  # key events follow the focus of the active window
        yield shown


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard focus"
    return widget


def press(key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """A key pressed by the user: it goes to whatever has the focus."""
    QTest.keyClick(focused(), key, modifier)


def describe(widget: QWidget) -> str:
    return f"{type(widget).__name__}({widget.accessibleName()!r})"


def tab_to(reached: Callable[[QWidget], bool], *, backwards: bool = False) -> list[QWidget]:
    """Press Tab (Shift+Tab) until `reached` holds for the focused widget; what it passed."""
    passed: list[QWidget] = []
    for _ in range(60):
        press(
            Qt.Key.Key_Tab,
            Qt.KeyboardModifier.ShiftModifier if backwards else Qt.KeyboardModifier.NoModifier,
        )
        passed.append(focused())
        if reached(passed[-1]):
            return passed
    raise AssertionError(f"never reached by Tab: {[describe(w) for w in passed]}")


def open_preview(window: MainWindow, loop: qasync.QEventLoop, key: Qt.Key) -> PagePreview:
    before = len(window.previews)
    press(key)
    assert len(window.previews) == before + 1, f"{key.name} on {describe(focused())} opened nothing"
    preview = window.previews[-1]
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)
    return preview


def close_by_escape(preview: PagePreview, qtbot: QtBot) -> None:
    qtbot.waitUntil(preview.isActiveWindow)
    assert focused().window() is preview  # the preview has the keyboard, not the window
    press(Qt.Key.Key_Escape)
    assert not preview.isVisible()


def test_add_ask_and_open_the_cited_page_by_keyboard_alone(
    window: MainWindow,
    loop: qasync.QEventLoop,
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    # Qt's own file dialog is not Docent's to test: it answers with the report.
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *_: ([str(report)], ""))
    assert focused() is window.question  # the window opens ready for a question

    press(Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert window.documents.status(report) == "Ready"

    # Round the window once: the sidebar, the start page, and back to the question.
    passed = tab_to(lambda widget: widget is window.question)
    sidebar = window.conversation_list
    # Send waits for a question; then the status bar's cloud state, and on round to the
    # sidebar (no conversation yet: the empty list is no Tab stop), the header's route menu,
    # the start page and the scope chip.
    assert passed[:2] == [window.cloud_state, sidebar.new_button]
    order = [
        sidebar.new_button,
        sidebar.search,
        window.documents,
        window.header.route,
        window.empty_state.add_button,
        window.composer.scope,
    ]
    assert [passed.index(widget) for widget in order] == sorted(passed.index(w) for w in order)
    QTest.keyClicks(focused(), QUESTION)
    press(Qt.Key.Key_Return)
    assert window.answering is not None
    loop.run_until_complete(window.answering)
    (turn,) = window.turns.cards
    assert "seven" in turn.answer.toPlainText().lower()
    assert turn.sources.cards

    # Back from the question, past the scope chip, into the answer: its actions (re-ask, retry,
    # copy), then its last source card.
    passed = tab_to(lambda widget: isinstance(widget, SourceCard), backwards=True)
    card = focused()
    actions = [turn.reask, turn.retry, turn.copy_answer]
    assert passed == [window.composer.scope, *actions, card]  # the chip sits before the box
    assert card is turn.sources.cards[-1]
    preview = open_preview(window, loop, Qt.Key.Key_Space)
    assert preview.rendered is not None, preview.position.text()
    assert (preview.path, preview.rendered.page) == (report, card.source.page)
    assert preview.rendered.highlights  # the cited passage, on the cited page
    close_by_escape(preview, qtbot)
    qtbot.waitUntil(window.isActiveWindow)
    assert focused() is card  # back where the user was

    # On back through the answer to the conversation itself, then the sidebar.
    passed = tab_to(lambda widget: widget is window.documents, backwards=True)
    assert passed.index(turn.badge) < passed.index(turn.answer) < passed.index(window.turns)
    in_the_answer = passed[: passed.index(window.turns)]
    assert all(window.turns.isAncestorOf(widget) for widget in in_the_answer)


def spoken(widget: QWidget) -> str:
    """What a screen reader says for `widget`: its accessible name, else a button's text or
    its label's (a buddy); text without a letter (◀, +) says nothing."""
    text = widget.accessibleName()
    if not text and isinstance(widget, QAbstractButton):
        text = widget.text()
    if not text:
        text = next(
            (
                label.text()
                for label in widget.window().findChildren(QLabel)
                if label.buddy() is widget
            ),
            "",
        )
    return text if any(character.isalpha() for character in text) else ""


def test_everything_that_takes_the_focus_has_a_name_a_screen_reader_reads(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    loop.run_until_complete(window.add_paths([report]))
    loop.run_until_complete(window.ask(QUESTION))
    (turn,) = window.turns.cards
    assert turn.sources.cards  # so the cards are checked too
    preview = window.show_source(turn.sources.cards[0].source)
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)
    focusable = [
        widget
        for widget in window.findChildren(QWidget)
        # A viewport passes its focus on to its view (its proxy), which is checked itself.
        if widget.focusPolicy() != Qt.FocusPolicy.NoFocus and widget.focusProxy() is None
    ]
    assert {window.question, turn.answer, turn.badge, turn.sources.cards[0]} <= set(focusable)
    assert [describe(widget) for widget in focusable if not spoken(widget)] == []
