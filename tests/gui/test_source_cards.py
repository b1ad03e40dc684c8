"""Sources as cards under an answer: a real PDF indexed, a real passage found, its page region
rendered by the reader process into a thumbnail (cached), the passage on hover, and a click or
Enter opening it."""

from __future__ import annotations

from pathlib import Path

import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPixmap
from pytestqt.qtbot import QtBot

from app.answering import Source
from app.bootstrap import Docent
from tests.documents import write_pdf
from tests.gui.conftest import tooltip_shows
from ui.answer.source_cards import THUMBNAIL_WIDTH, SourceCards, Thumbnails
from ui.background import Background


def _found(docent: Docent, loop: qasync.QEventLoop, tmp_path: Path, question: str) -> Source:
    report = write_pdf(tmp_path / "report.pdf")

    async def index_and_search() -> Source:
        async for _ in docent.intake.index([report]):
            pass
        (best, *_) = await docent.library.search(question, 4)
        return Source.from_passage(1, best)

    return loop.run_until_complete(index_and_search())


def _inked(pixmap: QPixmap) -> int:
    image = pixmap.toImage()
    return sum(
        1
        for y in range(0, image.height(), 2)
        for x in range(0, image.width(), 2)
        if QColor(image.pixel(x, y)).lightness() < 160
    )


def test_a_source_card_shows_the_cited_region_and_opens_the_page(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    source = _found(docent, loop, tmp_path, "How long must customer invoices be kept?")
    assert source.page == 2
    thumbnails = Thumbnails(docent)
    background = Background(lambda error: None)
    cards = SourceCards(thumbnails, background)
    qtbot.addWidget(cards)
    cards.show_sources([source])
    (card,) = cards.cards
    assert card.document.text() == "[1] report.pdf"
    assert card.page.text().startswith("p. 1")  # the printed label, not the file's page 2
    assert card.score.text() == f"score {source.score:.3f}"
    assert tooltip_shows(card.toolTip()) == source.text
    assert card.accessibleName() == f"Source 1: {source.where}"

    assert cards.loading is not None
    loop.run_until_complete(cards.loading)
    thumbnail = card.thumbnail.pixmap()
    assert thumbnail.deviceIndependentSize().width() == THUMBNAIL_WIDTH
    assert _inked(thumbnail) > 40  # the page's text, not a blank region

    again = SourceCards(thumbnails, background)
    qtbot.addWidget(again)
    again.show_sources([source])
    assert again.cards[0].thumbnail.pixmap().cacheKey() == thumbnail.cacheKey()  # no re-render

    with qtbot.waitSignal(cards.source_clicked) as clicked:
        qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    assert clicked.args == [source]
    card.setFocus()
    with qtbot.waitSignal(cards.source_clicked) as entered:
        qtbot.keyClick(card, Qt.Key.Key_Return)
    assert entered.args == [source]


def test_a_source_whose_file_is_gone_says_no_preview(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    source = _found(docent, loop, tmp_path, "How long must customer invoices be kept?")
    Path(source.path).unlink()
    cards = SourceCards(Thumbnails(docent), Background(lambda error: None))
    qtbot.addWidget(cards)
    cards.show_sources([source])
    assert cards.loading is not None
    loop.run_until_complete(cards.loading)
    assert cards.cards[0].thumbnail.text() == "no preview"
