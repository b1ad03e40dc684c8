"""GUI tests: offscreen Qt, one qasync loop per test, and no leaked threads or timers."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QMimeData, QPoint, QPointF, QUrl
from PySide6.QtGui import (  # QtGui's Qt also holds mightBeRichText
    QDragEnterEvent,
    QDropEvent,
    Qt,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QWidget

from app.bootstrap import Docent
from ui.event_loop import EventLoop
from ui.garbage import GuiThreadGarbageCollector
from ui.window.main_window import MainWindow

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(scope="session", autouse=True)
def garbage_collected_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As in the app (ui/garbage.py): left to chance, Python's cycle collector may run on a
    worker thread (a keychain call, a to_thread) and destroy a closed loop's timer object there;
    Qt then crashes activating the dead timer."""
    collector = GuiThreadGarbageCollector()
    collector.start()
    yield
    collector.stop()


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    event_loop = EventLoop(qapp)  # the app's
    # Qt handlers that start tasks while no loop runs (a test's direct call) find this one.
    asyncio.set_event_loop(event_loop)
    own = _watched(event_loop)  # the loop's own wake-up pipe
    yield event_loop
    watched = _settle(event_loop, own)
    pending = [task for task in asyncio.all_tasks(event_loop) if not task.done()]
    asyncio.set_event_loop(None)
    event_loop.close()
    assert not pending, f"tasks left running: {pending}"
    assert not watched, f"file descriptors still watched by the loop: {watched}"


def _watched(event_loop: qasync.QEventLoop) -> set[int]:
    return {*event_loop._read_notifiers, *event_loop._write_notifiers}


def _settle(event_loop: qasync.QEventLoop, own: set[int]) -> set[int]:
    """Let closed transports (a stdio MCP child's pipes) run their last callbacks.

    A socket notifier left behind outlives the loop and fires for whatever reuses its file
    descriptor next (it crashed the keychain tests' D-Bus socket): none may be left.
    """
    for _ in range(100):  # a few loop turns; each one is a yield, not a wait
        if not (left := _watched(event_loop) - own):
            return set()
        event_loop.run_until_complete(asyncio.sleep(0))
    return left


@pytest.fixture
def docent(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[Docent]:
    """A keyword-only Docent (no embedder to load), opened on the test's loop."""
    instance = Docent.from_environment(embeddings=False)
    loop.run_until_complete(instance.open())
    yield instance
    loop.run_until_complete(instance.close())


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = {thread.ident for thread in threading.enumerate()}
    yield
    leaked = [
        thread.name
        for thread in threading.enumerate()
        if thread.ident not in before and thread.name.startswith("docent-")
    ]
    assert not leaked, f"threads left running: {leaked}"


def open_window(loop: qasync.QEventLoop, docent: Docent) -> MainWindow:
    """The main window on `docent` (opened here), shown, not started."""
    loop.run_until_complete(docent.open())
    window = MainWindow(docent)
    window.show()
    return window


def close_window(loop: qasync.QEventLoop, window: MainWindow) -> None:
    """Shut the window down as the app does, then its Docent."""
    # Not qtbot.addWidget: pytest-qt would delete the window before this shutdown runs.
    loop.run_until_complete(window.shutdown())
    loop.run_until_complete(window.docent.close())
    window.close()
    window.deleteLater()


def main_window(loop: qasync.QEventLoop, *, embeddings: bool = True) -> Iterator[MainWindow]:
    """For a fixture: the main window on the test's Docent, shown (not started), then shut down."""
    window = open_window(loop, Docent.from_environment(embeddings=embeddings))
    yield window
    close_window(loop, window)


def tooltip_shows(tooltip: str) -> str:
    """What a tooltip displays: Qt renders it as rich text whenever it looks like HTML."""
    if not Qt.mightBeRichText(tooltip):
        return tooltip
    document = QTextDocument()
    document.setHtml(tooltip)
    return document.toPlainText()


def dragged(*paths: Path) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    return mime


def drag_over(target: QWidget, *paths: Path) -> QDragEnterEvent:
    """Drag local files or folders over `target` (not dropped yet), as a file manager does."""
    mime = dragged(*paths)  # held here: the event does not own it
    event = QDragEnterEvent(
        QPoint(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    target.dragEnterEvent(event)
    return event


def drop(target: QWidget, *paths: Path) -> None:
    """Drop local files or folders on `target` (the window, the empty state), as a file
    manager does."""
    mime = dragged(*paths)
    event = QDropEvent(
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    target.dropEvent(event)
