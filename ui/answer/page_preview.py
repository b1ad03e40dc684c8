"""A cited page, rendered by PyMuPDF off the GUI thread, with the passage highlighted: faintly
the whole passage, strongly the sentences the answer used; opened fitting the window's width
and scrolled to them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QRectF, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QGuiApplication,
    QImage,
    QPainter,
    QPalette,
    QPixmap,
)
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.answering import Source
from app.bootstrap import Docent
from app.documents.chunking import cited_as
from app.documents.render import Box, RenderedPage
from app.errors import DocentError
from ui.background import Background
from ui.plain import plain_label

# Marker yellow, multiplied into the page so the ink stays black: the passage faintly, so the
# sentences the answer used lead the eye.
PASSAGE_TINT = QColor("#fff4c2")
USED_TINT = QColor("#ffd54f")
MIN_ZOOM, MAX_ZOOM = 0.5, 4.0
FIT_TOLERANCE = 0.02  # a fitting zoom this close to the one drawn is not worth drawing again
SCROLL_MARGIN = 48  # pixels shown above the first highlight


class PagePreview(QDialog):
    """Signals: loaded() — after a page (or its error) is shown."""

    loaded = Signal()

    def __init__(
        self,
        docent: Docent,
        path: Path,
        page: int,
        passage: str = "",
        parent: QWidget | None = None,
        *,
        used: Sequence[str] = (),
        title: str = "",
    ) -> None:
        super().__init__(parent)  # owned by the window: Qt deletes it with the window
        self.docent = docent
        self.path = path
        self.cited_page = page
        self.passage = passage
        self.used = tuple(used)
        self.page = page
        self.zoom = 1.5
        self.fit_width = True  # until the user zooms
        self.rendered: RenderedPage | None = None
        self.background = Background(self._cannot_show)
        self.loading: asyncio.Task[None] | None = None  # the render in flight
        self.setWindowTitle(title or self.tr("{file} — Docent").format(file=path.name))
        self.image = QLabel()
        self.image.setAccessibleName(self.tr("Page image"))
        self.page_view = QScrollArea()
        self.page_view.setWidget(self.image)
        self.page_view.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.page_view.setBackgroundRole(QPalette.ColorRole.Dark)  # the page's edge shows
        self.page_view.setAccessibleName(self.tr("Page"))
        self.position = plain_label()  # or the PDF reader's error
        bar = QHBoxLayout()
        bar.setSpacing(2)
        self.copy_passage = self._tool(self.tr("Copy passage"), self.tr("Copy passage"), self.copy)
        self.copy_passage.setEnabled(bool(passage))
        for glyph, name, action in (
            ("◀", self.tr("Previous page"), lambda: self.go(self.page - 1)),
            ("▶", self.tr("Next page"), lambda: self.go(self.page + 1)),
        ):
            bar.addWidget(self._tool(glyph, name, action))
        bar.addWidget(self.position, 1)
        for glyph, name, action in (
            ("−", self.tr("Zoom out"), lambda: self.set_zoom(self.zoom / 1.25)),
            ("+", self.tr("Zoom in"), lambda: self.set_zoom(self.zoom * 1.25)),
            ("↔", self.tr("Fit to width"), self.fit),
        ):
            bar.addWidget(self._tool(glyph, name, action))
        bar.addWidget(self.copy_passage)
        bar.addWidget(self._tool("↗", self.tr("Open in system viewer"), self.open_externally))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(bar)
        layout.addWidget(self.page_view, 1)
        self.resize(800, 900)
        self.go(page)

    @classmethod
    def of_source(
        cls, docent: Docent, source: Source, parent: QWidget | None = None
    ) -> PagePreview:
        """The page a citation names, titled by it, its used sentences marked apart."""
        title = QCoreApplication.translate(
            "PagePreview", "Source [{number}] — {file}, {page}"
        ).format(number=source.number, file=source.document, page=cited_as(source.page_label))
        return cls(
            docent,
            Path(source.path),
            source.page,
            source.text,
            parent,
            used=source.used,
            title=title,
        )

    def _tool(self, glyph: str, name: str, action: Callable[[], object]) -> QToolButton:
        button = QToolButton()
        button.setText(glyph)
        button.setToolTip(name)
        button.setAccessibleName(name)
        button.setAutoRaise(True)
        button.clicked.connect(action)
        return button

    def go(self, page: int) -> None:
        if self.rendered and not 1 <= page <= self.rendered.pages:
            return
        self.page = page
        if self.loading is not None:
            self.loading.cancel()  # a newer request replaces the one in flight
        self.loading = self.background.run(self._load())

    def set_zoom(self, zoom: float) -> None:
        self.fit_width = False
        self.zoom = min(MAX_ZOOM, max(MIN_ZOOM, zoom))
        self.go(self.page)

    def fit(self) -> None:
        self.fit_width = True
        self.go(self.page)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(" ".join(self.used) or self.passage)

    def open_externally(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path)))

    async def _load(self) -> None:
        on_cited_page = self.page == self.cited_page
        rendered = await self._render(on_cited_page)
        if rendered is None:
            return
        if self.fit_width:
            # The page's width is known once it is drawn: a page of another width is drawn again.
            fitting = self._fitting_zoom(rendered)
            if abs(fitting - self.zoom) > FIT_TOLERANCE * self.zoom:
                self.zoom = fitting
                if (rendered := await self._render(on_cited_page)) is None:
                    return
        self.rendered = rendered
        ratio = self.devicePixelRatioF()
        # Decoding a page's PNG takes tens of ms: off the GUI thread (a QImage may be used on
        # any thread, unlike a QPixmap).
        pixmap = QPixmap.fromImage(
            await asyncio.to_thread(marked, rendered.png, rendered.highlights, rendered.used)
        )
        pixmap.setDevicePixelRatio(ratio)  # drawn at the screen's pixels: sharp on HiDPI
        self.image.setPixmap(pixmap)
        self.image.resize(pixmap.deviceIndependentSize().toSize())
        if first := rendered.used[:1] or rendered.highlights[:1]:
            self.page_view.verticalScrollBar().setValue(round(first[0][1] / ratio) - SCROLL_MARGIN)
        found = (
            self.tr(" · the sentences used highlighted")
            if rendered.used
            else self.tr(" · cited passage highlighted")
            if rendered.highlights
            else ""
        )
        self.position.setText(
            self.tr("{label} (page {page} of {pages}) · {zoom}").format(
                label=cited_as(rendered.label),
                page=rendered.page,
                pages=rendered.pages,
                zoom=f"{self.zoom:.0%}",
            )
            + found
        )
        self.loaded.emit()

    async def _render(self, on_cited_page: bool) -> RenderedPage | None:
        try:
            return await self.docent.render_page(
                self.path,
                self.page,
                self.zoom * self.devicePixelRatioF(),
                self.passage if on_cited_page else "",
                self.used if on_cited_page else (),
            )
        except (DocentError, OSError, RuntimeError) as error:
            self._cannot_show(error)
            return None

    def _fitting_zoom(self, rendered: RenderedPage) -> float:
        drawn = int.from_bytes(rendered.png[16:20], "big") / self.devicePixelRatioF()  # PNG's IHDR
        # The room beside the vertical scroll bar a page taller than the window shows.
        scroll_bar = self.page_view.verticalScrollBar().sizeHint().width()
        width = self.page_view.viewport().width() - scroll_bar
        return min(MAX_ZOOM, max(MIN_ZOOM, self.zoom * width / max(drawn, 1.0)))

    def _cannot_show(self, error: BaseException) -> None:
        self.position.setText(self.tr("cannot show this page: {error}").format(error=error))
        self.loaded.emit()

    async def close_async(self) -> None:
        await self.background.close()
        self.close()


def marked(
    png: bytes,
    passage: tuple[Box, ...],
    used: tuple[Box, ...],
    tints: tuple[QColor, QColor] = (PASSAGE_TINT, USED_TINT),
) -> QImage:
    """The page with the passage and the sentences used tinted (any thread: a QImage)."""
    # The format is read from the data; drawn on in one that takes any colour.
    image = QImage.fromData(png).convertToFormat(QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
    for boxes, tint in zip((passage, used), tints, strict=True):
        for x0, y0, x1, y1 in boxes:
            painter.fillRect(QRectF(x0, y0, x1 - x0, y1 - y0), tint)
    painter.end()
    return image
