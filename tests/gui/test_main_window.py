from __future__ import annotations

from pathlib import Path

import qasync
from pytestqt.qtbot import QtBot

from app.bootstrap import Docent
from tests.documents import write_pdf
from ui.main import MainWindow


def test_placeholder_window_shows_the_library(
    qtbot: QtBot, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    docent = Docent.from_environment(embeddings=False)

    async def scenario() -> MainWindow:
        await docent.open()
        async for _ in docent.ingestor.index([write_pdf(tmp_path / "report.pdf")]):
            pass
        window = MainWindow(docent)
        qtbot.addWidget(window)
        window.show()
        await window.refresh()
        return window

    try:
        window = loop.run_until_complete(scenario())
    finally:
        loop.run_until_complete(docent.close())
    assert window.isVisible()
    assert window.status.text().startswith("Docent — 1 documents in the library")
