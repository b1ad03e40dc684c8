"""The conversation panel: a card per turn, newest last, the window's signals forwarded from
any card, and the newest text followed unless the user scrolled up to read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import qasync
from pytestqt.qtbot import QtBot

from app.answering import Finished, SourcesFound, Token
from app.answering.metrics import AnswerMetrics
from app.bootstrap import Docent
from tests.gui.test_turn_card import source
from ui.answer.source_cards import Thumbnails
from ui.answer.turns import TurnsView
from ui.background import Background


def metrics() -> AnswerMetrics:
    return AnswerMetrics("local", "m", "why", 0.01, 0.5, 1.0, 10, 5, 20.0, 0.0)


@pytest.fixture
def panel(qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop) -> Iterator[TurnsView]:
    background = Background(lambda error: None)
    conversation = TurnsView(Thumbnails(docent), background)
    qtbot.addWidget(conversation)
    conversation.resize(600, 300)
    conversation.show()
    qtbot.waitExposed(conversation)
    yield conversation
    loop.run_until_complete(background.close())


def test_each_turn_is_a_card_and_their_signals_reach_the_window(
    panel: TurnsView, qtbot: QtBot
) -> None:
    invoices = source(1, "Customer invoices are kept for seven years.")
    first = panel.begin("How long are invoices kept?")
    panel.apply(SourcesFound((invoices,)))
    panel.apply(Finished("Seven years [1].", (invoices,), metrics(), 1, False, None))
    second = panel.begin("Who approves deletion?")
    panel.apply(Finished("The Head of Compliance.", (), metrics(), 2, False, None))
    assert panel.cards == [first, second]
    assert panel.current is second
    assert first.answer.toPlainText() == "Seven years [1]."
    assert second.answer.toPlainText() == "The Head of Compliance."
    assert panel.cited_sources() == [invoices]
    assert panel.text().startswith(
        "Q: How long are invoices kept?\nA: Seven years [1].\nSources:\n"
        f"   [1] {invoices.where}\nroute: local (m) · why: why · TTFT 0.50 s"
    )

    with qtbot.waitSignal(panel.source_clicked) as clicked:
        first.sources.cards[0].clicked.emit(invoices)
    assert clicked.args == [invoices]
    with qtbot.waitSignal(panel.reask_requested) as asked:
        first.reask.click()
    assert asked.args == ["How long are invoices kept?", "cloud"]

    panel.clear()
    assert panel.cards == []
    assert panel.current is None


def test_the_newest_text_stays_in_view_unless_the_user_scrolled_up(
    panel: TurnsView, qtbot: QtBot
) -> None:
    bar = panel.verticalScrollBar()
    for number in range(4):
        panel.begin(f"Question {number}?")
        panel.apply(Finished("An answer.\n\n" * 6, (), metrics(), number, False, None))
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())  # followed to the end

    bar.setValue(0)  # the user reads the first answer
    panel.begin("Question 4?")
    panel.apply(Token("Streaming… " * 40))
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() > 0)  # a new question follows again

    bar.setValue(0)
    before = bar.maximum()
    panel.apply(Token("more text " * 80))
    qtbot.waitUntil(lambda: bar.maximum() > before)
    assert bar.value() == 0  # while reading, the view stays put
