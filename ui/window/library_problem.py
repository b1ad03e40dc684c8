"""Above the conversation when the shared library named in Settings could not be opened: what
went wrong in the server's words, that the window shows the library on this computer instead
(so nothing added now goes where the user thinks), and "Try again" / "Settings…". Before it, a
notice while a slow server is being waited for."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QWidget

from ui.looks import banner_card, link_button
from ui.plain import plain_label


class LibraryProblemBar(QWidget):
    """Hidden until `show_problem`. Signals: retry_requested(), settings_requested(); shown()
    — after the words changed (tests wait on it)."""

    retry_requested = Signal()
    settings_requested = Signal()
    shown = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.label = plain_label()  # the server's words: a host name, a role
        self.label.setWordWrap(True)
        # Selectable, to copy the server's words into a message to its administrator.
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAccessibleName(self.tr("The shared library could not be opened"))
        self.retry_button = link_button(self.tr("Try again"))
        self.retry_button.clicked.connect(self.retry_requested)
        self.settings_button = link_button(self.tr("Settings…"))
        self.settings_button.clicked.connect(self.settings_requested)
        layout = banner_card(self, "libraryProblem")
        layout.addWidget(self.label, 1)
        for button in (self.retry_button, self.settings_button):
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def show_problem(self, location: str, error: str) -> None:
        """`error`: the reason in the server's words, without the location."""
        reason = error.strip()
        if not reason.endswith((".", "?", "!")):
            reason += "."
        self.label.setText(
            self.tr(
                "The shared library {location} could not be opened: {reason} This window shows "
                "the library on this computer; documents added now go there."
            ).format(location=location, reason=reason)
        )
        self.setAccessibleName(self.label.text())
        self.show()
        self.shown.emit()


class OpeningNotice(QLabel):
    """A small window while a shared library's server is slow to answer at start (no window
    would show for up to its connect timeout): what Docent waits for."""

    def __init__(self, location: str) -> None:
        super().__init__()
        self.setWindowTitle("Docent")
        self.setText(self.tr("Opening the shared library {location}…").format(location=location))
        self.setMargin(24)
        # The app quits when its last window closes: this one is not the app's window.
        self.setAttribute(Qt.WidgetAttribute.WA_QuitOnClose, False)
