"""The documents panel: every file Docent was given, with its state and, on failure, the reason."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QContextMenuEvent
from PySide6.QtWidgets import QAbstractItemView, QMenu, QTreeWidget, QTreeWidgetItem

from app.index import DocumentInfo
from app.intake import (
    FileFailed,
    FileIndexed,
    FileSkipped,
    FileStarted,
    IngestEvent,
    OcrProgress,
    PagesParsed,
)
from ui.plain import plain_tooltip
from ui.theme import error_colour

NAME, PAGES, CHUNKS, STATUS = range(4)
PATH_ROLE = Qt.ItemDataRole.UserRole
ID_ROLE = Qt.ItemDataRole.UserRole + 1


class DocumentsPanel(QTreeWidget):
    """A row per document; ticked rows limit questions to those documents (none ticked: all).

    Signals: remove_requested(list) and reindex_requested(list) — paths chosen from the
    context menu; summarize_requested(int) — the id of the one indexed document chosen. The
    window feeds the panel the core's events.
    """

    remove_requested = Signal(list)
    reindex_requested = Signal(list)
    summarize_requested = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
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
            item.setToolTip(NAME, plain_tooltip(key))
            item.setData(NAME, PATH_ROLE, key)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(NAME, Qt.CheckState.Unchecked)
            item.setTextAlignment(PAGES, Qt.AlignmentFlag.AlignRight)
            item.setTextAlignment(CHUNKS, Qt.AlignmentFlag.AlignRight)
            self.addTopLevelItem(item)
            self._rows[key] = item
        return self._rows[key]

    def status(self, path: Path | str) -> str:
        return self.row(path).text(STATUS)

    def apply(self, event: IngestEvent | OcrProgress) -> None:
        item = self.row(event.path)
        item.setForeground(STATUS, QBrush())
        match event:
            case FileStarted():
                item.setText(STATUS, "parsing")
            case PagesParsed(done=done, total=total):
                item.setText(STATUS, f"parsing {done}/{total} pages")
            case FileIndexed(document_id=document_id, pages=pages, chunks=chunks, note=note):
                item.setData(NAME, ID_ROLE, document_id)
                item.setText(STATUS, "keyword-searchable")
                item.setText(PAGES, str(pages))
                item.setText(CHUNKS, str(chunks))
                item.setToolTip(STATUS, plain_tooltip(note or ""))
            case OcrProgress(done=done, total=total):
                item.setText(STATUS, ocr_status(done, total))
            case FileSkipped(reason=reason):
                item.setText(STATUS, "unchanged" if reason.startswith("unchanged") else "skipped")
                item.setToolTip(STATUS, plain_tooltip(reason))
            case FileFailed(reason=reason):
                item.setText(STATUS, f"failed: {reason}")
                item.setToolTip(STATUS, plain_tooltip(reason))
                item.setForeground(STATUS, error_colour(self.palette()))

    def show_library(self, documents: list[DocumentInfo]) -> None:
        """The stored truth, after indexing or embedding moved on."""
        for document in documents:
            item = self.row(document.path)
            item.setData(NAME, ID_ROLE, document.id)
            if item.text(STATUS).startswith("failed"):
                continue
            if document.ocr_done < document.ocr_pages:
                status = ocr_status(document.ocr_done, document.ocr_pages)
            elif document.embedded < document.chunks:
                status = f"embedding {document.embedded}/{document.chunks}"
            else:
                status = "ready"
            item.setText(STATUS, status)
            item.setText(PAGES, str(document.pages))
            item.setText(CHUNKS, str(document.chunks))

    def scope(self) -> list[int] | None:
        """Ids of the ticked documents, or None (ask the whole library)."""
        ids = [
            int(item.data(NAME, ID_ROLE))
            for item in self._rows.values()
            if item.checkState(NAME) == Qt.CheckState.Checked
            and item.data(NAME, ID_ROLE) is not None
        ]
        return ids or None

    def ticked_paths(self) -> list[str]:
        return [
            key
            for key, item in self._rows.items()
            if item.checkState(NAME) == Qt.CheckState.Checked
        ]

    def tick(self, paths: list[str]) -> None:
        for key in paths:
            if key in self._rows:
                self._rows[key].setCheckState(NAME, Qt.CheckState.Checked)

    def forget(self, path: str) -> None:
        if (item := self._rows.pop(path, None)) is not None:
            self.takeTopLevelItem(self.indexOfTopLevelItem(item))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            for item in self._rows.values():
                if item.text(STATUS).startswith("failed"):
                    item.setForeground(STATUS, error_colour(self.palette()))
        super().changeEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        paths = [str(item.data(NAME, PATH_ROLE)) for item in self.selectedItems()]
        if not paths:
            return
        menu = QMenu(self)
        ids = [item.data(NAME, ID_ROLE) for item in self.selectedItems()]
        if len(ids) == 1 and ids[0] is not None:  # one document, indexed
            menu.addAction("Summarize…", lambda: self.summarize_requested.emit(int(ids[0])))
        menu.addAction("Re-index", lambda: self.reindex_requested.emit(paths))
        menu.addAction("Remove from library", lambda: self.remove_requested.emit(paths))
        menu.exec(event.globalPos())


def ocr_status(done: int, total: int) -> str:
    return f"OCR {done}/{total} pages" if done < total else "keyword-searchable"
