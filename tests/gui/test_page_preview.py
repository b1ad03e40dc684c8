"""A citation's page: titled by the citation, fitting the window's width, scrolled to the
passage, the sentences the answer used marked stronger than the rest of the passage."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import qasync
from PySide6.QtGui import QColor, QGuiApplication
from pytestqt.qtbot import QtBot

from app.answering import Source
from app.bootstrap import Docent
from ui.answer.page_preview import PagePreview

USED = (
    "Paper copies of customer invoices are kept in the archive room for the whole of the "
    "financial year in which they were issued, to meet tax audit rules."
)
REST = "Other papers are shredded after a quality check."


def write_archive(path: Path) -> Path:
    """A page whose passage sits at its foot: out of sight until the preview scrolls to it."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 80), "Archive", fontsize=18)
    page.insert_textbox(pymupdf.Rect(72, 660, 520, 800), f"{USED} {REST}", fontsize=11)
    doc.save(path)
    return path


def background_of(preview: PagePreview, box: tuple[float, float, float, float]) -> QColor:
    """The lightest pixel of a highlighted box: its tint, where no glyph is drawn."""
    image = preview.image.pixmap().toImage()
    x0, y0, x1, y1 = map(round, box)
    pixels = [image.pixelColor(x, y) for x in range(x0, x1, 3) for y in range(y0, y1, 2)]
    return max(pixels, key=QColor.lightness)


def test_a_citation_opens_its_page_fitted_and_scrolled_to_the_sentences_it_used(
    docent: Docent, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    pdf = write_archive(tmp_path / "archive.pdf")
    passage = f"{USED} {REST}"
    source = Source(2, 7, 1, "archive.pdf", str(pdf), 1, "1", None, passage, 0.03, used=(USED,))
    preview = PagePreview.of_source(docent, source)
    qtbot.addWidget(preview)
    preview.resize(600, 500)
    preview.show()
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)
    assert preview.windowTitle() == "Source [2] — archive.pdf, p. 1"
    rendered = preview.rendered
    assert rendered is not None, preview.position.text()

    viewport = preview.page_view.viewport()
    width = preview.image.width()
    assert 0.8 * viewport.width() <= width <= viewport.width()  # fits the width, nothing cut
    assert not preview.page_view.horizontalScrollBar().isVisible()

    ratio = preview.devicePixelRatioF()
    top = preview.page_view.verticalScrollBar().value()
    first_used = rendered.used[0][1] / ratio
    assert top > 0
    assert top <= first_used <= top + viewport.height()  # the used sentence is in sight

    strong = background_of(preview, rendered.used[-1])  # the used sentence's second line
    faint = background_of(preview, rendered.highlights[-1])  # "… a quality check."
    assert strong.blue() < faint.blue() < 250  # both tinted, the used sentence more

    preview.copy_passage.click()
    assert QGuiApplication.clipboard().text() == USED
    loop.run_until_complete(preview.close_async())
