"""Watched folders in the window: documents added, changed or removed there reach the index by
themselves, also when that happened while Docent was closed; folders are chosen in Settings."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

from app.bootstrap import Docent
from app.index import DocumentInfo
from app.paths import Paths
from app.settings import Settings
from tests.documents import write_pdf
from tests.gui.conftest import close_window, open_window
from ui.window.main_window import MainWindow


class Folders:
    """Changes on disk, each awaited until the window has synced what the test expects."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.documents: dict[str, DocumentInfo] = {}

    async def read(self) -> None:
        self.documents = {d.path: d for d in await self.window.docent.library.documents()}

    async def after(self, action: Callable[[], object], done: Callable[[], bool]) -> None:
        synced = asyncio.Event()
        self.window.folders_synced.connect(synced.set)
        try:
            action()
            await self.read()
            while not done():
                synced.clear()
                await asyncio.wait_for(synced.wait(), 30)
                await self.read()
        finally:
            self.window.folders_synced.disconnect(synced.set)


def test_watched_folders_follow_changes_live_and_while_closed(
    qapp: QApplication, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    report = write_pdf(folder / "report.pdf")
    notes = folder / "notes.md"
    notes.write_text("# Notes\n\nInvoices are kept seven years.\n")
    arrived, later = folder / "arrived.pdf", folder / "later.md"
    paths = Paths.from_environment()
    Settings.model_validate({"library": {"watched_folders": [str(folder)]}}).save(
        paths.settings_file
    )

    # Tasks that start() spawns must be awaited in the same run of the loop.
    async def first_session(window: MainWindow, disk: Folders) -> None:
        await window.start()
        await disk.after(lambda: None, lambda: str(notes) in disk.documents)
        assert str(report) in disk.documents
        assert window.folder_watch is not None
        await asyncio.wait_for(window.folder_watch.ready.wait(), 20)

        await disk.after(
            lambda: os.replace(write_pdf(tmp_path / "draft.pdf"), arrived),  # a finished copy
            lambda: str(arrived) in disk.documents,
        )
        assert window.documents.status(arrived) != "Queued"
        before = disk.documents[str(notes)].sha256
        await disk.after(
            lambda: notes.write_text("# Notes\n\nInvoices are kept ten years.\n"),
            lambda: disk.documents[str(notes)].sha256 != before,
        )
        await disk.after(report.unlink, lambda: str(report) not in disk.documents)
        assert str(report) not in window.documents._rows

    window = open_window(loop, Docent.from_environment(embeddings=False))
    try:
        loop.run_until_complete(first_session(window, Folders(window)))
    finally:
        close_window(loop, window)

    # While Docent is closed: one file goes, one arrives.
    arrived.unlink()
    later.write_text("# Later\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "memo.txt").write_text("A memo.\n")

    async def second_session(window: MainWindow, disk: Folders) -> None:
        await window.start()
        await disk.after(lambda: None, lambda: str(later) in disk.documents)
        assert str(arrived) not in disk.documents
        assert str(notes) in disk.documents
        # Settings → Watched folders: adding one indexes what it holds.
        dialog = window.open_settings()
        dialog.library.add(str(other))
        assert await dialog.submit() is True
        await disk.after(lambda: None, lambda: str(other / "memo.txt") in disk.documents)

    window = open_window(loop, Docent.from_environment(embeddings=False))
    try:
        loop.run_until_complete(second_session(window, Folders(window)))
    finally:
        close_window(loop, window)
    assert Settings.load(paths.settings_file).library.watched_folders == [str(folder), str(other)]
