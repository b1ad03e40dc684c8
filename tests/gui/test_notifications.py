"""Notices outlive the status bar until cleared; a long job that ends in the background asks for
attention, a short one or one the user watches does not."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from ui.window.notifications import LONG_JOB_S, LongJobNotifier, NotificationsButton


def test_the_bell_keeps_notices_until_they_are_cleared(qtbot: QtBot) -> None:
    bell = NotificationsButton()
    qtbot.addWidget(bell)
    assert not bell.isEnabled()
    assert bell.accessibleName() == "No notifications"
    with qtbot.waitSignal(bell.changed) as counted:
        bell.add("report.pdf failed: the file is encrypted")
    assert counted.args == [1]
    bell.add("scan.pdf, page 3: OCR failed")
    assert bell.isEnabled()
    assert bell.text() == "2"
    assert bell.accessibleName() == "Notifications: 2"
    bell.menu().aboutToShow.emit()
    listed = [action.text() for action in bell.menu().actions() if action.text()]
    assert listed[0].endswith("scan.pdf, page 3: OCR failed")  # newest first
    assert listed[1].endswith("report.pdf failed: the file is encrypted")
    clear = next(action for action in bell.menu().actions() if action.text() == "Clear all")
    clear.trigger()
    assert bell.notices == []
    assert bell.text() == ""


def test_a_long_job_ending_in_the_background_asks_for_attention(qtbot: QtBot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    notifier = LongJobNotifier(window)
    assert not window.isActiveWindow()  # never shown: in the background
    assert not notifier.finished("Summary of report.pdf is ready", LONG_JOB_S / 2)
    with qtbot.waitSignal(notifier.alerted) as alerted:
        assert notifier.finished("Summary of report.pdf is ready", LONG_JOB_S * 2)
    assert alerted.args == ["Summary of report.pdf is ready"]


def test_a_job_the_user_watches_end_does_not_interrupt(qtbot: QtBot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    notifier = LongJobNotifier(window)
    with qtbot.assertNotEmitted(notifier.alerted):
        assert not notifier.finished("Your answer is ready", LONG_JOB_S * 2)
