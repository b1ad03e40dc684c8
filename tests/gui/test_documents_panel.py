"""The documents panel: names kept whole to their end, size, pages and when each document was
indexed, and a progress bar for the step that runs (parsing, embedding, OCR)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from pytestqt.qtbot import QtBot

from app.index import DocumentInfo
from app.intake import FileIndexed, FileStarted, OcrProgress, PagesParsed
from ui.library.documents_panel import INDEXED, NAME, PAGES, SIZE, STATUS, DocumentsPanel

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
    """How much of the status cell is painted in the highlight colour (the bar's filled part)."""
    rect = panel.visualItemRect(panel.row(path))
    left = panel.header().sectionPosition(STATUS)
    width = panel.header().sectionSize(STATUS)
    image = panel.viewport().grab().toImage()
    highlight = panel.palette().color(QPalette.ColorRole.Highlight)
    y = rect.center().y()
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
    assert panel.status(PATH) == "parsing"
    assert panel.progress(PATH) is None
    panel.apply(PagesParsed(PATH, 10, 40))
    assert panel.status(PATH) == "parsing 10/40 pages"
    assert panel.progress(PATH) == (10, 40)
    quarter = _bar_share(panel, PATH)
    panel.apply(PagesParsed(PATH, 30, 40))
    assert _bar_share(panel, PATH) > 2 * quarter > 0  # the bar grows with the pages parsed

    panel.apply(FileIndexed(PATH, 7, 42, 120, None))
    assert panel.status(PATH) == "keyword-searchable"
    assert panel.progress(PATH) is None
    assert panel.row(PATH).text(PAGES) == "42"

    panel.show_library([STORED])
    row = panel.row(PATH)
    assert panel.status(PATH) == "embedding 30/120"
    assert panel.progress(PATH) == (30, 120)
    assert row.text(SIZE) == "1.2 MB"
    assert row.text(INDEXED) in ("2026-11-20", "2026-11-21")  # in local time: the date
    assert "2026" in row.toolTip(INDEXED)
    assert panel.chunks(PATH) == 120
    assert row.toolTip(PAGES) == "120 passages, 30 with embeddings"

    now = datetime.now(UTC).isoformat(timespec="seconds")
    panel.show_library([replace(STORED, embedded=120, indexed_at=now)])
    assert re.fullmatch(r"\d\d:\d\d", row.text(INDEXED))  # indexed today: the time
    assert panel.status(PATH) == "ready"
    assert panel.progress(PATH) is None
    assert _bar_share(panel, PATH) == 0


def test_ocr_runs_as_a_bar_and_a_long_name_keeps_its_end(qtbot: QtBot) -> None:
    panel = DocumentsPanel()
    qtbot.addWidget(panel)
    panel.resize(520, 200)
    panel.show()
    qtbot.waitExposed(panel)
    panel.apply(OcrProgress(PATH, 7, 1, 4))
    assert panel.status(PATH) == "OCR 1/4 pages"
    assert panel.progress(PATH) == (1, 4)
    panel.apply(OcrProgress(PATH, 7, 4, 4))
    assert panel.progress(PATH) is None

    shown = panel.fontMetrics().elidedText(
        LONG_NAME, panel.textElideMode(), panel.header().sectionSize(NAME)
    )
    assert shown.endswith("2026.pdf")  # elided in the middle: the extension and date stay
    assert "…" in shown
