"""The sources under an answer as cards: document, page, heading, score, and a thumbnail of the
cited region of the page (rendered in the reader process, off the GUI thread, and cached)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QGuiApplication, QImage, QKeyEvent, QMouseEvent, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget
from shiboken6 import Shiboken

from app.answering import Source
from app.bootstrap import Docent
from app.documents.chunking import cited_as
from app.errors import DocentError
from ui.background import Background
from ui.plain import plain_label, plain_tooltip

THUMBNAIL_WIDTH = 168
THUMBNAIL_HEIGHT = 96
THUMBNAIL_ZOOM = 2.0  # pixels per point of the page, before the region is scaled to the card
THUMBNAIL_MARGIN = 12  # pixels around the passage
CACHED_THUMBNAILS = 64
PASSAGE_TIP_CHARS = 600

ThumbnailKey = tuple[str, int, str]


class Thumbnails:
    """The cited region of each source's page: rendered once, kept for the most recent
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
                Path(source.path), source.page, THUMBNAIL_ZOOM, source.text
            )
        except (DocentError, OSError, RuntimeError):
            return None
        ratio = QGuiApplication.primaryScreen().devicePixelRatio()  # sharp on HiDPI screens
        # Decoding a whole page's PNG and scaling it takes tens of ms: off the GUI thread
        # (QImage, unlike QPixmap, may be used on any thread).
        image = await asyncio.to_thread(_cited_region, rendered.png, rendered.highlights, ratio)
        pixmap = QPixmap.fromImage(image)
        pixmap.setDevicePixelRatio(ratio)
        return pixmap


def _key(source: Source) -> ThumbnailKey:
    return (source.path, source.page, source.text)


def _cited_region(png: bytes, highlights: tuple[tuple[float, ...], ...], ratio: float) -> QImage:
    """The passage's start and its width of the page (the page's top when it was not found),
    in the card's proportions, scaled to the card: margins would only shrink the text."""
    image = QImage.fromData(png)
    left, right, top = 0, image.width(), 0
    if highlights:
        margin = THUMBNAIL_MARGIN
        left = max(0, round(min(box[0] for box in highlights)) - margin)
        right = min(image.width(), round(max(box[2] for box in highlights)) + margin)
        top = max(0, round(min(box[1] for box in highlights)) - margin)
    width = right - left
    height = min(image.height() - top, round(width * THUMBNAIL_HEIGHT / THUMBNAIL_WIDTH))
    region = image.copy(QRect(left, top, width, height))
    return region.scaledToWidth(
        round(THUMBNAIL_WIDTH * ratio), Qt.TransformationMode.SmoothTransformation
    )


class SourceCard(QFrame):
    """One source. Signals: clicked(object) — the Source, on a click or Enter/Space."""

    clicked = Signal(object)

    def __init__(self, source: Source) -> None:
        super().__init__()
        self.source = source
        self.setObjectName("sourceCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAccessibleName(f"Source {source.number}: {source.where}")
        self.setToolTip(plain_tooltip(_passage_tip(source.text)))
        self.thumbnail = QLabel()
        self.thumbnail.setFixedSize(THUMBNAIL_WIDTH, THUMBNAIL_HEIGHT)
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.document = plain_label(f"[{source.number}] {source.document}")
        self.document.setMaximumWidth(THUMBNAIL_WIDTH)
        self.page = plain_label(
            cited_as(source.page_label) + (f" — {source.heading}" if source.heading else "")
        )
        self.page.setMaximumWidth(THUMBNAIL_WIDTH)
        self.score = plain_label(f"score {source.score:.3f}")
        self.score.setForegroundRole(self.score.foregroundRole().PlaceholderText)
        for label in (self.document, self.page):
            label.setText(
                label.fontMetrics().elidedText(
                    label.text(), Qt.TextElideMode.ElideMiddle, THUMBNAIL_WIDTH
                )
            )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(2)
        layout.addWidget(self.thumbnail)
        layout.addWidget(self.document)
        layout.addWidget(self.page)
        layout.addWidget(self.score)

    def show_thumbnail(self, pixmap: QPixmap | None) -> None:
        if pixmap is None:
            self.thumbnail.setText("no preview")
        else:
            self.thumbnail.setPixmap(pixmap)

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
    """The cited sources of one answer, in a row. Signals: source_clicked(object) — a Source.

    Thumbnails load as the owner's background work; `loading` is the last such task."""

    source_clicked = Signal(object)

    def __init__(self, thumbnails: Thumbnails, background: Background) -> None:
        super().__init__()
        self.thumbnails = thumbnails
        self.background = background
        self.cards: list[SourceCard] = []
        self.loading: asyncio.Task[None] | None = None
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)

    def show_sources(self, sources: tuple[Source, ...] | list[Source]) -> None:
        for source in sources:
            card = SourceCard(source)
            card.clicked.connect(self.source_clicked)
            if (cached := self.thumbnails.cached(source)) is not None:
                card.show_thumbnail(cached)
            self._row.insertWidget(len(self.cards), card)
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
