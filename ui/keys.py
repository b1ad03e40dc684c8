"""The window's keyboard shortcuts, in one place: bound by the window, listed by the empty state.

Kept as names, made into QKeySequences only when used: a standard key's sequence comes from the
platform theme, which does not exist before the QApplication (reading it then crashes)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

Key = QKeySequence.StandardKey | str

ADD_DOCUMENTS: Key = QKeySequence.StandardKey.Open
SETTINGS: Key = "Ctrl+,"  # Qt's StandardKey.Preferences is empty on Windows and GNOME
STOP: Key = "Esc"
NEW_CONVERSATION: Key = QKeySequence.StandardKey.New

# What the empty state lists; Enter and Shift+Enter belong to the question box.
LISTED: tuple[tuple[Key, str], ...] = (
    (ADD_DOCUMENTS, "add documents"),
    ("Enter", "ask"),
    ("Shift+Enter", "new line"),
    (STOP, "stop the answer"),
    (NEW_CONVERSATION, "new conversation"),
    (SETTINGS, "settings"),
)


def sequence(key: Key) -> QKeySequence:
    """ "Ctrl" is ⌘ on a Mac."""
    return QKeySequence(key)


def native(key: Key) -> str:
    """A shortcut as this platform writes it (Ctrl+O here, ⌘O on a Mac)."""
    return sequence(key).toString(QKeySequence.SequenceFormat.NativeText)
