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
from app.bootstrap import EMBEDDED_LIBRARY, Docent
from app.index.shared import SharedLibraryError
from app.paths import Paths
from app.settings import Settings

# isort: split
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

from ui.event_loop import EventLoop
from ui.garbage import GuiThreadGarbageCollector
from ui.i18n import install_translators
from ui.theme import apply_theme
from ui.window.library_problem import OpeningNotice
from ui.window.main_window import MainWindow

NOTICE_AFTER_S = 0.5  # a shared library opens in milliseconds when its server is at hand


@contextlib.asynccontextmanager
async def open_window(
    docent: Docent, library_problem: tuple[str, SharedLibraryError] | None = None
) -> AsyncIterator[MainWindow]:
    """The main window, shown and started (library listed, cloud routes connecting); closed,
    with its background work, on the way out. `library_problem`: the shared library (its
    location) that could not be opened, and why: the window says so."""
    window = MainWindow(docent)
    try:
        if library_problem is not None:
            window.show_library_problem(*library_problem)
        window.show()
        await window.start()
        # What start-up made lives as long as the window: the GUI thread's collections
        # (ui.garbage) need not look at it again (the first one over it took 39 ms).
        gc.freeze()
        yield window
    finally:
        await window.shutdown()


async def open_docent(
    library: str | None = None,
    *,
    fall_back: bool = True,
    notice: Callable[[str], QWidget] = OpeningNotice,
) -> tuple[Docent, tuple[str, SharedLibraryError] | None]:
    """Docent opened on `library` (None: the one the settings name). A shared library that
    cannot be opened (the server unreachable, the password refused) must not keep the window
    from opening: the library on this computer opens instead, with where and why (unless not
    `fall_back`: then the SharedLibraryError is raised). A server slow to answer (away on the
    network: up to its connect timeout) gets a `notice` saying what Docent waits for."""
    docent = Docent.from_environment(library=library)
    opening = asyncio.ensure_future(docent.open())
    if docent.library.shared is not None:
        await asyncio.wait([opening], timeout=NOTICE_AFTER_S)
        if not opening.done():
            shown = notice(docent.library_location)
            shown.show()
            opening.add_done_callback(lambda _: shown.close())
    try:
        await opening
    except SharedLibraryError as error:
        await docent.close()
        if not fall_back:
            raise
        location = docent.library_location
        docent = Docent.from_environment(library=EMBEDDED_LIBRARY)
        await docent.open()
        return docent, (location, error)
    return docent, None


async def _main(app: QApplication) -> int:
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    # Before any widget is worded: opening a shared library may need a notice.
    install_translators(app, Settings.load(Paths.from_environment().settings_file).language)
    docent, problem = await open_docent()
    await run_windows(docent, problem, closed)
    return 0


async def run_windows(
    docent: Docent,
    problem: tuple[str, SharedLibraryError] | None,
    closed: asyncio.Event,
    started: Callable[[MainWindow], object] = lambda _: None,
) -> None:
    """Windows on `docent`'s library until `closed`; another library chosen in the window
    (Settings → Library) opens behind it, and its window replaces this one: the old one stays
    on screen until then (the last window closed would quit the app). `started` is given each
    window once it has started."""
    replaced: MainWindow | None = None
    try:
        while True:
            async with open_window(docent, problem) as window:
                if replaced is not None:
                    replaced.close()
                    replaced.deleteLater()
                    replaced = None
                started(window)
                while True:
                    chosen = await _library_chosen(window, closed)
                    if chosen is None:
                        return
                    try:
                        # Already on this computer's library, a failed retry changes nothing.
                        following = await open_docent(
                            chosen, fall_back=docent.library.shared is not None
                        )
                        break
                    except SharedLibraryError as error:
                        window.show_library_problem(chosen, error)
            replaced = window
            await docent.close()
            docent, problem = following
    finally:
        await docent.close()


async def _library_chosen(window: MainWindow, closed: asyncio.Event) -> str | None:
    """The library chosen in the window, or None once the app is closing."""
    chosen: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def choose(location: str) -> None:
        if not chosen.done():
            chosen.set_result(location)

    window.library_requested.connect(choose)
    closing = asyncio.ensure_future(closed.wait())
    try:
        await asyncio.wait((chosen, closing), return_when=asyncio.FIRST_COMPLETED)
    finally:
        closing.cancel()
        window.library_requested.disconnect(choose)
    return None if closed.is_set() or not chosen.done() else chosen.result()


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
