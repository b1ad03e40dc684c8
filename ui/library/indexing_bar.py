"""Above the documents, while files are queued: how far indexing is and how long it will take
("312/1,000 files · 48 pages/s · about 3 min left", worded here from the core's numbers, in the
window's language), and Pause / Resume."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from app.intake import IndexingProgress
from ui.plain import plain_label

# The queue reports after every file and every few pages (a folder of small notes: hundreds a
# second); the text changes at most this often, so showing it never adds up to a stall.
REDRAW_MS = 250


class IndexingBar(QWidget):
    """Hidden until something is queued. Signals: pause_requested(), resume_requested() — the
    button, by what it shows; shown() — after the text changed (tests wait on it)."""

    pause_requested = Signal()
    resume_requested = Signal()
    shown = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.label = plain_label()
        self.label.setAccessibleName(self.tr("Indexing progress"))
        self.button = QPushButton(self.tr("Pause"))
        self.button.setToolTip(
            self.tr("Pause indexing; it stays paused until resumed, even after a quit")
        )
        self.button.clicked.connect(self._clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self._progress: IndexingProgress | None = None
        self._paused = False
        self._waiting = 0
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._draw_if_changed)
        self._changed = False
        self.hide()

    @property
    def paused(self) -> bool:
        return self._paused

    def show_progress(self, progress: IndexingProgress) -> None:
        self._progress = progress
        self._draw_soon()

    def show_paused(self, paused: bool, waiting: int) -> None:
        self._paused, self._waiting = paused, waiting
        self._draw()  # the user's own action: at once

    def finished(self) -> None:
        """The queue is idle: nothing left to show, unless indexing stays paused."""
        self._progress = None
        self._redraw.stop()
        self._changed = False
        if self._paused:
            self._draw()
        else:
            self.hide()

    def _draw_soon(self) -> None:
        if self._redraw.isActive():
            self._changed = True
        else:  # the first change in a while is drawn at once, later ones once the timer fires
            self._draw()
            self._redraw.start()

    def _draw_if_changed(self) -> None:
        if self._changed:
            self._changed = False
            self._draw()
            self._redraw.start()

    def _draw(self) -> None:
        progress = self._progress
        if self._paused:
            text = self.tr("Indexing paused")
            if self._waiting == 1:
                text = self.tr("Indexing paused · 1 file waits")
            elif self._waiting:
                text = self.tr("Indexing paused · {n} files wait").format(n=f"{self._waiting:,}")
        else:
            text = self.describe(progress) if progress else self.tr("Indexing…")
        self.label.setText(text)
        self.button.setText(self.tr("Resume") if self._paused else self.tr("Pause"))
        self.show()
        self.shown.emit()

    def describe(self, progress: IndexingProgress) -> str:
        """ "312/1,000 files · 48 pages/s · about 3 min left" (the core's describe(), which
        the CLI prints, in the window's language)."""
        done, total = f"{progress.done:,}", f"{progress.total:,}"
        if progress.stage == "reading":
            parts = [self.tr("{done}/{total} files").format(done=done, total=total)]
        else:
            parts = [self.tr("{done}/{total} chunks embedded").format(done=done, total=total)]
        if (rate := progress.pages_per_s) is not None:
            pages = f"{rate:.{0 if rate >= 10 else 1}f}"
            parts.append(self.tr("{rate} pages/s").format(rate=pages))
        if progress.eta_s is not None:
            left = self._time_left(progress.eta_s)
            if progress.embedding_after:
                left = self.tr("{left}, then embedding").format(left=left)
            parts.append(left)
        return " · ".join(parts)

    def _time_left(self, seconds: float) -> str:
        hours, minutes = divmod(round(seconds / 60), 60)
        if seconds < 10:
            return self.tr("a few seconds left")
        if seconds < 60:
            return self.tr("about {n} s left").format(n=5 * round(seconds / 5))
        if not hours:
            return self.tr("about {n} min left").format(n=minutes)
        if minutes:
            return self.tr("about {h} h {m} min left").format(h=hours, m=minutes)
        return self.tr("about {h} h left").format(h=hours)

    def _clicked(self) -> None:
        (self.resume_requested if self._paused else self.pause_requested).emit()
