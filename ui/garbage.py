"""Python's cycle collector runs on whichever thread happens to allocate when a threshold is
crossed: a keychain call, a `to_thread` worker, an MCP session's reader. If it frees a Qt object
there, Qt warns "Timers cannot be stopped from another thread" and may later crash activating a
dead timer. So, as qutebrowser does, the GUI thread collects instead, on a timer."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer


class GuiThreadGarbageCollector(QObject):
    """Disables automatic collection while running; collects like gc would, on this thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 1000) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect)
        self._was_enabled = gc.isenabled()

    def start(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Give automatic collection back as it was (nested collectors leave it off)."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()

    def collect(self) -> int:
        """The generation gc itself would collect now (-1: none), collected here."""
        counts = gc.get_count()
        generation = -1
        for candidate in (2, 1, 0):
            if counts[candidate] > self._thresholds[candidate]:
                generation = candidate
                break
        if generation >= 0:
            gc.collect(generation)
        return generation
