"""The conversation sidebar with the real model: follow-ups stay in one conversation, Ctrl+N starts
another, a click reopens one with its turns, sources and citation chips, the Delete key deletes
one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.documents import HANDBOOK_SECTIONS, write_pdf
from tests.gui.conftest import main_window, tooltip_shows
from ui.answer.turn_card import TurnCard
from ui.window.conversation_list import CLIENT_MARK, CLIENT_NOTE
from ui.window.main_window import MainWindow

FIRST = "When was the English edition of the Harbor Handbook published?"
FOLLOW_UP = "And the Chinese edition?"
OTHER = "Which command installs Harbor?"


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def ask(window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, question: str) -> None:
    window.question.setPlainText(question)
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    assert window.answering is not None
    loop.run_until_complete(window.answering)


def chips_of(card: TurnCard) -> tuple[str, list[tuple[int, str, int]]]:
    """The answer as shown, and the page each of its citation chips opens."""
    chips = card.chips().values()
    return card.answer.toPlainText(), [(s.number, s.document, s.page) for s in chips]


def titles(window: MainWindow) -> list[str]:
    rows = window.conversation_list.list
    return [rows.item(row).text() for row in range(rows.count())]


# The offscreen platform has no keyboard to grab: the badge's details (a popup) ask for it.
@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
def test_the_conversation_list_keeps_reopens_and_deletes_conversations(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(
        window.add_paths([write_pdf(tmp_path / "handbook.pdf", HANDBOOK_SECTIONS)])
    )
    ask(window, loop, qtbot, FIRST)
    ask(window, loop, qtbot, FOLLOW_UP)
    assert titles(window) == [FIRST]  # the follow-up joined the first question's conversation
    follow_up = window.turns.cards[-1]
    details = follow_up.badge.open_details()  # what the badge's details say
    assert details is not None
    assert details.values()["Searched for"] == f"{FIRST} {FOLLOW_UP}"
    details.close()
    first_id = window.current.id
    assert first_id is not None
    assert len(window.current.turns) == 2
    # The chips each answer showed live, which must come back with the conversation.
    live = [chips_of(card) for card in window.turns.cards]
    assert all(chips for _, chips in live), live

    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.current.id is None
    assert window.turns.cards == []
    assert window.pages.currentWidget() is window.empty_state
    ask(window, loop, qtbot, OTHER)
    assert titles(window) == [OTHER, FIRST]  # the latest first
    other_id = window.current.id

    rows = window.conversation_list.list
    first_row = rows.visualItemRect(rows.item(1)).center()
    qtbot.mouseClick(rows.viewport(), Qt.MouseButton.LeftButton, pos=first_row)
    loop.run_until_complete(window.wait_for_tasks())
    assert window.current.id == first_id
    assert [turn.question for turn in window.current.turns] == [FIRST, FOLLOW_UP]
    assert window.pages.currentWidget() is window.turns
    assert [card.question for card in window.turns.cards] == [FIRST, FOLLOW_UP]
    assert [chips_of(card) for card in window.turns.cards] == live
    reopened = window.turns.cards[-1]
    assert "handbook.pdf, p. 2 (page 3 of the file) — Chinese edition" in reopened.text()
    assert reopened.badge.text().startswith("route: local (qwen2.5-coder-0.5b)")
    assert any(source.page == 3 for source in window.turns.cited_sources())  # cards

    rows.setCurrentRow(0)  # the other conversation
    qtbot.keyClick(rows, Qt.Key.Key_Delete)
    loop.run_until_complete(window.wait_for_tasks())
    assert titles(window) == [FIRST]
    assert window.current.id == first_id  # deleting another left the open one as it was
    history = loop.run_until_complete(window.docent.library.history(50))
    assert {row.conversation_id for row in history} == {first_id}
    assert other_id not in window.conversation_list.ids()

    # A conversation an MCP client started shows as the client's; opened, it is the user's to
    # go on with in a copy (the client never sees the user's questions).
    client_id = loop.run_until_complete(
        window.docent.library.create_conversation("A client's question", "a-client-handle")
    )
    loop.run_until_complete(window.refresh_conversations())
    assert titles(window) == [f"{CLIENT_MARK}A client's question", FIRST]
    assert CLIENT_NOTE in tooltip_shows(rows.item(0).toolTip())
    window.open_conversation(client_id)
    loop.run_until_complete(window.wait_for_tasks())
    assert (window.current.id, window.current.continues) == (None, client_id)
