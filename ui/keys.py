"""The window's keyboard shortcuts, in one place: bound by the window, listed by ui.shortcuts.

Kept as names, made into QKeySequences only when used: a standard key's sequence comes from the
platform theme, which does not exist before the QApplication (reading it then crashes)."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtGui import QKeySequence

Key = QKeySequence.StandardKey | str

ADD_DOCUMENTS: Key = QKeySequence.StandardKey.Open
SETTINGS: Key = "Ctrl+,"  # Qt's StandardKey.Preferences is empty on Windows and GNOME
STOP: Key = "Esc"
NEW_CONVERSATION: Key = QKeySequence.StandardKey.New
SEARCH_CONVERSATIONS: Key = "Ctrl+K"  # as in the chat apps people know
RENAME: Key = "F2"
SHORTCUTS: Key = "Ctrl+/"
# A question's answers (its versions), where the focus is in its card; an answer's own Alt+arrows
# go nowhere (it has no link history to go back in).
PREVIOUS_ANSWER: Key = "Alt+Left"
NEXT_ANSWER: Key = "Alt+Right"

# What the shortcuts dialog lists (translated there, in the "keys" context); Enter and
# Shift+Enter belong to the question box.
LISTED = cast(  # QT_TRANSLATE_NOOP marks the words for lupdate; typed as returning object
    tuple[tuple[Key, str], ...],
    (
        (ADD_DOCUMENTS, QT_TRANSLATE_NOOP("keys", "add documents")),
        ("Enter", QT_TRANSLATE_NOOP("keys", "ask")),
        ("Shift+Enter", QT_TRANSLATE_NOOP("keys", "new line")),
        (STOP, QT_TRANSLATE_NOOP("keys", "stop the answer")),
        (NEW_CONVERSATION, QT_TRANSLATE_NOOP("keys", "new conversation")),
        (SEARCH_CONVERSATIONS, QT_TRANSLATE_NOOP("keys", "search conversations")),
        (RENAME, QT_TRANSLATE_NOOP("keys", "rename the conversation")),
        (PREVIOUS_ANSWER, QT_TRANSLATE_NOOP("keys", "previous answer to the question")),
        (NEXT_ANSWER, QT_TRANSLATE_NOOP("keys", "next answer to the question")),
        (SETTINGS, QT_TRANSLATE_NOOP("keys", "settings")),
        (SHORTCUTS, QT_TRANSLATE_NOOP("keys", "keyboard shortcuts")),
    ),
)


def sequence(key: Key) -> QKeySequence:
    """ "Ctrl" is ⌘ on a Mac."""
    return QKeySequence(key)


def native(key: Key) -> str:
    """A shortcut as this platform writes it (Ctrl+O here, ⌘O on a Mac)."""
    return sequence(key).toString(QKeySequence.SequenceFormat.NativeText)
