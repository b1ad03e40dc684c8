"""A dropped scan shows its OCR page by page in the documents panel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QTreeWidgetItem

from tests.documents import SCANNED_CHINESE, SCANNED_ENGLISH, write_scanned_pdf
from tests.gui.conftest import main_window
from ui.library.documents_panel import STATUS
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop)


def test_the_documents_panel_shows_ocr_progress_until_the_scan_is_ready(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf", [SCANNED_ENGLISH, SCANNED_CHINESE])
    shown: list[str] = []

    def changed(item: QTreeWidgetItem, column: int) -> None:
        status = item.text(STATUS)
        if column == STATUS and item is window.documents.row(scan) and shown[-1:] != [status]:
            shown.append(status)

    window.documents.itemChanged.connect(changed)
    loop.run_until_complete(window.add_paths([scan]))  # until the library is up to date
    window.documents.itemChanged.disconnect(changed)

    ocr = [status for status in shown if status.startswith("OCR")]
    assert ocr[:1] == ["OCR 0/2"]
    assert "OCR 1/2" in ocr
    assert shown.index("OCR 1/2") < len(shown) - 1
    assert shown[-1] == window.documents.status(scan) == "Ready"
    assert (window.documents.chunks(scan) or 0) > 0
