"""A turn as a card: Markdown from models rendered inert, [n] markers as citation chips that
show the passage on hover and open the page on click, the re-ask and what-was-sent actions,
and no way for an answer to forge one of Docent's links."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QPalette, QTextCharFormat, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from app.answering import AnswerEvent, Failed, Finished, RouteDecided, Source, SourcesFound, Token
from app.answering.events import Status, Waiting
from app.answering.metrics import AnswerMetrics
from app.bootstrap import Docent
from app.llm.engine import Message
from tests.gui.conftest import tooltip_shows
from ui.answer.source_cards import Thumbnails
from ui.answer.turn_card import TurnCard
from ui.background import Background
from ui.theme import (
    CJK_LINE_HEIGHT,
    LINE_HEIGHT,
    citation_chip_colours,
    contrast,
    dark_palette,
    error_colour,
)

HOSTILE = (
    "**Seven** years.\n\n- invoices\n- ledgers\n\n<img src='http://127.0.0.1:9/x.png'> <b>raw</b>"
)
FORGED = (
    'See <a href="docent-chip:0">the invoice</a>, [re-ask in the cloud](docent-chip:0), '
    "<docent-chip:1>, ![chart](docent-chip:1) and [a site](https://example.com/x)."
)


def metrics(route: str = "local", cost: float | None = 0.0) -> AnswerMetrics:
    return AnswerMetrics(route, "m", "why", 0.01, 0.5, 1.0, 10, 5, 20.0, cost)


def source(number: int, text: str, page: int = 2) -> Source:
    return Source(
        number, number, 1, "policy.pdf", "/nowhere/policy.pdf", page, str(page), None, text, 0.5
    )


@pytest.fixture
def card(qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop) -> Iterator[TurnCard]:
    background = Background(lambda error: None)
    turn = TurnCard("How long are invoices kept?", Thumbnails(docent), background)
    qtbot.addWidget(turn)
    turn.begin()
    yield turn
    loop.run_until_complete(background.close())


def hrefs(card: TurnCard) -> list[str]:
    return re.findall(r'<a href="([^"]*)"', card.answer.toHtml())


def test_markdown_is_rendered_and_html_is_shown_as_text(card: TurnCard) -> None:
    card.apply(RouteDecided("local", "m", "why"))
    for piece in HOSTILE.split(" "):
        card.apply(Token(piece + " "))
    card.apply(Finished(HOSTILE, (), metrics(), 1, False, None))
    text = card.answer.toPlainText()
    html = card.answer.toHtml()
    assert "**" not in text  # rendered as bold, not shown as asterisks
    assert "font-weight:700" in html
    assert "<img" in text  # the tag is visible text…
    assert "<img src" not in html  # …and was never markup
    assert "&lt;b&gt;raw&lt;/b&gt;" in html
    assert card.asked.text() == "How long are invoices kept?"
    assert card.badge.text() == metrics().footer()
    assert card.reask.text() == "↻ Re-ask with the cloud route"
    assert card.what_was_sent.isHidden()


def test_markers_become_chips_that_show_the_passage_and_open_the_page(
    card: TurnCard, qtbot: QtBot
) -> None:
    invoices = source(1, "Customer invoices are kept for seven years.")
    deletion = source(2, "The Head of Compliance approves deletion.", page=3)
    card.apply(SourcesFound((invoices, deletion)))
    answer = "Invoices are kept seven years [1]; deletion needs approval [2], see [9]."
    card.apply(Token(answer))
    card.apply(Finished(answer, (invoices, deletion), metrics(), 1, False, None))
    chips = card.chips()
    assert list(chips.values()) == [invoices, deletion]  # [9] named no source: it stays text
    assert hrefs(card) == list(chips)
    assert "[9]" in card.answer.toPlainText()
    assert [c.source for c in card.sources.cards] == [invoices, deletion]

    first, second = chips
    card.answer.highlighted.emit(QUrl(second))  # the mouse is over chip [2]
    assert tooltip_shows(QToolTip.text()).startswith(f"{deletion.where}\n\n{deletion.text}\n\n")
    with qtbot.waitSignal(card.source_clicked) as clicked:
        card.answer.anchorClicked.emit(QUrl(first))
    assert clicked.args == [invoices]
    with qtbot.waitSignal(card.source_clicked) as from_card:
        card.sources.cards[1].clicked.emit(deletion)
    assert from_card.args == [deletion]


def test_an_unverified_sentence_is_flagged_in_warning_colour_and_says_why(
    card: TurnCard,
) -> None:
    """A sentence stating a fact no passage states is shown with its flag styled as a warning
    whose tooltip names the facts, and is no chip."""
    invoices = source(1, "Customer invoices are kept for seven years.")
    card.apply(SourcesFound((invoices,)))
    answer = "Invoices are kept seven years [1]. The archive opened in 1998 [unverified: 1998]."
    card.apply(Finished(answer, (invoices,), metrics(), 1, False, None))
    assert len(card.chips()) == 1
    document = card.answer.document()
    text = document.toPlainText()
    at = text.index("[unverified")
    flag = QTextCursor(document)
    flag.setPosition(at + 2)
    assert flag.charFormat().foreground().color() == error_colour(card.palette())
    assert "states 1998" in tooltip_shows(flag.charFormat().toolTip())
    plain = QTextCursor(document)
    plain.setPosition(text.index("archive") + 2)
    assert not plain.charFormat().toolTip()


def test_tab_reaches_each_chip_and_enter_opens_its_page(card: TurnCard, qtbot: QtBot) -> None:
    invoices = source(1, "Customer invoices are kept for seven years.")
    deletion = source(2, "The Head of Compliance approves deletion.", page=3)
    card.apply(SourcesFound((invoices, deletion)))
    answer = "Invoices are kept seven years [1]; deletion needs approval [2]."
    card.apply(Finished(answer, (invoices, deletion), metrics(), 1, False, None))
    with qtbot.waitActive(card):
        card.show()
    card.answer.setFocus()
    opened: list[Source] = []
    card.source_clicked.connect(opened.append)
    for chip in ("[1]", "[2]"):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        assert QApplication.focusWidget() is card.answer
        assert card.answer.textCursor().selectedText() == chip
        QTest.keyClick(card.answer, Qt.Key.Key_Return)
    assert opened == [invoices, deletion]
    QTest.keyClick(card.answer, Qt.Key.Key_Tab)  # past the last chip: on to the badge
    assert QApplication.focusWidget() is card.badge


# The offscreen platform has no keyboard to grab: the badge's details (a popup) ask for it.
@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
def test_a_cloud_answer_offers_what_was_sent_and_the_local_reask(
    card: TurnCard, qtbot: QtBot
) -> None:
    sent = (Message("system", "Answer from sources."), Message("user", "[1]\nInvoices: 7 years."))
    card.apply(Token("Tax audits."))
    card.apply(Finished("Tax audits.", (), metrics("cloud", 0.001), 1, False, None, sent))
    assert card.what_was_sent.isVisibleTo(card)
    with qtbot.waitSignal(card.sent_requested) as shown:
        card.what_was_sent.click()
    assert shown.args == [
        "── system ──\nAnswer from sources.\n\n── user ──\n[1]\nInvoices: 7 years."
    ]
    with qtbot.waitSignal(card.reask_requested) as asked:
        card.reask.click()
    assert asked.args == ["How long are invoices kept?", "local"]

    details = card.badge.open_details()  # the badge's details lead there too
    assert details is not None
    assert details.sent is not None
    with qtbot.waitSignal(card.sent_requested) as from_details:
        details.sent.click()
    assert from_details.args == shown.args


def test_an_answer_cannot_make_a_link_nor_forge_a_chip(
    card: TurnCard, qtbot: QtBot, docent: Docent
) -> None:
    invoices = source(1, "Customer invoices are kept for seven years.")
    card.apply(SourcesFound((invoices,)))
    card.apply(Token(FORGED + " [1]"))
    card.apply(Finished(FORGED + " [1]", (), metrics(), 1, False, None))
    text = card.answer.toPlainText()
    assert all(words in text for words in ("re-ask in the cloud", "a site"))  # still readable…
    (chip,) = hrefs(card)  # …but the only link is Docent's own chip
    assert chip in card.chips()
    with qtbot.assertNotEmitted(card.source_clicked):
        for forged in ("docent-chip:0", "docent-chip:1", "https://example.com/x"):
            card.answer.anchorClicked.emit(QUrl(forged))
    other = TurnCard("Where?", Thumbnails(docent), Background(lambda error: None))
    qtbot.addWidget(other)
    other.apply(SourcesFound((invoices,)))
    other.apply(Finished("Here [1].", (), metrics(), 2, False, None))
    assert hrefs(other) != [chip]  # another card's chips are not this one's
    with qtbot.assertNotEmitted(card.source_clicked):
        card.answer.anchorClicked.emit(QUrl(hrefs(other)[0]))


def test_a_failure_shows_in_the_answer_and_the_badge(card: TurnCard) -> None:
    card.apply(Failed("the model file is missing", None))
    assert card.answer.toPlainText().endswith("[failed: the model file is missing]")
    assert card.badge.text() == "failed: the model file is missing"
    assert card.reask.isHidden()


def chip_format(card: TurnCard, chip: str) -> QTextCharFormat:
    cursor = QTextCursor(card.answer.document())
    cursor.setPosition(card.answer.toPlainText().index(chip) + 2)
    return cursor.charFormat()


def test_a_chip_reads_at_aa_in_light_and_dark_and_carries_the_sentence_it_used(
    card: TurnCard, qtbot: QtBot
) -> None:
    invoices = source(
        1,
        "Customer invoices are kept for seven years. Email is deleted after 24 months.",
    )
    card.apply(SourcesFound((invoices,)))
    answer = "Invoices are kept for seven years [1]."
    card.apply(Finished(answer, (invoices,), metrics(), 1, False, None))
    for palette in (card.palette(), dark_palette()):
        card.setPalette(palette)
        chip = chip_format(card, "[1]")
        text, background = chip.foreground().color(), chip.background().color()
        assert (text, background) == citation_chip_colours(palette)
        assert contrast(text, background) >= 4.5
        assert background != palette.color(QPalette.ColorRole.Highlight)  # not selected text
    (cited,) = card.chips().values()
    assert cited.used == ("Customer invoices are kept for seven years.",)
    card.answer.highlighted.emit(QUrl(next(iter(card.chips()))))  # the mouse is over the chip
    shown = tooltip_shows(QToolTip.text())
    assert shown.startswith(f"{invoices.where}\n\nCustomer invoices are kept for seven years.\n\n")
    assert "Email" not in shown  # the sentence used, not the whole passage
    assert "<b>seven</b> <b>years</b>" in QToolTip.text()  # the words the answer shares
    assert "<b>Customer</b>" not in QToolTip.text()
    assert card.sources.cards[0].source.used == cited.used  # the card quotes it too


def test_the_answer_lines_up_with_its_question_and_is_spaced_for_its_script(
    card: TurnCard,
) -> None:
    assert card.answer.document().documentMargin() == 0
    assert card.answer.font().pointSizeF() > card.asked.font().pointSizeF()
    card.apply(Finished("Invoices are kept.\n\nFor seven years.", (), metrics(), 1, False, None))
    document = card.answer.document()
    heights = {document.findBlockByNumber(n).blockFormat().lineHeight() for n in range(2)}
    assert heights == {LINE_HEIGHT}
    chinese = TurnCard(
        "发票保存多久？", Thumbnails(card.sources.thumbnails.docent), card.sources.background
    )
    chinese.apply(Finished("发票保存七年。", (), metrics(), 1, False, None))
    assert chinese.answer.document().firstBlock().blockFormat().lineHeight() == CJK_LINE_HEIGHT
    chinese.deleteLater()


def test_the_waiting_line_follows_the_core_until_the_first_token(card: TurnCard) -> None:
    """Until text comes, a muted line says what the core is doing, in its events' order; the
    first token puts the answer in its place."""
    card.show()
    shown: list[str] = []

    def step(event: AnswerEvent | None) -> None:
        if event is not None:
            card.apply(event)
        assert card.answer.isHidden()
        shown.append(card.waiting.text())

    fleet = Source(3, 3, 2, "fleet.pdf", "/nowhere/fleet.pdf", 1, "1", None, "Vans.", 0.4)
    for event in (
        None,  # as begun
        SourcesFound((source(1, "Invoices."), source(2, "Ledgers."), fleet)),
        RouteDecided("local", "qwen", "simple question (strong evidence)"),
        Waiting(1),
        RouteDecided("cloud", "gw/gpt-4.1-mini", "2-part question"),
        Status("Streaming... 39 chars"),
    ):
        step(event)
    assert shown == [
        "Searching your documents…",
        "Found 3 passages in 2 documents",
        "Reading them on this computer…",
        "Waiting: 1 answer ahead",
        "Asking gw/gpt-4.1-mini…",
        "Streaming... 39 chars",
    ]
    assert card.waiting.isVisible()
    card.apply(Token("Seven"))
    assert card.waiting.isHidden()
    assert card.answer.isVisible()
    card.apply(Status("Streaming... 80 chars"))  # a server's status mid-answer: text stays
    assert card.waiting.isHidden()
    assert card.answer.isVisible()


def test_an_answer_that_ends_without_text_clears_the_waiting_line(card: TurnCard) -> None:
    card.show()
    card.apply(SourcesFound((source(1, "Invoices."),)))
    assert card.waiting.text() == "Found 1 passage in 1 document"
    card.apply(Failed("the cloud answered 401: check the key", None))
    assert card.waiting.isHidden()
    assert card.answer.toPlainText().endswith("[failed: the cloud answered 401: check the key]")
    assert card.answer.isVisible()


def test_a_cloud_answer_is_never_retried_nor_re_asked_where_no_cloud_is_set_up(
    card: TurnCard, qtbot: QtBot
) -> None:
    """The cloud that answered was removed since: Retry (the same route) would only fail, so it
    is not offered; the local re-ask is. With the cloud there, Retry asks it again."""
    card.cloud_set_up = False
    card.apply(Finished("Tax audits.", (), metrics("cloud", 0.001), 1, False, None))
    assert card.retry.isHidden()
    assert card.reask.text() == "↻ Re-ask on this computer"
    assert card.copy_answer.isVisibleTo(card)
    names = [card.edit_question, card.copy_question, card.copy_answer, card.retry]
    assert [(b.accessibleName(), b.toolTip()) for b in names] == [
        ("Edit question", "Edit question"),
        ("Copy question", "Copy question"),
        ("Copy answer with its sources", "Copy answer with its sources"),
        ("Retry", "Retry"),
    ]
    card.cloud_set_up = True
    card.apply(Finished("Tax audits.", (), metrics("cloud", 0.001), 1, False, None))
    with qtbot.waitSignal(card.reask_requested) as asked:
        card.retry.click()
    assert asked.args == ["How long are invoices kept?", "cloud"]
