"""The conversation sidebar: a New button, a search box, and the kept conversations grouped by
when they were last continued (Today, Yesterday, Previous 7 days, Older), each row its title and
a muted line: "Today 20:55 · 2 questions · local".

The window loads the list off the GUI thread and hands it over (`show_conversations`) and opens
and deletes conversations on request. Searching and renaming go to the core's desk given to the
constructor, through the window's background runner: typing filters the titles at once, and the
core's full-text search over the questions and answers follows a moment later. A deleted
conversation leaves the list at once and is deleted only when its Undo has run out.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import (
    QDateTime,
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent, QPainter, QPalette, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.answering.desk import Desk
from app.answering.export import conversation_markdown
from app.index import ConversationInfo
from ui import keys
from ui.background import Background
from ui.looks import SIDEBAR_MARGIN, MutedLabel, section_label
from ui.plain import plain_label, plain_tooltip
from ui.route_words import route_word
from ui.theme import muted_colour

CLIENT_MARK = "MCP · "
SEARCH_DELAY_MS = 150  # after the last key: a word typed fast is searched once
UNDO_MS = 5000
_ID = Qt.ItemDataRole.UserRole
_DETAIL = Qt.ItemDataRole.UserRole + 1  # the row's second line
_HEADER = Qt.ItemDataRole.UserRole + 2  # a group's label, not a conversation
_PADDING = 6


def _last_changed(conversation: ConversationInfo) -> datetime | None:
    try:
        return datetime.fromisoformat(conversation.updated_at).astimezone()
    except ValueError:  # not a time (a library some script wrote): listed with the oldest
        return None


class ConversationList(QWidget):
    """Signals: open_requested(int) — a conversation was activated (clicked, Enter);
    delete_requested(int) — a conversation deleted (Delete key, context menu) whose Undo ran
    out; new_requested() — the "New conversation" button (the window's Ctrl+N too);
    renamed(int, str) — a conversation was renamed; search_shown() — after the core's matches
    for the search box's text are shown; exported(str) — the file a conversation was exported
    to, once written."""

    open_requested = Signal(int)
    delete_requested = Signal(int)
    new_requested = Signal()
    renamed = Signal(int, str)
    search_shown = Signal()
    exported = Signal(str)

    def __init__(self, desk: Desk, background: Background) -> None:
        super().__init__()
        self._desk = desk
        self._background = background
        self._conversations: list[ConversationInfo] = []
        self._current: int | None = None
        self._matches: dict[int, str] | None = None  # the core's, for the text searched
        self._searching: asyncio.Task[None] | None = None
        self._deleting: int | None = None  # hidden, deleted when the Undo runs out
        self.new_button = QPushButton(self.tr("＋ New conversation"))
        self.new_button.setDefault(True)  # the primary action here
        self.new_button.setToolTip(keys.native(keys.NEW_CONVERSATION))
        self.new_button.clicked.connect(self.new_requested)
        self.search = QLineEdit()
        self.search.setClearButtonEnabled(True)
        self.search.setPlaceholderText(
            self.tr("Search conversations ({key})").format(
                key=keys.native(keys.SEARCH_CONVERSATIONS)
            )
        )
        self.search.setAccessibleName(self.tr("Search conversations"))
        self.search.textChanged.connect(self._typed)
        self.search.returnPressed.connect(self._to_first_row)
        QShortcut(keys.sequence(keys.SEARCH_CONVERSATIONS), self, self.focus_search)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._search_core)
        self.list = _Rows(self)
        self.list.setAccessibleName(self.tr("Conversations"))
        self.list.setItemDelegate(_RowDelegate(self.list))
        self.list.setUniformItemSizes(False)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.placeholder = MutedLabel(self.tr("Your conversations appear here"))
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.undo_bar = QWidget()
        self.undo_note = plain_label()
        self.undo_button = QPushButton(self.tr("Undo"))
        self.undo_button.clicked.connect(self.undo_delete)
        undo = QHBoxLayout(self.undo_bar)
        undo.setContentsMargins(0, 0, 0, 0)
        undo.addWidget(self.undo_note, 1)
        undo.addWidget(self.undo_button)
        self.undo_bar.hide()
        self.undo_timer = QTimer(self)
        self.undo_timer.setSingleShot(True)
        self.undo_timer.setInterval(UNDO_MS)
        self.undo_timer.timeout.connect(self._delete_now)
        label = section_label(self.tr("Conversations"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SIDEBAR_MARGIN, SIDEBAR_MARGIN, SIDEBAR_MARGIN, 0)
        layout.addWidget(label)
        layout.addWidget(self.new_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.placeholder, 1)
        layout.addWidget(self.undo_bar)
        self._show()

    # --- what is listed ----------------------------------------------------------------------

    def show_conversations(
        self, conversations: Sequence[ConversationInfo], current: int | None
    ) -> None:
        self._conversations = list(conversations)
        self._current = current
        self._show()
        if self.search.text().strip():  # a conversation recorded meanwhile may match too
            self._search_core()

    def ids(self) -> list[int]:
        """The conversations listed, top to bottom."""
        return [int(item.data(_ID)) for item in self._rows()]

    def titles(self) -> list[str]:
        return [item.text() for item in self._rows()]

    def details(self) -> list[str]:
        """Each listed row's second line: when, how many questions, which routes; or, while
        searching, the words found in it."""
        return [str(item.data(_DETAIL)) for item in self._rows()]

    def groups(self) -> list[str]:
        return [
            self.list.item(row).text()
            for row in range(self.list.count())
            if self.list.item(row).data(_HEADER)
        ]

    def _rows(self) -> list[QListWidgetItem]:
        items = (self.list.item(row) for row in range(self.list.count()))
        return [item for item in items if not item.data(_HEADER)]

    def _show(self) -> None:
        query = self.search.text().strip().casefold()
        shown = [
            conversation
            for conversation in self._conversations
            if conversation.id != self._deleting
            and (
                not query
                or query in conversation.title.casefold()
                or (self._matches is not None and conversation.id in self._matches)
            )
        ]
        chosen = self.selected() or self._current  # kept across a new listing
        self.list.clear()
        today = date.today()
        group = None
        for conversation in shown:
            changed = _last_changed(conversation)
            if (label := self._group(changed, today)) != group:
                group = label
                header = QListWidgetItem(label)
                header.setData(_HEADER, True)
                header.setFlags(Qt.ItemFlag.NoItemFlags)  # not selectable: arrows skip it
                self.list.addItem(header)
            row = self._row(conversation, changed, today)
            self.list.addItem(row)
            if conversation.id == chosen:
                self.list.setCurrentItem(row)
        self.list.setVisible(bool(shown))
        self.placeholder.setVisible(not shown)
        if query:
            self.placeholder.setText(
                self.tr("No conversation matches “{query}”").format(query=self.search.text())
            )
        else:
            self.placeholder.setText(self.tr("Your conversations appear here"))

    def _row(
        self, conversation: ConversationInfo, changed: datetime | None, today: date
    ) -> QListWidgetItem:
        title = conversation.title
        if conversation.client:
            title = f"{CLIENT_MARK}{title}"
        detail = " · ".join(
            part
            for part in (
                self._when(changed, today),
                self._questions(conversation.turns),
                " + ".join(route_word(route) for route in conversation.routes),
            )
            if part
        )
        found = (self._matches or {}).get(conversation.id, "")
        item = QListWidgetItem(title)  # the user's words: a plain-text item
        item.setData(_ID, conversation.id)
        item.setData(_DETAIL, found or detail)
        note = self.tr(
            "Asked by an MCP client. Your questions go on in a conversation of your own: "
            "the client does not see them."
        )
        tooltip = f"{conversation.title}\n{detail}" + (f"\n{note}" if conversation.client else "")
        item.setToolTip(plain_tooltip(tooltip))
        item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, found or detail)
        return item

    def _questions(self, count: int) -> str:
        return self.tr("1 question") if count == 1 else self.tr("{n} questions").format(n=count)

    def _group(self, changed: datetime | None, today: date) -> str:
        if changed is None or changed.date() < today - timedelta(days=7):
            return self.tr("Older")
        if changed.date() >= today:
            return self.tr("Today")
        if changed.date() == today - timedelta(days=1):
            return self.tr("Yesterday")
        return self.tr("Previous 7 days")

    def _when(self, changed: datetime | None, today: date) -> str:
        if changed is None:
            return ""
        locale = QLocale()
        moment = QDateTime.fromSecsSinceEpoch(int(changed.timestamp()))
        time = locale.toString(moment.time(), QLocale.FormatType.ShortFormat)
        if changed.date() >= today:
            return self.tr("Today {time}").format(time=time)
        if changed.date() == today - timedelta(days=1):
            return self.tr("Yesterday {time}").format(time=time)
        if changed.date() >= today - timedelta(days=7):
            day = locale.dayName(moment.date().dayOfWeek(), QLocale.FormatType.ShortFormat)
            return f"{day} {time}"
        return locale.toString(moment.date(), QLocale.FormatType.ShortFormat)

    # --- search ------------------------------------------------------------------------------

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _to_first_row(self) -> None:
        """Enter in the search box: on to the first conversation found (Enter again opens it)."""
        if rows := self._rows():
            self.list.setCurrentItem(rows[0])
            self.list.setFocus()

    def _typed(self, text: str) -> None:
        """The titles filter at once; the core's search over the text follows."""
        self._matches = None
        if self._searching is not None:
            self._searching.cancel()  # its matches are for other words
        self._show()
        if text.strip():
            self._search_timer.start()
        else:
            self._search_timer.stop()

    def _search_core(self) -> None:
        if self._searching is not None:
            self._searching.cancel()
        self._searching = self._background.run(self._search(self.search.text()))

    async def _search(self, text: str) -> None:
        matches = await self._desk.search_conversations(text)
        if text == self.search.text():
            self._matches = {match.conversation_id: match.excerpt for match in matches}
            self._show()
            self.search_shown.emit()

    # --- actions -----------------------------------------------------------------------------

    def _activated(self, item: QListWidgetItem) -> None:
        if not item.data(_HEADER):
            self.open_requested.emit(int(item.data(_ID)))

    def _menu(self, at: QPoint) -> None:
        item = self.list.itemAt(at)
        if item is None or item.data(_HEADER):
            return
        conversation = int(item.data(_ID))
        menu = QMenu(self)
        menu.addAction(self.tr("Open"), lambda: self.open_requested.emit(conversation))
        rename = menu.addAction(self.tr("Rename…"), lambda: self.rename(conversation))
        rename.setShortcut(keys.sequence(keys.RENAME))
        menu.addAction(self.tr("Export as Markdown…"), lambda: self.export(conversation))
        delete = menu.addAction(self.tr("Delete"), lambda: self.delete(conversation))
        delete.setShortcut(Qt.Key.Key_Delete)
        menu.popup(self.list.viewport().mapToGlobal(at))

    def selected(self) -> int | None:
        """The selected conversation (not the current item: the window's Ctrl+N clears the
        selection and leaves that)."""
        selected = [item for item in self.list.selectedItems() if not item.data(_HEADER)]
        return int(selected[0].data(_ID)) if selected else None

    def rename(self, conversation_id: int) -> QInputDialog:
        """Ask for a new title (not modal: the window goes on behind it)."""
        (conversation,) = (c for c in self._conversations if c.id == conversation_id)
        dialog = QInputDialog(self)
        dialog.setWindowTitle(self.tr("Rename conversation"))
        dialog.setLabelText(self.tr("Title:"))
        dialog.setTextValue(conversation.title)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.textValueSelected.connect(
            lambda title: (
                self._background.run(self._rename(conversation_id, title))
                if title.strip()
                else None
            )
        )
        dialog.open()
        return dialog

    def export(self, conversation_id: int) -> QFileDialog:
        """Ask where to save the conversation as Markdown (not modal), then write it there."""
        (conversation,) = (c for c in self._conversations if c.id == conversation_id)
        dialog = QFileDialog(self, self.tr("Export conversation"))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter(self.tr("Markdown (*.md)"))
        dialog.setDefaultSuffix("md")
        dialog.selectFile(_file_name(conversation.title) + ".md")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(
            lambda path: self._background.run(self._export(conversation, Path(path)))
        )
        dialog.open()
        return dialog

    async def _export(self, conversation: ConversationInfo, path: Path) -> None:
        """The core's Markdown of it (as `docent conversations --export` writes), written off
        the GUI thread."""
        kept = await self._desk.open(conversation.id)
        markdown = conversation_markdown(conversation.title, kept.entries)
        await asyncio.to_thread(path.write_text, markdown, encoding="utf-8")
        self.exported.emit(str(path))

    async def _rename(self, conversation_id: int, title: str) -> None:
        await self._desk.rename(conversation_id, title)
        title = " ".join(title.split())
        self._conversations = [
            replace(c, title=title) if c.id == conversation_id else c for c in self._conversations
        ]
        self._show()
        self.renamed.emit(conversation_id, title)

    def delete(self, conversation_id: int) -> None:
        """Take it off the list now, and delete it once its Undo has run out (deleting another
        meanwhile deletes this one at once)."""
        if self._deleting is not None:
            self._delete_now()
        (conversation,) = (c for c in self._conversations if c.id == conversation_id)
        self._deleting = conversation_id
        self.undo_note.setText(self.tr("Deleted “{title}”").format(title=conversation.title))
        self.undo_bar.show()
        self.undo_timer.start()
        self._show()

    def undo_delete(self) -> None:
        self.undo_timer.stop()
        self._deleting = None
        self.undo_bar.hide()
        self._show()

    def _delete_now(self) -> None:
        self.undo_timer.stop()
        self.undo_bar.hide()
        if (deleting := self._deleting) is not None:
            self._deleting = None
            self._conversations = [c for c in self._conversations if c.id != deleting]
            self.delete_requested.emit(deleting)


class _Rows(QListWidget):
    """The list itself: Delete deletes the selected conversation, F2 renames it."""

    def __init__(self, owner: ConversationList) -> None:
        super().__init__()
        self._owner = owner

    def keyPressEvent(self, event: QKeyEvent) -> None:
        selected = self._owner.selected()
        if selected is not None and event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self._owner.delete(selected)
            return
        if selected is not None and event.key() == Qt.Key.Key_F2:
            self._owner.rename(selected)
            return
        super().keyPressEvent(event)


class _RowDelegate(QStyledItemDelegate):
    """A conversation as two lines, the title and a smaller muted detail; a group's label
    small, bold and muted above its rows."""

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        lines = option.fontMetrics.height()
        if index.data(_HEADER):
            return QSize(0, _small(option.font, bold=True)[1].height() + 2 * _PADDING)
        return QSize(0, lines + _small(option.font)[1].height() + 2 * _PADDING)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        painter.save()
        box = option.rect.adjusted(_PADDING, _PADDING, -_PADDING, -_PADDING)
        muted = muted_colour(option.palette, option.palette.color(QPalette.ColorRole.Base))
        if index.data(_HEADER):
            font, metrics = _small(option.font, bold=True)
            painter.setFont(font)
            painter.setPen(muted)
            painter.drawText(box, Qt.AlignmentFlag.AlignBottom, str(index.data()))
            painter.restore()
            return
        item.text = ""  # the frame, the selection and the focus only: the lines are drawn here
        style = option.widget.style() if option.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, option.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            colour = option.palette.highlightedText().color()
            muted = colour
        else:
            colour = option.palette.text().color()
        title_height = option.fontMetrics.height()
        painter.setPen(colour)
        painter.setFont(option.font)
        title = option.fontMetrics.elidedText(
            str(index.data()), Qt.TextElideMode.ElideRight, box.width()
        )
        painter.drawText(QRect(box.left(), box.top(), box.width(), title_height), 0, title)
        font, metrics = _small(option.font)
        painter.setFont(font)
        painter.setPen(muted)
        detail = metrics.elidedText(
            str(index.data(_DETAIL)), Qt.TextElideMode.ElideRight, box.width()
        )
        painter.drawText(
            QRect(box.left(), box.top() + title_height, box.width(), metrics.height()), 0, detail
        )
        painter.restore()


def _small(font: QFont, *, bold: bool = False) -> tuple[QFont, QFontMetrics]:
    small = QFont(font)
    small.setPointSizeF(font.pointSizeF() * 0.9)
    small.setBold(bold)
    return small, QFontMetrics(small)


def _file_name(title: str) -> str:
    """A file name from a title: the characters no file system takes become spaces."""
    return " ".join(re.sub(r'[\\/:*?"<>|\x00-\x1f]', " ", title).split()) or "conversation"
