"""The sources under an answer as cards, in number order, wrapping as the width allows: the
document's whole name, the page and heading, the sentence the answer used (words a reader can
read, where a crop of the page was 3 px glyphs), and a miniature of the page showing where on
it the passage is (rendered in the reader process, off the GUI thread, and cached)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPixmap,
    QTextLayout,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget
from shiboken6 import Shiboken

from app.answering import Source
from app.bootstrap import Docent
from app.documents.chunking import cited_as
from app.documents.render import Box, sentences
from app.errors import DocentError
from ui.answer.page_preview import marked
from ui.background import Background
from ui.flow_layout import FlowLayout
from ui.plain import plain_label, plain_tooltip
from ui.theme import META_SCALE, SPACING, is_dark, scaled

CARD_WIDTH = 288
MINIATURE_WIDTH = 48  # the page, whole: where the passage sits on it, not its words
MINIATURE_ZOOM = 0.25  # pixels per point the page is drawn at, before it is scaled down
HEADING_LINES = 2
SNIPPET_LINES = 3
CACHED_THUMBNAILS = 64
PASSAGE_TIP_CHARS = 600
# Stronger than the preview's: the marks must show at a twelfth of the page's size.
PASSAGE_TINT = QColor("#ffe082")
USED_TINT = QColor("#ff9800")
DARK_DIMMING = QColor(0, 0, 0, 38)  # a white page drawn at 85 %: no glare on a dark window

ThumbnailKey = tuple[str, int, str, tuple[str, ...]]


class Thumbnails:
    """Each source's page in miniature: rendered once, kept for the most recent
    CACHED_THUMBNAILS sources, shared by every card that shows the same passage."""

    def __init__(self, docent: Docent) -> None:
        self.docent = docent
        self._done: OrderedDict[ThumbnailKey, QPixmap] = OrderedDict()
        self._rendering: dict[ThumbnailKey, asyncio.Task[QPixmap | None]] = {}

    def cached(self, source: Source) -> QPixmap | None:
        return self._done.get(_key(source))

    async def get(self, source: Source) -> QPixmap | None:
        """None when the page cannot be rendered (the file moved, a format without pages)."""
        key = _key(source)
        if (pixmap := self._done.get(key)) is not None:
            self._done.move_to_end(key)
            return pixmap
        if key not in self._rendering:  # one render per passage, however many cards ask
            self._rendering[key] = asyncio.ensure_future(self._render(source))
        try:
            pixmap = await asyncio.shield(self._rendering[key])
        finally:
            if (task := self._rendering.get(key)) is not None and task.done():
                del self._rendering[key]
        if pixmap is not None:
            self._done[key] = pixmap
            while len(self._done) > CACHED_THUMBNAILS:
                self._done.popitem(last=False)
        return pixmap

    async def _render(self, source: Source) -> QPixmap | None:
        try:
            rendered = await self.docent.render_page(
                Path(source.path), source.page, MINIATURE_ZOOM, source.text, source.used
            )
        except (DocentError, OSError, RuntimeError):
            return None
        ratio = QGuiApplication.primaryScreen().devicePixelRatio()  # sharp on HiDPI screens
        # Decoding a page's PNG and scaling it: off the GUI thread (QImage, unlike QPixmap, may
        # be used on any thread).
        image = await asyncio.to_thread(
            _miniature, rendered.png, rendered.highlights, rendered.used, ratio
        )
        pixmap = QPixmap.fromImage(image)
        pixmap.setDevicePixelRatio(ratio)
        return pixmap


def _key(source: Source) -> ThumbnailKey:
    return (source.path, source.page, source.text, source.used)


def _miniature(png: bytes, passage: tuple[Box, ...], used: tuple[Box, ...], ratio: float) -> QImage:
    """The page scaled to the card, the passage tinted and the sentences used marked strongly:
    a glance tells where on the page the answer comes from."""
    return marked(png, passage, used, (PASSAGE_TINT, USED_TINT)).scaledToWidth(
        round(MINIATURE_WIDTH * ratio), Qt.TransformationMode.SmoothTransformation
    )


def elided_name(name: str, metrics: QFontMetrics, width: int) -> str:
    """A file name cut at its end, its extension kept: "northwind-retent….pdf"."""
    if metrics.horizontalAdvance(name) <= width:
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or len(extension) > 5:  # no extension worth keeping
        return metrics.elidedText(name, Qt.TextElideMode.ElideRight, width)
    tail = f".{extension}"
    room = width - metrics.horizontalAdvance(tail)
    return metrics.elidedText(stem, Qt.TextElideMode.ElideRight, room) + tail


def clamped(text: str, font: QFont, width: int, lines: int) -> str:
    """`text` as it wraps in `width`, cut to `lines` lines, the last one ending in "…"."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    starts: list[int] = []
    while len(starts) <= lines and (line := layout.createLine()).isValid():
        line.setLineWidth(width)
        starts.append(line.textStart())
    layout.endLayout()
    if len(starts) <= lines:
        return text
    last = text[starts[lines - 1] :]
    end = QFontMetrics(font).elidedText(last, Qt.TextElideMode.ElideRight, width)
    return text[: starts[lines - 1]].rstrip() + "\n" + end


def snippet_of(source: Source) -> str:
    """What a card quotes: the sentences the answer used, else the passage's first."""
    return " ".join(source.used or sentences(source.text)[:1] or [source.text])


