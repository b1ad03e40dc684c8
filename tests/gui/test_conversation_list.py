"""The conversation sidebar: with the real model, follow-ups stay in one conversation, Ctrl+N
starts another, a click reopens one with its turns, sources and citation chips, the Delete key
deletes one (after its Undo ran out); on a real library of 200 conversations, typing searches
their titles at once and their answers through the core, F2 renames one, and Undo brings a
deleted one back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QDate, QLocale, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QInputDialog, QListWidgetItem
from pytestqt.qtbot import QtBot

from app.index import ConversationInfo
from tests.documents import HANDBOOK_SECTIONS, write_pdf
from tests.gui.conftest import main_window, tooltip_shows
from tests.gui.test_theme import contrast
from tests.gui.waiting import until
from tests.integration.test_conversation_search import OXIDISED, TEA, answered
from ui.answer.turn_card import TurnCard
from ui.looks import MutedLabel
from ui.theme import dark_palette, muted_colour
from ui.window.conversation_list import CLIENT_MARK
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
    return window.conversation_list.titles()


def row_of(window: MainWindow, conversation_id: int) -> QListWidgetItem:
    rows = window.conversation_list.list
    items = (rows.item(row) for row in range(rows.count()))
    (item,) = (item for item in items if item.data(Qt.ItemDataRole.UserRole) == conversation_id)
    return item


def delete_after_undo_time(window: MainWindow, loop: qasync.QEventLoop) -> None:
    """Wait out the Undo of the conversation just deleted (shortened: the wait is not the test),
    then for the deletion."""
    listing = window.conversation_list
    listing.undo_timer.setInterval(10)
    listing.undo_timer.start()
    loop.run_until_complete(until(listing.delete_requested, lambda: listing.undo_bar.isHidden()))
    loop.run_until_complete(window.wait_for_tasks())


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
    assert window.conversation_list.groups() == ["Today"]
    first_row = rows.visualItemRect(row_of(window, first_id)).center()
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

    assert other_id is not None
    rows.setCurrentItem(row_of(window, other_id))
    qtbot.keyClick(rows, Qt.Key.Key_Delete)
    assert titles(window) == [FIRST]  # off the list at once, deleted when its Undo runs out
    delete_after_undo_time(window, loop)
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
    assert "Asked by an MCP client." in tooltip_shows(row_of(window, client_id).toolTip())
    window.open_conversation(client_id)
    loop.run_until_complete(window.wait_for_tasks())
    assert (window.current.id, window.current.continues) == (None, client_id)


LIGHTHOUSE = "The lighthouse keeper retires in 2031, after forty years [1]."


def test_200_conversations_are_searched_as_one_types_renamed_and_deleted_with_undo(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    listing = window.conversation_list
    assert listing.list.isHidden()
    assert listing.placeholder.isVisibleTo(window)
    assert listing.placeholder.text() == "Your conversations appear here"
    library = window.docent.library

    async def keep_200() -> dict[str, int]:
        kept = {}
        for number in range(198):
            question = f"Question {number} on the harbour"
            kept[question] = await library.create_conversation(question)
            answer = LIGHTHOUSE if number == 137 else "The handbook does not say."
            await library.record(answered(question, answer, kept[question]))
        kept[TEA] = await library.create_conversation(TEA)
        await library.record(answered(TEA, OXIDISED, kept[TEA]))
        kept["empty"] = await library.create_conversation("Not answered yet")
        await window.refresh_conversations()
        return kept

    kept = loop.run_until_complete(keep_200())
    assert len(listing.ids()) == 200
    assert listing.placeholder.isHidden()
    assert listing.groups() == ["Today"]  # all continued just now
    assert listing.titles()[:2] == ["Not answered yet", TEA]  # the latest first
    when, questions, route = listing.details()[1].split(" · ")
    assert when.startswith("Today ")
    assert (questions, route) == ("1 question", "local")
    assert listing.details()[0].endswith(" · 0 questions")

    # Ctrl+K, then typing: the titles filter at once; the answers' words come from the core.
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert listing.search.hasFocus()
    qtbot.keyClicks(listing.search, "keeper")
    assert listing.ids() == []  # no title holds it, and the core has not answered yet
    assert listing.placeholder.text() == "No conversation matches “keeper”"
    loop.run_until_complete(until(listing.search_shown, lambda: bool(listing.ids())))
    assert listing.ids() == [kept["Question 137 on the harbour"]]
    assert "lighthouse keeper retires in 2031" in listing.details()[0]
    qtbot.keyClick(listing.search, Qt.Key.Key_Return)  # on to the first found
    assert listing.list.hasFocus()
    assert listing.selected() == kept["Question 137 on the harbour"]
    listing.search.clear()
    qtbot.keyClicks(listing.search, "question 13")  # titles: 13, 130…139
    assert len(listing.ids()) == 11
    listing.search.setText("半发酵")  # typed through an input method: committed at once
    loop.run_until_complete(until(listing.search_shown, lambda: bool(listing.ids())))
    assert listing.ids() == [kept[TEA]]
    assert "乌龙茶是半发酵茶" in listing.details()[0]

    # F2 renames the selected conversation; the new title is kept and found.
    listing.search.clear()
    assert len(listing.ids()) == 200
    listing.list.setCurrentItem(row_of(window, kept[TEA]))
    listing.list.setFocus()
    qtbot.keyClick(listing.list, Qt.Key.Key_F2)
    (dialog,) = [d for d in listing.findChildren(QInputDialog) if d.isVisible()]
    assert dialog.textValue() == TEA
    dialog.setTextValue("Tea  notes")
    with qtbot.waitSignal(listing.renamed):
        dialog.accept()
        loop.run_until_complete(window.wait_for_tasks())
    assert listing.titles()[1] == "Tea notes"
    stored = loop.run_until_complete(library.conversations())
    assert [c.title for c in stored if c.id == kept[TEA]] == ["Tea notes"]

    # Delete takes it off the list with an Undo; Undo brings it back, nothing deleted.
    qtbot.keyClick(listing.list, Qt.Key.Key_Delete)
    assert kept[TEA] not in listing.ids()
    assert listing.undo_bar.isVisibleTo(window)
    assert listing.undo_note.text() == "Deleted “Tea notes”"
    listing.undo_button.click()
    assert kept[TEA] in listing.ids()
    assert listing.undo_bar.isHidden()
    listing.list.setCurrentItem(row_of(window, kept[TEA]))
    qtbot.keyClick(listing.list, Qt.Key.Key_Delete)
    delete_after_undo_time(window, loop)
    assert kept[TEA] not in listing.ids()
    stored = loop.run_until_complete(library.conversations())
    assert kept[TEA] not in [c.id for c in stored]
    assert len(stored) == 199


def test_muted_text_stays_readable_in_light_and_dark(qapp: QApplication, qtbot: QtBot) -> None:
    """The rows' details, the group labels and the placeholder: quieter, and still 4.5:1 on
    the window and on the list, in Fusion's light palette and in a dark one it switches to."""
    light = qapp.palette()
    label = MutedLabel("Your conversations appear here")
    qtbot.addWidget(label)
    try:
        for palette in (light, dark_palette()):
            qapp.setPalette(palette)
            qtbot.waitUntil(lambda p=palette: label.palette().window() == p.window())
            muted = label.palette().color(QPalette.ColorRole.WindowText)
            assert muted == muted_colour(palette, palette.color(QPalette.ColorRole.Window))
            assert muted != palette.color(QPalette.ColorRole.WindowText)  # quieter
            for background in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
                assert contrast(muted, palette.color(background)) >= 4.5
    finally:
        qapp.setPalette(light)


