"""What a file really is: its extension, checked against its first bytes."""

from __future__ import annotations

import re
import zipfile
import zlib
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from app.documents.textcodec import NotTextError, decode_text


class Format(StrEnum):
    PDF = "pdf"
    EPUB = "epub"
    XPS = "xps"
    MOBI = "mobi"
    FB2 = "fb2"
    HTML = "html"
    MARKDOWN = "md"
    TEXT = "txt"
    IMAGE = "image"  # PNG, JPEG, TIFF: a scan, read by OCR
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"

    @property
    def is_office(self) -> bool:
        """Formats read by app.documents.office into pages, slides and sheets."""
        return self in (Format.DOCX, Format.PPTX, Format.XLSX)

    @property
    def is_text(self) -> bool:
        """Formats we decode ourselves (legacy encodings) before MuPDF lays them out."""
        return self in (Format.HTML, Format.MARKDOWN, Format.TEXT)

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Format.PDF: "PDF",
    Format.EPUB: "EPUB",
    Format.XPS: "XPS",
    Format.MOBI: "MOBI",
    Format.FB2: "FictionBook",
    Format.HTML: "HTML",
    Format.MARKDOWN: "Markdown",
    Format.TEXT: "plain text",
    Format.IMAGE: "scanned image",
    Format.DOCX: "Word (DOCX)",
    Format.PPTX: "PowerPoint (PPTX)",
    Format.XLSX: "Excel (XLSX)",
}

EXTENSIONS: dict[str, Format] = {
    ".pdf": Format.PDF,
    ".epub": Format.EPUB,
    ".xps": Format.XPS,
    ".oxps": Format.XPS,
    ".mobi": Format.MOBI,
    ".fb2": Format.FB2,
    ".html": Format.HTML,
    ".htm": Format.HTML,
    ".xhtml": Format.HTML,
    ".md": Format.MARKDOWN,
    ".markdown": Format.MARKDOWN,
    ".txt": Format.TEXT,
    ".text": Format.TEXT,
    ".rst": Format.TEXT,
    ".png": Format.IMAGE,
    ".jpg": Format.IMAGE,
    ".jpeg": Format.IMAGE,
    ".tif": Format.IMAGE,
    ".tiff": Format.IMAGE,
    ".docx": Format.DOCX,
    ".pptx": Format.PPTX,
    ".xlsx": Format.XLSX,
}
# An Office Open XML package is a zip whose main part says which application wrote it.
_OFFICE_PARTS = {
    "word/document.xml": Format.DOCX,
    "ppt/presentation.xml": Format.PPTX,
    "xl/workbook.xml": Format.XLSX,
}
_ODF_MIMETYPE = b"application/vnd.oasis.opendocument."
# Office's password protection wraps the package in an OLE2 compound file with this stream.
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")

# Binary formats people drop by mistake, named so the message can say what the file is.
_FOREIGN_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"GIF8", "a GIF image"),
    (b"\x7fELF", "a program (ELF)"),
    (b"MZ", "a Windows program"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office file"),
    (b"SQLite format 3", "an SQLite database"),
)
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")  # PNG, JPEG, TIFF
# EPUB's container.xml names its package document (OPF) in a rootfile's full-path; a real one is
# well under 1 KB, a `mimetype` member 20 bytes.
_ROOTFILE = re.compile(rb"""<(?:[\w.-]+:)?rootfile\b[^>]*?\sfull-path\s*=\s*["']([^"']+)["']""")
_SMALL_MEMBER = 64 << 10
_HTML_START = re.compile(rb"^\s*(<!doctype\s+html|<html|<head|<body|<meta|<!--)", re.IGNORECASE)

SUPPORTED = ", ".join(sorted(EXTENSIONS))


def is_document_name(name: str) -> bool:
    """A file a folder's walk indexes: a supported extension, not hidden, and not the owner file
    ("~$report.docx", 162 bytes) Office keeps beside every document it has open."""
    return not name.startswith((".", "~$")) and Path(name).suffix.lower() in EXTENSIONS


class UnsupportedFormat(ValueError):
    """The file is of a type Docent cannot read; the message says which."""


@dataclass(frozen=True, slots=True)
class Detected:
    format: Format
    note: str | None = None  # set when the extension lied and the content decided
    # An EPUB zipped with its folder ("epub/mimetype", "epub/META-INF/…"): where it sits.
    epub_folder: str = ""


@dataclass(frozen=True, slots=True)
class Foreign:
    """A binary type Docent does not read, described for the error message."""

    description: str


def sniff(head: bytes) -> Format | Foreign | None:
    """A Format from magic bytes, a foreign binary type, or None (text-like)."""
    if b"%PDF-" in head[:1024]:
        return Format.PDF
    if head.startswith(b"PK\x03\x04"):
        if b"mimetypeapplication/epub+zip" in head[:100]:
            return Format.EPUB
        if b"[Content_Types].xml" in head[:200] or b"FixedDocSeq" in head or b"_rels/" in head:
            return Foreign("a zip package (XPS or Office)")
        return Foreign("a zip archive")
    if head.startswith(_IMAGE_MAGIC):
        return Format.IMAGE
    if head[60:68] == b"BOOKMOBI":
        return Format.MOBI
    for magic, description in _FOREIGN_MAGIC:
        if head.startswith(magic):
            return Foreign(description)
    stripped = head.lstrip(b"\xef\xbb\xbf")
    if b"<FictionBook" in stripped[:1024]:
        return Format.FB2
    if _HTML_START.match(stripped):
        return Format.HTML
    return None


