"""Every kind of bad file gets a specific reason; other files go on; the index is unharmed."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from app.intake import FileFailed, FileIndexed, FileStarted, IngestEvent
from tests.documents import (
    write_encrypted_office,
    write_encrypted_pdf,
    write_image_only_pdf,
    write_office_bomb,
    write_pdf,
)
from tests.integration.conftest import index_all, opened, run


def make_bad_file(kind: str, folder: Path) -> Path:
    match kind:
        case "corrupt-pdf":
            good = write_pdf(folder / "source.pdf").read_bytes()
            path = folder / "corrupt.pdf"
            path.write_bytes(good[:200] + b"\x00garbage" * 50)
        case "encrypted-pdf":
            path = write_encrypted_pdf(folder / "locked.pdf")
        case "empty-file":
            path = folder / "empty.pdf"
            path.write_bytes(b"")
        case "unsupported-type":
            path = folder / "budget.ods"
            with zipfile.ZipFile(path, "w") as archive:
                archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
                archive.writestr("content.xml", "<office:document-content/>")
        case "corrupt-xlsx":
            path = folder / "budget.xlsx"
            path.write_bytes(b"PK\x03\x04[Content_Types].xml" + b"\x00" * 100)
        case "damaged-docx":
            path = folder / "letter.docx"
            with zipfile.ZipFile(path, "w") as archive:
                archive.writestr("[Content_Types].xml", "<Types/>")
                archive.writestr("word/document.xml", "<w:document><w:body>")
        case "encrypted-docx":
            path = write_encrypted_office(folder / "salaries.docx")
        case "zip-bomb-docx":
            path = write_office_bomb(folder / "bomb.docx", 200)
        case "image-only-pdf":
            path = write_image_only_pdf(folder / "scan.pdf")
        case "binary-named-txt":
            path = folder / "notes.txt"
            path.write_bytes(bytes(range(256)) * 64)
        case "whitespace-only":
            path = folder / "blank.md"
            path.write_text("   \n\n\t\n", "utf-8")
        case _:
            raise AssertionError(kind)
    return path


CASES = {
    "corrupt-pdf": "damaged or not a valid PDF file",
    "encrypted-pdf": "encrypted: it needs a password",
    "empty-file": "empty file (0 bytes)",
    "unsupported-type": "unsupported type: the file is an OpenDocument spreadsheet",
    "corrupt-xlsx": "damaged: not a readable zip archive",
    "damaged-docx": "damaged or not a valid Word (DOCX) file",
    "encrypted-docx": "encrypted: it needs a password",
    "zip-bomb-docx": "too large when unpacked: ",
    "image-only-pdf": "no text layer, and no page is a scan to OCR",
    "binary-named-txt": "not readable as plain text",
    "whitespace-only": "contains only whitespace",
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_bad_file_fails_alone_with_a_specific_reason(kind: str, tmp_path: Path) -> None:
    good = write_pdf(tmp_path / "good.pdf")
    bad = make_bad_file(kind, tmp_path)

    async def scenario() -> tuple[list[IngestEvent], list[str]]:
        async with opened(embeddings=False) as docent:
            events = await index_all(docent, [bad, good])
            return events, [d.name for d in await docent.library.documents()]

    events, names = run(scenario())
    (failure,) = [e for e in events if isinstance(e, FileFailed)]
    assert failure.path == bad
    assert failure.reason.startswith(CASES[kind]), failure.reason
    assert any(isinstance(e, FileIndexed) and e.path == good for e in events)
    assert names == ["good.pdf"]


def test_a_bad_new_version_leaves_the_indexed_version_intact(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> tuple[IngestEvent, list, list]:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [report])
            before = await docent.library.search("invoices retained seven years", 2)
            report.write_bytes(report.read_bytes()[:300])  # truncated: now corrupt
            outcome = (await index_all(docent, [report]))[-1]
            after = await docent.library.search("invoices retained seven years", 2)
            return outcome, before, after

    outcome, before, after = run(scenario())
    assert isinstance(outcome, FileFailed)
    assert "damaged" in outcome.reason
    assert [p.chunk.id for p in after] == [p.chunk.id for p in before]
    assert after[0].chunk.page == 2


def test_a_file_that_vanishes_before_its_turn(tmp_path: Path) -> None:
    first = write_pdf(tmp_path / "first.pdf")
    doomed = write_pdf(tmp_path / "doomed.pdf")

    async def scenario() -> list[IngestEvent]:
        events: list[IngestEvent] = []
        async with opened(embeddings=False) as docent:
            async for event in docent.intake.index([first, doomed]):
                events.append(event)
                if isinstance(event, FileStarted) and event.path == first:
                    doomed.unlink()  # gone while the first file is being indexed
            return events

    events = run(scenario())
    (failure,) = [e for e in events if isinstance(e, FileFailed)]
    assert failure.path == doomed
    assert failure.reason == "the file disappeared before it could be read"


def test_a_missing_path_on_the_command_line_is_reported(tmp_path: Path) -> None:
    async def scenario() -> list[IngestEvent]:
        async with opened(embeddings=False) as docent:
            return await index_all(docent, [tmp_path / "nope.pdf"])

    (failure,) = run(scenario())
    assert isinstance(failure, FileFailed)
    assert failure.reason == "no such file or folder"


def test_mislabelled_html_named_pdf_is_indexed_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "minutes.pdf"
    path.write_text("<html><body><p>The board meets every second Tuesday.</p></body></html>")

    async def scenario() -> list[IngestEvent]:
        async with opened(embeddings=False) as docent:
            return await index_all(docent, [path])

    outcome = run(scenario())[-1]
    assert isinstance(outcome, FileIndexed)
    assert outcome.note == "named .pdf but is a HTML file; indexed as HTML"


def test_a_repairable_pdf_is_indexed_with_a_warning(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "cut.pdf")
    path.write_bytes(path.read_bytes()[:-400])  # lost its cross-reference table

    async def scenario() -> list[IngestEvent]:
        async with opened(embeddings=False) as docent:
            return await index_all(docent, [path])

    outcome = run(scenario())[-1]
    assert isinstance(outcome, FileIndexed)
    assert outcome.pages == 4
    assert outcome.note == "damaged file repaired: some text may be missing"
