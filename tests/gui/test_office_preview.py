"""A citation of a slide or a sheet opens the preview on that slide or sheet."""

from __future__ import annotations

from pathlib import Path

import qasync
from pytestqt.qtbot import QtBot

from app.bootstrap import Docent
from tests.documents import write_pptx, write_xlsx
from ui.answer.page_preview import PagePreview


def test_the_preview_shows_the_cited_slide_and_sheet(
    docent: Docent, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    slides = write_pptx(tmp_path / "briefing.pptx")
    preview = PagePreview(docent, slides, 3, passage="Ferries leave from pier nine.")
    qtbot.addWidget(preview)
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)
    assert preview.rendered is not None, preview.position.text()
    assert preview.position.text().startswith("slide 3 (page 3 of 4)")
    assert preview.rendered.highlights
    slide = preview.image.pixmap()
    assert slide.width() > slide.height() > 0  # cut to the slide's text, not a tall blank page
    loop.run_until_complete(preview.close_async())

    sheets = PagePreview(docent, write_xlsx(tmp_path / "harbour.xlsx"), 2)
    qtbot.addWidget(sheets)
    assert sheets.loading is not None
    loop.run_until_complete(sheets.loading)
    assert sheets.position.text().startswith("Budget A1:C4 (page 2 of 2)")
    loop.run_until_complete(sheets.close_async())
