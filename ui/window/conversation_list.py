"""The conversation sidebar: the kept conversations, latest first.

A row carries its conversation's id; the widget knows nothing of the library: the window loads
the list off the GUI thread and hands it over (`show_conversations`), and acts on the requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.index import ConversationInfo
from ui.plain import plain_tooltip

CLIENT_MARK = "MCP · "
CLIENT_NOTE = (
    "Asked by an MCP client. Your questions go on in a conversation of your own: "
    "the client does not see them."
)


class ConversationList(QWidget):
    """Signals: open_requested(int) — a conversation was activated (clicked, Enter);
    delete_requested(int) — the Delete key or the context menu on one; new_requested() — the
    "New conversation" button (the window's Ctrl+N too)."""

    open_requested = Signal(int)
    delete_requested = Signal(int)
    new_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.list = _Rows(self)
        self.list.setAccessibleName("Conversations")
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.new_button = QPushButton("New conversation")
        self.new_button.setToolTip("Ctrl+N")
        self.new_button.clicked.connect(self.new_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Conversations"))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.new_button)

    def show_conversations(
        self, conversations: Sequence[ConversationInfo], current: int | None
    ) -> None:
        self.list.clear()
        for conversation in conversations:
            turns = f"{conversation.turns} question{'s' if conversation.turns != 1 else ''}"
            title = conversation.title
            if conversation.client:
                title = f"{CLIENT_MARK}{title}"
                turns += f"\n{CLIENT_NOTE}"
            item = QListWidgetItem(title)  # the user's words: a plain-text item
            item.setData(Qt.ItemDataRole.UserRole, conversation.id)
            item.setToolTip(plain_tooltip(f"{conversation.title}\n{turns}"))
            self.list.addItem(item)
            if conversation.id == current:
                self.list.setCurrentItem(item)

    def ids(self) -> list[int]:
        return [self._id(self.list.item(row)) for row in range(self.list.count())]

    def _activated(self, item: QListWidgetItem) -> None:
        self.open_requested.emit(self._id(item))

    def _menu(self, at: QPoint) -> None:
        item = self.list.itemAt(at)
        if item is None:
            return
        menu = QMenu(self)
        menu.addAction("Open", lambda: self.open_requested.emit(self._id(item)))
        menu.addAction("Delete", lambda: self.delete_requested.emit(self._id(item)))
        menu.popup(self.list.viewport().mapToGlobal(at))

    def delete_current(self) -> None:
        if (item := self.list.currentItem()) is not None:
            self.delete_requested.emit(self._id(item))

    @staticmethod
    def _id(item: QListWidgetItem) -> int:
        return int(item.data(Qt.ItemDataRole.UserRole))


class _Rows(QListWidget):
    """The list itself: the Delete key deletes the selected conversation."""

    def __init__(self, owner: ConversationList) -> None:
        super().__init__()
        self._owner = owner

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self._owner.delete_current()
            return
        super().keyPressEvent(event)
