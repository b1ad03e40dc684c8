"""The cited passage marked on its page (app.documents.render), on real PDFs: every sentence
whole, however long, across line breaks and in CJK; the sentences an answer used apart."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from app.documents.render import Box, render_page
from tests.documents import write_pdf

ZOOM = 2.0
# One sentence of 149 characters: it wraps onto a second line, past the 100 characters the
# preview used to look for.
LONG = (
    "Paper copies of customer invoices are kept in the archive room for the whole of the "
    "financial year in which they were issued, to meet tax audit rules."
)
AFTER = "Other papers are shredded after a quality check."
CJK = (
    "员工档案在员工离职后必须保存十年，并且在保存期间由人事部门负责保管和查阅，任何人不得私自"
    "复制或者带出档案室，违反者将按照公司规定严肃处理。"
)


def covered(text: str, path: Path, page: int, boxes: tuple[Box, ...]) -> bool:
    """Whether every place `text` is printed on the page lies inside one of the boxes."""
    (printed, *more) = pymupdf.open(path)[page - 1].search_for(text)
    return all(
        any(pymupdf.Rect(box).contains(rect * ZOOM) for box in boxes) for rect in (printed, *more)
    )


def test_a_long_sentence_is_marked_to_its_end(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "archive.pdf", [("Archive", f"{LONG} {AFTER}")])
    page = render_page(pdf, 1, ZOOM, f"{LONG} {AFTER}")
    assert covered("Paper copies", pdf, 1, page.highlights)
    assert covered("tax audit rules.", pdf, 1, page.highlights)  # the tail, on the next line
    assert covered("quality check.", pdf, 1, page.highlights)
    assert not covered("Archive", pdf, 1, page.highlights)  # the heading is no part of it
    assert len(page.highlights) == 3  # one box a line, not one a character


def test_a_cjk_sentence_is_marked_across_its_line_breaks(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "staff.pdf", [("档案", CJK)])
    page = render_page(pdf, 1, ZOOM, CJK)
    assert covered("员工档案", pdf, 1, page.highlights)
    assert covered("严肃处理", pdf, 1, page.highlights)


def test_the_sentences_an_answer_used_are_marked_apart(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "archive.pdf", [("Archive", f"{LONG} {AFTER}")])
    page = render_page(pdf, 1, ZOOM, f"{LONG} {AFTER}", used=[LONG])
    assert covered("tax audit rules.", pdf, 1, page.used)
    assert not covered("quality check.", pdf, 1, page.used)
    assert covered("quality check.", pdf, 1, page.highlights)
