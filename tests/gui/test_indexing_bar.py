"""Above the documents: a folder's progress with pages/s and the time left, redrawn a few times
a second however fast the queue reports, and Pause / Resume, which hold the real queue."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.intake import IndexingProgress
from tests.documents import write_long_pdf
from tests.gui.conftest import main_window
from tests.gui.waiting import until
from ui.library.indexing_bar import IndexingBar
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def test_a_flood_of_progress_is_drawn_at_once_and_then_a_few_times_a_second(
    qtbot: QtBot,
) -> None:
    bar = IndexingBar()
    qtbot.addWidget(bar)
    assert bar.isHidden()
    drawn: list[str] = []
    bar.shown.connect(lambda: drawn.append(bar.label.text()))
    for done in range(1, 101):  # a folder of small notes reports hundreds of times a second
        bar.show_progress(IndexingProgress("reading", done, 1000, 48.0, 170.0))
    assert drawn == ["1/1,000 files · 48 pages/s · about 3 min left"]
    assert not bar.isHidden()
    with qtbot.waitSignal(bar.shown):  # the latest, once the redraw comes due
        pass
    assert drawn[1:] == ["100/1,000 files · 48 pages/s · about 3 min left"]
    bar.finished()
    assert bar.isHidden()


def test_pause_holds_the_folder_across_the_bar_and_resume_finishes_it(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    files = [write_long_pdf(folder / f"ledger-{n:02}.pdf", pages=60) for n in range(60)]
    bar = window.indexing_bar
    intake = window.docent.intake

    async def scenario() -> None:
        indexing = window.add_paths([folder])
        await until(bar.shown, lambda: "left" in bar.label.text())  # the time left is shown
        assert "pages/s" in bar.label.text()
        assert bar.button.text() == "Pause"
        bar.button.click()
        await until(bar.shown, lambda: bar.paused)
        assert bar.label.text().startswith("Indexing paused · ")
        assert bar.button.text() == "Resume"
        assert intake.paused
        assert await window.docent.library.queue_paused()  # kept for the next start
        waiting = len((await window.docent.library.queue()).left)
        assert 0 < waiting < len(files)
        # Said as paused, with the file being read then still among them (it ends first).
        shown = re.fullmatch(r"Indexing paused · (\d+) files wait", bar.label.text())
        assert shown is not None
        assert int(shown[1]) in (waiting, waiting + 1)
        bar.button.click()
        await until(bar.shown, lambda: not bar.paused)
        assert not await window.docent.library.queue_paused()
        await indexing  # until the window shows the folder indexed
        assert bar.isHidden()

    loop.run_until_complete(scenario())
    documents = loop.run_until_complete(window.docent.library.documents())
    assert sorted(d.path for d in documents) == [str(f) for f in files]
    assert not loop.run_until_complete(window.docent.library.queue()).left


@pytest.mark.parametrize(
    "progress",
    [
        IndexingProgress("reading", 312, 1000, 48.0, 170.0),
        IndexingProgress("reading", 3, 9, 4.26, 5.0, embedding_after=True),
        IndexingProgress("reading", 1, 2, None, None),
        IndexingProgress("embedding", 40, 1200, None, 42.0),
        IndexingProgress("embedding", 40, 1200, None, 3000.0),
        IndexingProgress("embedding", 40, 1200, None, 7300.0),
        IndexingProgress("embedding", 40, 1200, None, 7200.0),
    ],
)
def test_the_bar_words_progress_as_the_cli_does_in_the_windows_language(
    qtbot: QtBot, progress: IndexingProgress
) -> None:
    """The window words the core's numbers itself (so a translation can): in English, the
    very line the CLI prints."""
    bar = IndexingBar()
    qtbot.addWidget(bar)
    assert bar.describe(progress) == progress.describe()
