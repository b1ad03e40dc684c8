import zipfile
from pathlib import Path

import pytest

from app.documents.formats import Detected, Format, UnsupportedFormat, detect
from tests.documents import write_docx, write_encrypted_office, write_pptx, write_xlsx


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
        ("photo.pdf", b"GIF89a", "the file is a GIF image"),
        ("slides.key", b"plain", "unsupported type .key"),
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


DATA = Path(__file__).resolve().parent.parent / "data"
CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="{opf}" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def _zip(path: Path, *members: tuple[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            archive.writestr(name, content)
    return path


def test_the_real_sphinx_epub_is_read_whole() -> None:
    """Detection must not be stricter than the reader: MuPDF lays out the whole book."""
    from app.documents.parse import open_document

    document = open_document(DATA / "developers-reference.epub")
    try:
        assert document.format is Format.EPUB
        assert document.page_count > 150  # 182 with PyMuPDF 1.28
        assert "Debian" in document.load_page(0).get_text()
    finally:
        document.close()


@pytest.mark.parametrize("name", ["book.epub", "book.zip", "book"])
def test_a_container_pointing_to_its_package_makes_an_epub(tmp_path: Path, name: str) -> None:
    """No mimetype member at all: readers find the book through META-INF/container.xml."""
    epub = _zip(
        tmp_path / name,
        ("META-INF/container.xml", CONTAINER.format(opf="OEBPS/content.opf")),
        ("OEBPS/content.opf", "<package/>"),
    )
    assert detect(epub, epub.read_bytes()[:4096]).format is Format.EPUB


def test_a_container_pointing_nowhere_is_no_epub(tmp_path: Path) -> None:
    archive = _zip(
        tmp_path / "book.epub",
        ("META-INF/container.xml", CONTAINER.format(opf="OEBPS/content.opf")),
        ("chapter.txt", "no package here"),
    )
    with pytest.raises(UnsupportedFormat, match="the file is a zip archive"):
        detect(archive, archive.read_bytes()[:4096])


def test_a_huge_container_is_not_unpacked(tmp_path: Path) -> None:
    """Deciding the type inflates no large member: a 16 MB container.xml is no real one."""
    container = " " * (16 << 20) + CONTAINER.format(opf="content.opf")
    archive = _zip(
        tmp_path / "book.epub",
        ("chapter.txt", "words"),
        ("META-INF/container.xml", container),
        ("content.opf", "<package/>"),
    )
    with pytest.raises(UnsupportedFormat, match="the file is a zip archive"):
        detect(archive, archive.read_bytes()[:4096])


def test_another_zip_format_named_epub_is_refused_for_what_it_is(tmp_path: Path) -> None:
    odt = tmp_path / "letter.epub"
    with zipfile.ZipFile(odt, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", "<office:document-content/>")
    with pytest.raises(UnsupportedFormat, match="the file is an OpenDocument text"):
        detect(odt, odt.read_bytes()[:4096])
    docx = _zip(
        tmp_path / "report.epub",
        ("[Content_Types].xml", "<Types/>"),
        ("word/document.xml", "<w:document/>"),
    )
    detected = detect(docx, docx.read_bytes()[:4096])
    assert detected.format is Format.DOCX
    assert detected.note == "named .epub but is a Word (DOCX) file; indexed as Word (DOCX)"
    other = _zip(tmp_path / "maps.epub", ("[Content_Types].xml", "<Types/>"), ("x/y.xml", "<y/>"))
    with pytest.raises(UnsupportedFormat, match=r"a zip package \(XPS or Office\)"):
        detect(other, other.read_bytes()[:4096])


def test_a_truncated_sphinx_epub_is_damaged_not_a_zip_archive(tmp_path: Path) -> None:
    """Its directory is lost, so nothing says what it was but its name: the reader decides."""
    from app.documents.parse import DocumentError, open_document

    real = (DATA / "developers-reference.epub").read_bytes()
    truncated = tmp_path / "reference.epub"
    truncated.write_bytes(real[: len(real) // 2])
    assert detect(truncated, real[:4096]).format is Format.EPUB
    with pytest.raises(DocumentError, match="damaged"):
        open_document(truncated, max_unpacked=1 << 30)
    with pytest.raises(DocumentError, match="damaged"):
        open_document(truncated)
    renamed = tmp_path / "reference.zip"
    renamed.write_bytes(real[: len(real) // 2])
    with pytest.raises(UnsupportedFormat, match="the file is a zip archive"):
        detect(renamed, real[:4096])


def test_an_epub_zipped_inside_its_folder_is_read_from_there(tmp_path: Path) -> None:
    """Debian's debian-edu manuals put every member under epub/: MuPDF opens them, empty."""
    from app.documents.parse import open_document

    with zipfile.ZipFile(DATA / "developers-reference.epub") as flat:
        nested = _zip(
            tmp_path / "manual.epub",
            *((f"epub/{info.filename}", flat.read(info)) for info in flat.infolist()),
        )
    detected = detect(nested, nested.read_bytes()[:4096])
    assert (detected.format, detected.epub_folder) == (Format.EPUB, "epub/")
    document = open_document(nested)
    try:
        assert document.note == "the EPUB is zipped inside a folder (epub/): read from there"
        assert document.page_count > 150
        assert "Debian" in document.load_page(0).get_text()
    finally:
        document.close()


@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("page.png", b"\x89PNG\r\n\x1a\n"),
        ("page.JPG", b"\xff\xd8\xff\xe0"),
        ("fax.tif", b"II*\x00"),
        ("fax.tiff", b"MM\x00*"),
    ],
)
def test_images_are_read_as_scans(name: str, head: bytes) -> None:
    assert detect(Path(name), head) == Detected(Format.IMAGE)


def test_an_image_named_pdf_is_read_as_the_image_it_is() -> None:
    detected = detect(Path("photo.pdf"), b"\x89PNG\r\n\x1a\n")
    assert detected.format is Format.IMAGE
    assert detected.note == "named .pdf but is a scanned image file; indexed as scanned image"


def _detect(path: Path) -> tuple[Format, str | None]:
    detected = detect(path, path.read_bytes()[:4096])
    return detected.format, detected.note


def test_office_files_are_told_apart_by_their_main_part(tmp_path: Path) -> None:
    assert _detect(write_docx(tmp_path / "a.docx")) == (Format.DOCX, None)
    assert _detect(write_pptx(tmp_path / "a.pptx")) == (Format.PPTX, None)
    assert _detect(write_xlsx(tmp_path / "a.xlsx")) == (Format.XLSX, None)


def test_an_office_file_under_another_name_is_read_for_what_it_is(tmp_path: Path) -> None:
    assert _detect(write_pptx(tmp_path / "deck.docx")) == (
        Format.PPTX,
        "named .docx but is a PowerPoint (PPTX) file; indexed as PowerPoint (PPTX)",
    )
    assert _detect(write_xlsx(tmp_path / "export.zip")) == (
        Format.XLSX,
        "named .zip but is a Excel (XLSX); indexed as Excel (XLSX)",
    )


def test_a_damaged_zip_named_docx_is_left_to_the_reader_to_call_damaged(tmp_path: Path) -> None:
    path = tmp_path / "cut.docx"
    path.write_bytes(write_docx(tmp_path / "whole.docx").read_bytes()[:3000])
    assert _detect(path) == (Format.DOCX, None)


def test_an_opendocument_file_is_refused_for_what_it_is(tmp_path: Path) -> None:
    path = _zip(
        tmp_path / "minutes.docx",
        ("mimetype", "application/vnd.oasis.opendocument.text"),
        ("content.xml", "<office:document-content/>"),
    )
    with pytest.raises(UnsupportedFormat, match="the file is an OpenDocument text"):
        _detect(path)


def test_a_password_protected_office_file_is_refused_as_encrypted(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFormat, match=r"^encrypted: it needs a password"):
        _detect(write_encrypted_office(tmp_path / "salaries.xlsx"))
    legacy = tmp_path / "old.doc"
    legacy.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(2048))
    with pytest.raises(UnsupportedFormat, match="an old Microsoft Office file"):
        _detect(legacy)
