import sys

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot


def test_void_qt_calls_keep_the_reference_count_of_none(qtbot: QtBot) -> None:
    """PySide6 6.12.0 on Python 3.11 dropped a reference to None per void call (fatal later)."""
    label = QLabel()
    qtbot.addWidget(label)
    before = sys.getrefcount(None)
    for _ in range(500):
        label.setText("streamed token")
    assert sys.getrefcount(None) >= before - 10
