"""The documents panel: names kept whole to their end, size, pages and when each document was
indexed, a progress bar for the step that runs (reading, OCR, embedding), each state as a mark
and a word; above it "Library · 3", a filter and Add."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from app import bootstrap
from app.embeddings import FastEngine, SupervisedEmbedder
from app.index import DocumentInfo
from app.intake import FileFailed, FileIndexed, FileStarted, OcrProgress, PagesParsed
from tests.documents import write_pdf
from tests.gui.conftest import drop, main_window, tooltip_shows
from tests.integration.test_embedder_crash import crash_mid_batch
from ui.library.documents_panel import (
    BAR_HEIGHT,
    INDEXED,
    NAME,
    PAGES,
    SIZE,
    STATUS,
    DocumentsPanel,
)
from ui.looks import SIDEBAR_MARGIN
from ui.window.main_window import MainWindow

LONG_NAME = "Quarterly report of the northern region, final version (signed) 2026.pdf"
PATH = Path("/docs") / LONG_NAME
STORED = DocumentInfo(
    id=7,
    path=str(PATH),
    title="Quarterly report",
    format="pdf",
    sha256="0" * 64,
    size=1_234_567,
    mtime_ns=0,
    pages=42,
    chunks=120,
    embedded=30,
    note=None,
    indexed_at="2026-11-20T12:00:00+00:00",
    ocr_done=0,
    ocr_pages=0,
)


def _bar_share(panel: DocumentsPanel, path: Path) -> float:
    """How much of the status cell's foot is painted in the highlight colour (the bar's filled
    part)."""
    rect = panel.visualItemRect(panel.row(path))
    left = panel.header().sectionPosition(STATUS)
    width = panel.header().sectionSize(STATUS)
    image = panel.viewport().grab().toImage()
    highlight = panel.palette().color(QPalette.ColorRole.Highlight)
    y = rect.bottom() - BAR_HEIGHT + 1
    filled = sum(
        1 for x in range(left, left + width) if _near(QColor(image.pixel(x, y)), highlight)
    )
    return filled / width


def _near(a: QColor, b: QColor) -> bool:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) < 40


def test_a_document_shows_its_steps_as_progress_then_its_size_pages_and_date(
    qtbot: QtBot,
) -> None:
    panel = DocumentsPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 300)
    panel.show()
    qtbot.waitExposed(panel)

    panel.apply(FileStarted(PATH, 1, 1))
    assert panel.status(PATH) == "Reading"
    assert panel.progress(PATH) is None
    panel.apply(PagesParsed(PATH, 10, 40))
    assert panel.status(PATH) == "Reading 10/40"
    assert tooltip_shows(panel.status_tip(PATH)) == "Reading its text: 10 of 40 pages."
    assert panel.progress(PATH) == (10, 40)
    quarter = _bar_share(panel, PATH)
    panel.apply(PagesParsed(PATH, 30, 40))
    assert _bar_share(panel, PATH) > 2 * quarter > 0  # the bar grows with the pages parsed

    panel.apply(FileIndexed(PATH, 7, 42, 120, None))
    assert panel.status(PATH) == "Searchable (improving…)"
    assert tooltip_shows(panel.status_tip(PATH)).startswith(
        "Keyword search works on it now; semantic search"
    )
    assert panel.progress(PATH) is None
    assert panel.row(PATH).text(PAGES) == "42"

    panel.show_library([STORED])
    row = panel.row(PATH)
    assert panel.status(PATH) == "Searchable (improving…)"  # embedding: the bar says how far
    assert tooltip_shows(panel.status_tip(PATH)).endswith("\n30 of 120 passages embedded.")
    assert panel.progress(PATH) == (30, 120)
    assert row.text(SIZE) == "1.2 MB"
    assert row.text(INDEXED) in ("2026-11-20", "2026-11-21")  # in local time: the date
    assert "2026" in row.toolTip(INDEXED)
    assert panel.chunks(PATH) == 120
    assert row.toolTip(PAGES) == "120 passages, 30 with embeddings"

    now = datetime.now(UTC).isoformat(timespec="seconds")
    panel.show_library([replace(STORED, embedded=120, indexed_at=now)])
    assert re.fullmatch(r"\d\d:\d\d", row.text(INDEXED))  # indexed today: the time
    assert panel.status(PATH) == "Ready"
    assert panel.progress(PATH) is None
    assert _bar_share(panel, PATH) == 0


def test_without_an_embedder_a_read_document_is_ready_not_improving_forever(
    qtbot: QtBot,
) -> None:
    """Keyword search only (no embedding model): nothing more is coming after reading (and
    OCR), so the row says its final state, and why search by meaning is missing."""
    panel = DocumentsPanel(semantic=False)
    qtbot.addWidget(panel)
    panel.apply(FileStarted(PATH, 1, 1))
    panel.apply(FileIndexed(PATH, 7, 42, 120, "3 pages had no text"))
    assert panel.status(PATH) == "Ready"
    assert tooltip_shows(panel.status_tip(PATH)) == (
        "Keyword search works on it. Search by meaning is off: this library has no embedding "
        "model.\n\n3 pages had no text"
    )
    panel.show_library([replace(STORED, embedded=0)])  # as the library stores it: no vectors
    assert (panel.status(PATH), panel.progress(PATH)) == ("Ready", None)
    panel.show_library([replace(STORED, embedded=0, ocr_done=2, ocr_pages=9)])
    assert panel.status(PATH) == "OCR 2/9"  # a step still running shows as before
    panel.apply(OcrProgress(PATH, 7, 9, 9))
    assert panel.status(PATH) == "Ready"


@pytest.fixture
def made_embedders(monkeypatch: pytest.MonkeyPatch) -> list[SupervisedEmbedder]:
    """The real embedders the window's Docent makes, kept to crash their child."""
    made: list[SupervisedEmbedder] = []

    def keep(name: str, path: Path, fast: FastEngine | None) -> SupervisedEmbedder:
        made.append(SupervisedEmbedder(name, path, fast))
        return made[-1]

    monkeypatch.setattr(bootstrap, "SupervisedEmbedder", keep)
    return made


