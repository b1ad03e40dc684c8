"""Sources as cards under an answer: a real PDF indexed, a real passage found, the sentence the
answer used quoted, the page in miniature (rendered by the reader process, cached, dimmed on a
dark palette), the card's words whole and the cards in number order, wrapping as they must."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.answering import Source
from app.answering.citations import supporting_sentences
from app.bootstrap import Docent
from tests.documents import write_pdf
from tests.gui.conftest import tooltip_shows
from ui.answer.source_cards import CARD_WIDTH, MINIATURE_WIDTH, SourceCards, Thumbnails
from ui.background import Background
from ui.theme import dark_palette

INVOICES = "Customer invoices must be retained for seven years after the end of the fiscal year."


def _found(docent: Docent, loop: qasync.QEventLoop, tmp_path: Path, question: str) -> Source:
    report = write_pdf(tmp_path / "report.pdf")

    async def index_and_search() -> Source:
        async for _ in docent.intake.index([report]):
            pass
        (best, *_) = await docent.library.search(question, 4)
        return Source.from_passage(1, best)

    return loop.run_until_complete(index_and_search())


def _lightest(pixmap: QPixmap) -> int:
    image = pixmap.toImage()
    return max(
        QColor(image.pixel(x, y)).lightness()
        for y in range(0, image.height(), 2)
        for x in range(0, image.width(), 2)
    )


def _inked(pixmap: QPixmap) -> int:
    image = pixmap.toImage()
    return sum(
        1
        for y in range(image.height())
        for x in range(image.width())
        if QColor(image.pixel(x, y)).lightness() < 200
    )


def test_a_source_card_quotes_the_sentence_used_and_opens_the_page(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    found = _found(docent, loop, tmp_path, "How long must customer invoices be kept?")
    assert found.page == 2
    source = replace(
        found, used=supporting_sentences(found.text, ["Invoices are kept for seven years"])
    )
    assert source.used == (INVOICES,)
    thumbnails = Thumbnails(docent)
    background = Background(lambda error: None)
    cards = SourceCards(thumbnails, background)
    qtbot.addWidget(cards)
    cards.show_sources([source])
    (card,) = cards.cards
    assert card.document.text() == "[1] report.pdf"
    assert card.page.text() == "p. 1 · Section 3: Retention"  # the printed label, not page 2
    assert card.snippet.text().replace("\n", " ") == INVOICES  # the words, readable
    shown = " ".join(label.text() for label in (card.document, card.page, card.snippet))
    assert "score" not in shown
    tip = tooltip_shows(card.toolTip())
    assert source.text in tip
    assert f"Relevance {source.score:.3f}" in tip
    assert "not a percentage" in tip
    assert card.accessibleName() == f"Source 1: {source.where}"

    assert cards.loading is not None
    loop.run_until_complete(cards.loading)
    page = card.thumbnail.pixmap()
    assert page.deviceIndependentSize().width() == MINIATURE_WIDTH
    assert page.deviceIndependentSize().height() > MINIATURE_WIDTH  # the whole (portrait) page
    assert _inked(page) > 20  # the passage marked, the heading drawn: not a blank page
    light = _lightest(page)
    card.setPalette(dark_palette())
    dimmed = card.thumbnail.pixmap()
    assert _lightest(dimmed) < 0.9 * light  # no white glare on a dark window

    again = SourceCards(thumbnails, background)
    qtbot.addWidget(again)
    again.show_sources([source])
    assert again.cards[0].thumbnail.pixmap().cacheKey() == page.cacheKey()  # no re-render

    with qtbot.waitSignal(cards.source_clicked) as clicked:
        qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    assert clicked.args == [source]
    assert clicked.args[0].used == source.used
    card.setFocus()
    with qtbot.waitSignal(cards.source_clicked) as entered:
        qtbot.keyClick(card, Qt.Key.Key_Return)
    assert entered.args == [source]


def _source(number: int, document: str, heading: str, score: float) -> Source:
    text = f"Passage {number} opens here. It goes on about retention."
    return Source(number, number, 1, document, f"/gone/{document}", 1, "4", heading, text, score)


def test_many_cards_come_in_number_order_with_whole_names_and_wrap(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop
) -> None:
    long_name = "northwind-data-retention-and-deletion-policy-2026-final.pdf"
    long_heading = (
        "Deletion of customer records, archived e-mail and backups under a legal hold, and "
        "what the privacy office must be told before any of it is destroyed"
    )
    sources = [
        _source(3, "c.pdf", "Three", 0.02),
        _source(1, long_name, long_heading, 0.05),
        _source(5, "e.pdf", "Five", 0.01),
        _source(2, "b.pdf", "Two", 0.03),
        _source(4, "d.pdf", "Four", 0.015),
    ]
    pane = QWidget()
    column = QVBoxLayout(pane)
    cards = SourceCards(Thumbnails(docent), Background(lambda error: None))
    column.addWidget(cards)
    qtbot.addWidget(pane)
    pane.resize(700, 200)
    pane.show()
    cards.show_sources(sources)
    assert [card.source.number for card in cards.cards] == [1, 2, 3, 4, 5]

    first = cards.cards[0]
    title = first.document.text()
    assert title.startswith("[1] northwind-")
    assert title.endswith("….pdf")
    assert first.page.text().count("\n") == 1  # the heading wraps onto two lines, no more
    assert first.page.text().startswith("p. 4 · Deletion of customer records")
    assert first.page.text().endswith("…")
    assert not first.best.isHidden()
    assert first.best.text() == "best match"
    assert all(card.best.isHidden() for card in cards.cards[1:])
    assert cards.cards[2].snippet.text() == "Passage 3 opens here."  # no sentence used: the first

    qtbot.waitUntil(lambda: all(card.isVisible() for card in cards.cards))
    qtbot.waitUntil(lambda: len({card.y() for card in cards.cards}) > 1)  # wrapped in rows
    assert all(card.geometry().right() < cards.width() for card in cards.cards)
    assert cards.width() <= pane.width()  # the column is not widened
    assert all(card.width() == CARD_WIDTH for card in cards.cards)
    assert cards.loading is not None
    loop.run_until_complete(cards.loading)
    assert all(card.thumbnail.text() == "no preview" for card in cards.cards)  # files gone
