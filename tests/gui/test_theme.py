"""The window follows the system's light/dark palette, including what it draws itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.answering import Finished, Source
from app.answering.metrics import AnswerMetrics
from app.bootstrap import Docent
from app.intake import FileFailed
from ui.answer.source_cards import SourceCard, Thumbnails
from ui.answer.turns import TurnsView
from ui.background import Background
from ui.library.documents_panel import STATUS, DocumentsPanel
from ui.theme import (
    apply_theme,
    canvas_colour,
    card_colour,
    contrast,
    dark_palette,
    error_colour,
    is_dark,
    muted_colour,
    text_pairs,
)
from ui.window.session_panel import SessionPanel


@pytest.fixture
def system_palette(qapp: QApplication) -> Iterator[QPalette]:
    light = qapp.palette()
    yield light
    qapp.setPalette(light)


def test_switching_to_a_dark_palette_recolours_the_chart_and_failures(
    qapp: QApplication, qtbot: QtBot, system_palette: QPalette
) -> None:
    assert not is_dark(system_palette)
    session = SessionPanel()
    documents = DocumentsPanel()
    for widget in (session, documents):
        qtbot.addWidget(widget)
    session.add(AnswerMetrics("local", "m", "why", 0.01, 0.5, 1.0, 10, 5, 20.0, 0.0))
    documents.apply(FileFailed(Path("/docs/bad.pdf"), "corrupt: not a PDF"))
    failed = documents.row(Path("/docs/bad.pdf"))
    assert failed.foreground(STATUS).color() == QColor("#c62828")
    assert session.chart.backgroundBrush().color() == system_palette.base().color()

    qapp.setPalette(dark_palette())
    qtbot.waitUntil(lambda: is_dark(session.palette()))
    dark = dark_palette()
    assert session.chart.backgroundBrush().color() == dark.base().color()
    assert session.x_axis.labelsBrush().color() == dark.text().color()
    assert failed.foreground(STATUS).color() == error_colour(dark_palette()) == QColor("#ef9a9a")


def test_tick_boxes_stand_out_on_a_dark_palette(qtbot: QtBot) -> None:
    documents = DocumentsPanel()
    qtbot.addWidget(documents)
    documents.setPalette(dark_palette())
    for name in ("report.pdf", "fleet.pdf", "tea.pdf"):  # plain, alternate, selected rows
        documents.row(Path("/docs") / name)
    documents.topLevelItem(2).setSelected(True)
    documents.resize(400, 200)
    image = documents.grab().toImage()
    for row in range(3):
        rect = documents.visualItemRect(documents.topLevelItem(row))
        rect.translate(documents.viewport().pos())
        background = image.pixelColor(rect.right() - 2, rect.center().y())  # past the text
        box = [  # the row's start, where the tick box is drawn
            image.pixelColor(x, y)
            for x in range(rect.left(), rect.left() + rect.height())
            for y in range(rect.top(), rect.bottom())
        ]
        assert max(contrast(pixel, background) for pixel in box) >= 3, f"row {row}"


def test_every_text_colour_reads_at_aa_on_its_background_in_light_and_dark(
    system_palette: QPalette,
) -> None:
    """Route chips, citation chips, muted, error and answer text on cards, the canvas and the
    window: each pair the window draws, measured in both palettes."""
    for palette in (system_palette, dark_palette()):
        pairs = text_pairs(palette)
        assert {"cache route chip", "fallback route chip", "citation chip"} <= set(pairs)
        for name, (text, background) in pairs.items():
            ratio = contrast(text, background)
            assert ratio >= 4.5, f"{name}: {text.name()} on {background.name()} is {ratio:.2f}:1"


@pytest.fixture
def themed(qapp: QApplication, system_palette: QPalette) -> Iterator[QApplication]:
    font = qapp.font()
    theme = apply_theme(qapp)
    yield qapp
    qapp.paletteChanged.disconnect(theme.apply)
    theme.deleteLater()
    qapp.setStyleSheet("")
    qapp.setFont(font)


def test_cards_stand_off_the_canvas_in_light_and_dark_and_meta_text_is_muted(
    themed: QApplication, qtbot: QtBot, docent: Docent
) -> None:
    view = TurnsView(Thumbnails(docent), Background(lambda error: None))
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    card = view.begin("How long are invoices kept?")
    card.apply(
        Finished(
            "Seven years.",
            (),
            AnswerMetrics("local", "m", "why", 0.01, 0.5, 1.0, 10, 5, 20.0, 0.0),
            1,
            False,
            None,
        )
    )
    qtbot.waitUntil(lambda: card.isVisible() and card.geometry().right() < view.width())
    source = SourceCard(Source(1, 1, 1, "a.pdf", "/a.pdf", 1, "1", "Retention", "Kept.", 0.5))
    qtbot.addWidget(source)
    for palette in (themed.palette(), dark_palette()):
        themed.setPalette(palette)
        base = palette.color(QPalette.ColorRole.Base)
        qtbot.waitUntil(lambda base=base: view.palette().color(QPalette.ColorRole.Base) == base)
        image = view.grab().toImage()
        # In the card's margin: its top right holds the question's buttons.
        on_card = image.pixelColor(card.mapTo(view, card.rect().bottomLeft() + QPoint(5, -5)))
        on_canvas = image.pixelColor(view.width() // 2, view.height() - 8)  # below the card
        assert on_canvas == canvas_colour(palette)
        assert on_card == card_colour(palette)
        assert abs(on_card.lightness() - on_canvas.lightness()) >= 6
        if is_dark(palette):
            assert on_card.lightness() > on_canvas.lightness()  # one step lighter
        source.ensurePolished()
        muted = source.page.palette().color(QPalette.ColorRole.WindowText)
        assert muted == muted_colour(palette)
        assert contrast(muted, card_colour(palette)) >= 4.5


def test_the_chart_keeps_room_for_its_axes_labels_in_the_theme_s_font(
    themed: QApplication, qtbot: QtBot
) -> None:
    session = SessionPanel()
    qtbot.addWidget(session)
    session.set_collapsed(False)
    for answer in range(5):
        session.add(AnswerMetrics("local", "m", "why", 0.0, 30.0 + answer, 60.0, 10, 5, 5.0, 0.0))
    # As high as a crowded sidebar leaves it: its minimum.
    session.chart_view.setFixedHeight(session.chart_view.minimumHeight())
    session.resize(490, 330)
    session.show()
    qtbot.waitUntil(lambda: session.chart.plotArea().height() > 0)
    # At 49 px (Qt's margins) the axis labels were elided to "…".
    assert session.chart.plotArea().height() >= 80
