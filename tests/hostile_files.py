"""A folder of real, odd and hostile documents, each with what a correct indexer does with it.

Every case is a real file of its kind: one from Debian (tests/data), the rest written here (PDFs
by PyMuPDF, or byte by byte where PyMuPDF refuses to write something broken).
`write_hostile_folder` writes them all and returns, per path, the expected outcome: indexed (with
a phrase that must then be found, and maybe a note), failed (with the start of the reason), or
skipped (a link leading out of the folder).
"""

from __future__ import annotations

import os
import random
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pymupdf

from tests.documents import (
    write_encrypted_pdf,
    write_image_only_pdf,
    write_long_pdf,
    write_pdf,
)

Outcome = Literal["indexed", "failed", "skipped"]
DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True, slots=True)
class Expected:
    outcome: Outcome
    says: str = ""  # indexed: a phrase that must be searchable; else: the reason's start
    note: str = ""  # indexed: a part of the document's note


CHAPTER = (
    '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
    "<head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
)
CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)
PACKAGE = (
    '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" '
    'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
    "<dc:title>{title}</dc:title><dc:identifier id='id'>x</dc:identifier></metadata>"
    '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
    '</manifest><spine><itemref idref="c1"/></spine></package>'
)


def write_epub(path: Path, body: str, *, mimetype_first: bool = True) -> Path:
    """A small EPUB; Sphinx writes its `mimetype` entry after others, which readers accept."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as epub:
        if mimetype_first:
            epub.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        epub.writestr("META-INF/container.xml", CONTAINER)
        epub.writestr("content.opf", PACKAGE.format(title=path.stem))
        epub.writestr("c1.xhtml", CHAPTER.format(title=path.stem, body=body))
        if not mimetype_first:
            epub.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
    return path


def write_zip_bomb_epub(path: Path, inflated_mb: int = 200) -> Path:
    """A valid EPUB whose one chapter inflates from about 1/1000 of its size."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as epub:
        epub.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        epub.writestr("META-INF/container.xml", CONTAINER)
        epub.writestr("content.opf", PACKAGE.format(title="bomb"))
        with epub.open("c1.xhtml", "w", force_zip64=True) as chapter:
            chapter.write(CHAPTER.format(title="bomb", body="").encode()[:-14])
            paragraph = b"<p>" + b"lorem ipsum dolor " * 50 + b"</p>\n"
            block = paragraph * (2**20 // len(paragraph))
            for _ in range(inflated_mb):
                chapter.write(block)
            chapter.write(b"</body></html>")
    return path


def write_raw_pdf(path: Path, objects: dict[int, bytes], root: int = 1) -> Path:
    """A PDF written object by object, for structures PyMuPDF will not write itself."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += b"%010d 00000 n \n" % offsets.get(number, 0)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, xref)
    path.write_bytes(bytes(out))
    return path


def _page_objects(text: str) -> dict[int, bytes]:
    content = b"BT /F1 12 Tf 72 720 Td (" + text.encode() + b") Tj ET"
    return {
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
        b"/Resources << /Font << /F1 6 0 R >> >> >>",
        5: b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        6: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }


def write_deep_outline_pdf(path: Path, depth: int) -> Path:
    """One page of text and an outline nested `depth` levels deep."""
    objects = _page_objects("Deep outline document text")
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R /Outlines 4 0 R >>"
    objects[2] = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
    objects[4] = b"<< /Type /Outlines /First 7 0 R /Last 7 0 R /Count %d >>" % depth
    for level in range(depth):
        number = 7 + level
        parent = 4 if level == 0 else number - 1
        child = b" /First %d 0 R /Last %d 0 R /Count 1" % ((number + 1,) * 2)
        objects[number] = b"<< /Title (L%d) /Parent %d 0 R /Dest [3 0 R /Fit]%s >>" % (
            level,
            parent,
            child if level < depth - 1 else b"",
        )
    return write_raw_pdf(path, objects)


def write_page_tree_cycle_pdf(path: Path) -> Path:
    """The page tree's second node lists its own parent as a kid."""
    objects = _page_objects("A page in a looping tree")
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[2] = b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 3 >>"
    objects[4] = b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 2 >>"
    return write_raw_pdf(path, objects)


def write_dense_page_pdf(path: Path, characters: int = 200_000) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=2000, height=8000)
    words = " ".join(f"word{n % 997}" for n in range(characters // 8))
    text = "Dense page marker quetzal. " + words
    page.insert_textbox(pymupdf.Rect(10, 10, 1990, 7990), text, fontsize=3)
    doc.save(path)
    doc.close()
    return path


def write_nested_tables_html(path: Path, depth: int = 5000) -> Path:
    path.write_text(
        "<html><body><p>Nested tables marker walrus.</p>"
        + "<table><tr><td>" * depth
        + "deep cell"
        + "</td></tr></table>" * depth
        + "</body></html>",
        "utf-8",
    )
    return path


def write_entity_fb2(path: Path) -> Path:
    """A billion-laughs DTD and an external entity naming /etc/passwd."""
    laughs = "".join(f'<!ENTITY lol{n} "{("&lol" + str(n - 1) + ";") * 10}">' for n in range(1, 10))
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>'
        f'<!DOCTYPE FictionBook [<!ENTITY lol0 "lol">{laughs}'
        '<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><description>'
        "<title-info><book-title>Entities</book-title></title-info></description><body>"
        "<section><p>Entity marker narwhal.</p><p>&lol9;</p><p>&secret;</p></section>"
        "</body></FictionBook>",
        "utf-8",
    )
    return path


def write_remote_references_html(path: Path) -> Path:
    """Everything that would make a browser fetch from a (documentation-only) address."""
    remote = "http://203.0.113.1"
    path.write_text(
        f'<html><head><link rel="stylesheet" href="{remote}/style.css">'
        f"<style>@import url({remote}/more.css); body {{ background: url({remote}/bg.png) }}"
        f'</style></head><body><img src="{remote}/pixel.png"><iframe src="{remote}/"></iframe>'
        f'<object data="{remote}/x.svg"></object><p>Remote marker pelican.</p></body></html>',
        "utf-8",
    )
    return path


LATIN_1 = (
    "Ærøskøbing ligger på Ærø. Une idée naïve du garçon français. El señor pagó en el año "
    "pasado. Die Größe der Übung. O coração não mente. Þórður og Guðrún. Perché è così. "
    "Smörgåsbord på Åland."
)


def write_hostile_folder(folder: Path, shuffle: int | None = None) -> dict[Path, Expected]:
    """Write every case into `folder` (and a sibling folder that links lead to); with
    `shuffle`, names get a prefix from that seed, so a folder walk meets them in another order."""
    folder.mkdir(parents=True, exist_ok=True)
    outside = folder.parent / f"{folder.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("Outside marker mongoose: never indexed.\n")
    cases: dict[Path, Expected] = {}

    def case(path: Path, outcome: Outcome, says: str = "", note: str = "") -> None:
        cases[path] = Expected(outcome, says, note)

    case(write_pdf(folder / "good.pdf"), "indexed", "retained for seven years")
    case(
        write_epub(folder / "sphinx.epub", "<p>Sphinx marker ocelot.</p>", mimetype_first=False),
        "indexed",
        "Sphinx marker ocelot",
    )
    real_epub = folder / "developers-reference.epub"
    real_epub.write_bytes((DATA / "developers-reference.epub").read_bytes())
    case(real_epub, "indexed", "Security uploads")
    case(write_zip_bomb_epub(folder / "bomb.epub"), "failed", "too large when unpacked")
    case(write_page_tree_cycle_pdf(folder / "cycle.pdf"), "failed", "the PDF's page tree loops")
    for depth in (5_000, 100_000):
        case(
            write_deep_outline_pdf(folder / f"outline-{depth}.pdf", depth),
            "indexed",
            "Deep outline document text",
            "indexed without headings",
        )
    long_run = folder / "long-run.txt"
    long_run.write_text("Unbroken marker jackal: " + "x" * 400_000 + "\n")
    case(long_run, "indexed", "Unbroken marker jackal")
    (folder / "latin-1.txt").write_bytes(LATIN_1.encode("latin-1"))
    case(folder / "latin-1.txt", "indexed", "Ærøskøbing")
    (folder / "cp1252.txt").write_bytes(
        "The \u201cquoted\u201d price was 5\u20ac \u2014 a fair one, na\u00efve or not.".encode(
            "cp1252"
        )
    )
    case(folder / "cp1252.txt", "indexed", "5€")
    good = (folder / "good.pdf").read_bytes()
    (folder / "truncated.pdf").write_bytes(good[:300])
    case(folder / "truncated.pdf", "failed", "damaged")
    middle = len(good) // 2
    garbage = random.Random(7).randbytes(4096)
    (folder / "garbage-inside.pdf").write_bytes(good[:middle] + garbage + good[middle:])
    case(folder / "garbage-inside.pdf", "indexed", "governance programme")
    case(write_encrypted_pdf(folder / "encrypted.pdf"), "failed", "encrypted")
    case(write_image_only_pdf(folder / "scan.pdf"), "failed", "no text layer")
    (folder / "minutes.pdf").write_text("<html><body><p>Board marker heron.</p></body></html>")
    case(folder / "minutes.pdf", "indexed", "Board marker heron", "indexed as HTML")
    (folder / "report-copy.txt").write_bytes(good)
    case(folder / "report-copy.txt", "indexed", "retained for seven years", "indexed as PDF")
    (folder / "photo.pdf").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    case(folder / "photo.pdf", "failed", "unsupported type: the file is a PNG image")
    (folder / "random.txt").write_bytes(random.Random(3).randbytes(8192))
    case(folder / "random.txt", "failed", "not readable as plain text")
    case(write_long_pdf(folder / "two-thousand.pdf", 2000), "indexed", "balances account 62011")
    case(write_dense_page_pdf(folder / "dense-page.pdf"), "indexed", "Dense page marker quetzal")
    # MuPDF's HTML layout overflows its stack (not only the main thread's, any size tried).
    case(write_nested_tables_html(folder / "tables.html"), "failed", "crashed the HTML reader")
    case(write_entity_fb2(folder / "entities.fb2"), "indexed", "Entity marker narwhal")
    case(write_remote_references_html(folder / "remote.html"), "indexed", "Remote marker pelican")
    (folder / "empty.pdf").write_bytes(b"")
    case(folder / "empty.pdf", "failed", "empty file")
    (folder / "blank.md").write_text("  \n\n\t\n")
    case(folder / "blank.md", "failed", "contains only whitespace")
    locked = folder / "locked.md"
    locked.write_text("# Locked\n\nLocked marker ibis.\n")
    locked.chmod(0)
    if os.access(locked, os.R_OK):  # root reads anything
        case(locked, "indexed", "Locked marker ibis")
    else:
        case(locked, "failed", "permission denied")
    for name, marker in (
        ("-leading-dash.md", "Dash marker lemur"),
        ("new\nline.md", "Newline marker tapir"),
        ("escape\x1b[31m.md", "Escape marker okapi"),
        (unicodedata.normalize("NFD", "café-décomposé.md"), "Decomposed marker gecko"),
        ("l" + "o" * 200 + "ng.md", "Long name marker bison"),
        ("漢字の名前.md", "Kanji marker dingo"),
    ):
        (folder / name).write_text(f"# Odd\n\n{marker}.\n")
        case(folder / name, "indexed", marker)
    (folder / "link.txt").symlink_to("/etc/passwd")
    case(folder / "link.txt", "skipped", "a link to something outside")
    (folder / "secret-link.txt").symlink_to(outside / "secret.txt")
    case(folder / "secret-link.txt", "skipped", "a link to something outside")
    (folder / "elsewhere").symlink_to(outside, target_is_directory=True)
    case(folder / "elsewhere", "skipped", "a link to something outside")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to(folder, target_is_directory=True)
    case(folder / "sub" / "up", "skipped", "a link back to a folder that holds it")
    return cases if shuffle is None else _shuffled(cases, random.Random(shuffle))


def _shuffled(cases: dict[Path, Expected], rng: random.Random) -> dict[Path, Expected]:
    ranks = rng.sample(range(len(cases)), len(cases))
    renamed = {}
    for rank, (path, expected) in zip(ranks, cases.items(), strict=True):
        new = path.with_name(f"{rank:02d}{path.name}")
        path.rename(new)
        renamed[new] = expected
    return renamed
