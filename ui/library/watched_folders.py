"""Settings → Library: the folders whose documents Docent keeps indexed as they change."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class WatchedFoldersPage(QWidget):
    def __init__(self, folders: list[str], error: QLabel) -> None:
        super().__init__()
        self.list = QListWidget()
        self.list.addItems(folders)
        add = QPushButton(self.tr("Add folder…"))
        add.clicked.connect(self._choose)
        self.remove_button = QPushButton(self.tr("Remove"))
        self.remove_button.clicked.connect(self.remove_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        explanation = QLabel(
            self.tr(
                "Documents added to, changed in or removed from these folders (and their "
                "subfolders) are indexed, re-indexed or removed from the library automatically, "
                "also when that happened while Docent was closed. Removing a folder here stops "
                "watching it; its documents stay in the library."
            )
        )
        explanation.setWordWrap(True)
        self.rows = QVBoxLayout(self)  # the settings dialog adds the reading limits below
        self.rows.addWidget(explanation)
        self.rows.addWidget(self.list, 1)
        self.rows.addLayout(buttons)
        self.rows.addWidget(error)

    def _choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Watch a folder"))
        if folder:
            self.add(folder)

    def add(self, folder: str) -> None:
        if folder not in self.values():
            self.list.addItem(folder)

    def remove_selected(self) -> None:
        for item in self.list.selectedItems():
            self.list.takeItem(self.list.row(item))

    def values(self) -> list[str]:
        return [self.list.item(row).text() for row in range(self.list.count())]
