"""The composer and the header, with the real window and model: Send / Stop by mouse, a box
that grows, Enter that never cancels a running answer, the scope chip in step with the tick
boxes, and the route menu that writes the routing mode as Settings does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.settings import Settings
from tests.documents import write_pdf
from tests.gui.conftest import main_window, tooltip_shows
from ui.library.documents_panel import NAME
from ui.settings.settings_dialog import SettingsDialog
from ui.window.main_window import MainWindow

QUESTION = "How long must customer invoices be kept?"


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def test_a_mouse_user_sends_and_stops(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    send = window.send_button
    assert (send.text(), send.accessibleName(), send.isEnabled()) == ("↑ Send", "Send", False)
    window.question.setPlainText("  \n ")  # blank: nothing to send
    assert not send.isEnabled()
    window.question.setPlainText("Summarise every section of the report in detail.")
    assert send.isEnabled()
    qtbot.mouseClick(send, Qt.MouseButton.LeftButton)
    assert window.question.toPlainText() == ""
    assert window.answering is not None
    assert (send.text(), send.accessibleName(), send.isEnabled()) == ("■ Stop", "Stop", True)

    window.token_shown.connect(lambda: qtbot.mouseClick(send, Qt.MouseButton.LeftButton))
    loop.run_until_complete(window.answering)
    (turn,) = window.turns.cards
    assert turn.answer.toPlainText().endswith("[stopped]")
    assert (send.accessibleName(), send.isEnabled()) == ("Send", False)


def test_the_question_box_grows_with_its_text_up_to_eight_lines(window: MainWindow) -> None:
    box = window.question
    assert box.lines_shown() == 1
    one_line = box.height()
    box.setPlainText("first\nsecond\nthird")
    assert box.lines_shown() == 3
    assert box.height() > one_line
    box.setPlainText("\n".join(f"line {n}" for n in range(20)))
    assert box.lines_shown() == 8  # then it scrolls
    box.clear()
    assert box.height() == one_line


def test_enter_during_an_answer_keeps_the_question_and_never_cancels_the_answer(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    follow_up = "And who approves deletion?"
    typed: list[str] = []

    def type_a_follow_up() -> None:
        if not typed:
            typed.append(follow_up)
            window.question.setPlainText(follow_up)
            qtbot.keyClick(window.question, Qt.Key.Key_Return)

    window.token_shown.connect(type_a_follow_up)
    answering = window.ask(QUESTION)
    loop.run_until_complete(answering)
    window.token_shown.disconnect(type_a_follow_up)
    assert typed == [follow_up]
    (turn,) = window.turns.cards  # the follow-up did not start, nor stop this one
    assert not turn.answer.toPlainText().endswith("[stopped]")
    assert "seven" in turn.answer.toPlainText().lower()
    assert window.question.toPlainText() == follow_up  # waiting in the box

    qtbot.keyClick(window.question, Qt.Key.Key_Return)  # now Enter sends it
    assert window.answering is not answering
    assert window.question.toPlainText() == ""
    window.stop()
    loop.run_until_complete(window.answering)
    assert [card.question for card in window.turns.cards] == [QUESTION, follow_up]


def test_the_scope_chip_and_the_tick_boxes_follow_each_other(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    report = str(write_pdf(tmp_path / "report.pdf"))
    fleet = str(write_pdf(tmp_path / "fleet.pdf", [("Fleet", "The vans are serviced yearly.")]))
    loop.run_until_complete(window.add_paths([Path(report), Path(fleet)]))
    chip = window.composer.scope
    assert chip.text() == "All documents (2)"

    window.documents.setCurrentItem(window.documents.row(fleet), NAME)
    qtbot.keyClick(window.documents, Qt.Key.Key_Space)  # its tick box, as the user ticks it
    assert window.documents.ticked_paths() == [fleet]
    assert chip.text() == "fleet.pdf"
    assert chip.accessibleName() == "Documents to ask: fleet.pdf"
    window.documents.tick([report])
    assert chip.text() == "2 documents"

    def menu() -> dict[str, bool]:
        chip.menu_.aboutToShow.emit()
        return {a.text(): a.isChecked() for a in chip.menu_.actions() if a.text()}

    assert menu() == {"All documents": False, "report.pdf": True, "fleet.pdf": True}
    next(a for a in chip.menu_.actions() if a.text() == "report.pdf").trigger()  # unticked
    assert window.documents.ticked_paths() == [fleet]
    assert chip.text() == "fleet.pdf"
    assert menu() == {"All documents": False, "report.pdf": False, "fleet.pdf": True}
    next(a for a in chip.menu_.actions() if a.text() == "All documents").trigger()
    assert window.documents.ticked_paths() == []
    assert window.documents.scope() is None  # the whole library
    assert chip.text() == "All documents (2)"

    loop.run_until_complete(window.remove([report]))
    loop.run_until_complete(window.refresh())
    assert chip.text() == "All documents (1)"


def test_the_route_menu_writes_the_mode_and_says_why_the_cloud_is_off(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    header = window.header
    header.menu.aboutToShow.emit()
    cloud_only = header.actions_by_mode["cloud"]
    assert not cloud_only.isEnabled()
    assert (
        cloud_only.text()
        == "Cloud only — no cloud set up: add a provider or an MCP server in Settings"
    )
    assert header.set_up.isVisible()
    assert header.actions_by_mode["auto"].isChecked()
    assert header.title.full_text() == "New conversation"

    header.actions_by_mode["local"].trigger()
    assert header.saving is not None
    loop.run_until_complete(header.saving)
    docent = window.docent
    assert docent.settings.routing.mode == "local"
    assert Settings.load(docent.paths.settings_file).routing.mode == "local"  # saved
    assert header.route.text().strip() == "This computer only"

    loop.run_until_complete(window.ask(QUESTION))
    (turn,) = window.turns.cards
    assert turn.badge.reason.full_text() == "on this computer · route set to This computer only"
    assert "why: routing mode: local only" in turn.badge.text()
    assert header.title.full_text() == QUESTION  # the conversation's title, once recorded
    header.title.resize(header.title.fontMetrics().horizontalAdvance(QUESTION) // 2, 30)
    assert header.title.text().endswith("…")  # cut where the row is narrow, whole in its tooltip
    assert window.windowTitle() == f"{QUESTION} — Docent"

    strict = docent.settings.model_copy(
        update={"routing": docent.settings.routing.model_copy(update={"privacy": "never"})}
    )
    loop.run_until_complete(docent.apply_settings(strict))
    header.menu.aboutToShow.emit()
    assert cloud_only.text() == "Cloud only — privacy is set to never send anything to the cloud"
    assert not cloud_only.isEnabled()


def test_the_status_bar_reads_as_words_and_opens_the_cloud_settings(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    shown = window.statusBar().findChildren(type(window.library_state))
    texts = [label.text() for label in shown if label.isVisible()]
    assert texts.count("·") == 2  # between library, model and cloud; none after the last
    assert window.library_state.text() == "Library: 1 document"
    assert "passages" in tooltip_shows(window.library_state.toolTip())
    assert window.cloud_state.text() == "Cloud: not set up"
    qtbot.mouseClick(window.cloud_state, Qt.MouseButton.LeftButton)
    (dialog,) = window.findChildren(SettingsDialog)
    assert dialog.isVisible()
    assert dialog.tabs.currentWidget() is dialog.providers
    dialog.reject()
