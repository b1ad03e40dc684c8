"""Above the conversation after documents are added: "Adding 3 documents — 1 ready, 2 reading
(page 14/60). You can ask now; answers improve as they finish.", with "Show in library" and a
close button; at the end "3 documents added, 1 failed" for a few seconds.

It follows the batches it is given (`follow`) through the intake's events the window already
receives: the queue runs one batch at a time, so the files started between a followed batch's
BatchStarted and BatchFinished are that batch's, folders' contents included."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QStyle, QToolButton, QWidget

from app.intake import (
    BatchFinished,
    BatchStarted,
    FileFailed,
    FileIndexed,
    FileSkipped,
    FileStarted,
    IndexingProgress,
    IntakeEvent,
    PagesParsed,
)
from ui.looks import banner_card, link_button
from ui.plain import plain_label

LINGER_MS = 6000  # how long the closing summary stays


class AddingBanner(QWidget):
    """Hidden until a followed batch runs. Signals: show_requested(list) — "Show in library",
    with the paths of the files added; shown() — after the text changed (tests wait on it)."""

    show_requested = Signal(list)
    shown = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setAccessibleName(self.tr("Adding documents"))
        self.label = plain_label()
        self.label.setWordWrap(True)
        self.label.setAccessibleName(self.tr("Adding documents"))
        self.show_button = link_button(self.tr("Show in library"))
        self.show_button.clicked.connect(lambda: self.show_requested.emit(list(self._states)))
        self.close_button = QToolButton()
        self.close_button.setAutoRaise(True)
        self.close_button.setIcon(
            self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton)
        )
        self.close_button.setAccessibleName(self.tr("Dismiss"))
        self.close_button.setToolTip(self.tr("Dismiss"))
        self.close_button.clicked.connect(self.dismiss)
        layout = banner_card(self, "addingBanner", right_margin=6)  # the close button's edge
        layout.addWidget(self.label, 1)
        layout.addWidget(self.show_button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.linger = QTimer(self)
        self.linger.setSingleShot(True)
        self.linger.setInterval(LINGER_MS)
        self.linger.timeout.connect(self.hide)
        self._reset()
        self.hide()

    def _reset(self) -> None:
        self._followed: dict[int, int] = {}  # batch: the documents expected, until it ends
        self._running: int | None = None  # the followed batch the queue works on
        self._listed = False  # the running batch's files are counted (its folders walked)
        self._states: dict[str, str] = {}  # path: "reading", "ready", "failed"
        self._unstarted = 0  # the running batch's files not started yet
        self._pages: tuple[int, int] | None = None  # the file being read
        self._added = self._unchanged = self._failed = 0
        self._dismissed = False

    def follow(self, batch: int, expected: int) -> None:
        """Tell about `batch`, of about `expected` documents (the paths given: a folder's
        files are counted once the queue has listed them)."""
        if not self._followed:  # a new round: what an earlier one said is over
            self.linger.stop()
            self._reset()
        self._followed[batch] = expected
        self._dismissed = False
        self._draw()

    def dismiss(self) -> None:
        self._dismissed = True
        self.linger.stop()
        self.hide()

    def apply(self, event: IntakeEvent) -> None:
        match event:
            case BatchStarted(batch=batch):
                self._running = batch if batch in self._followed else None
                self._listed = False
                if self._running is None:  # not the user's (the guide, a watched folder)
                    return
            case _ if self._running is None:
                return
            case IndexingProgress(stage="reading", done=done, total=total) if not self._listed:
                self._listed = True  # the files are known: counted as they start from here on
                self._followed[self._running] = 0
                self._unstarted = total - done
            case FileStarted(path=path, position=position, total=total):
                self._listed = True
                self._followed[self._running] = 0
                self._unstarted = total - position
                self._states[str(path)] = "reading"
                self._pages = None
            case PagesParsed(done=done, total=total):
                self._pages = (done, total)
            case FileIndexed(path=path) | FileSkipped(path=path):
                self._settle(str(path), "ready")
            case FileFailed(path=path):
                self._settle(str(path), "failed")
            case BatchFinished(batch=batch, indexed=indexed, skipped=skipped, failed=failed):
                self._added += indexed
                self._unchanged += skipped
                self._failed += failed
                self._followed.pop(batch, None)
                self._running = None
                self._unstarted = 0
            case _:
                return
        self._draw()

    def _settle(self, path: str, state: str) -> None:
        assert self._running is not None
        if path not in self._states:  # told before reading began (a missing path): counted
            expected = self._followed[self._running]
            self._followed[self._running] = max(0, expected - 1)
        self._states[path] = state
        self._pages = None

    def _draw(self) -> None:
        if self._followed:
            text = self._progress_text()
        else:
            text = self._summary()
            self.linger.start()
        if text != self.label.text():
            self.label.setText(text)
        if not self._dismissed:
            self.show()
        self.shown.emit()

    def _progress_text(self) -> str:
        states = list(self._states.values())
        ready, failed = states.count("ready"), states.count("failed")
        documents = len(states) + self._unstarted + sum(self._followed.values())
        reading = documents - ready - failed
        adding = (
            self.tr("Adding 1 document")
            if documents == 1
            else self.tr("Adding {n} documents").format(n=documents)
        )
        parts = [self.tr("{n} ready").format(n=ready)]
        if reading:
            parts.append(self.tr("{n} reading").format(n=reading))
            if self._pages is not None:
                page = self.tr("(page {done}/{total})").format(
                    done=self._pages[0], total=self._pages[1]
                )
                parts[-1] += " " + page
        if failed:
            parts.append(self.tr("{n} failed").format(n=failed))
        then = (
            self.tr("You can ask now; answers improve as they finish.")
            if ready
            else self.tr("You can ask once the first is ready; answers improve as they finish.")
        )
        return f"{adding} — {', '.join(parts)}. {then}"

    def _summary(self) -> str:
        added = (
            self.tr("1 document added")
            if self._added == 1
            else self.tr("{n} documents added").format(n=self._added)
        )
        parts = [added]
        if self._unchanged:
            parts.append(self.tr("{n} already in the library").format(n=self._unchanged))
        if self._failed:
            parts.append(self.tr("{n} failed").format(n=self._failed))
        return ", ".join(parts)
