"""A card's actions with the real window and model: copy the answer (with its sources) and the
question, retry on the same route, edit a question (its turn and the later ones go, from the
window and from the kept conversation), and export a conversation as the core writes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.answering.export import answer_markdown, conversation_markdown
from tests.documents import write_pdf
from tests.gui.conftest import main_window
from ui.window.main_window import MainWindow

INVOICES = "How long must customer invoices be kept?"
EDITED = "Who approves deleting records?"
FOLLOW_UP = "When are email archives deleted?"


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop)


def answered(window: MainWindow, loop: qasync.QEventLoop) -> None:
    assert window.answering is not None
    loop.run_until_complete(window.answering)


def test_copy_retry_and_edit_a_question_then_export_the_conversation(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    window.ask(INVOICES)
    answered(window, loop)
    (first,) = window.turns.cards
    clipboard = QGuiApplication.clipboard()

    # Copy: the answer as Markdown with its sources, as the core words them.
    (recorded,) = loop.run_until_complete(window.docent.library.history(10))
    assert recorded.citations
    first.copy_answer.click()
    copied = clipboard.text()
    assert copied == answer_markdown(recorded.answer, recorded.citations)
    assert "Sources:\n\n- [1] report.pdf, p. 1" in copied
    first.copy_question.click()
    assert clipboard.text() == INVOICES
    assert first.copy_answer.accessibleName() == "Copy answer with its sources"
    assert first.retry.toolTip() == "Retry"

    # Retry: the same route again (no cloud is set up: none is offered), as another version
    # of the same turn (tests/gui/test_answer_versions.py follows versions further).
    assert first.retry.isVisible()
    assert first.reask.text() == "☁ Set up a cloud model to re-ask there…"
    first.retry.click()
    answered(window, loop)
    assert window.turns.cards == [first]
    assert first.version_label.text() == "Answer 2 of 2"
    assert first.badge.text().startswith("route: local")
    # The newest card shows its actions; an older one only on hover or focus.
    window.ask(FOLLOW_UP)
    answered(window, loop)
    first, again = window.turns.cards
    assert again.copy_answer.isVisible()
    assert again.edit_question.isVisible()
    assert not first.copy_answer.isVisible()
    assert not first.edit_question.isVisible()
    first.answer.setFocus()
    qtbot.waitUntil(first.copy_answer.isVisible)
    assert first.edit_question.isVisible()
    assert not first.retry.isVisible()  # its follow-up rests on the version it continued

    # Edit the first question: it goes back into the box; sent, it replaces both turns (and
    # the title, the first question's, follows it).
    conversation_id = window.current.id
    assert conversation_id is not None
    first.edit_question.click()
    assert window.question.toPlainText() == INVOICES
    window.question.setPlainText(EDITED)
    window.send_button.click()
    answered(window, loop)
    (edited,) = window.turns.cards
    assert edited.question == EDITED
    assert [turn.question for turn in window.current.turns] == [EDITED]
    reopened = loop.run_until_complete(window.docent.desk.open(conversation_id))
    assert [entry.question for entry in reopened.entries] == [EDITED]
    assert [turn.question for turn in reopened.turns] == [EDITED]
    assert window.current.id == conversation_id  # the same conversation goes on

    # Export: the file holds exactly the core's Markdown of the conversation.
    loop.run_until_complete(window.refresh_conversations())
    target = tmp_path / "exported.md"
    dialog = window.conversation_list.export(conversation_id)
    dialog.selectFile(str(target))
    with qtbot.waitSignal(window.conversation_list.exported) as exported:
        dialog.accept()
        loop.run_until_complete(window.wait_for_tasks())
    assert exported.args == [str(target)]
    (listed,) = loop.run_until_complete(window.docent.desk.conversations())
    expected = conversation_markdown(listed.title, reopened.entries)
    assert target.read_text(encoding="utf-8") == expected
    assert listed.title == EDITED
    assert [line for line in expected.splitlines() if line.startswith("## ")] == [f"## {EDITED}"]
