"""The documents panel: every file Docent was given, with its state and, on failure, the reason."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from app.index import DocumentInfo
from app.ingest import FileFailed, FileIndexed, FileSkipped, FileStarted, IngestEvent, PagesParsed

NAME, PAGES, CHUNKS, STATUS = range(4)
_FAILED = QBrush(QColor(200, 40, 40))


class DocumentsPanel(QTreeWidget):
    """A row per document. No signals: the window feeds it the core's events."""

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderLabels(["Document", "Pages", "Chunks", "Status"])
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        self.setColumnWidth(NAME, 170)
        self.setColumnWidth(PAGES, 50)
        self.setColumnWidth(CHUNKS, 55)
        self._rows: dict[str, QTreeWidgetItem] = {}

    def row(self, path: Path | str) -> QTreeWidgetItem:
        key = str(path)
        if key not in self._rows:
            item = QTreeWidgetItem([Path(key).name, "", "", "queued"])
            item.setToolTip(NAME, key)
            item.setTextAlignment(PAGES, Qt.AlignmentFlag.AlignRight)
            item.setTextAlignment(CHUNKS, Qt.AlignmentFlag.AlignRight)
            self.addTopLevelItem(item)
            self._rows[key] = item
        return self._rows[key]

    def status(self, path: Path | str) -> str:
        return self.row(path).text(STATUS)

    def apply(self, event: IngestEvent) -> None:
        item = self.row(event.path)
        item.setForeground(STATUS, QBrush())
        match event:
            case FileStarted():
                item.setText(STATUS, "parsing")
            case PagesParsed(done=done, total=total):
                item.setText(STATUS, f"parsing {done}/{total} pages")
            case FileIndexed(pages=pages, chunks=chunks, note=note):
                item.setText(STATUS, "keyword-searchable")
                item.setText(PAGES, str(pages))
                item.setText(CHUNKS, str(chunks))
                item.setToolTip(STATUS, note or "")
            case FileSkipped(reason=reason):
                item.setText(STATUS, "unchanged")
                item.setToolTip(STATUS, reason)
            case FileFailed(reason=reason):
                item.setText(STATUS, f"failed: {reason}")
                item.setToolTip(STATUS, reason)
                item.setForeground(STATUS, _FAILED)

    def show_library(self, documents: list[DocumentInfo]) -> None:
        """The stored truth, after indexing or embedding moved on."""
        for document in documents:
            item = self.row(document.path)
            if item.text(STATUS).startswith("failed"):
                continue
            ready = document.embedded >= document.chunks
            item.setText(
                STATUS, "ready" if ready else f"embedding {document.embedded}/{document.chunks}"
            )
            item.setText(PAGES, str(document.pages))
            item.setText(CHUNKS, str(document.chunks))