def test_conversations_are_grouped_by_when_they_were_last_continued(
    window: MainWindow, qtbot: QtBot
) -> None:
    """As the library lists them (the latest first), each under its group, its second line
    saying when in the group's terms."""
    now = datetime.now().astimezone()
    listed = [
        ConversationInfo(
            4 - age, f"asked {age} days ago", "", (now - timedelta(days=age)).isoformat(), 2,
            False, ("cloud", "local"),
        )
        for age in (0, 1, 3, 30)
    ]  # fmt: skip
    listing = window.conversation_list
    listing.show_conversations(listed, current=None)
    assert listing.groups() == ["Today", "Yesterday", "Previous 7 days", "Older"]
    today, yesterday, this_week, older = listing.details()
    assert today.startswith("Today ")
    assert yesterday.startswith("Yesterday ")
    locale, short = QLocale(), QLocale.FormatType.ShortFormat
    days_ago = QDate.currentDate().addDays
    assert this_week.startswith(f"{locale.dayName(days_ago(-3).dayOfWeek(), short)} ")
    assert older == f"{locale.toString(days_ago(-30), short)} · 2 questions · cloud + local"
    # The arrow keys skip the group labels: they are not conversations.
    listing.list.setCurrentItem(row_of(window, 4))
    listing.list.setFocus()
    qtbot.keyClick(listing.list, Qt.Key.Key_Down)
    assert listing.selected() == 3
