"""Looks the sidebar, the start page and the first-run screen share: secondary text (dates,
counts, hints, section labels), quieter than the text but never below WCAG AA, and link-like
buttons for the secondary actions beside a primary one.

The muted colour is the theme's (ui/theme.py: the text faded, kept at 4.5:1 on its ground)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from ui.theme import muted_colour

SIDEBAR_MARGIN = 8  # the sidebar's sections share one left edge


class MutedLabel(QLabel):
    """A label in the muted colour of the palette around it, light or dark, as it changes."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # hints and counts: never markup
        self._mute()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ParentChange):
            self._mute()

    def _mute(self) -> None:
        parent = self.parentWidget()
        palette = QPalette(parent.palette() if parent is not None else QApplication.palette())
        palette.setColor(
            QPalette.ColorRole.WindowText,
            muted_colour(palette, palette.color(QPalette.ColorRole.Window)),
        )
        if palette != self.palette():  # setting an equal palette sends no event: no loop
            self.setPalette(palette)


def section_label(text: str) -> MutedLabel:
    """A sidebar section's name: small, semibold, muted, so it reads as a label, not an item."""
    label = MutedLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 0.9)
    font.setWeight(QFont.Weight.DemiBold)
    label.setFont(font)
    return label


def link_button(text: str) -> QPushButton:
    """A secondary action that reads as a link: a flat button in the palette's link colour
    (a real button: Tab reaches it and Space presses it)."""
    button = QPushButton(text)
    button.setFlat(True)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    button.setStyleSheet(
        "QPushButton { color: palette(link); text-decoration: underline; border: none;"
        " padding: 4px 0; }"
        "QPushButton:focus { outline: 1px dotted palette(link); }"
    )
    return button


def banner_card(banner: QWidget, name: str, right_margin: int = 12) -> QHBoxLayout:
    """Make `banner` a card above the conversation, set off from it in the palette's own
    colours and inset by the cards' side margins (one right edge); the layout for its contents.
    `name`: the card's object name (its style sheet's selector)."""
    card = QFrame()
    card.setObjectName(name)
    card.setStyleSheet(
        f"#{name} {{ border: 1px solid palette(mid); border-radius: 8px;"
        " background: palette(alternate-base); }"
    )
    outside = QHBoxLayout(banner)
    outside.setContentsMargins(12, 4, 12, 4)
    outside.addWidget(card)
    layout = QHBoxLayout(card)
    layout.setContentsMargins(12, 6, right_margin, 6)
    return layout
