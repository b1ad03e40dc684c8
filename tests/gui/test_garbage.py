"""Cyclic garbage (Qt objects among it) is collected on the GUI thread, never on a worker."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtCore import QObject, QTimer
from pytestqt.qtbot import QtBot

from ui.garbage import GuiThreadGarbageCollector


class Cycle:
    def __init__(self) -> None:
        self.me = self
        self.timer_owner = QObject()
        QTimer(self.timer_owner).start(60_000)  # a live timer: fatal if freed off-thread


def test_garbage_is_collected_by_the_gui_thread_on_its_timer(qtbot: QtBot) -> None:
    session_regime = gc.isenabled()  # the GUI tests run under a collector of their own
    gc.enable()  # as when the app starts
    collector = GuiThreadGarbageCollector(interval_ms=10)
    collected_on: list[str] = []
    try:
        collector.start()
        assert not gc.isenabled()
        cycle = Cycle()
        weakref.finalize(cycle, lambda: collected_on.append(threading.current_thread().name))
        del cycle
        # Live containers until generation 0 crosses its threshold, as in a busy app. (Counted,
        # not assumed: the count also drops as objects die, e.g. a previous test's window.)
        alive: list[list[None]] = []
        while gc.get_count()[0] <= gc.get_threshold()[0]:
            alive.append([])
        qtbot.waitUntil(lambda: bool(collected_on), timeout=10_000)
        del alive
    finally:
        collector.stop()
    assert gc.isenabled()
    assert collected_on == [threading.main_thread().name]
    if not session_regime:
        gc.disable()
