"""Messages that must outlive the status bar: a file that failed, an OCR page that could not be
read, a watched folder gone. The status bar shows each for a moment; the notices button keeps
them until the user clears them. And a long job that ends while the window is in the background (an
answer, a summary, a big batch) asks for attention: the task bar flashes and, where the desktop
has a notification area, a notification says what finished."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QMenu,
    QStyle,
    QSystemTrayIcon,
    QToolButton,
    QWidget,
)

from ui.plain import plain_tooltip

LONG_JOB_S = 10.0  # shorter jobs end while the user still waits on them


@dataclass(frozen=True, slots=True)
class Notice:
    text: str
    at: datetime


class NotificationsButton(QToolButton):
    """A button with the count of notices kept; its menu lists them, newest first, and clears
    them. Signal: changed(int) — how many are kept now."""

    changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.notices: list[Notice] = []
        self.setAutoRaise(True)
        # The style's own icon: an emoji bell needs a colour-emoji font many desktops lack.
        self.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        self.menu().aboutToShow.connect(self._fill_menu)
        self._show_count()

    def add(self, text: str) -> None:
        self.notices.append(Notice(text, datetime.now()))
        self._show_count()

    def clear(self) -> None:
        self.notices.clear()
        self._show_count()

    def _show_count(self) -> None:
        count = len(self.notices)
        self.setText(str(count) if count else "")
        name = (
            QCoreApplication.translate("Notifications", "Notifications: {count}").format(
                count=count
            )
            if count
            else QCoreApplication.translate("Notifications", "No notifications")
        )
        self.setAccessibleName(name)
        self.setToolTip(plain_tooltip(name))
        self.setEnabled(count > 0)
        self.changed.emit(count)

    def _fill_menu(self) -> None:
        menu = self.menu()
        menu.clear()
        for notice in reversed(self.notices):
            action = menu.addAction(f"{notice.at:%H:%M}  {notice.text}")
            action.setToolTip(plain_tooltip(notice.text))
        menu.addSeparator()
        menu.addAction(QCoreApplication.translate("Notifications", "Clear all"), self.clear)


class LongJobNotifier(QObject):
    """Asks for attention when a long job ends while `window` is not the active window.
    Signal: alerted(str) — the message, once attention was asked for."""

    alerted = Signal(str)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._tray: QSystemTrayIcon | None = None
        window.installEventFilter(self)

    def finished(self, message: str, seconds: float) -> bool:
        """`message` ("Summary of report.pdf is ready") after a job of `seconds`: whether the
        user was asked to look."""
        if seconds < LONG_JOB_S or self._window.isActiveWindow():
            return False
        QApplication.alert(self._window)  # the task bar entry flashes
        if QSystemTrayIcon.isSystemTrayAvailable() and QSystemTrayIcon.supportsMessages():
            # The icon is there only to carry the message; it goes when the window is back.
            if self._tray is None:
                self._tray = QSystemTrayIcon(self._window.windowIcon(), self)
            self._tray.show()
            self._tray.showMessage("Docent", message)
        self.alerted.emit(message)
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.WindowActivate and self._tray is not None:
            self._tray.hide()
        return False
