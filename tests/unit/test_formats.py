import zipfile
from pathlib import Path

import pytest

from app.documents.formats import Format, UnsupportedFormat, detect


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("a.pdf", b"%PDF-1.7\n...", Format.PDF),
        ("a.epub", b"PK\x03\x04" + b"\x00" * 26 + b"mimetypeapplication/epub+zip", Format.EPUB),
        ("a.html", b"<!DOCTYPE html><html>", Format.HTML),
        ("a.md", b"# Title\n\ntext", Format.MARKDOWN),
        ("a.txt", b"plain words", Format.TEXT),
        ("a.fb2", b'<?xml version="1.0"?><FictionBook xmlns="x">', Format.FB2),
        ("a.mobi", b"\x00" * 60 + b"BOOKMOBI", Format.MOBI),
    ],
)
def test_detects_supported_formats(name: str, head: bytes, expected: Format) -> None:
    detected = detect(Path(name), head)
    assert detected.format is expected
    assert detected.note is None


def test_mislabelled_html_named_pdf_is_read_as_html_with_a_note() -> None:
    detected = detect(Path("report.pdf"), b"<html><body>hello</body></html>")
    assert detected.format is Format.HTML
    assert detected.note == "named .pdf but is a HTML file; indexed as HTML"


def test_text_named_pdf_is_read_as_text_with_a_note() -> None:
    detected = detect(Path("notes.pdf"), b"just some notes\nand more")
    assert detected.format is Format.TEXT
    assert "no PDF data" in (detected.note or "")


def test_pdf_without_extension_is_still_a_pdf() -> None:
    assert detect(Path("scan"), b"%PDF-1.4").format is Format.PDF


@pytest.mark.parametrize(
    ("name", "head", "message"),
    [
        ("photo.pdf", b"\x89PNG\r\n\x1a\n", "the file is a PNG image"),
        ("photo.png", b"\x89PNG\r\n\x1a\n", "the file is a PNG image"),
        ("sheet.xlsx", b"plain", "unsupported type .xlsx"),
        ("data.txt", b"\x7fELF\x02\x01", "a program (ELF)"),
        ("broken.pdf", bytes(range(256)), "not a valid PDF file"),
    ],
)
def test_refuses_what_it_cannot_read(name: str, head: bytes, message: str) -> None:
    with pytest.raises(UnsupportedFormat, match=message.replace("(", r"\(").replace(")", r"\)")):
        detect(Path(name), head)


def test_an_epub_whose_mimetype_is_not_the_first_entry_is_an_epub() -> None:
    """Debian's developers-reference.epub (Sphinx): opened by every reader, once refused here."""
    real = Path(__file__).resolve().parent.parent / "data" / "developers-reference.epub"
    detected = detect(real, real.read_bytes()[:4096])
    assert (detected.format, detected.note) == (Format.EPUB, None)


def test_a_plain_zip_is_still_refused_as_one(tmp_path: Path) -> None:
    archive = tmp_path / "book.epub"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("chapter.txt", "not an e-book")
    with pytest.raises(UnsupportedFormat, match="the file is a zip archive"):
        detect(archive, archive.read_bytes()[:4096])
