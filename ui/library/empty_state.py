"""What the window shows before the first question: where to drop documents (with "Add
documents…" as its one primary button), questions to try on the bundled guide and samples, a
link to add the samples, and where the keyboard shortcuts are, instead of an empty white page."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from app.samples import SAMPLES, sample_questions
from ui.keys import ADD_DOCUMENTS, SHORTCUTS, native
from ui.looks import link_button
from ui.plain import plain_label
from ui.shortcuts import show_shortcuts


def dropped_paths(event: QDragEnterEvent | QDropEvent) -> list[Path]:
    """The local files and folders dragged in; none when anything else comes along."""
    urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
    if not urls or not all(url.isLocalFile() for url in urls):
        return []
    return [Path(url.toLocalFile()) for url in urls]


class EmptyState(QWidget):
    """Signals: paths_dropped(list) — files or folders dropped on the drop zone (Paths);
    add_requested() — "Add documents…"; samples_requested() — "Add the sample documents";
    question_chosen(str) — a suggested question was clicked."""

    paths_dropped = Signal(list)
    add_requested = Signal()
    samples_requested = Signal()
    question_chosen = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setAcceptDrops(True)
        self.setAccessibleName(self.tr("Start here"))
        title = QLabel(self.tr("Ask your documents"))
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)

        self.drop_zone = QFrame()
        self.drop_zone.setObjectName("dropZone")
        self.drop_zone.setAccessibleName(self.tr("Drop zone"))
        # A dashed outline in the palette's own colours: light and dark alike.
        self.drop_zone.setStyleSheet(
            "#dropZone { border: 2px dashed palette(mid); border-radius: 12px; }"
            '#dropZone[hovered="true"] { border-color: palette(highlight); }'
        )
        self.setStyleSheet(  # the sample questions as chips
            "#sampleQuestion { border: 1px solid palette(mid); border-radius: 11px;"
            " padding: 4px 14px; min-height: 16px; }"
            "#sampleQuestion:hover, #sampleQuestion:focus { border-color: palette(highlight); }"
        )
        self.hint = plain_label(
            self.tr(
                "Drop PDFs, e-books, Office files, scans or folders here.\n"
                "Docent reads them on this computer and answers with the pages it used."
            )
        )
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        self.add_button = QPushButton(self.tr("Add documents…"))
        self.add_button.setDefault(True)  # the page's one primary action: larger, and default
        larger = self.add_button.font()
        larger.setPointSizeF(larger.pointSizeF() * 1.15)
        self.add_button.setFont(larger)
        self.add_button.setMinimumHeight(self.add_button.sizeHint().height() + 8)
        self.add_button.setMinimumWidth(self.add_button.sizeHint().width() + 32)
        self.add_button.setToolTip(native(ADD_DOCUMENTS))
        self.add_button.clicked.connect(self.add_requested)
        zone = QVBoxLayout(self.drop_zone)
        zone.setContentsMargins(24, 28, 24, 28)
        zone.addWidget(self.hint)
        zone.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignHCenter)

        self.try_label = QLabel(self.tr("Try asking"))
        self.try_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.questions = QVBoxLayout()
        self.question_buttons: list[QPushButton] = []
        self.samples_button = link_button(
            self.tr("Add the sample documents (a retention policy, a tea primer)")
        )
        self.samples_button.clicked.connect(self.samples_requested)
        self.shortcuts = link_button(
            self.tr("Keyboard shortcuts: {key}").format(key=native(SHORTCUTS))
        )
        self.shortcuts.clicked.connect(lambda: show_shortcuts(self))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 24, 48, 24)
        layout.addStretch(1)
        layout.addWidget(title)
        layout.addSpacing(16)
        layout.addWidget(self.drop_zone)
        layout.addSpacing(16)
        layout.addWidget(self.try_label)
        layout.addLayout(self.questions)
        layout.addWidget(self.samples_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addSpacing(16)
        layout.addWidget(self.shortcuts, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
        self.show_library([])

    def show_library(self, names: list[str]) -> None:
        """Offer questions on the samples among the indexed file `names`, or to add them."""
        for button in self.question_buttons:
            self.questions.removeWidget(button)
            button.deleteLater()
        self.question_buttons = []
        for question in sample_questions(names):
            button = QPushButton(question)
            button.setObjectName("sampleQuestion")
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setAccessibleName(self.tr("Ask: {question}").format(question=question))
            button.clicked.connect(lambda _=False, q=question: self.question_chosen.emit(q))
            self.questions.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
            self.question_buttons.append(button)
        self.try_label.setVisible(bool(self.question_buttons))
        self.samples_button.setVisible(not set(SAMPLES) <= set(names))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_paths(event):
            self._hover(True)
            event.acceptProposedAction()

    def dragLeaveEvent(self, event: object) -> None:
        self._hover(False)

    def dropEvent(self, event: QDropEvent) -> None:
        self._hover(False)
        if paths := dropped_paths(event):
            event.acceptProposedAction()
            self.paths_dropped.emit(paths)

    def _hover(self, hovered: bool) -> None:
        self.drop_zone.setProperty("hovered", hovered)
        self.drop_zone.style().unpolish(self.drop_zone)  # re-read the style sheet's selector
        self.drop_zone.style().polish(self.drop_zone)
