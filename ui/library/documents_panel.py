"""The documents panel: every file Docent was given, with its size, pages, when it was indexed,
its state (a progress bar while parsing, embedding or OCR runs) and, on failure, the reason."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import (
    QAbstractItemModel,
    QDateTime,
    QEvent,
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QContextMenuEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
)

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

NAME, PAGES, SIZE, INDEXED, STATUS = range(5)
FITTED = (PAGES, SIZE, INDEXED)  # as wide as their contents
PATH_ROLE = Qt.ItemDataRole.UserRole
ID_ROLE = Qt.ItemDataRole.UserRole + 1
CHUNKS_ROLE = Qt.ItemDataRole.UserRole + 2
PROGRESS_ROLE = Qt.ItemDataRole.UserRole + 3  # (done, total) while a step runs, else None


class ProgressDelegate(QStyledItemDelegate):
    """Draws a status with a (done, total) as a progress bar carrying the status text."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        progress = index.data(PROGRESS_ROLE)
        if not progress:
            super().paint(painter, option, index)
            return
        done, total = progress
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(1, 2, -1, -2)
        bar.minimum, bar.maximum, bar.progress = 0, max(total, 1), done
        bar.text = str(index.data(Qt.ItemDataRole.DisplayRole))
        bar.textVisible = True
        bar.state = option.state | QStyle.StateFlag.State_Horizontal  # Qt 6: else vertical
        bar.palette = option.palette
        QApplication.style().drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Rows tall enough for a bar with its text (a bare text row squashes it to a line)."""
        hint = super().sizeHint(option, index)
        return QSize(hint.width(), max(hint.height(), option.fontMetrics.height() + 10))


class TickDelegate(QStyledItemDelegate):
    """Outlines a row's tick box in the palette's Mid colour (on a selected row, the colour of
    its text). Fusion outlines it in the window colour, darkened: on a dark palette that is
    the list's own background, and the box vanished (docs/screenshots/07-dark.png).

    Signals: toggled() — the user ticked or unticked a box (a click, or Space). Told here, not
    from itemChanged: that fires for every cell a library refresh writes."""

    toggled = Signal()

    def editorEvent(
        self,
        event: QEvent,
        model: QAbstractItemModel,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        before = index.data(Qt.ItemDataRole.CheckStateRole)
        handled = super().editorEvent(event, model, option, index)
        if index.data(Qt.ItemDataRole.CheckStateRole) != before:
            self.toggled.emit()
        return handled

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        super().paint(painter, option, index)
        if index.data(Qt.ItemDataRole.CheckStateRole) is None:
            return
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        style = option.widget.style() if option.widget else QApplication.style()
        box = style.subElementRect(
            QStyle.SubElement.SE_ItemViewItemCheckIndicator, item, option.widget
        )
        selected = option.state & QStyle.StateFlag.State_Selected
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Mid
        painter.save()
        painter.setPen(option.palette.color(role))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(box.adjusted(0, 0, -1, -1))
        painter.restore()


class DocumentsPanel(QTreeWidget):
    """A row per document; ticked rows limit questions to those documents (none ticked: all).

    Signals: remove_requested(list) and reindex_requested(list) — paths chosen from the
    context menu; summarize_requested(int) — the id of the one indexed document chosen;
    ticks_changed() — a row was ticked or unticked (by the user or by code). The window feeds
    the panel the core's events.
    """

    remove_requested = Signal(list)
    reindex_requested = Signal(list)
    summarize_requested = Signal(int)
    ticks_changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setHeaderLabels(["Document", "Pages", "Size", "Indexed", "Status"])
        self.setAccessibleName("Documents")
        self.setRootIsDecorated(False)
        self.setAlternatingRowColors(True)
        # Every row is as tall as a progress bar (ProgressDelegate.sizeHint): measured once, not
        # per row at each change, which called into Python for every cell of the row.
        self.setUniformRowHeights(True)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long name keeps its end
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        for column in FITTED:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(STATUS, QHeaderView.ResizeMode.Interactive)
        self.setColumnWidth(STATUS, 130)
        self.setItemDelegateForColumn(STATUS, ProgressDelegate(self))
        ticks = TickDelegate(self)
        ticks.toggled.connect(self.ticks_changed)
        self.setItemDelegateForColumn(NAME, ticks)
        self._rows: dict[str, QTreeWidgetItem] = {}
        # What show_library last drew in each row, as long as no event has changed the row
        # since: a library of thousands is shown again after every OCR'd page, in a few ms.
        self._shown: dict[str, DocumentInfo] = {}

    def row(self, path: Path | str) -> QTreeWidgetItem:
        key = str(path)
        if key not in self._rows:
            item = QTreeWidgetItem([Path(key).name, "", "", "", "queued"])
            item.setToolTip(NAME, plain_tooltip(key))
            item.setData(NAME, PATH_ROLE, key)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(NAME, Qt.CheckState.Unchecked)
            for column in (PAGES, SIZE):
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
            self.addTopLevelItem(item)
            self._rows[key] = item
        return self._rows[key]

    def status(self, path: Path | str) -> str:
        return self.row(path).text(STATUS)

    def progress(self, path: Path | str) -> tuple[int, int] | None:
        """The running step's (done, total), drawn as a bar; None when no step runs."""
        progress = self.row(path).data(STATUS, PROGRESS_ROLE)
        return None if progress is None else (int(progress[0]), int(progress[1]))

    def chunks(self, path: Path | str) -> int | None:
        chunks = self.row(path).data(NAME, CHUNKS_ROLE)
        return None if chunks is None else int(chunks)

    def apply(self, event: IngestEvent | OcrProgress) -> None:
        item = self.row(event.path)
        self._shown.pop(str(event.path), None)
        item.setForeground(STATUS, QBrush())
        match event:
            case FileStarted():
                _show_status(item, "parsing")
            case PagesParsed(done=done, total=total):
                _show_status(item, f"parsing {done}/{total} pages", (done, total))
            case FileIndexed(document_id=document_id, pages=pages, chunks=chunks, note=note):
                item.setData(NAME, ID_ROLE, document_id)
                item.setData(NAME, CHUNKS_ROLE, chunks)
                _show_status(item, "keyword-searchable")
                item.setText(PAGES, str(pages))
                item.setToolTip(STATUS, plain_tooltip(note or ""))
            case OcrProgress(done=done, total=total):
                _show_status(item, ocr_status(done, total), (done, total) if done < total else None)
            case FileSkipped(reason=reason):
                _show_status(item, "unchanged" if reason.startswith("unchanged") else "skipped")
                item.setToolTip(STATUS, plain_tooltip(reason))
            case FileFailed(reason=reason):
                _show_status(item, f"failed: {reason}")
                item.setToolTip(STATUS, plain_tooltip(reason))
                item.setForeground(STATUS, error_colour(self.palette()))

    def show_library(self, documents: list[DocumentInfo]) -> None:
        """The stored truth, after indexing or embedding moved on."""
        # A fitted column measures every row again at each change of one of its cells: 150
        # rows shown at once took 5 s of the GUI thread. Fitted once, after them all.
        header = self.header()
        for column in FITTED:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        try:
            self._show_documents(documents)
        finally:
            for column in FITTED:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

    def _show_documents(self, documents: list[DocumentInfo]) -> None:
        for document in documents:
            if self._shown.get(document.path) == document:
                continue
            self._shown[document.path] = document
            item = self.row(document.path)
            item.setData(NAME, ID_ROLE, document.id)
            item.setData(NAME, CHUNKS_ROLE, document.chunks)
            item.setText(PAGES, str(document.pages))
            item.setText(SIZE, _size(document.size))
            indexed = QDateTime.fromString(document.indexed_at, Qt.DateFormat.ISODate)
            item.setText(INDEXED, _when(indexed.toLocalTime()))
            item.setToolTip(INDEXED, QLocale().toString(indexed.toLocalTime()))
            item.setToolTip(
                PAGES, f"{document.chunks} passages, {document.embedded} with embeddings"
            )
            if item.text(STATUS).startswith("failed"):
                continue
            if document.ocr_done < document.ocr_pages:
                progress = document.ocr_done, document.ocr_pages
                _show_status(item, ocr_status(*progress), progress)
            elif document.embedded < document.chunks:
                progress = document.embedded, document.chunks
                _show_status(item, f"embedding {document.embedded}/{document.chunks}", progress)
            else:
                _show_status(item, "ready")

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

    def tick(self, paths: list[str], ticked: bool = True) -> None:
        """Tick the rows of `paths` (untick them: `ticked` False)."""
        state = Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked
        for key in paths:
            if key in self._rows:
                self._rows[key].setCheckState(NAME, state)
        self.ticks_changed.emit()

    def forget(self, path: str) -> None:
        self._shown.pop(path, None)
        if (item := self._rows.pop(path, None)) is not None:
            self.takeTopLevelItem(self.indexOfTopLevelItem(item))
            if item.checkState(NAME) == Qt.CheckState.Checked:
                self.ticks_changed.emit()

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


def _when(indexed: QDateTime) -> str:
    """The time for today's documents, the date for older ones: short, so names keep the room."""
    if indexed.date() == QDateTime.currentDateTime().date():
        return indexed.toString("HH:mm")
    return indexed.toString("yyyy-MM-dd")


def _size(size: int) -> str:
    """ "1.2 MB", as file managers say it (powers of 1000)."""
    return QLocale().formattedDataSize(size, 1, QLocale.DataSizeFormat.DataSizeSIFormat)


def _show_status(item: QTreeWidgetItem, text: str, progress: tuple[int, int] | None = None) -> None:
    item.setText(STATUS, text)
    item.setData(STATUS, PROGRESS_ROLE, progress)


def ocr_status(done: int, total: int) -> str:
    return f"OCR {done}/{total} pages" if done < total else "keyword-searchable"
