"""Small drawn icons for the library: a page per file type (its colour tells PDFs, Office files,
e-books, text and scans apart at a glance) and a mark per document state. Drawn, not taken from
the platform's icon theme: offscreen and on Windows and macOS alike they look the same, and
nothing is read from disk. Each is drawn once and kept: a library of thousands shares a dozen."""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap

from app.documents.formats import EXTENSIONS, Format

SIZE = 16

# A file type's band: one hue per family (decoration: the name beside it says the type).
_FAMILY_COLOURS = {
    Format.PDF: "#c62828",
    Format.DOCX: "#1565c0",
    Format.XLSX: "#2e7d32",
    Format.PPTX: "#d84315",
    Format.EPUB: "#6a1b9a",
    Format.MOBI: "#6a1b9a",
    Format.FB2: "#6a1b9a",
    Format.XPS: "#c62828",
    Format.IMAGE: "#00838f",
}
_OTHER = "#757575"  # text, Markdown, HTML, and what the intake has yet to recognise


class State(StrEnum):
    """Where a document is, as its status mark shows it."""

    QUEUED = "queued"
    WORKING = "working"  # reading, OCR, embedding: searchable or soon
    READY = "ready"
    SKIPPED = "skipped"
    FAILED = "failed"


def file_icon(path: str) -> QIcon:
    return _file_icon(
        _FAMILY_COLOURS.get(EXTENSIONS.get(Path(path).suffix.lower(), Format.TEXT), _OTHER)
    )


@cache
def _file_icon(colour: str) -> QIcon:
    """A page with a folded corner, its lower part in the type's colour."""
    pixmap, painter = _canvas()
    page = QPainterPath()
    page.moveTo(3.5, 1.5)
    page.lineTo(10, 1.5)
    page.lineTo(13.5, 5)
    page.lineTo(13.5, 14.5)
    page.lineTo(3.5, 14.5)
    page.closeSubpath()
    painter.fillPath(page, QColor("white"))
    painter.fillRect(QRectF(3.5, 9, 10, 5.5), QColor(colour))
    painter.setPen(QPen(QColor("#616161"), 1))
    painter.drawPath(page)
    painter.drawPolyline([QPointF(10, 1.5), QPointF(10, 5), QPointF(13.5, 5)])
    painter.end()
    return QIcon(pixmap)


@cache
def state_icon(state: State, colour: str) -> QIcon:
    """A state's mark in `colour` (the palette's, chosen by the caller for its ground): a tick
    in a ring, a half-filled ring, a hollow ring, a dash, a cross in a ring."""
    pixmap, painter = _canvas()
    pen = QPen(QColor(colour), 1.6)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    ring = QRectF(2.5, 2.5, 11, 11)
    painter.drawEllipse(ring)
    match state:
        case State.READY:
            painter.drawPolyline([QPointF(5.2, 8.2), QPointF(7.2, 10.2), QPointF(10.8, 6)])
        case State.WORKING:
            half = QPainterPath()
            half.moveTo(ring.center())
            half.arcTo(ring, 90, -180)
            half.closeSubpath()
            painter.fillPath(half, QColor(colour))
        case State.SKIPPED:
            painter.drawLine(QPointF(5.5, 8), QPointF(10.5, 8))
        case State.FAILED:
            painter.drawLine(QPointF(5.5, 5.5), QPointF(10.5, 10.5))
            painter.drawLine(QPointF(10.5, 5.5), QPointF(5.5, 10.5))
        case State.QUEUED:
            pass
    painter.end()
    return QIcon(pixmap)


def _canvas() -> tuple[QPixmap, QPainter]:
    pixmap = QPixmap(SIZE, SIZE)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    return pixmap, painter
