"""Where the question is written: the documents it reads (a scope chip kept in step with the
Documents list's tick boxes), a box that grows with its text, and one Send / Stop button."""

from __future__ import annotations

from math import ceil

from PySide6.QtCore import QEvent, QObject, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPainter, QPaintEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QMenu,
    QTextEdit,
    QToolButton,
)

from ui.library.documents_panel import NAME, PATH_ROLE, DocumentsPanel
from ui.plain import plain_tooltip

MAX_LINES = 8  # then the box scrolls
MENU_DOCUMENTS = 30  # listed in the scope menu; the Documents list ticks any of the rest
CHIP_NAME_CHARS = 32


class QuestionBox(QTextEdit):
    """Enter sends, Shift+Enter makes a new line; one line tall, growing to MAX_LINES.

    Signals: submitted(str) — the question, when Enter is pressed on non-blank text while
    `sending` is allowed (the box is then cleared).
    """

    submitted = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setAcceptRichText(False)  # a pasted page comes in as its text
        self.setPlaceholderText(
            self.tr("Ask about your documents… (Enter sends, Shift+Enter: new line)")
        )
        self.setAccessibleName(self.tr("Question"))
        self.setTabChangesFocus(True)  # Tab leaves the box, as everywhere else in the window
        self.setFrameShape(QFrame.Shape.NoFrame)  # the composer's frame is the box's
        self.sending = True
        self.document().documentLayout().documentSizeChanged.connect(self._grow)
        self._grow()

    def lines_shown(self) -> int:
        """How many lines tall the box is now (tests, and the screenshots, read it)."""
        inner = self.height() - 2 * self.frameWidth() - 2 * self.document().documentMargin()
        return round(inner / self.fontMetrics().lineSpacing())

    def _grow(self, _size: QSizeF | None = None) -> None:
        line = self.fontMetrics().lineSpacing()
        margin = 2 * self.document().documentMargin()
        text = self.document().size().height() - margin
        inner = min(max(text, line), MAX_LINES * line)
        self.setFixedHeight(ceil(inner + margin) + 2 * self.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._grow()  # a narrower box wraps into more lines

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            question = self.toPlainText().strip()
            if question and self.sending:
                self.clear()
                self.submitted.emit(question)
            return
        super().keyPressEvent(event)


class ScopeChip(QToolButton):
    """Which documents the next question reads: "All documents (3)", "2 documents" or a file's
    name; its menu ticks documents, as the Documents list's tick boxes do (kept in step both
    ways: the list is the one truth)."""

    def __init__(self, documents: DocumentsPanel) -> None:
        super().__init__()
        self.documents = documents
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setAutoRaise(True)
        self.setToolTip(
            self.tr("The documents the question reads: tick them here or in the Documents list")
        )
        self.menu_ = QMenu(self)
        self.menu_.aboutToShow.connect(self._fill_menu)
        self.setMenu(self.menu_)
        documents.ticks_changed.connect(self.show_scope)
        self.show_scope()

    def show_scope(self) -> None:
        ticked = self.documents.ticked_paths()
        if not ticked:
            total = self.documents.topLevelItemCount()
            text = self.tr("All documents ({n})").format(n=total) if total else ""
            text = text or self.tr("All documents")
        elif len(ticked) == 1:
            name = self.documents.row(ticked[0]).text(NAME)
            text = name if len(name) <= CHIP_NAME_CHARS else name[: CHIP_NAME_CHARS - 1] + "…"
        else:
            text = self.tr("{n} documents").format(n=len(ticked))
        self.setText(text)
        self.setAccessibleName(self.tr("Documents to ask: {scope}").format(scope=text))

    def _fill_menu(self) -> None:
        """Built as it opens, from the list as it is now."""
        self.menu_.clear()
        ticked = set(self.documents.ticked_paths())
        everything = self.menu_.addAction(self.tr("All documents"))
        everything.setCheckable(True)
        everything.setChecked(not ticked)
        everything.triggered.connect(lambda: self.documents.tick(list(ticked), False))
        self.menu_.addSeparator()
        count = self.documents.topLevelItemCount()
        for index in range(min(count, MENU_DOCUMENTS)):
            item = self.documents.topLevelItem(index)
            assert item is not None  # index < count
            path = str(item.data(NAME, PATH_ROLE))
            action = self.menu_.addAction(item.text(NAME))
            action.setCheckable(True)
            action.setChecked(path in ticked)
            action.setToolTip(plain_tooltip(path))
            action.toggled.connect(lambda on, path=path: self.documents.tick([path], on))
        if count > MENU_DOCUMENTS:
            more = self.menu_.addAction(
                self.tr("{n} more: tick them in the Documents list…").format(
                    n=count - MENU_DOCUMENTS
                )
            )
            more.triggered.connect(lambda: self.documents.setFocus())


class Composer(QFrame):
    """The scope chip, the question box and the Send / Stop button in one frame.

    Signals: send_clicked() — Send pressed (the box holds the question); stop_clicked() —
    Stop pressed while an answer runs.
    """

    send_clicked = Signal()
    stop_clicked = Signal()

    def __init__(self, documents: DocumentsPanel) -> None:
        super().__init__()
        self.setObjectName("composer")
        self.scope = ScopeChip(documents)
        self.question = QuestionBox()
        self.question.textChanged.connect(self._show_button)
        self.question.installEventFilter(self)  # its focus lights the frame
        self.send = QToolButton()
        self.send.setAutoRaise(True)
        self.send.clicked.connect(self._clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.scope, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(self.question, 1)
        layout.addWidget(self.send, 0, Qt.AlignmentFlag.AlignBottom)
        self.answering = False
        self._focused = False
        self._show_button()

    def set_answering(self, answering: bool) -> None:
        """While an answer runs the button stops it, and Enter sends nothing: the text typed
        meanwhile waits in the box (a follow-up must see this answer first)."""
        self.answering = answering
        self.question.sending = not answering
        self._show_button()

    def _show_button(self) -> None:
        # Glyphs, not the style's icons: those are pictures drawn for a light palette.
        if self.answering:
            self.send.setText("■ " + self.tr("Stop"))
            self.send.setAccessibleName(self.tr("Stop"))
            self.send.setToolTip(self.tr("Stop the answer (Esc)"))
            self.send.setEnabled(True)
        else:
            self.send.setText("↑ " + self.tr("Send"))
            self.send.setAccessibleName(self.tr("Send"))
            self.send.setToolTip(self.tr("Send the question (Enter)"))
            self.send.setEnabled(bool(self.question.toPlainText().strip()))

    def _clicked(self) -> None:
        if self.answering:
            self.stop_clicked.emit()
        else:
            self.send_clicked.emit()

    def take_question(self) -> str:
        """The question in the box, which is then emptied."""
        question = self.question.toPlainText().strip()
        self.question.clear()
        return question

    def paintEvent(self, event: QPaintEvent) -> None:
        """A rounded box in the palette's colours as they are at each paint (a style sheet
        reads palette() once, and stayed light after a switch to dark); the highlight colour
        while the question box has the focus."""
        palette = self.palette()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(
            palette.color(QPalette.ColorRole.Highlight if self._focused else QPalette.ColorRole.Mid)
        )
        painter.setBrush(palette.base())
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 10, 10)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.question and event.type() in (
            QEvent.Type.FocusIn,
            QEvent.Type.FocusOut,
        ):
            self._focused = event.type() == QEvent.Type.FocusIn
            self.update()
        return super().eventFilter(watched, event)
