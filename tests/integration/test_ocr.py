"""Scans are indexed at once and OCR'd behind, page by page, then found by keyword."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf
from PIL import Image

from app.bootstrap import Docent
from app.intake import FileFailed, FileIndexed, IntakeEvent, OcrFailed, OcrProgress
from app.workers import Subscription
from tests.documents import (
    SCANNED_CHINESE,
    SCANNED_ENGLISH,
    scan_of,
    text_page,
    write_pdf,
    write_scanned_pdf,
)
from tests.integration.conftest import opened, run


async def until(events: Subscription, wanted: type, path: Path, **fields: object) -> IntakeEvent:
    """The next event of type `wanted` about `path` with these fields; a failure ends the wait."""
    async for event in events:
        if isinstance(event, FileFailed | OcrFailed) and event.path == path:
            raise AssertionError(event)
        if (
            isinstance(event, wanted)
            and getattr(event, "path", None) == path
            and all(getattr(event, name) == value for name, value in fields.items())
        ):
            return event
    raise AssertionError("the event stream ended")


async def found(docent: Docent, words: str) -> list[tuple[str, int]]:
    """(file name, page) of the passages a keyword search finds."""
    return [(p.chunk.document_name, p.chunk.page) for p in await docent.library.search(words, k=3)]


def test_a_scanned_pdf_is_searchable_page_by_page_and_blocks_no_other_file(
    tmp_path: Path,
) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf", [SCANNED_ENGLISH, SCANNED_CHINESE])
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            with docent.intake.subscribe() as events:
                docent.intake.add([scan])
                indexed = await until(events, FileIndexed, scan)
                assert (indexed.pages, indexed.chunks) == (2, 0)  # indexed before any OCR
                await until(events, OcrProgress, scan, done=1, total=2)
                # Page 1 is searchable while page 2 is still being read.
                assert ("scan.pdf", 1) in await found(docent, "gasket assembly fortnight")
                docent.intake.add([report])
                await until(events, FileIndexed, report)
                second = await until(events, OcrProgress, scan, total=2)
                assert second.done == 2, "a text PDF waited behind the scan's OCR"
            assert ("scan.pdf", 2) in await found(docent, "垫圈组件")
            assert ("report.pdf", 2) in await found(docent, "invoices retained")
            (document,) = await docent.library.match_documents(["scan.pdf"])
            assert document.chunks > 0
            # The citation preview marks the passage where OCR read its words.
            (passage, *_) = await docent.library.search("gasket assembly fortnight", k=1)
            page = await docent.render_page(scan, 1, zoom=2, passage=passage.chunk.text)
            (printed,) = text_page(pymupdf.open(), SCANNED_ENGLISH).search_for("gasket")
            printed *= 2
            assert any(abs(printed & box) > 0.5 * abs(printed) for box in page.highlights)
            assert all(abs(pymupdf.Rect(box)) < 4 * abs(printed) for box in page.highlights)

    run(scenario())


def write_scans(path: Path, texts: Sequence[str]) -> Path:
    """A PNG, JPEG or (several pages) TIFF of pages of `texts`, as a scanner saves them."""
    pages = [Image.frombytes("L", (p.width, p.height), p.samples) for p in map(scan_of, texts)]
    pages[0].save(path, save_all=len(pages) > 1, append_images=pages[1:], dpi=(200, 200))
    return path


def test_images_dropped_as_documents_are_ocred_and_found(tmp_path: Path) -> None:
    png = write_scans(tmp_path / "memo.png", [SCANNED_ENGLISH])
    tiff = write_scans(tmp_path / "fax.tiff", [SCANNED_ENGLISH, SCANNED_CHINESE])
    assert pymupdf.open(tiff).page_count == 2

    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            # Until the library is up to date: the OCR pass included, as `docent index` waits.
            events = [e async for e in docent.intake.index([png, tiff], embed=True)]
            ocr = [e for e in events if isinstance(e, OcrProgress)]
            progress = [(e.path.name, e.done, e.total) for e in ocr]
            assert sorted(progress) == [("fax.tiff", 1, 2), ("fax.tiff", 2, 2), ("memo.png", 1, 1)]
            assert not docent.ocr_reader.running  # its models' memory freed once all is read
            assert ("memo.png", 1) in await found(docent, "intermittent leakage valve")
            assert ("fax.tiff", 2) in await found(docent, "间歇性渗漏")
            formats = {d.name: d.format for d in await docent.library.documents()}
            assert formats == {"memo.png": "image", "fax.tiff": "image"}

    run(scenario())


def test_ocr_left_unfinished_resumes_in_the_next_session(tmp_path: Path) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf", [SCANNED_ENGLISH])

    async def first_session() -> None:
        async with opened(embeddings=False) as docent:
            with docent.intake.subscribe() as events:
                docent.intake.add([scan])
                await until(events, FileIndexed, scan)
        # Closed while its page was being read: the OCR reader stopped mid-page.

    async def second_session() -> None:
        async with opened(embeddings=False) as docent:
            (document,) = await docent.library.documents()
            assert (document.ocr_done, document.ocr_pages) == (0, 1)
            with docent.intake.subscribe() as events:
                await docent.intake.resume()
                await until(events, OcrProgress, scan, done=1, total=1)
            assert ("scan.pdf", 1) in await found(docent, "gasket assembly fortnight")

    run(first_session())
    run(second_session())
