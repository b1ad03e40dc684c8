"""After a drop, a banner above the conversation says how far the documents are, what can be
done meanwhile and where they are in the library; it sums up the batch when it ends."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.documents import write_encrypted_pdf, write_pdf
from tests.gui.conftest import drop, main_window
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def test_a_drop_is_told_file_by_file_and_summed_up_then_shown_in_the_library(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    locked = write_encrypted_pdf(tmp_path / "locked.pdf")
    banner = window.adding
    assert banner.isHidden()
    told: list[str] = []
    banner.shown.connect(lambda: told.append(banner.label.text()))

    drop(window, report, locked)
    assert banner.isVisible()  # at once, before the queue starts
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)

    assert told[0] == (
        "Adding 2 documents — 0 ready, 2 reading. "
        "You can ask once the first is ready; answers improve as they finish."
    )
    # The file being read, page by page (the report has 4 pages).
    assert any(re.search(r"— 0 ready, 2 reading \(page \d/4\)\. ", text) for text in told)
    assert (
        "Adding 2 documents — 1 ready, 1 reading. You can ask now; answers improve as they finish."
    ) in told
    assert any(text.startswith("Adding 2 documents — 1 ready, 1 failed. ") for text in told)
    assert told[-1] == banner.label.text() == "1 document added, 1 failed"
    assert banner.isVisible()  # the summary stays a few seconds

    # "Show in library" selects the dropped documents' rows, even those a filter hid.
    window.library.filter.setText("no such name")
    assert window.documents.row(report).isHidden()
    banner.show_button.click()
    assert window.library.filter.text() == ""
    selected = {item.text(0) for item in window.documents.selectedItems()}
    assert selected == {"report.pdf", "locked.pdf"}
    assert window.documents.hasFocus() or not window.isActiveWindow()

    banner.linger.setInterval(10)  # then it goes by itself
    banner.linger.start()
    qtbot.waitUntil(banner.isHidden)


def test_the_banner_can_be_dismissed_and_a_reindex_raises_none(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    drop(window, report)
    assert window.adding.isVisible()
    window.adding.close_button.click()
    assert window.adding.isHidden()
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert window.adding.isHidden()  # dismissed: the rest of the batch is not told here

    window.documents.reindex_requested.emit([str(report)])
    assert window.adding.isHidden()
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert window.adding.isHidden()


def test_batches_the_user_did_not_add_tell_nothing(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    """The guide Docent adds on a first run, a re-index: no banner, not even a "0 documents
    added" summary for a batch it never followed."""
    report = write_pdf(tmp_path / "report.pdf")
    told: list[str] = []
    window.adding.shown.connect(lambda: told.append(window.adding.label.text()))
    loop.run_until_complete(window.add_paths([report], announce=False))
    window.documents.reindex_requested.emit([str(report)])
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert told == []
    assert window.adding.isHidden()
