"""A cited page, rendered by PyMuPDF off the GUI thread, with the passage highlighted."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QRectF, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QImage, QPainter, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent
from app.documents.chunking import cited_as
from app.documents.render import RenderedPage
from app.errors import DocentError
from ui.background import Background
from ui.plain import plain_label

_HIGHLIGHT = QColor(255, 210, 0, 90)


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
    ) -> None:
        super().__init__(parent)  # owned by the window: Qt deletes it with the window
        self.docent = docent
        self.path = path
        self.cited_page = page
        self.passage = passage
        self.page = page
        self.zoom = 1.5
        self.rendered: RenderedPage | None = None
        self.background = Background(self._cannot_show)
        self.loading: asyncio.Task[None] | None = None  # the render in flight
        self.setWindowTitle(f"{path.name} — Docent")
        self.image = QLabel()
        scroll = QScrollArea()
        scroll.setWidget(self.image)
        scroll.setWidgetResizable(True)
        scroll.setAccessibleName("Page")
        self.position = plain_label()  # or the PDF reader's error
        buttons = {  # text: (what a screen reader says, the action)
            "◀": ("Previous page", lambda: self.go(self.page - 1)),
            "▶": ("Next page", lambda: self.go(self.page + 1)),
            "−": ("Zoom out", lambda: self.set_zoom(self.zoom / 1.25)),
            "+": ("Zoom in", lambda: self.set_zoom(self.zoom * 1.25)),
            "Open in system viewer": ("", self.open_externally),
        }
        bar = QHBoxLayout()
        for text, (name, action) in buttons.items():
            button = QPushButton(text)
            button.setAccessibleName(name)
            button.clicked.connect(action)
            bar.addWidget(button)
        bar.insertWidget(2, self.position, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(scroll, 1)
        self.resize(800, 900)
        self.go(page)

    def go(self, page: int) -> None:
        if self.rendered and not 1 <= page <= self.rendered.pages:
            return
        self.page = page
        if self.loading is not None:
            self.loading.cancel()  # a newer request replaces the one in flight
        self.loading = self.background.run(self._load())

    def set_zoom(self, zoom: float) -> None:
        self.zoom = min(4.0, max(0.5, zoom))
        self.go(self.page)

    def open_externally(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path)))

    async def _load(self) -> None:
        passage = self.passage if self.page == self.cited_page else ""
        try:
            rendered = await self.docent.render_page(self.path, self.page, self.zoom, passage)
        except (DocentError, OSError, RuntimeError) as error:
            self._cannot_show(error)
            return
        self.rendered = rendered
        image = QImage.fromData(rendered.png)  # the format is read from the data
        pixmap = QPixmap.fromImage(image)
        painter = QPainter(pixmap)
        for x0, y0, x1, y1 in rendered.highlights:
            painter.fillRect(QRectF(x0, y0, x1 - x0, y1 - y0), _HIGHLIGHT)
        painter.end()
        self.image.setPixmap(pixmap)
        self.position.setText(
            f"{cited_as(rendered.label)} (page {rendered.page} of {rendered.pages}) · "
            f"{self.zoom:.0%}" + (" · cited passage highlighted" if rendered.highlights else "")
        )
        self.loaded.emit()

    def _cannot_show(self, error: BaseException) -> None:
        self.position.setText(f"cannot show this page: {error}")
        self.loaded.emit()

    async def close_async(self) -> None:
        await self.background.close()
        self.close()