class SourceCard(QFrame):
    """One source. Signals: clicked(object) — the Source, on a click or Enter/Space."""

    clicked = Signal(object)

    def __init__(self, source: Source, best: bool = False) -> None:
        super().__init__()
        self.source = source
        self.setObjectName("sourceCard")
        self.setFixedWidth(CARD_WIDTH)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAccessibleName(
            self.tr("Source {number}: {where}").format(number=source.number, where=source.where)
        )
        self.setToolTip(plain_tooltip(self._tip(best)))
        self._page_image: QPixmap | None = None
        self.thumbnail = QLabel()
        self.thumbnail.setFixedWidth(MINIATURE_WIDTH)
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignHCenter)
        text_width = CARD_WIDTH - MINIATURE_WIDTH - 3 * SPACING
        # Fonts set here, not by the style sheet: the words are fitted to them now.
        self.best = plain_label(self.tr("best match") if best else "")
        self.best.setObjectName("sourceMeta")
        self.best.setFont(scaled(self.font(), META_SCALE))
        self.best.setVisible(best)
        self.document = plain_label()
        self.document.setObjectName("sourceTitle")
        title_font = QFont(self.font())
        title_font.setWeight(QFont.Weight.DemiBold)
        self.document.setFont(title_font)
        metrics = QFontMetrics(title_font)
        number = f"[{source.number}] "
        room = text_width - metrics.horizontalAdvance(number)
        if best:
            room -= QFontMetrics(self.best.font()).horizontalAdvance(self.best.text()) + SPACING
        self.document.setText(number + elided_name(source.document, metrics, room))
        where = cited_as(source.page_label) + (f" · {source.heading}" if source.heading else "")
        self.page = plain_label()
        self.page.setObjectName("sourceMeta")
        self.page.setFont(scaled(self.font(), META_SCALE))
        self.page.setWordWrap(True)
        self.page.setText(clamped(where, self.page.font(), text_width, HEADING_LINES))
        self.snippet = plain_label()
        self.snippet.setWordWrap(True)
        self.snippet.setText(
            clamped(snippet_of(source), self.snippet.font(), text_width, SNIPPET_LINES)
        )
        heading = QHBoxLayout()
        heading.setSpacing(SPACING)
        heading.addWidget(self.document, 1)
        heading.addWidget(self.best)
        words = QVBoxLayout()
        words.setSpacing(2)
        words.addLayout(heading)
        words.addWidget(self.page)
        words.addWidget(self.snippet)
        words.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        layout.setSpacing(SPACING)
        layout.addWidget(self.thumbnail)
        layout.addLayout(words, 1)

    def _tip(self, best: bool) -> str:
        score = self.tr(
            "Relevance {score:.3f}{best}: how strongly search ranked this passage for the "
            "question (keyword and meaning searches combined). It orders the sources of one "
            "answer; it is not a percentage."
        ).format(score=self.source.score, best=self.tr(", the best") if best else "")
        return f"{self.source.where}\n\n{_passage_tip(self.source.text)}\n\n{score}"

    def show_thumbnail(self, pixmap: QPixmap | None) -> None:
        self._page_image = pixmap
        self._show_page()

    def _show_page(self) -> None:
        if self._page_image is None:
            self.thumbnail.setText(self.tr("no preview"))
            return
        shown = self._page_image
        if is_dark(self.palette()):
            shown = QPixmap(self._page_image)  # a copy: the cache keeps the page undimmed
            painter = QPainter(shown)
            painter.fillRect(shown.rect(), DARK_DIMMING)
            painter.end()
        self.thumbnail.setPixmap(shown)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._page_image is not None:
            self._show_page()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self.source)
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit(self.source)
            return
        super().keyPressEvent(event)


def _passage_tip(text: str) -> str:
    return text if len(text) <= PASSAGE_TIP_CHARS else text[:PASSAGE_TIP_CHARS] + "…"


class SourceCards(QWidget):
    """The cited sources of one answer, by number, wrapping onto more rows as they need.
    Signals: source_clicked(object) — a Source.

    Miniatures load as the owner's background work; `loading` is the last such task."""

    source_clicked = Signal(object)

    def __init__(self, thumbnails: Thumbnails, background: Background) -> None:
        super().__init__()
        self.thumbnails = thumbnails
        self.background = background
        self.cards: list[SourceCard] = []
        self.loading: asyncio.Task[None] | None = None
        self._flow = FlowLayout(self)

    def show_sources(self, sources: tuple[Source, ...] | list[Source]) -> None:
        best = max((source.score for source in sources), default=None)
        for source in sorted(sources, key=lambda s: s.number):
            card = SourceCard(source, best=len(sources) > 1 and source.score == best)
            card.clicked.connect(self.source_clicked)
            if (cached := self.thumbnails.cached(source)) is not None:
                card.show_thumbnail(cached)
            self._flow.addWidget(card)
            self.cards.append(card)
        self.loading = self.background.run(self._load(self.cards))

    async def _load(self, cards: list[SourceCard]) -> None:
        for card in cards:
            if not Shiboken.isValid(card):
                return  # the conversation was cleared while the pages rendered
            if card.thumbnail.pixmap().isNull():
                thumbnail = await self.thumbnails.get(card.source)
                if Shiboken.isValid(card):
                    card.show_thumbnail(thumbnail)
