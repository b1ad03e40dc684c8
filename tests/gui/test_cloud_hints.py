"""What the window says about the cloud around an answer: with none set up, a question the
router read as hard says so under its answer with a link to set one up (real window, real
model); once one is set up, the header shows this month's spending against the budget."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.bootstrap import Docent
from app.settings import CloudSettings, McpServerSettings
from tests.documents import write_pdf
from tests.gui.conftest import main_window, tooltip_shows
from ui.background import Background
from ui.settings.settings_dialog import SettingsDialog
from ui.theme import warning_colour
from ui.window.conversation_header import ConversationHeader
from ui.window.main_window import MainWindow

HARD = "Compare how long invoices and contracts are kept, and why do they differ?"
SIMPLE = "How long must customer invoices be kept?"


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


@pytest.mark.slow
def test_a_hard_question_answered_here_suggests_a_cloud_model(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    loop.run_until_complete(window.ask(SIMPLE))
    loop.run_until_complete(window.ask(HARD))
    simple, hard = window.turns.cards
    assert not simple.badge.nudge.isVisible()  # nothing to suggest
    assert hard.badge.reason.full_text() == "on this computer · no cloud set up"
    assert hard.badge.nudge.isVisible()
    assert hard.badge.hard.full_text() == (
        "looked hard: 2-part question · asks for a comparison · asks why ·"
    )
    assert "though it looked hard" in hard.badge.text()  # the copied footer, in English
    assert hard.badge.set_up in hard.focus_order()  # Tab reaches the link
    qtbot.mouseClick(hard.badge.set_up, Qt.MouseButton.LeftButton)
    (dialog,) = window.findChildren(SettingsDialog)
    assert dialog.isVisible()
    assert dialog.tabs.currentWidget() is dialog.providers  # where a provider is added
    dialog.reject()
    loop.run_until_complete(dialog.loading)


def _with_a_cloud(docent: Docent, loop: qasync.QEventLoop) -> None:
    """A cloud route set up, as Settings → OK sets it up (its server is never reached here)."""
    server = McpServerSettings(
        name="gw", transport="streamable-http", url="http://127.0.0.1:9/mcp", models=["gw/m"]
    )
    settings = docent.settings.model_copy(update={"cloud": CloudSettings(servers=[server])})
    loop.run_until_complete(docent.apply_settings(settings))


def test_the_header_meters_the_months_cloud_spending_once_a_cloud_exists(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop
) -> None:
    header = ConversationHeader(docent, Background(lambda error: pytest.fail(str(error))))
    qtbot.addWidget(header)
    header.show()
    budget = docent.desk.budget
    budget.monthly_usd = 5.0
    loop.run_until_complete(budget.load())
    header.show_spending()
    assert not header.spending.isVisible()  # no cloud: no money anywhere

    _with_a_cloud(docent, loop)
    header.show_choices()  # what the window calls when the cloud changes
    assert header.spending.isVisible()
    assert (header.spent.text(), header.meter.value()) == ("$0.00 of $5", 0)

    budget.spend(1.25)
    budget.spend(None)  # a model the price table does not list
    header.show_spending()  # what the window calls after each answer
    assert (header.spent.text(), header.meter.value()) == ("$1.25 of $5", 250)
    assert tooltip_shows(header.spending.toolTip()) == (
        "Cloud spending this month: $1.25 of the $5.00 budget (25%)\nand 1 answer of unknown cost"
    )
    assert header.meter.styleSheet() == ""

    budget.spend(4.0)  # spent: the meter full, in the warning colour, and why it matters
    header.show_spending()
    assert (header.spent.text(), header.meter.value()) == ("$5.25 of $5", 1000)
    assert warning_colour(header.palette()).name() in header.meter.styleSheet()
    assert tooltip_shows(header.spending.toolTip()).endswith(
        "The budget is spent: answers stay on this computer."
    )
