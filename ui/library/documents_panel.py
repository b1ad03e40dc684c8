"""The documents panel: every file Docent was given, with its type's icon, size, pages, when it
was indexed, and its state as a mark and a word ("Ready", "Reading 14/60", "OCR 3/9",
"Searchable (improving…)", "Failed — encrypted"), a progress bar while a step runs and the whole
story in the tooltip. A filter shows the rows whose name holds what is typed. In a library with no
embedder (keyword search only), or once its embedder is off for the session (semantic_off), a
read document is Ready: nothing more is coming."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import (
    QAbstractItemModel,
    QDateTime,
    QEvent,
    QItemSelectionModel,
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QContextMenuEvent, QPainter, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
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
from ui.library.glyphs import State, file_icon, state_icon
from ui.plain import plain_tooltip
from ui.theme import error_colour, is_dark, muted_colour

NAME, PAGES, SIZE, INDEXED, STATUS = range(5)
FITTED = (PAGES, SIZE, INDEXED)  # as wide as their contents
PATH_ROLE = Qt.ItemDataRole.UserRole
ID_ROLE = Qt.ItemDataRole.UserRole + 1
CHUNKS_ROLE = Qt.ItemDataRole.UserRole + 2
PROGRESS_ROLE = Qt.ItemDataRole.UserRole + 3  # (done, total) while a step runs, else None
STATE_ROLE = Qt.ItemDataRole.UserRole + 4  # the row's State
NARROW = 480  # px: a panel narrower shows no Size and Indexed columns
BAR_HEIGHT = 3  # the progress bar under a status's word, at the foot of its cell


class ProgressDelegate(QStyledItemDelegate):
    """Draws a status with a (done, total) as its mark and word over a thin progress bar: the
    word whole (a bar carrying it left "Searchabl…proving…)" in the sidebar's width)."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        super().paint(painter, option, index)
        progress = index.data(PROGRESS_ROLE)
        if not progress:
            return
        done, total = progress
        mark = option.decorationSize.width() + 6
        rect = option.rect
        track = QRect(
            rect.left() + mark, rect.bottom() - BAR_HEIGHT, rect.width() - mark - 4, BAR_HEIGHT
        )
        palette = option.palette
        painter.save()
        painter.fillRect(track, palette.color(QPalette.ColorRole.Mid))
        filled = QRect(track)
        filled.setWidth(round(track.width() * min(done, total) / max(total, 1)))
        painter.fillRect(filled, palette.color(QPalette.ColorRole.Highlight))
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Rows tall enough for the word with the bar under it."""
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
        ticks_changed() — a row was ticked or unticked (by the user or by code); rows_changed() —
        a row came or went, or the filter changed what is shown; filter_cleared() — the panel
    dropped its filter to show rows it hid (show_paths). The window feeds the panel the
        core's events. `semantic`: the library embeds its passages (False: keyword search
        only, and "Searchable (improving…)" would wait for an embedding that never comes);
        semantic_off(reason) turns it off when the embedder stops for the session.
    """

    remove_requested = Signal(list)
    reindex_requested = Signal(list)
    summarize_requested = Signal(int)
    ticks_changed = Signal()
    rows_changed = Signal()
    filter_cleared = Signal()

    def __init__(self, *, semantic: bool = True) -> None:
        super().__init__()
        self.semantic = semantic
        self._semantic_off: str | None = None  # why the embedder stopped for the session
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setHeaderLabels(
            [
                self.tr("Document"),
                self.tr("Pages"),
                self.tr("Size"),
                self.tr("Indexed"),
                self.tr("Status"),
            ]
        )
        self.setAccessibleName(self.tr("Documents"))
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
        # As wide as the longest word with its mark and the cell's padding (a translation too).
        longest = self.fontMetrics().horizontalAdvance(self.tr("Searchable (improving…)"))
        self.setColumnWidth(STATUS, longest + 48)
        self.setItemDelegateForColumn(STATUS, ProgressDelegate(self))
        ticks = TickDelegate(self)
        ticks.toggled.connect(self.ticks_changed)
        self.setItemDelegateForColumn(NAME, ticks)
        self._rows: dict[str, QTreeWidgetItem] = {}
        # What show_library last drew in each row, as long as no event has changed the row
        # since: a library of thousands is shown again after every OCR'd page, in a few ms.
        self._shown: dict[str, DocumentInfo] = {}
        self._filter = ""  # casefolded

    def row(self, path: Path | str) -> QTreeWidgetItem:
        key = str(path)
        if key not in self._rows:
            item = QTreeWidgetItem([Path(key).name, "", "", "", ""])
            item.setToolTip(NAME, plain_tooltip(key))
            item.setIcon(NAME, file_icon(key))
            item.setData(NAME, PATH_ROLE, key)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(NAME, Qt.CheckState.Unchecked)
            for column in (PAGES, SIZE):
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
            self._show_status(item, State.QUEUED, self.tr("Queued"))
            self.addTopLevelItem(item)
            item.setHidden(not self._matches(item))
            self._rows[key] = item
            self.rows_changed.emit()
        return self._rows[key]

    def status(self, path: Path | str) -> str:
        return self.row(path).text(STATUS)

    def status_tip(self, path: Path | str) -> str:
        return self.row(path).toolTip(STATUS)

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
        match event:
            case FileStarted():
                self._show_status(item, State.WORKING, self.tr("Reading"))
            case PagesParsed(done=done, total=total):
                word = self.tr("Reading {done}/{total}").format(done=done, total=total)
                tip = self.tr("Reading its text: {done} of {total} pages.")
                self._show_status(
                    item, State.WORKING, word, tip.format(done=done, total=total), (done, total)
                )
            case FileIndexed(document_id=document_id, pages=pages, chunks=chunks, note=note):
                item.setData(NAME, ID_ROLE, document_id)
                item.setData(NAME, CHUNKS_ROLE, chunks)
                item.setText(PAGES, str(pages))
                self._show_searchable(item, note=note)
            case OcrProgress(done=done, total=total):
                self._show_ocr(item, done, total)
            case FileSkipped(reason=reason):
                unchanged = reason.startswith("unchanged")
                word = self.tr("Unchanged") if unchanged else self.tr("Skipped")
                self._show_status(item, State.SKIPPED, word, reason)
            case FileFailed(reason=reason):
                # The reason's head ("encrypted", "permission denied") in the row, without the
                # parser's own words in brackets; all of it in the tooltip.
                head = reason.partition(":")[0].partition(" (")[0]
                word = self.tr("Failed — {why}").format(why=head)
                self._show_status(item, State.FAILED, word, reason)

    def semantic_off(self, reason: str) -> None:
        """The embedder stopped for the rest of the session (`reason`, the core's words): the
        rows waiting for vectors show their final state now, and the next show_library draws
        every row again."""
        self.semantic, self._semantic_off = False, reason
        self._shown.clear()
        improving = self.tr("Searchable (improving…)")
        for item in self._rows.values():
            if item.text(STATUS) == improving:
                self._show_searchable(item)

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
                PAGES,
                self.tr("{chunks} passages, {embedded} with embeddings").format(
                    chunks=document.chunks, embedded=document.embedded
                ),
            )
            if item.data(STATUS, STATE_ROLE) == State.FAILED:
                continue
            if document.ocr_done < document.ocr_pages:
                self._show_ocr(item, document.ocr_done, document.ocr_pages)
            elif document.embedded < document.chunks or not self.semantic:
                self._show_searchable(item, progress=(document.embedded, document.chunks))
            else:
                tip = self.tr("Keyword and semantic search both work on it.")
                self._show_status(item, State.READY, self.tr("Ready"), tip)

    def _show_ocr(self, item: QTreeWidgetItem, done: int, total: int) -> None:
        if done >= total:
            self._show_searchable(item)
            return
        tip = self.tr(
            "Reading the scanned pages' text (OCR): {done} of {total} pages. The pages read "
            "so far are searchable."
        ).format(done=done, total=total)
        word = self.tr("OCR {done}/{total}").format(done=done, total=total)
        self._show_status(item, State.WORKING, word, tip, (done, total))

    def _show_searchable(
        self,
        item: QTreeWidgetItem,
        note: str | None = None,
        progress: tuple[int, int] | None = None,
    ) -> None:
        if not self.semantic:  # searchable as it will ever be: its final state
            if self._semantic_off is not None:
                tip = self.tr(
                    "Keyword search works on it. Search by meaning is off until Docent "
                    "restarts: {reason}"
                ).format(reason=self._semantic_off)
            else:
                tip = self.tr(
                    "Keyword search works on it. Search by meaning is off: this library has "
                    "no embedding model."
                )
            if note:
                tip += "\n\n" + note
            self._show_status(item, State.READY, self.tr("Ready"), tip)
            return
        tip = self.tr(
            "Keyword search works on it now; semantic search (by meaning, not only by words) "
            "comes once embedding finishes."
        )
        if progress is not None:
            embedded = self.tr("{done} of {total} passages embedded.")
            tip += "\n" + embedded.format(done=progress[0], total=progress[1])
        if note:
            tip += "\n\n" + note
        self._show_status(item, State.WORKING, self.tr("Searchable (improving…)"), tip, progress)

    def _show_status(
        self,
        item: QTreeWidgetItem,
        state: State,
        word: str,
        tip: str = "",
        progress: tuple[int, int] | None = None,
    ) -> None:
        item.setText(STATUS, word)
        item.setToolTip(STATUS, plain_tooltip(tip))
        item.setData(STATUS, PROGRESS_ROLE, progress)
        if item.data(STATUS, STATE_ROLE) != state:
            item.setData(STATUS, STATE_ROLE, state)
            self._show_state(item, state)

    def _show_state(self, item: QTreeWidgetItem, state: State) -> None:
        """The state's mark, and the word in the error colour on a failure."""
        palette = self.palette()
        item.setIcon(STATUS, state_icon(state, self._state_colour(state)))
        failed = state == State.FAILED
        item.setForeground(STATUS, error_colour(palette) if failed else QBrush())

    def _state_colour(self, state: State) -> str:
        palette = self.palette()
        match state:
            case State.READY:  # green, 3:1 or more on the list (a mark, not text)
                return "#81c784" if is_dark(palette) else "#2e7d32"
            case State.WORKING:
                return palette.color(QPalette.ColorRole.Highlight).name()
            case State.FAILED:
                return error_colour(palette).name()
            case _:
                return muted_colour(palette, palette.color(QPalette.ColorRole.Base)).name()

    # --- filter, scope, selection --------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        """Show only the rows whose name holds `text` (any case); "" shows them all."""
        self._filter = text.strip().casefold()
        for item in self._rows.values():
            hidden = not self._matches(item)
            if item.isHidden() != hidden:
                item.setHidden(hidden)
        self.rows_changed.emit()

    def _matches(self, item: QTreeWidgetItem) -> bool:
        return not self._filter or self._filter in item.text(NAME).casefold()

    def counts(self) -> tuple[int, int]:
        """(rows shown, rows in all)."""
        shown = sum(not item.isHidden() for item in self._rows.values()) if self._filter else None
        return (len(self._rows) if shown is None else shown), len(self._rows)

    def show_paths(self, paths: list[str]) -> None:
        """Select the rows of `paths` and scroll to the first; a filter that hides one goes."""
        items = [self._rows[path] for path in paths if path in self._rows]
        if any(item.isHidden() for item in items):
            self.set_filter("")
            self.filter_cleared.emit()
        self.clearSelection()
        for item in items:
            item.setSelected(True)
        if items:
            self.setCurrentItem(items[0], NAME, QItemSelectionModel.SelectionFlag.NoUpdate)
            self.scrollToItem(items[0])
        self.setFocus(Qt.FocusReason.OtherFocusReason)

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
            self.rows_changed.emit()
            if item.checkState(NAME) == Qt.CheckState.Checked:
                self.ticks_changed.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        # In a narrow sidebar the names keep the room: size and date give way until it widens
        # (at 380 px, names were cut to "w…d").
        narrow = event.size().width() < NARROW
        for column in (SIZE, INDEXED):
            if self.isColumnHidden(column) != narrow:
                self.setColumnHidden(column, narrow)
        super().resizeEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            for item in self._rows.values():
                self._show_state(item, State(item.data(STATUS, STATE_ROLE)))
        super().changeEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        paths = [str(item.data(NAME, PATH_ROLE)) for item in self.selectedItems()]
        if not paths:
            return
        menu = QMenu(self)
        ids = [item.data(NAME, ID_ROLE) for item in self.selectedItems()]
        if len(ids) == 1 and ids[0] is not None:  # one document, indexed
            menu.addAction(
                self.tr("Summarize…"), lambda: self.summarize_requested.emit(int(ids[0]))
            )
        menu.addAction(self.tr("Re-index"), lambda: self.reindex_requested.emit(paths))
        menu.addAction(self.tr("Remove from library"), lambda: self.remove_requested.emit(paths))
        menu.exec(event.globalPos())


def _when(indexed: QDateTime) -> str:
    """The time for today's documents, the date for older ones: short, so names keep the room."""
    if indexed.date() == QDateTime.currentDateTime().date():
        return indexed.toString("HH:mm")
    return indexed.toString("yyyy-MM-dd")


def _size(size: int) -> str:
    """ "1.2 MB", as file managers say it (powers of 1000)."""
    return QLocale().formattedDataSize(size, 1, QLocale.DataSizeFormat.DataSizeSIFormat)
