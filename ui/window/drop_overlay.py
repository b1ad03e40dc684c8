"""What a drag over the window will add, said before the drop: "Drop to add 3 documents and
1 folder", and what Docent will refuse or has to check. Only what is dragged is looked at (names,
and whether each is a folder): a folder's contents are listed by the intake after the drop, off
the GUI thread, however many files it holds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.documents.formats import is_document_name


@dataclass(frozen=True, slots=True)
class DropSummary:
    documents: int  # files of a type Docent reads
    folders: int
    others: int  # files of another type: the intake checks their content, and may refuse them

    @classmethod
    def of(cls, paths: list[Path]) -> DropSummary:
        # A stat of each item dragged (the file manager has just listed them: cached), never a
        # walk of a folder's contents.
        folders = [path for path in paths if path.is_dir()]
        files = [path for path in paths if path not in folders]
        documents = sum(is_document_name(path.name) for path in files)
        return cls(documents, len(folders), len(files) - documents)

    def describe(self) -> str:
        added = [
            _count(
                self.documents,
                QCoreApplication.translate("DropOverlay", "document"),
                QCoreApplication.translate("DropOverlay", "documents"),
            ),
            _count(
                self.folders,
                QCoreApplication.translate("DropOverlay", "folder"),
                QCoreApplication.translate("DropOverlay", "folders"),
            ),
        ]
        what = QCoreApplication.translate("DropOverlay", " and ").join(
            part for part in added if part
        )
        others = _count(
            self.others,
            QCoreApplication.translate("DropOverlay", "file"),
            QCoreApplication.translate("DropOverlay", "files"),
        )
        if not what:
            return QCoreApplication.translate(
                "DropOverlay", "Drop to add {others}: Docent reads each to see if it is a document"
            ).format(others=others)
        line = QCoreApplication.translate(
            "DropOverlay", "Drop to add {what} to your library"
        ).format(what=what)
        if self.others:
            line += "\n" + QCoreApplication.translate(
                "DropOverlay", "and {others} of another type, added only if it is a document"
            ).format(others=others)
        return line


def _count(number: int, one: str, many: str) -> str:
    return "" if number == 0 else f"{number} {one if number == 1 else many}"


class DropOverlay(QWidget):
    """A translucent sheet over `target` while local files are dragged over the window."""

    def __init__(self, target: QWidget) -> None:
        super().__init__(target)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAccessibleName(self.tr("Drop documents"))
        self.label = QLabel(alignment=Qt.AlignmentFlag.AlignCenter)
        self.label.setWordWrap(True)
        font = self.label.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.label.setFont(font)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        self._target = target
        target.installEventFilter(self)  # follows the target's size
        self.hide()

    def show_for(self, paths: list[Path]) -> None:
        self.label.setText(DropSummary.of(paths).describe())
        self.setGeometry(self._target.rect())
        self.raise_()
        self.show()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(self._target.rect())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = self.palette()
        sheet = QColor(palette.color(QPalette.ColorRole.Base))
        sheet.setAlpha(225)  # the conversation shows through, the words stay readable on it
        painter = QPainter(self)
        painter.fillRect(self.rect(), sheet)
        pen = painter.pen()
        pen.setColor(palette.color(QPalette.ColorRole.Highlight))
        pen.setWidth(3)
        pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawRoundedRect(self.rect().adjusted(8, 8, -8, -8), 12, 12)
