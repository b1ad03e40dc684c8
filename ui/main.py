"""The desktop app's entry point: one asyncio loop on the Qt event loop (qasync)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from importlib import resources
from typing import Any

# The core first: importing PySide6 hooks every later import and reads the module's source (for
# its `__feature__` switches), which cost an eighth of start-up for the core's modules.
from app.bootstrap import Docent

# isort: split
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from ui.event_loop import EventLoop
from ui.garbage import GuiThreadGarbageCollector
from ui.i18n import install_translators
from ui.theme import apply_theme
from ui.window.main_window import MainWindow


@contextlib.asynccontextmanager
async def open_window(docent: Docent) -> AsyncIterator[MainWindow]:
    """The main window, shown and started (library listed, cloud routes connecting); closed,
    with its background work, on the way out."""
    window = MainWindow(docent)
    try:
        window.show()
        await window.start()
        # What start-up made lives as long as the window: the GUI thread's collections
        # (ui.garbage) need not look at it again (the first one over it took 39 ms).
        gc.freeze()
        yield window
    finally:
        await window.shutdown()


async def _main(app: QApplication) -> int:
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    docent = Docent.from_environment()
    install_translators(app, docent.settings.language)  # before any widget is worded
    await docent.open()
    try:
        async with open_window(docent):
            await closed.wait()
    finally:
        await docent.close()
    return 0


def run(
    arguments: Sequence[str] = (),
    session: Callable[[QApplication], Coroutine[Any, Any, int]] = _main,
) -> int:
    """Run `session` (the app; or the smoke test) on the Qt event loop until it returns."""
    app = QApplication(sys.argv[:1] + list(arguments))
    app.setApplicationName("Docent")
    # The dock and task bar match the window to the installed docent.desktop (Wayland needs it).
    app.setDesktopFileName("docent")
    app.setWindowIcon(QIcon(str(resources.files("resources").joinpath("docent.svg"))))
    apply_theme(app)
    collector = GuiThreadGarbageCollector(app)
    collector.start()
    try:
        with asyncio.Runner(loop_factory=EventLoop) as runner:
            return runner.run(session(app))
    finally:
        collector.stop()
