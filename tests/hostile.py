"""Hostile documents for the indexer: files that hang, crash, exhaust or fool a reader.

`write_hostile_folder` writes the cases into one folder (plus a sibling that links lead to) and
returns, per path, what a correct indexer does with each: `indexed` (a phrase that must then be
searchable, maybe a part of the note), `failed` or `skipped` (with a Reason). Sizes are
parameters so a quick test can shrink the slow cases. Everything is seeded: two runs write the
same content (PyMuPDF's saves and zipfile's entries carry the time; the raw writers' bytes are
identical), and the whole folder takes about a second.

The writers of tests/documents.py are reused; the cases are stated by category of outcome,
not by wording.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import random
import struct
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal, NamedTuple

import pymupdf

from tests.documents import (
    write_encrypted_pdf,
    write_image_only_pdf,
    write_mobi,
    write_pdf,
    write_xps,
)

Outcome = Literal["indexed", "failed", "skipped"]
DATA = Path(__file__).resolve().parent / "data"


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


class Reason(StrEnum):
    """Why a file is refused, by category; each value is how Docent's reason starts, so a change
    of wording is made here alone."""

    TOO_LARGE_UNPACKED = "too large when unpacked"
    TOO_LARGE = "too large for"  # a text file over the size Docent reads
    TIMEOUT = "took longer than"
    MEMORY = "needed more than"
    CRASHED = "crashed the"
    PAGE_TREE_LOOP = "the PDF's page tree loops"
    DAMAGED = "damaged"
    ENCRYPTED = "encrypted"
    NO_TEXT = "no text layer"
    NO_TEXT_AT_ALL = "contains no text"
    UNSUPPORTED = "unsupported type"
    NOT_TEXT = "not readable as"
    EMPTY = "empty file"
    WHITESPACE = "contains only whitespace"
    PERMISSION = "permission denied"
    NOT_A_FILE = "not a regular file"  # a FIFO or a device: opening it may block forever
    LINK_OUTSIDE = "a link to something outside"
    LINK_LOOP = "a link back to a folder that holds it"
    SELF_LINK = "a link that loops"
    BROKEN_LINK = "a broken link"

    def matches(self, said: str) -> bool:
        return said.startswith(self.value)


@dataclass(frozen=True, slots=True)
class HostileCase:
    outcome: Outcome
    phrase: str = ""  # indexed: found by a search afterwards (none: a document without text)
    note: str = ""  # indexed: a part of the document's note
    reason: Reason | None = None  # failed or skipped
    why: str = ""  # what makes it hostile
    slow: bool = False  # costs seconds or hundreds of MB to read, even when handled well
    within_s: float | None = None  # a correct reader settles it this fast (far below a limit)
    name: str = ""  # the case's name (its path under the folder, before any shuffle)


@dataclass(frozen=True, slots=True)
class Sizes:
    """How big the cases that scale are; the defaults reproduce the reported incidents."""

    bomb_mb: int = 200  # zip-bomb EPUB: unpacked XHTML
    long_run_kb: int = 400  # text without a single space
    cjk_run_kb: int = 200  # Chinese without spaces or newlines (UTF-8 bytes)
    huge_text_mb: int = 20  # ordinary prose, under the text size limit
    sparse_gb: int = 2  # a sparse file of NULs named .txt (no disk used)
    pages: int = 2000
    dense_chars: int = 200_000  # characters on one page
    # MuPDF's HTML layout crashes (SIGSEGV, whatever the stack) past about 4,096 nested boxes:
    # divs at 4,100, tables (3 boxes a level) by 1,300, Markdown quotes by 5,000.
    table_depth: int = 5000  # HTML tables; also Markdown block quotes
    list_depth: int = 1000  # Markdown lists (their indentation makes the file quadratic)
    div_depth: int = 20_000  # HTML divs; also PDF arrays (MuPDF stops at 254)
    outline_depth: int = 100_000
    outline_medium_depth: int = 5_000
    stream_bomb_mb: int = 200  # a PDF content stream of spaces, FlateDecoded
    image_pixels: int = 30_000  # width and height an image claims (RGB: 2.7 GB at 30,000)


# Seconds within which a correct reader settles the cases that would otherwise hang (120 s is
# the default limit; MuPDF took 118 s for 400 KB without a space).
QUICKLY = 15.0

# The bombs stay full size: they cost nothing to write, and a correct reader never inflates them.
QUICK = Sizes(
    long_run_kb=40,
    cjk_run_kb=20,
    huge_text_mb=2,
    pages=50,
    dense_chars=20_000,
    list_depth=100,
    div_depth=5000,
    stream_bomb_mb=10,
)

Writer = Callable[[Path, Sizes], HostileCase]
CASES: dict[str, Writer] = {}


def _case(*names: str) -> Callable[[Writer], Writer]:
    """Register a writer of the case(s) `names`; it is called with the path to write."""

    def register(writer: Writer) -> Writer:
        for name in names:
            CASES[name] = writer
        return writer

    return register


def write_hostile_folder(
    folder: Path,
    sizes: Sizes = Sizes(),
    *,
    shuffle: int | None = None,
    only: Collection[str] | None = None,
) -> dict[Path, HostileCase]:
    """Write the cases (all, or those named in `only`; see CASES) into `folder`. With `shuffle`,
    names whose spelling is not the point get a seeded prefix, so a sorted folder walk meets the
    cases in another order."""
    folder.mkdir(parents=True, exist_ok=True)
    outside = folder.parent / f"{folder.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("Outside marker mongoose: never indexed.\n")
    cases: dict[Path, HostileCase] = {}
    for name, writer in CASES.items():
        if only is None or name in only:
            path = folder / name
            path.parent.mkdir(exist_ok=True)
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                path.unlink()  # a FIFO or a link would not be overwritten
            cases[path] = dataclasses.replace(writer(path, sizes), name=name)
    return cases if shuffle is None else _shuffled(cases, random.Random(shuffle))


def _shuffled(cases: dict[Path, HostileCase], rng: random.Random) -> dict[Path, HostileCase]:
    ranks = rng.sample(range(len(cases)), len(cases))
    renamed = {}
    for rank, (path, case) in zip(ranks, cases.items(), strict=True):
        if case.name in ODD_NAMES or "/" in case.name or path.is_symlink():
            renamed[path] = case  # the name, the place or the target is the case
            continue
        new = path.with_name(f"{rank:02d}-{path.name}")
        path.rename(new)
        renamed[new] = case
    return renamed


# ---------------------------------------------------------------------------------------------
# Good files of every format: the control group, which hostile neighbours must not spoil.


@_case("good.pdf")
def _good_pdf(path: Path, sizes: Sizes) -> HostileCase:
    write_pdf(path)
    return HostileCase("indexed", "retained for seven years")


@_case("good.epub")
def _good_epub(path: Path, sizes: Sizes) -> HostileCase:
    write_epub(path, "<p>Good marker otter.</p>")
    return HostileCase("indexed", "Good marker otter")


@_case("good.xps")
def _good_xps(path: Path, sizes: Sizes) -> HostileCase:
    write_xps(path, "XPS marker kestrel")
    return HostileCase("indexed", "XPS marker kestrel")


@_case("good.mobi")
def _good_mobi(path: Path, sizes: Sizes) -> HostileCase:
    write_mobi(path, "<html><body><p>MOBI marker badger.</p></body></html>")
    return HostileCase("indexed", "MOBI marker badger")


@_case("good.fb2")
def _good_fb2(path: Path, sizes: Sizes) -> HostileCase:
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><description>'
        "<title-info><book-title>Lighthouse</book-title></title-info></description><body>"
        "<section><p>The keeper lights the lamp before sunset, marker puffin.</p></section>"
        "</body></FictionBook>",
        "utf-8",
    )
    return HostileCase("indexed", "marker puffin")


@_case("developers-reference.epub")
def _debian_epub(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes((DATA / "developers-reference.epub").read_bytes())
    return HostileCase("indexed", "Security uploads", why="Sphinx: mimetype is not first")


@_case("sphinx.epub")
def _sphinx_epub(path: Path, sizes: Sizes) -> HostileCase:
    write_epub(path, "<p>Sphinx marker ocelot.</p>", mimetype_first=False)
    return HostileCase("indexed", "Sphinx marker ocelot", why="mimetype is not the first entry")


# ---------------------------------------------------------------------------------------------
# Archives


class Deflated(NamedTuple):
    data: bytes  # raw deflate (no zlib header)
    size: int
    crc32: int
    adler32: int


def deflate_repeated(*parts: tuple[bytes, int]) -> Deflated:
    """Raw deflate of each (bytes, times) in turn. Repeated bytes are compressed once: a full
    flush makes each copy stand alone, so a 200 MB bomb takes milliseconds, not seconds."""
    pieces = []
    size, crc, adler = 0, 0, 1
    for data, times in parts:
        squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
        pieces.append((squeeze.compress(data) + squeeze.flush(zlib.Z_FULL_FLUSH)) * times)
        for _ in range(times):
            crc, adler = zlib.crc32(data, crc), zlib.adler32(data, adler)
        size += len(data) * times
    pieces.append(zlib.compressobj(9, zlib.DEFLATED, -15).flush())  # the final, empty block
    return Deflated(b"".join(pieces), size, crc, adler)


def write_zip(path: Path, entries: Sequence[tuple[str, bytes | Deflated]], **claims: int) -> Path:
    """A zip of stored (bytes) and deflated entries, written by hand so that an entry can claim
    an unpacked size (`claims`: name → size) other than its real one."""
    out, central = bytearray(), bytearray()
    for name, body in entries:
        if isinstance(body, Deflated):
            method, data, size, crc = 8, body.data, body.size, body.crc32
        else:
            method, data, size, crc = 0, body, len(body), zlib.crc32(body)
        size = claims.get(name, size)
        if max(size, len(data), len(out)) >= 2**32:
            raise ValueError("write_zip writes no zip64: keep entries under 4 GiB")
        fields = struct.pack("<HHHHIII", 0, method, 0, 0x21, crc, len(data), size)
        encoded = name.encode()
        central += b"PK\x01\x02" + struct.pack("<HH", 20, 20) + fields
        central += struct.pack("<HHHHHII", len(encoded), 0, 0, 0, 0, 0, len(out)) + encoded
        out += b"PK\x03\x04" + struct.pack("<H", 20) + fields
        out += struct.pack("<HH", len(encoded), 0) + encoded + data
    end = struct.pack("<HHHHIIH", 0, 0, len(entries), len(entries), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + b"PK\x05\x06" + end))
    return path


def write_bomb_epub(path: Path, inflated_mb: int, *, claimed: int | None = None) -> Path:
    """A valid EPUB whose one chapter is `inflated_mb` MB of XHTML, deflated about 300:1; with
    `claimed`, the zip's headers say the chapter is that many bytes."""
    head, tail = CHAPTER.format(title="bomb", body="\0").encode().split(b"\0")
    paragraph = b"<p>" + b"lorem ipsum dolor " * 50 + b"</p>\n"
    chapter = deflate_repeated(
        (head, 1), (paragraph * (2**20 // len(paragraph)), inflated_mb), (tail, 1)
    )
    entries: list[tuple[str, bytes | Deflated]] = [
        ("mimetype", b"application/epub+zip"),
        ("META-INF/container.xml", CONTAINER.encode()),
        ("content.opf", PACKAGE.format(title="bomb").encode()),
        ("c1.xhtml", chapter),
    ]
    return write_zip(path, entries, **({} if claimed is None else {"c1.xhtml": claimed}))


@_case("bomb.epub")
def _bomb(path: Path, sizes: Sizes) -> HostileCase:
    write_bomb_epub(path, sizes.bomb_mb)
    why = f"{sizes.bomb_mb} MB of XHTML deflated to {path.stat().st_size >> 10} KB"
    return HostileCase("failed", reason=Reason.TOO_LARGE_UNPACKED, why=why, slow=True)


@_case("lying-sizes.epub")
def _lying_zip(path: Path, sizes: Sizes) -> HostileCase:
    write_bomb_epub(path, sizes.bomb_mb, claimed=4096)
    why = f"the zip's headers claim 4 KB for a chapter of {sizes.bomb_mb} MB (MuPDF: inflate error)"
    return HostileCase("failed", reason=Reason.DAMAGED, why=why)


@_case("xxe.epub")
def _xxe_epub(path: Path, sizes: Sizes) -> HostileCase:
    chapter = (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<!DOCTYPE html [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>'
        "<p>XXE marker civet.</p><p>&secret;</p></body></html>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as epub:
        epub.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        epub.writestr("META-INF/container.xml", CONTAINER)
        epub.writestr("content.opf", PACKAGE.format(title="xxe"))
        epub.writestr("c1.xhtml", chapter)
    return HostileCase("indexed", "XXE marker civet", why="external entity for /etc/passwd")


@_case("archive.epub")
def _plain_zip(path: Path, sizes: Sizes) -> HostileCase:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "Not a book at all.")
    return HostileCase("failed", reason=Reason.UNSUPPORTED, why="a plain zip named .epub")


# ---------------------------------------------------------------------------------------------
# PDF structure: raw objects, for what PyMuPDF will not write


def _one_page_pdf(
    path: Path,
    text: str,
    *,
    page: bytes = b"",
    resources: bytes = b"",
    content: bytes = b"",
    catalog: bytes = b"",
    count: int = 1,
    mediabox: bytes = b"0 0 612 792",
    objects: dict[int, bytes] | None = None,
) -> Path:
    """Catalog 1, pages 2, page 3, contents 5, font 6; the caller may add objects 4 and 7+."""
    shown = b"BT /F1 12 Tf 72 720 Td (" + text.encode() + b") Tj ET " + content
    return write_raw_pdf(
        path,
        {
            1: b"<< /Type /Catalog /Pages 2 0 R" + catalog + b" >>",
            2: b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
            3: b"<< /Type /Page /Parent 2 0 R /MediaBox [%s] /Contents 5 0 R " % mediabox
            + b"/Resources << /Font << /F1 6 0 R >>"
            + resources
            + b" >>"
            + page
            + b" >>",
            5: b"<< /Length %d >>\nstream\n" % len(shown) + shown + b"\nendstream",
            6: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            **(objects or {}),
        },
    )


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< %s /Length %d >>\nstream\n" % (dictionary, len(data)) + data + b"\nendstream"


@_case("cycle.pdf")
def _page_tree_cycle(path: Path, sizes: Sizes) -> HostileCase:
    write_page_tree_cycle_pdf(path)
    why = "a Pages node lists its parent as a kid"
    return HostileCase("failed", reason=Reason.PAGE_TREE_LOOP, why=why)


@_case("outline-deep.pdf", "outline-medium.pdf")
def _deep_outline(path: Path, sizes: Sizes) -> HostileCase:
    depth = sizes.outline_depth if path.name == "outline-deep.pdf" else sizes.outline_medium_depth
    write_deep_outline_pdf(path, depth)
    return HostileCase(
        "indexed",
        "Deep outline document text",
        note="indexed without headings",
        why=f"an outline nested {depth:,} deep (MuPDF's outline loader recurses)",
    )


@_case("outline-cycle.pdf")
def _outline_cycle(path: Path, sizes: Sizes) -> HostileCase:
    _one_page_pdf(
        path,
        "Outline cycle marker heron",
        catalog=b" /Outlines 4 0 R",
        objects={
            4: b"<< /Type /Outlines /First 7 0 R /Last 8 0 R /Count 2 >>",
            7: b"<< /Title (A) /Parent 4 0 R /Next 8 0 R /Dest [3 0 R /Fit] >>",
            8: b"<< /Title (B) /Parent 4 0 R /Next 7 0 R /Prev 7 0 R /Dest [3 0 R /Fit] >>",
        },
    )
    return HostileCase("indexed", "Outline cycle marker heron", why="items are each other's /Next")


@_case("lying-count.pdf")
def _lying_count(path: Path, sizes: Sizes) -> HostileCase:
    _one_page_pdf(path, "Lying count marker marten", count=2_000_000_000)
    why = "/Count 2e9 over one page (MuPDF: invalid number of pages)"
    return HostileCase("failed", reason=Reason.DAMAGED, why=why)


@_case("lying-count-small.pdf")
def _lying_count_small(path: Path, sizes: Sizes) -> HostileCase:
    _one_page_pdf(path, "Small lie marker sable", count=3)
    why = "/Count 3 over one page: pages 2 and 3 raise 'page not in document'"
    note = "damaged: 2 of 3 pages cannot be read"  # the count it claims, not MuPDF's after
    return HostileCase("indexed", "Small lie marker sable", note=note, why=why)


@_case("xobject-cycle.pdf")
def _xobject_cycle(path: Path, sizes: Sizes) -> HostileCase:
    form = b"BT /F1 12 Tf 72 700 Td (inner) Tj ET /X1 Do"
    _one_page_pdf(
        path,
        "XObject cycle marker lynx",
        resources=b" /XObject << /X1 7 0 R >>",
        content=b"/X1 Do",
        objects={
            7: _stream(
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] "
                b"/Resources << /XObject << /X1 7 0 R >> /Font << /F1 6 0 R >> >>",
                form,
            )
        },
    )
    return HostileCase("indexed", "XObject cycle marker lynx", why="a form that draws itself")


def _nested_array(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@_case("deep-array.pdf")
def _deep_array(path: Path, sizes: Sizes) -> HostileCase:
    depth = sizes.div_depth
    _one_page_pdf(
        path,
        "Deep array marker vole",
        objects={9: b"<< /Title (Lost) /Junk " + _nested_array(depth) + b" >>"},
    )
    path.write_bytes(path.read_bytes().replace(b"/Root 1 0 R", b"/Root 1 0 R /Info 9 0 R"))
    why = f"an array nested {depth:,} deep in /Info: MuPDF stops at 254 and drops the metadata"
    return HostileCase("indexed", "Deep array marker vole", why=why)


@_case("deep-array-page.pdf")
def _deep_array_page(path: Path, sizes: Sizes) -> HostileCase:
    depth = sizes.div_depth
    _one_page_pdf(path, "Deep page array marker mole", page=b" /Junk " + _nested_array(depth))
    why = f"an array nested {depth:,} deep in the page: MuPDF loads it as an empty page, so"
    why += " nothing tells it from a page without text"
    return HostileCase("failed", reason=Reason.NO_TEXT_AT_ALL, why=why)


@_case("xref-loop.pdf")
def _xref_loop(path: Path, sizes: Sizes) -> HostileCase:
    _one_page_pdf(path, "Xref loop marker shrew")
    data = path.read_bytes()
    start = int(data.rsplit(b"startxref", 1)[1].split()[0])
    path.write_bytes(data.replace(b"/Root 1 0 R >>", b"/Root 1 0 R /Prev %d >>" % start))
    why = "the trailer's /Prev points at its own xref table"
    return HostileCase("indexed", "Xref loop marker shrew", why=why)


@_case("stream-bomb.pdf")
def _stream_bomb(path: Path, sizes: Sizes) -> HostileCase:
    shown = b"BT /F1 12 Tf 72 720 Td (Stream bomb marker weasel) Tj ET\n"
    bomb = deflate_repeated((shown, 1), (b" " * 2**20, sizes.stream_bomb_mb))
    zlib_stream = b"\x78\xda" + bomb.data + struct.pack(">I", bomb.adler32)
    _one_page_pdf(path, "", objects={5: _stream(b"/Filter /FlateDecode", zlib_stream)})
    why = f"a {sizes.stream_bomb_mb} MB content stream of spaces, deflated to kilobytes"
    return HostileCase("indexed", "Stream bomb marker weasel", why=why, slow=True)


@_case("image-bomb.pdf")
def _image_bomb_pdf(path: Path, sizes: Sizes) -> HostileCase:
    pixels = sizes.image_pixels
    _one_page_pdf(
        path,
        "Image bomb marker ferret",
        resources=b" /XObject << /Im1 7 0 R >>",
        content=b"q 500 0 0 500 50 50 cm /Im1 Do Q",
        objects={
            7: _stream(
                b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                b"/BitsPerComponent 8 /Filter /FlateDecode" % (pixels, pixels),
                zlib.compress(bytes(192)),
            )
        },
    )
    why = f"an image claiming {pixels:,}² RGB pixels, with 200 bytes of data"
    return HostileCase("indexed", "Image bomb marker ferret", why=why)


@_case("actions.pdf")
def _actions(path: Path, sizes: Sizes) -> HostileCase:
    _one_page_pdf(
        path,
        "Actions marker jackdaw",
        catalog=b" /OpenAction 7 0 R",
        objects={
            7: b"<< /S /JavaScript /JS (app.alert\\('opened'\\);) /Next 8 0 R >>",
            8: b"<< /S /Launch /F (/bin/sh) /Win << /F (cmd.exe) >> >>",
        },
    )
    return HostileCase("indexed", "Actions marker jackdaw", why="JavaScript and Launch actions")


@_case("huge-page.pdf")
def _huge_page(path: Path, sizes: Sizes) -> HostileCase:
    _one_page_pdf(path, "Huge page marker moose", mediabox=b"0 0 200000 200000")
    why = "a page 200,000 points square: a preview must cap its pixmap"
    return HostileCase("indexed", "Huge page marker moose", why=why)


# ---------------------------------------------------------------------------------------------
# PDF content: damaged, encrypted, scanned, big


def _good_pdf_bytes(folder: Path) -> bytes:
    scratch = folder / ".scratch.pdf"
    data = write_pdf(scratch).read_bytes()
    scratch.unlink()
    return data


@_case("truncated.pdf")
def _truncated(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(_good_pdf_bytes(path.parent)[:300])
    return HostileCase("failed", reason=Reason.DAMAGED, why="the first 300 bytes of a PDF")


@_case("garbage-inside.pdf")
def _garbage_inside(path: Path, sizes: Sizes) -> HostileCase:
    good = _good_pdf_bytes(path.parent)
    middle = len(good) // 2
    path.write_bytes(good[:middle] + random.Random(7).randbytes(4096) + good[middle:])
    why = "4 KB of random bytes in the middle: MuPDF repairs it"
    return HostileCase("indexed", "governance programme", why=why)


@_case("encrypted.pdf")
def _encrypted(path: Path, sizes: Sizes) -> HostileCase:
    write_encrypted_pdf(path)
    return HostileCase("failed", reason=Reason.ENCRYPTED, why="AES-256, user password")


@_case("scan.pdf")
def _scan(path: Path, sizes: Sizes) -> HostileCase:
    write_image_only_pdf(path)
    return HostileCase("failed", reason=Reason.NO_TEXT, why="one image, no text layer")


def write_many_pages_pdf(path: Path, pages: int, lines: int = 12) -> Path:
    """The text of documents.write_long_pdf, written as raw objects: PyMuPDF's text boxes take
    3 ms a page, too slow for a folder that should be written in a second or two."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids = []
    for number in range(1, pages + 1):
        shown = (
            b"BT /F1 9 Tf 11 TL 50 780 Td "
            + b"".join(
                b"(Page %d line %d: the quarterly ledger for region %d balances account %d "
                b"against the audit trail.) '" % (number, line, number % 17, number * 31 + line)
                for line in range(lines)
            )
            + b" ET"
        )
        page, content = 2 + 2 * number, 3 + 2 * number
        kids.append(b"%d 0 R" % page)
        objects[page] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % content
        )
        objects[content] = _stream(b"", shown)
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), pages)
    return write_raw_pdf(path, objects)


@_case("many-pages.pdf")
def _many_pages(path: Path, sizes: Sizes) -> HostileCase:
    write_many_pages_pdf(path, sizes.pages)
    phrase = f"balances account {sizes.pages * 31 + 11}"  # the last page's last line
    return HostileCase("indexed", phrase, why=f"{sizes.pages:,} pages", slow=True)


@_case("dense-page.pdf")
def _dense_page(path: Path, sizes: Sizes) -> HostileCase:
    write_dense_page_pdf(path, sizes.dense_chars)
    why = f"{sizes.dense_chars:,} characters on one page"
    return HostileCase("indexed", "Dense page marker quetzal", why=why)


# ---------------------------------------------------------------------------------------------
# Mislabelled and binary


@_case("minutes.pdf")
def _html_named_pdf(path: Path, sizes: Sizes) -> HostileCase:
    path.write_text("<html><body><p>Board marker heron.</p></body></html>")
    return HostileCase("indexed", "Board marker heron", "indexed as HTML", why="HTML named .pdf")


@_case("report-copy.txt")
def _pdf_named_txt(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(_good_pdf_bytes(path.parent))
    return HostileCase("indexed", "retained for seven years", "indexed as PDF", why="a PDF .txt")


@_case("photo.pdf")
def _png_named_pdf(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(_png(16, 16))
    # A blank picture: OCR, behind the indexing, finds nothing in it.
    return HostileCase("indexed", note="indexed as scanned image", why="a PNG named .pdf")


@_case("random.txt")
def _random_bytes(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(random.Random(3).randbytes(8192))
    return HostileCase("failed", reason=Reason.NOT_TEXT, why="8 KB of random bytes")


@_case("compressed.txt")
def _gzip_named_txt(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(b"\x1f\x8b\x08\x00" + random.Random(5).randbytes(512))
    return HostileCase("failed", reason=Reason.UNSUPPORTED, why="gzip data named .txt")


def _png(width: int, height: int, data: bytes | None = None) -> bytes:
    """A greyscale PNG; with `data` shorter than the image, one that claims more than it holds."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    if data is None:
        data = zlib.compress(b"".join(b"\0" + bytes(width) for _ in range(height)))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


# ---------------------------------------------------------------------------------------------
# Text: sizes, long runs, empty


@_case("long-run.txt", "long-run.md", "long-run.html")
def _long_run(path: Path, sizes: Sizes) -> HostileCase:
    run = "x" * (sizes.long_run_kb * 1000)
    marker = {".txt": "Unbroken marker jackal", ".md": "Markdown run marker tern"}.get(
        path.suffix, "HTML run marker wren"
    )
    if path.suffix == ".html":
        path.write_text(f"<html><body><p>{marker}: {run}</p></body></html>")
    else:
        path.write_text(f"{marker}: {run}\n")
    why = f"{sizes.long_run_kb} KB without a space: MuPDF's layout is quadratic in a word"
    return HostileCase("indexed", marker, why=why, within_s=QUICKLY)


@_case("angle-run.md", "angle-run.html")
def _angle_run(path: Path, sizes: Sizes) -> HostileCase:
    run = (
        "<>&lt;" * (sizes.long_run_kb * 1000 // 6)
        if path.suffix == ".html"
        else "<>" * (sizes.long_run_kb * 500)
    )
    marker = "Angle marker heron" if path.suffix == ".md" else "Angle marker stork"
    if path.suffix == ".html":
        path.write_text(f"<html><body><p>{marker}: {run}</p></body></html>")
    else:
        path.write_text(f"{marker}: {run}\n")
    why = f"{sizes.long_run_kb} KB of < and > without a space: text, cut as any run"
    return HostileCase("indexed", marker, why=why, within_s=QUICKLY)


@_case("long-line.txt")
def _long_line(path: Path, sizes: Sizes) -> HostileCase:
    rng = random.Random(13)
    words = "the harbour master records every ship that enters or leaves port".split()
    line = " ".join(rng.choice(words) for _ in range(sizes.long_run_kb * 1000 // 6))
    path.write_text(f"One-line marker plover: {line}\n")
    why = f"{sizes.long_run_kb} KB of words on one line, no newline"
    return HostileCase("indexed", "One-line marker plover", why=why, within_s=QUICKLY)


@_case("cjk-run.txt")
def _cjk_run(path: Path, sizes: Sizes) -> HostileCase:
    rng = random.Random(17)
    han = [chr(code) for code in range(0x4E00, 0x4E00 + 3000)]
    text = "".join(rng.choice(han) for _ in range(sizes.cjk_run_kb * 1000 // 3))
    path.write_text(f"长文本标记熊猫{text}\n", "utf-8")
    why = f"{sizes.cjk_run_kb} KB of Chinese: no spaces, no newlines"
    return HostileCase("indexed", "长文本标记熊猫", why=why, within_s=QUICKLY)


@_case("huge.txt")
def _huge_text(path: Path, sizes: Sizes) -> HostileCase:
    paragraph = (
        "Customs officers inspect the cargo manifest before the vessel may unload. "
        "Every container is weighed and its seal number written into the ledger.\n"
    )
    with path.open("w") as huge:
        huge.write("Huge file marker albatross.\n")
        huge.write(paragraph * (sizes.huge_text_mb * 2**20 // len(paragraph)))
    why = f"{sizes.huge_text_mb} MB of ordinary prose"
    return HostileCase("indexed", "Huge file marker albatross", why=why, slow=True)


@_case("sparse.txt")
def _sparse(path: Path, sizes: Sizes) -> HostileCase:
    with path.open("wb") as sparse:
        sparse.truncate(sizes.sparse_gb << 30)
    why = f"{sizes.sparse_gb} GiB of NULs, sparse: read whole, it fills memory"
    return HostileCase("failed", reason=Reason.TOO_LARGE, why=why, within_s=QUICKLY)


@_case("empty.pdf", "empty.txt")
def _empty(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(b"")
    return HostileCase("failed", reason=Reason.EMPTY)


@_case("blank.md")
def _blank(path: Path, sizes: Sizes) -> HostileCase:
    path.write_text("  \n\n\t\n\u3000\n")
    return HostileCase("failed", reason=Reason.WHITESPACE)


# ---------------------------------------------------------------------------------------------
# Encodings: each must round-trip, real words in several languages

LATIN_1_WORDS = (
    "Ærøskøbing", "naïve", "français", "garçon", "señor", "año", "Größe", "Übung",
    "coração", "não", "Þórður", "Guðrún",
)  # fmt: skip
CP1252 = "The \u201cquoted\u201d price was 5\u20ac \u2014 a fair one, na\u00efve or not."
UTF16 = "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. 日本語も少し。"


@_case("latin-1.txt")
def _latin_1(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(LATIN_1.encode("latin-1"))
    why = "Latin-1, words of six languages (LATIN_1_WORDS); cp1250 mis-decodes them"
    return HostileCase("indexed", "Ærøskøbing", why=why)


@_case("cp1252.txt")
def _cp1252(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(CP1252.encode("cp1252"))
    return HostileCase("indexed", "\u201cquoted\u201d price was 5\u20ac", why="curly quotes, €")


@_case("utf-16.txt")
def _utf16(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(UTF16.encode("utf-16"))  # little-endian with a BOM
    return HostileCase("indexed", "Boxkämpfer jagen Viktor", why="UTF-16 with a BOM")


@_case("utf-8-bom.md")
def _utf8_bom(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes("\ufeff# Titel\n\nBOM marker écureuil.\n".encode())
    return HostileCase("indexed", "BOM marker écureuil", why="UTF-8 with a BOM")


@_case("latin-1.html")
def _latin_1_html(path: Path, sizes: Sizes) -> HostileCase:
    path.write_bytes(
        b"<html><head><meta charset='iso-8859-1'></head><body><p>"
        + "Le garçon naïf a mangé une crème brûlée à Ærøskøbing.".encode("latin-1")
        + b"</p></body></html>"
    )
    return HostileCase("indexed", "crème brûlée à Ærøskøbing", why="declared Latin-1 HTML")


# ---------------------------------------------------------------------------------------------
# Markup: nesting, entities, remote references, image bombs


@_case("tables.html")
def _nested_tables(path: Path, sizes: Sizes) -> HostileCase:
    write_nested_tables_html(path, sizes.table_depth)
    why = f"tables nested {sizes.table_depth:,} deep: MuPDF's HTML layout overflows its stack"
    return HostileCase("failed", reason=Reason.CRASHED, why=why)


@_case("divs.html")
def _nested_divs(path: Path, sizes: Sizes) -> HostileCase:
    depth = sizes.div_depth
    path.write_text(
        "<html><body><p>Nested divs marker gannet.</p>"
        + "<div>" * depth
        + "deep"
        + "</div>" * depth
        + "</body></html>"
    )
    why = f"divs nested {depth:,} deep: MuPDF's HTML layout crashes (100,000 take it 45 s)"
    return HostileCase("failed", reason=Reason.CRASHED, why=why)


@_case("quotes.md")
def _nested_quotes(path: Path, sizes: Sizes) -> HostileCase:
    path.write_text("Quotes marker bittern.\n\n" + ">" * sizes.table_depth + " deep quote\n")
    # The run of ">" is cut into lines like any run (parse.break_long_runs): at most 256 deep
    # per line, where 5,000 crashed MuPDF's layout.
    why = f"block quotes nested {sizes.table_depth:,} deep: cut as a run, never that deep"
    return HostileCase("indexed", "Quotes marker bittern", why=why)


@_case("lists.md")
def _nested_lists(path: Path, sizes: Sizes) -> HostileCase:
    items = "".join("  " * level + "- item\n" for level in range(sizes.list_depth))
    path.write_text("Lists marker curlew.\n\n" + items)
    why = f"lists nested {sizes.list_depth:,} deep"
    return HostileCase("indexed", "Lists marker curlew", why=why)


@_case("image-bomb.html")
def _image_bomb_html(path: Path, sizes: Sizes) -> HostileCase:
    pixels = sizes.image_pixels
    bomb = base64.b64encode(_png(pixels, pixels, zlib.compress(bytes(4096)))).decode()
    path.write_text(
        "<html><body><p>PNG bomb marker magpie.</p>"
        f"<img src='data:image/png;base64,{bomb}'></body></html>"
    )
    why = f"a data: PNG claiming {pixels:,}² pixels, with 4 KB of data"
    return HostileCase("indexed", "PNG bomb marker magpie", why=why)


@_case("entities.fb2")
def _entities(path: Path, sizes: Sizes) -> HostileCase:
    write_entity_fb2(path)
    why = "billion laughs, and an external entity naming /etc/passwd"
    return HostileCase("indexed", "Entity marker narwhal", why=why)


@_case("remote.html")
def _remote(path: Path, sizes: Sizes) -> HostileCase:
    write_remote_references_html(path)
    why = "img, link, iframe, object and CSS url() to 203.0.113.1: nothing may be fetched"
    return HostileCase("indexed", "Remote marker pelican", why=why, within_s=QUICKLY)


# ---------------------------------------------------------------------------------------------
# The file system: permissions, names, FIFOs, links

ODD_NAMES: dict[str, str] = {
    "-leading-dash.md": "Dash marker lemur",
    "-- --help.txt": "Double dash marker ibex",
    " leading space.md": "Space marker hyrax",
    "new\nline.md": "Newline marker tapir",
    "tab\tand\rcr.md": "Tab marker quokka",
    "escape\x1b[31m.md": "Escape marker okapi",
    unicodedata.normalize("NFD", "café-décomposé.md"): "Decomposed marker gecko",
    unicodedata.normalize("NFC", "café-composé.md"): "Composed marker newt",
    "l" + "o" * 240 + "ng.md": "Long name marker bison",  # 245 bytes, near NAME_MAX
    "漢字の名前.md": "Kanji marker dingo",
}


@_case(*ODD_NAMES)
def _odd_name(path: Path, sizes: Sizes) -> HostileCase:
    marker = ODD_NAMES[path.name]
    path.write_text(f"# Odd\n\n{marker}.\n")
    return HostileCase("indexed", marker, why=f"named {path.name!r}")


@_case("locked.md")
def _locked(path: Path, sizes: Sizes) -> HostileCase:
    path.write_text("# Locked\n\nLocked marker ibis.\n")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything
        return HostileCase("indexed", "Locked marker ibis", why="mode 000, read as root")
    return HostileCase("failed", reason=Reason.PERMISSION, why="mode 000")


@_case("pipe.txt")
def _fifo(path: Path, sizes: Sizes) -> HostileCase:
    os.mkfifo(path)
    why = "a FIFO: open() blocks until a writer comes, read() until it closes"
    return HostileCase("failed", reason=Reason.NOT_A_FILE, why=why, within_s=QUICKLY)


def _link_target(path: Path) -> tuple[Path, Reason]:
    outside = path.parent.parent / f"{path.parent.name}-outside"
    return {
        "link.txt": (Path("/etc/passwd"), Reason.LINK_OUTSIDE),
        "secret-link.txt": (outside / "secret.txt", Reason.LINK_OUTSIDE),
        "zero.txt": (Path("/dev/zero"), Reason.LINK_OUTSIDE),
        "elsewhere": (outside, Reason.LINK_OUTSIDE),
        "dangling.txt": (path.with_name("no-such-file.txt"), Reason.BROKEN_LINK),
        "loop.txt": (path, Reason.SELF_LINK),
    }[path.name]


@_case("link.txt", "secret-link.txt", "zero.txt", "elsewhere", "dangling.txt", "loop.txt")
def _link(path: Path, sizes: Sizes) -> HostileCase:
    target, reason = _link_target(path)
    path.symlink_to(target, target_is_directory=target.is_dir())
    return HostileCase("skipped", reason=reason, why=f"a link to {target}")


@_case("sub/up")
def _folder_loop(path: Path, sizes: Sizes) -> HostileCase:
    folder = path.parent.parent
    path.symlink_to(folder, target_is_directory=True)
    return HostileCase("skipped", reason=Reason.LINK_LOOP, why="a link to a folder above it")
