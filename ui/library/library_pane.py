"""The sidebar's Library section: "Library · 3" with an Add button and a filter box above the
indexing bar and the documents, on the sidebar's left edge like the sections around it."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ui.keys import ADD_DOCUMENTS, native
from ui.library.documents_panel import DocumentsPanel
from ui.library.indexing_bar import IndexingBar
from ui.looks import SIDEBAR_MARGIN, section_label


class LibraryPane(QWidget):
    """Signals: add_requested() — the Add button."""

    add_requested = Signal()

    def __init__(self, documents: DocumentsPanel, indexing_bar: IndexingBar) -> None:
        super().__init__()
        self.documents = documents
        self.label = section_label("")
        self.add_button = QPushButton(self.tr("Add…"))
        self.add_button.setAccessibleName(self.tr("Add documents"))
        self.add_button.setToolTip(
            self.tr("Add documents ({key})").format(key=native(ADD_DOCUMENTS))
        )
        self.add_button.clicked.connect(self.add_requested)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText(self.tr("Filter by name"))
        self.filter.setAccessibleName(self.tr("Filter documents by name"))
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        documents.filter_cleared.connect(self.filter.clear)
        # A folder of a thousand adds a thousand rows in one go: counted once, after them.
        self._recount = QTimer(self)
        self._recount.setSingleShot(True)
        self._recount.setInterval(0)
        self._recount.timeout.connect(self._show_count)
        documents.rows_changed.connect(self._recount.start)

        title = QHBoxLayout()
        title.setContentsMargins(0, 0, 0, 0)
        title.addWidget(self.label, 1)
        title.addWidget(self.add_button)
        top = QVBoxLayout()
        top.setContentsMargins(SIDEBAR_MARGIN, SIDEBAR_MARGIN, SIDEBAR_MARGIN, 0)
        top.addLayout(title)
        top.addWidget(self.filter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        # The list on the sections' left edge; the bar keeps its own inner margin.
        listed = QVBoxLayout()
        listed.setContentsMargins(SIDEBAR_MARGIN, 4, SIDEBAR_MARGIN, 0)
        listed.setSpacing(0)
        listed.addWidget(indexing_bar)
        listed.addWidget(documents, 1)
        layout.addLayout(listed, 1)
        self._show_count()

    def _filter(self, text: str) -> None:
        # The rows are in memory: each key filters them, and is counted, at once.
        self.documents.set_filter(text)
        self._show_count()

    def _show_count(self) -> None:
        shown, total = self.documents.counts()
        if shown == total:
            text = self.tr("Library · {total}").format(total=total)
        else:
            text = self.tr("Library · {shown} of {total}").format(shown=shown, total=total)
        self.label.setText(text)
        self.label.setAccessibleName(text)
