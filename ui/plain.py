"""Untrusted text (a document's, a model's, a cloud server's, a file's name) shown as text.

Qt guesses: a QLabel or a tooltip whose text looks like HTML (Qt::mightBeRichText) is rendered
as HTML, so `<img src=…>` in a file name or a cloud error would format, or load a file. Labels
that show such text are set to plain text; tooltips and Markdown go through these helpers.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFormat,
)
from PySide6.QtWidgets import QLabel, QSizePolicy

_SAFE_MARKDOWN = (
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub
    | QTextDocument.MarkdownFeature.MarkdownNoHTML
)


def plain_label(text: str = "") -> QLabel:
    """A label that shows its text literally, whatever it looks like."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_tooltip(text: str) -> str:
    """`text` as a tooltip that shows it literally (line breaks kept); "" stays no tooltip.

    Qt has no plain-text switch for tooltips, so the text goes in escaped, as rich text."""
    return f"<p style='white-space:pre-wrap'>{escape(text)}</p>" if text else ""


def insert_markdown(cursor: QTextCursor, markdown: str) -> None:
    """Insert `markdown` rendered, but inert: HTML shows as text, a link as its words, an image
    as its alt text. So an answer or a report can neither make a link the app would follow nor
    have the view load a file."""
    scratch = QTextDocument()  # never laid out: nothing in it is loaded
    scratch.setMarkdown(markdown, _SAFE_MARKDOWN)
    _disarm(scratch)
    cursor.insertFragment(QTextDocumentFragment(scratch))


def _disarm(document: QTextDocument) -> None:
    edits: list[tuple[int, int, str]] = []  # (position, length, plain text to put there)
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            style = fragment.charFormat()
            if style.isImageFormat():
                alt = style.property(QTextFormat.Property.ImageAltText)
                edits.append((fragment.position(), fragment.length(), str(alt or "")))
            elif style.isAnchor() or style.anchorHref():
                edits.append((fragment.position(), fragment.length(), fragment.text()))
            fragments += 1
        block = block.next()
    cursor = QTextCursor(document)
    for position, length, text in reversed(edits):  # from the end: positions stay valid
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(text, QTextCharFormat())


class ElidedLabel(QLabel):
    """One line of plain text, cut with "…" at the right where the row is too narrow; the
    whole text is its tooltip."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._full = ""

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(plain_tooltip(text))
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(
            self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, self.width())
        )