def detect(path: Path, head: bytes) -> Detected:
    """Decide the format from the extension and the first bytes; refuse what we cannot read."""
    by_extension = EXTENSIONS.get(path.suffix.lower())
    sniffed = sniff(head)
    if head.startswith(_OLE2) and _is_encrypted_office(path):
        raise UnsupportedFormat("encrypted: it needs a password, and Docent cannot index it")
    if not (isinstance(sniffed, Foreign) and head.startswith(b"PK\x03\x04")):
        return _decide(path, head, by_extension, sniffed)
    try:
        folder = _epub_folder(path)
        office = _zip_package(path) if folder is None else None
    except _UnreadableZip:
        if by_extension is Format.EPUB or (by_extension and by_extension.is_office):
            # Nothing but its name says what it was: let the reader say it is damaged.
            return Detected(by_extension)
        folder = office = None
    if office is not None:
        return _decide(path, head, by_extension, office)
    if folder is None:
        return _decide(path, head, by_extension, sniffed)
    detected = _decide(path, head, by_extension, Format.EPUB)
    if not folder:
        return detected
    inside = f"the EPUB is zipped inside a folder ({folder}): read from there"
    return replace(
        detected, note="; ".join(filter(None, [detected.note, inside])), epub_folder=folder
    )


def _decide(
    path: Path, head: bytes, by_extension: Format | None, sniffed: Format | Foreign | None
) -> Detected:
    if isinstance(sniffed, Foreign):
        if by_extension is Format.XPS and "zip" in sniffed.description:
            return Detected(Format.XPS)
        raise UnsupportedFormat(
            f"unsupported type: the file is {sniffed.description} (Docent reads {SUPPORTED})"
        )
    if by_extension is None:
        if isinstance(sniffed, Format) and (
            sniffed in (Format.PDF, Format.EPUB, Format.MOBI, Format.IMAGE) or sniffed.is_office
        ):
            return Detected(
                sniffed,
                f"named {path.suffix or 'without extension'} but is a "
                f"{sniffed.label}; indexed as {sniffed.label}",
            )
        raise UnsupportedFormat(
            f"unsupported type {path.suffix or '(no extension)'} (Docent reads {SUPPORTED})"
        )
    if sniffed is None:
        if by_extension.is_text:
            return Detected(by_extension)
        try:
            decode_text(head)
        except NotTextError:
            raise UnsupportedFormat(
                f"not a valid {by_extension.label} file: it is damaged or of another type"
            ) from None
        # A "PDF" full of plain text: read it for what it is rather than fail.
        return Detected(
            Format.TEXT,
            f"named {path.suffix} but contains no {by_extension.label} data; indexed as plain text",
        )
    if sniffed is by_extension or (sniffed is Format.HTML and by_extension.is_text):
        # Markdown and text may legitimately begin with an HTML comment or tag.
        return Detected(by_extension)
    return Detected(
        sniffed, f"named {path.suffix} but is a {sniffed.label} file; indexed as {sniffed.label}"
    )


class _UnreadableZip(Exception):
    pass


def _zip_package(path: Path) -> Format | Foreign | None:
    """An Office Open XML format from the zip's members, an OpenDocument file (named, as Docent
    does not read it yet), or None. Raises _UnreadableZip when zipfile cannot read it."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "[Content_Types].xml" in names:
                for part, fmt in _OFFICE_PARTS.items():
                    if part in names:
                        return fmt
            mimetype = archive.getinfo("mimetype") if "mimetype" in names else None
            if mimetype is not None and mimetype.file_size <= _SMALL_MEMBER:
                kind = archive.read(mimetype).strip()
                if kind.startswith(_ODF_MIMETYPE):
                    name = kind.removeprefix(_ODF_MIMETYPE).decode("ascii", "replace")
                    return Foreign(f"an OpenDocument {name} (save it as DOCX, PPTX or XLSX)")
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError, zlib.error):
        raise _UnreadableZip from None
    return None


def _is_encrypted_office(path: Path) -> bool:
    """Whether an OLE2 compound file holds Office's EncryptedPackage stream: its name sits in a
    directory sector anywhere in the file, so the file is scanned (1 MB at a time)."""
    overlap = len(_ENCRYPTED_PACKAGE)
    tail = b""
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            if _ENCRYPTED_PACKAGE in tail + block:
                return True
            tail = block[-overlap:]
    return False


def _epub_folder(path: Path) -> str | None:
    """Where in the zip an EPUB sits ("" at the top, as it should; "epub/" when it was zipped
    with its folder, as Debian's debian-edu manuals are), or None: not an EPUB. As readers
    (MuPDF included) decide: a `mimetype` member saying so wherever it sits in the order
    (Sphinx writes it after others), or a META-INF/container.xml naming a package document the
    zip holds. Only small members are inflated: a zip bomb costs nothing here. Raises
    _UnreadableZip when zipfile cannot read it."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename: info for info in archive.infolist()}
            top = {name.split("/", 1)[0] + "/" for name in members if "/" in name}
            folders = ["", *sorted(top)]
            for folder in folders:
                mimetype = members.get(f"{folder}mimetype")
                if (
                    mimetype is not None
                    and mimetype.file_size <= _SMALL_MEMBER
                    and archive.read(mimetype).strip() == b"application/epub+zip"
                ):
                    return folder
                container = members.get(f"{folder}META-INF/container.xml")
                if container is None or container.file_size > _SMALL_MEMBER:
                    continue
                for package in _ROOTFILE.findall(archive.read(container)):
                    if f"{folder}{package.decode('utf-8', 'replace')}" in members:
                        return folder
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError, zlib.error):
        raise _UnreadableZip from None  # also a member damaged, encrypted or oddly compressed
    return None
