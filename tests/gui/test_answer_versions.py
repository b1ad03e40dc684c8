"""A question's versions with the real window and model: a retry is another version of the
same turn ("Answer 2 of 2 ‹ ›", Alt+Left and Alt+Right), asked with the turns before it only;
the version looked at when the next question is asked is the one the conversation continues,
and the one it shows when reopened; a wide window compares two side by side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.answering import Finished, RouteDecided, SourcesFound
from app.bootstrap import Docent
from app.llm.engine import Message
from tests.documents import write_pdf
from tests.gui.conftest import main_window
from tests.gui.test_message_actions import INVOICES, answered
from tests.gui.test_turn_card import metrics, source
from ui.answer.source_cards import Thumbnails
from ui.answer.turn_card import COMPARE_WIDTH, TurnCard
from ui.background import Background
from ui.window.main_window import MainWindow

ARCHIVES = "When are email archives deleted?"


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop)


def test_a_retry_is_a_version_of_its_turn_and_the_one_looked_at_is_continued(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    window.ask(INVOICES)
    answered(window, loop)
    (card,) = window.turns.cards
    assert not card.switcher.isVisible()  # one answer: nothing to switch
    card.retry.click()
    answered(window, loop)

    # One card, two versions, the new one shown; each has its own badge and sources.
    assert window.turns.cards == [card]
    assert card.version_label.text() == "Answer 2 of 2"
    assert card.switcher.isVisible()
    assert card.previous_version.isEnabled()
    assert not card.next_version.isEnabled()
    first, second = card.versions
    assert not first.isVisible()
    assert second.isVisible()
    assert first.badge is not second.badge
    assert first.badge.text().startswith("route: local")
    assert second.badge.text().startswith("route: local")
    assert first.sources.cards
    assert second.sources.cards
    conversation_id = window.current.id
    assert conversation_id is not None
    ids = card.history_ids()
    assert len(set(ids)) == 2

    # The retry was asked as the first time, with no earlier version as context: the same
    # prompt, its sources sent again under the same numbers.
    recorded = loop.run_until_complete(window.docent.library.conversation(conversation_id))
    assert recorded is not None
    turns = [entry.turn for entry in recorded.entries]
    assert turns[0] is not None
    assert turns[1] is not None
    assert turns[1]["user"] == turns[0]["user"]
    assert window.current.turns[-1].answer == turns[1]["answer"]  # the newest is kept

    # The keyboard switches versions where the focus is in the card.
    window.activateWindow()
    card.answer.setFocus()
    qtbot.waitUntil(card.answer.hasFocus)
    with qtbot.waitSignal(card.version_shown):
        qtbot.keyClick(card.answer, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert card.version_label.text() == "Answer 1 of 2"
    assert first.isVisible()
    assert not second.isVisible()
    assert card.badge is first.badge
    assert card.hasFocus() or card.isAncestorOf(QApplication.focusWidget())
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert card.shown == 1
    card.previous_version.click()
    assert card.shown == 0

    # Asked while the first version is shown: the conversation continues it.
    window.ask(ARCHIVES)
    answered(window, loop)
    assert [c.question for c in window.turns.cards] == [INVOICES, ARCHIVES]
    assert window.current.turns[0].answer == turns[0]["answer"]
    assert not card.retry.isVisible()  # only the newest question is asked again
    recorded = loop.run_until_complete(window.docent.library.conversation(conversation_id))
    assert recorded is not None
    marks = [entry.turn["kept"] for entry in recorded.entries[:2] if entry.turn]
    assert marks == [True, False]
    (listed,) = loop.run_until_complete(window.docent.desk.conversations())
    assert listed.turns == 2

    # Reopened: one card with both versions, showing the one continued.
    loop.run_until_complete(window.open_conversation(conversation_id))
    reopened, follow_up = window.turns.cards
    assert len(reopened.versions) == 2
    assert len(follow_up.versions) == 1
    assert reopened.shown == 0
    assert reopened.version_label.text() == "Answer 1 of 2"
    assert reopened.history_ids() == ids
    assert window.current.turns[0].answer == turns[0]["answer"]

    # Compare: two versions side by side where the card has the room, one where it has not.
    window.resize(1900, 900)
    qtbot.waitUntil(lambda: reopened.width() >= COMPARE_WIDTH)
    qtbot.waitUntil(reopened.compare.isVisible)
    reopened.compare.click()
    left, right = reopened.versions
    assert left.isVisible()
    assert right.isVisible()
    assert left.geometry().right() < right.geometry().left()
    assert left.geometry().top() == right.geometry().top()
    window.resize(700, 700)
    qtbot.waitUntil(lambda: not reopened.compare.isVisible())
    assert [v.isVisible() for v in reopened.versions] == [True, False]


def test_compare_puts_a_local_and_a_cloud_version_side_by_side_and_actions_follow_the_shown(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop
) -> None:
    background = Background(lambda error: None)
    card = TurnCard(INVOICES, Thumbnails(docent), background)
    qtbot.addWidget(card)
    card.resize(COMPARE_WIDTH + 200, 600)
    card.show()
    sent = (Message("user", "Sources: [1] Customer invoices…"),)
    answers = [
        ("local", "Seven years [1].", None),
        ("cloud", "Seven years after the fiscal year ends [1].", sent),
        ("local", "For seven years [1].", None),
    ]
    for at, (route, text, sent_messages) in enumerate(answers):
        if at:
            card.begin_version()
        else:
            card.begin()
        card.apply(SourcesFound((source(1, "Customer invoices must be retained."),)))
        card.apply(RouteDecided(route, "m", "why"))
        card.apply(Finished(text, (), metrics(route), at + 1, False, 1.0, sent_messages))
    assert card.version_label.text() == "Answer 3 of 3"
    assert card.retry.isVisible()
    assert not card.what_was_sent.isVisible()
    # Shown: the newest (local); compared with the cloud one, not merely the one before.
    assert card.compare.isVisible()
    card.compare.click()
    assert [v.isVisible() for v in card.versions] == [False, True, True]
    # The actions act on the version shown: the cloud one sent something.
    card.show_version(1)
    assert card.badge is card.versions[1].badge
    assert card.what_was_sent.isVisible()
    card.copy_answer.click()
    assert QGuiApplication.clipboard().text().startswith(answers[1][1])
    with qtbot.waitSignal(card.reask_requested) as asked:
        card.reask.click()
    assert asked.args == [INVOICES, "local"]  # shown: cloud; the other route is this computer
    # Compared from the cloud one, the newest local one is beside it.
    assert [v.isVisible() for v in card.versions] == [False, True, True]
    # Narrow, one answer at a time and no Compare.
    card.resize(COMPARE_WIDTH - 100, 600)
    qtbot.waitUntil(lambda: not card.compare.isVisible())
    assert [v.isVisible() for v in card.versions] == [False, True, False]
    loop.run_until_complete(background.close())
