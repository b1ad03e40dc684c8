"""The window follows the system's light/dark palette, including what it draws itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.answering.metrics import AnswerMetrics
from app.intake import FileFailed
from ui.library.documents_panel import STATUS, DocumentsPanel
from ui.theme import dark_palette, error_colour, is_dark
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


def luminance(colour: QColor) -> float:
    """Relative luminance, as WCAG defines it."""
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in colour.getRgbF()[:3]
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: QColor, other: QColor) -> float:
    darker, lighter = sorted((luminance(one), luminance(other)))
    return (lighter + 0.05) / (darker + 0.05)


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