@pytest.fixture
def embedding_window(
    made_embedders: list[SupervisedEmbedder], loop: qasync.QEventLoop
) -> Iterator[MainWindow]:
    yield from main_window(loop)


def test_an_embedder_off_for_the_session_leaves_documents_ready_not_improving_forever(
    embedding_window: MainWindow,
    made_embedders: list[SupervisedEmbedder],
    loop: qasync.QEventLoop,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    """The embedder's child crashes twice in a row: semantic search is off until a restart, so
    a document read afterwards is Ready (keyword search), with the reason in its tooltip, as in
    a library opened without an embedder — not "Searchable (improving…)" for ever."""
    window = embedding_window
    (embedder,) = made_embedders
    for _ in range(2):  # two real crashes (SIGSEGV mid-batch): the engine stays down
        crash_mid_batch(embedder)
    report = write_pdf(tmp_path / "report.pdf")
    drop(window, report)
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    qtbot.waitUntil(lambda: window.documents.status(report) == "Ready")
    assert window.documents.progress(report) is None
    assert tooltip_shows(window.documents.status_tip(report)) == (
        "Keyword search works on it. Search by meaning is off until Docent restarts: "
        "embedding stopped: the embedder crashed (segmentation fault); semantic search is off "
        "until Docent restarts"
    )
    # The library's next redraw (a later batch, an OCR'd page) keeps the final state.
    loop.run_until_complete(window.refresh())
    assert window.documents.status(report) == "Ready"


def test_an_embedder_that_goes_off_turns_improving_rows_ready(qtbot: QtBot) -> None:
    """Rows already waiting for vectors when the embedder stops show their final state at once."""
    panel = DocumentsPanel()
    qtbot.addWidget(panel)
    panel.apply(FileStarted(PATH, 1, 1))
    panel.apply(FileIndexed(PATH, 7, 42, 120, None))
    assert panel.status(PATH) == "Searchable (improving…)"
    panel.semantic_off("the embedder crashed (segmentation fault)")
    assert (panel.status(PATH), panel.progress(PATH)) == ("Ready", None)
    assert tooltip_shows(panel.status_tip(PATH)).endswith(
        "off until Docent restarts: the embedder crashed (segmentation fault)"
    )
    panel.show_library([replace(STORED, embedded=30)])  # the stored truth: some vectors only
    assert panel.status(PATH) == "Ready"


def test_ocr_runs_as_a_bar_and_a_long_name_keeps_its_end(qtbot: QtBot) -> None:
    panel = DocumentsPanel()
    qtbot.addWidget(panel)
    panel.resize(520, 200)
    panel.show()
    qtbot.waitExposed(panel)
    panel.apply(OcrProgress(PATH, 7, 1, 4))
    assert panel.status(PATH) == "OCR 1/4"
    assert panel.progress(PATH) == (1, 4)
    panel.apply(OcrProgress(PATH, 7, 4, 4))
    assert panel.progress(PATH) is None

    shown = panel.fontMetrics().elidedText(
        LONG_NAME, panel.textElideMode(), panel.header().sectionSize(NAME)
    )
    assert shown.endswith("2026.pdf")  # elided in the middle: the extension and date stay
    assert "…" in shown


def test_each_state_has_its_mark_and_word_and_a_failure_its_whole_reason(
    qtbot: QtBot,
) -> None:
    panel = DocumentsPanel()
    qtbot.addWidget(panel)
    scan, locked = Path("/docs/scan.png"), Path("/docs/locked.pdf")
    marks: dict[str, QImage] = {}
    assert panel.status(PATH) == "Queued"
    marks["queued"] = panel.row(PATH).icon(STATUS).pixmap(16).toImage()
    panel.apply(FileIndexed(PATH, 7, 42, 120, None))
    marks["working"] = panel.row(PATH).icon(STATUS).pixmap(16).toImage()
    panel.show_library([replace(STORED, embedded=120)])
    marks["ready"] = panel.row(PATH).icon(STATUS).pixmap(16).toImage()
    reason = "encrypted: it needs a password, and Docent cannot index it"
    panel.apply(FileFailed(locked, reason))
    marks["failed"] = panel.row(locked).icon(STATUS).pixmap(16).toImage()
    drawn = list(marks.values())  # four different drawings, not one icon
    assert all(drawn[i] != drawn[j] for i in range(4) for j in range(i + 1, 4))
    assert panel.status(locked) == "Failed — encrypted"
    assert tooltip_shows(panel.status_tip(locked)) == reason
    panel.show_library([replace(STORED, path=str(locked))])  # a failure stays said
    assert panel.status(locked) == "Failed — encrypted"
    # The parser's own words (in brackets) stay in the tooltip: the row has room for the head.
    damaged = "damaged or not a valid PDF file (Failed to open file 'x.pdf' as type pdf.)"
    panel.apply(FileFailed(scan, damaged))
    assert panel.status(scan) == "Failed — damaged or not a valid PDF file"
    assert tooltip_shows(panel.status_tip(scan)) == damaged

    # A file type's icon, one per family: PDFs alike, a scan unlike them.
    pdf = panel.row(PATH).icon(NAME).pixmap(16).toImage()
    assert panel.row(locked).icon(NAME).pixmap(16).toImage() == pdf
    assert panel.row(scan).icon(NAME).pixmap(16).toImage() != pdf


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def test_the_library_header_counts_and_filters_as_typed(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    pane = window.library
    assert pane.label.text() == "Library · 0"
    files = [write_pdf(tmp_path / f"{name}.pdf") for name in ("report", "fleet", "Report 2025")]
    loop.run_until_complete(window.add_paths(files))
    assert pane.label.text() == "Library · 3"
    # In the sidebar's narrow default, the names keep the room; size and date come back wider.
    assert window.documents.width() < 480
    assert window.documents.isColumnHidden(SIZE)
    assert window.documents.isColumnHidden(INDEXED)
    assert window.documents.header().sectionSize(NAME) > 100
    # The sidebar's sections share one left edge.
    left = window.documents.mapTo(pane, QPoint(0, 0)).x()
    assert left == pane.label.mapTo(pane, QPoint(0, 0)).x() == SIDEBAR_MARGIN

    qtbot.keyClicks(pane.filter, "REP")  # any case, each key at once
    assert _names_shown(window.documents) == ["report.pdf", "Report 2025.pdf"]
    assert pane.label.text() == "Library · 2 of 3"
    pane.filter.clear()
    assert pane.label.text() == "Library · 3"
    assert _names_shown(window.documents) == ["report.pdf", "fleet.pdf", "Report 2025.pdf"]
    window.documents.forget(str(files[1]))
    qtbot.waitUntil(lambda: pane.label.text() == "Library · 2")


def test_the_library_header_adds_documents(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file dialog (Qt's, not Docent's to test) answers with a report.
    report = write_pdf(tmp_path / "report.pdf")
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *_: ([str(report)], ""))
    window.library.add_button.click()
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    # A keyword-only library: read is all it will be, said as the final state.
    assert window.documents.status(report) == "Ready"
    assert "Search by meaning is off" in tooltip_shows(window.documents.status_tip(report))
    assert window.library.label.text() == "Library · 1"


def _names_shown(panel: DocumentsPanel) -> list[str]:
    rows = (panel.topLevelItem(index) for index in range(panel.topLevelItemCount()))
    return [row.text(NAME) for row in rows if not row.isHidden()]
