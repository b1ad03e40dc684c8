"""The keyboard shortcuts, listed in a small window (Ctrl+/), instead of a block of grey text on
the start page."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QVBoxLayout, QWidget

from ui.keys import LISTED, native
from ui.plain import plain_label


class ShortcutsDialog(QDialog):
    """No signals: it only lists the keys (`listed`: each key as this platform writes it, and
    what it does)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.listed = [
            (native(key), QCoreApplication.translate("keys", action)) for key, action in LISTED
        ]
        form = QFormLayout()
        for key, action in self.listed:
            shortcut = plain_label(key)
            font = shortcut.font()
            font.setBold(True)
            shortcut.setFont(font)
            form.addRow(shortcut, plain_label(action))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)


def show_shortcuts(parent: QWidget) -> ShortcutsDialog:
    dialog = ShortcutsDialog(parent)
    dialog.show()  # not modal: the keys can be tried with it open
    return dialog
