"""Summarize from the documents panel with the real bundled model: the estimate and the route
choice first, then the summary streaming with its progress and clickable pages; opened again,
the stored summary shows at once; Stop ends one mid-way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.answering import Source
from tests.documents import BOOK_CHAPTERS, write_book_pdf
from tests.gui.conftest import main_window
from ui.answer.summary_dialog import SummaryDialog
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop)


def open_summary(window: MainWindow, loop: qasync.QEventLoop, path: Path) -> SummaryDialog:
    loop.run_until_complete(window.add_paths([path]))
    (document,) = loop.run_until_complete(window.docent.library.match_documents([str(path)]))
    window.documents.summarize_requested.emit(document.id)
    dialog = window.summaries[-1]
    loop.run_until_complete(dialog.preparing)
    return dialog


def test_summarize_shows_the_estimate_then_the_summary_with_progress_and_pages(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    book = write_book_pdf(tmp_path / "two-chapters.pdf", BOOK_CHAPTERS[:2])
    dialog = open_summary(window, loop, book)
    assert dialog.estimate_label.text().startswith("two-chapters.pdf: 2 sections, 3 steps, up to ")
    choices = [dialog.route.itemText(i) for i in range(dialog.route.count())]
    assert choices == [
        "Local model: time unknown (run the speed check in Settings)",
        "Cloud: no cloud configured",
    ]
    assert dialog.start_button.isEnabled()
    steps: list[tuple[int, int]] = []
    dialog.step_started.connect(lambda step, total: steps.append((step, total)))
    dialog.start_button.click()
    assert dialog.summarizing is not None
    loop.run_until_complete(dialog.summarizing)

    assert steps == [(1, 3), (2, 3), (3, 3)]
    assert dialog.step_label.text() == "Done."
    (summary,) = dialog.turns.cards
    text = summary.answer.toPlainText()
    assert "Chapter 1: The Harbour Lighthouse (pages 1–10)" in text
    assert "Brask" in text
    assert "Quillan" in text
    assert "Overall: " in text
    assert summary.badge.text().startswith("route: local (qwen2.5-coder-0.5b)")
    cited = dialog.turns.cited_sources()
    assert cited
    assert all(1 <= source.page <= 20 for source in cited)

    clicked: list[Source] = []
    dialog.source_clicked.connect(clicked.append)
    first = summary.sources.cards[0]
    first.clicked.emit(first.source)
    assert clicked == [cited[0]]
    (preview,) = window.previews  # the window shows the cited page
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)

    # Opened again: the stored summary, at once, without choosing a route.
    again = open_summary(window, loop, book)
    assert again.estimate_label.text() == "This summary is stored: it opens at once."
    assert again.summarizing is not None
    loop.run_until_complete(again.summarizing)
    (stored,) = again.turns.cards
    assert "Brask" in stored.answer.toPlainText()
    assert stored.badge.text().startswith("route: cache (qwen2.5-coder-0.5b)")


def test_stop_ends_a_summary_mid_way_and_keeps_nothing(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    book = write_book_pdf(tmp_path / "book.pdf", BOOK_CHAPTERS[:3])
    dialog = open_summary(window, loop, book)
    dialog.step_started.connect(lambda step, _total: step == 2 and dialog.stop_button.click())
    dialog.start_button.click()
    assert dialog.summarizing is not None
    loop.run_until_complete(dialog.summarizing)
    assert dialog.step_label.text() == "Stopped."
    assert dialog.turns.cards[0].answer.toPlainText().endswith("[stopped]")
    assert dialog.job is not None
    assert not loop.run_until_complete(dialog.job.summarizer.is_stored(dialog.job.plan))
