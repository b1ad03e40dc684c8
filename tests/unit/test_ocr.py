"""OCR of pages rendered from known text: what it reads, where it says the words are."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.documents.ocr import Line, Word, in_reading_order, needs_ocr, ocr_dpi, read_page
from app.documents.parse import open_document
from app.documents.render import passage_boxes
from tests.documents import (
    SCANNED_CHINESE,
    SCANNED_ENGLISH,
    scan_of,
    text_page,
    write_image_only_pdf,
    write_pdf,
    write_scanned_pdf,
)


def character_error_rate(reference: str, read: str) -> float:
    """Edit distance over the reference's length, whitespace aside (OCR's spacing varies)."""
    a, b = "".join(reference.split()), "".join(read.split())
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1] / len(a)


@pytest.mark.parametrize(
    ("text", "word"), [(SCANNED_ENGLISH, "gasket"), (SCANNED_CHINESE, "泵")], ids=["en", "zh"]
)
def test_a_scanned_page_reads_back_its_text_and_where_its_words_are(
    text: str, word: str, tmp_path: Path
) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf", [text])
    with pymupdf.open(scan) as doc:
        read = read_page(doc[0])
    assert character_error_rate(text, read.text) < 0.02, read.text
    # The box OCR gives a word is where the word was printed on the original page.
    (printed,) = text_page(pymupdf.open(), text).search_for(word)
    found = [pymupdf.Rect(w.box) for w in read.words if w.text.strip(".,") == word]
    assert found, [w.text for w in read.words]
    overlap = max(abs(printed & box) / abs(printed | box) for box in found)
    assert overlap > 0.5


def test_only_pages_without_a_usable_text_layer_need_ocr(tmp_path: Path) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf", [SCANNED_ENGLISH])
    stamped = pymupdf.open(scan)
    stamped[0].insert_text((60, 820), "Exhibit 12 - page 1")  # text over a full-page scan
    text = pymupdf.open(write_pdf(tmp_path / "text.pdf"))
    picture = pymupdf.open(write_image_only_pdf(tmp_path / "picture.pdf"))  # a small image
    with_text = text_page(pymupdf.open(), SCANNED_ENGLISH)
    with_text.insert_image(pymupdf.Rect(0, 0, 595, 842), pixmap=scan_of("x"), overlay=False)

    assert needs_ocr(pymupdf.open(scan)[0], 0)
    assert needs_ocr(stamped[0], len("Exhibit 12 - page 1"))
    assert not needs_ocr(text[0], len(text[0].get_text()))
    assert not needs_ocr(picture[0], 0)  # a picture on a blank page is no scan
    assert not needs_ocr(with_text, len(with_text.get_text()))  # a scan with its text layer


def test_a_scanned_pdf_opens_with_its_pages_left_to_ocr(tmp_path: Path) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf", [SCANNED_ENGLISH, SCANNED_CHINESE])
    with open_document(scan) as document:
        pages = list(document.pages())  # no "no text layer" error: OCR will read them
        assert [page.blocks for page in pages] == [(), ()]
        assert document.ocr_pages == [1, 2]


def test_a_passage_is_found_among_ocr_words_whatever_their_spacing() -> None:
    words = [
        ("Valve", 10, 10, 40, 20),
        ("seven", 45, 10, 80, 20),
        ("leaks.", 85, 10, 120, 20),
        ("Budget", 10, 30, 50, 40),
        ("垫", 10, 50, 20, 60),
        ("圈", 20, 50, 30, 60),
        ("组件", 30, 50, 50, 60),
    ]
    assert passage_boxes(words, "valve") == []  # case matters: OCR read it as printed
    assert passage_boxes(words, "Valve seven\nleaks. 垫圈 组件") == [
        (10, 10, 40, 20),
        (45, 10, 80, 20),
        (85, 10, 120, 20),
        (10, 50, 20, 60),
        (20, 50, 30, 60),
        (30, 50, 50, 60),
    ]


def test_an_image_only_page_inside_a_text_pdf_is_left_to_ocr_alone(tmp_path: Path) -> None:
    mixed = pymupdf.open(write_pdf(tmp_path / "report.pdf"))
    mixed.insert_pdf(pymupdf.open(write_scanned_pdf(tmp_path / "scan.pdf", [SCANNED_ENGLISH])))
    mixed.save(tmp_path / "mixed.pdf")
    with open_document(tmp_path / "mixed.pdf") as document:
        pages = list(document.pages())
        assert document.ocr_pages == [5]
        assert [bool(page.blocks) for page in pages] == [True, True, True, True, False]


def test_a_page_too_large_for_the_ocr_resolution_is_read_at_a_lower_one() -> None:
    assert ocr_dpi(595, 842) == 150  # A4: 1,240 x 1,754 pixels
    a0 = ocr_dpi(2384, 3370)
    assert a0 < 150
    assert 2900 <= 3370 * a0 / 72 <= 3000


def test_columns_are_read_one_after_the_other_between_a_heading_and_a_footer() -> None:
    def line(text: str, x0: float, y0: float, x1: float) -> Line:
        return Line(text, (Word(text, (x0, y0, x1, y0 + 12)),))

    header = line("Annual report", 50, 20, 545)
    left = [line(f"left {n}", 50, 60 + 18 * n, 285) for n in range(3)]
    left_after_a_gap = [line(f"left {n}", 50, 140 + 18 * n, 285) for n in range(3, 5)]
    right = [line(f"right {n}", 310, 60 + 18 * n, 545) for n in range(4)]
    footer = line("Page 1", 50, 800, 545)
    # As RapidOCR lists them: top to bottom across the page.
    listed = sorted([header, *left, *left_after_a_gap, *right, footer], key=lambda x: x.box[1])

    blocks = in_reading_order(listed)

    assert [[x.text for x in block] for block in blocks] == [
        ["Annual report"],
        ["left 0", "left 1", "left 2"],
        ["left 3", "left 4"],
        ["right 0", "right 1", "right 2", "right 3"],
        ["Page 1"],
    ]
