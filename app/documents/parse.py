"""Open any supported file with PyMuPDF and read it page by page.

Text formats are decoded here (MuPDF assumes UTF-8 and ignores `<meta charset>`), then laid out by
MuPDF, so a page number means the same page in the index and in the preview. Pages are read one at
a time and dropped, so memory stays flat on a 2,000-page PDF. MuPDF can hang, exhaust memory or
crash on hostile files, so this module runs only in the reader's child process
(`app.documents.worker`), never in the app's.
"""

from __future__ import annotations

import functools
import io
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from app.documents import office
from app.documents.formats import Format, UnsupportedFormat, detect
from app.documents.ocr import needs_ocr
from app.documents.textcodec import Decoded, NotTextError, decode_text
from app.errors import DocentError

MAX_TEXT_BYTES = 64 << 20
TEXT_PIECE = 256 << 10  # characters of text laid out as one MuPDF document (see text_pieces)
# MuPDF lays out a run of text without a break point in time quadratic in its length (100 KB:
# 22 s); a line break every this many characters keeps layout linear (100 KB: 0.18 s).
LONGEST_RUN = 256
_LONG_RUN = re.compile(rf"\S{{{LONGEST_RUN + 1},}}")
# In markup, a tag (kept whole: a data: URI may be long) opens with a name, a `/`, `!` or `?`;
# any other `<` or `>` is text, and a run of them is cut like any run ("<><>…" once passed as
# thousands of empty tags: 60 KB took 4 s, 340 KB over two minutes).
_TAG = r"<[A-Za-z/!?][^<>]*>"
_TAG_OR_LONG_RUN = re.compile(rf"({_TAG})|(?:(?!{_TAG})\S){{{LONGEST_RUN + 1},}}")
# Deeper outlines are not tables of contents a reader uses, and MuPDF loads them recursively:
# 100,000 levels overflow its stack (a crash), thousands overflow PyMuPDF's get_toc.
MAX_OUTLINE_DEPTH = 64
MAX_OUTLINE_ENTRIES = 50_000
# An archive that inflates to more than max_unpacked is refused only when it also inflates to
# this many times its packed size: images are stored packed, so a big comic inflates ~1x.
BOMB_RATIO = 10
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


@functools.cache
def mupdf() -> ModuleType:
    """PyMuPDF, imported on first use: importing it was 40 % of the app's start-up, and the
    window needs it only once a document is read."""
    import pymupdf

    # MuPDF reports repairs of damaged files as warnings on a global buffer; keep them off stderr.
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    return pymupdf


@functools.cache
def text_flags() -> int:
    # No TEXT_DEHYPHENATE: it made extraction ~45% slower; chunking.unwrap() joins hyphenated words.
    fitz = mupdf()
    return int(
        fitz.TEXT_PRESERVE_LIGATURES | fitz.TEXT_PRESERVE_WHITESPACE | fitz.TEXT_MEDIABOX_CLIP
    )


class DocumentError(DocentError):
    """A file cannot be indexed. The message names the cause in words a user understands."""


UNUSABLE_OUTLINE = "its table of contents is unusable, so it was indexed without headings"


@dataclass(frozen=True, slots=True)
class PageText:
    number: int  # physical page, 1-based
    label: str  # the printed page label ("iv", "12"), or the physical number
    blocks: tuple[tuple[str, str | None], ...]  # (paragraph text, section heading) in reading order


@dataclass(slots=True)
class ParsedDocument:
    path: Path
    format: Format
    title: str
    note: str | None
    encoding: str | None
    # One PyMuPDF document, or a long text file's pieces (see TEXT_PIECE), page after page; for
    # an Office file, the units' previews laid out so far (see load_page).
    _pieces: list[Any] = field(repr=False)
    # Pages (1-based) without a usable text layer, found by pages(): OCR reads them later.
    ocr_pages: list[int] = field(default_factory=list)
    # An Office file's units (page, slide, sheet rows) read by app.documents.office: its pages'
    # text and labels.
    _units: list[office.Unit] | None = field(default=None, repr=False)

    def __enter__(self) -> ParsedDocument:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for piece in self._pieces:
            piece.close()

    @property
    def page_count(self) -> int:
        if self._units is not None:
            return len(self._units)
        return sum(piece.page_count for piece in self._pieces)

    def page_label(self, index: int) -> str:
        """What a citation of the page at `index` (0-based) says: "12", "slide 3", …"""
        if self._units is not None:
            return self._units[index].label
        page = self.load_page(index)
        return (page.get_label() if self.format is Format.PDF else "") or str(index + 1)

    def load_page(self, index: int) -> Any:
        """The PyMuPDF page at `index` (0-based) of the whole document."""
        if self._units is not None:
            # Laid out only when shown: indexing needs the units' text alone (a 5,000-row sheet
            # took 2.5 s with every unit laid out, 0.6 s without).
            piece = _unit_piece(self._units[index])
            self._pieces.append(piece)
            return piece.load_page(0)
        for piece in self._pieces:
            if index < piece.page_count:
                return piece.load_page(index)
            index -= piece.page_count
        raise IndexError("page not in document")

    def pages(self) -> Iterator[PageText]:
        """Yield pages in order; a page MuPDF cannot read is yielded empty and noted. Raises
        DocumentError at the end when no page had any text."""
        if self._units is not None:
            for number, unit in enumerate(self._units, start=1):
                yield PageText(number, unit.label, tuple(unit.blocks))
            return
        toc_titles: dict[int, list[str]] = {}
        for _level, title, page_number in self._toc():
            if page_number >= 1 and (clean := _normalise(title)):
                toc_titles.setdefault(page_number, []).append(clean)
        heading: str | None = None
        characters = 0
        unreadable: list[str] = []
        total = self.page_count  # as the file claims it: reading a page may change MuPDF's count
        first = self._pieces[0]
        # get_label() re-reads the label rules for every page: only ask when there are some.
        labelled = bool(first.is_pdf and first.get_page_labels())
        flags = text_flags()
        for index in range(total):
            number = index + 1
            try:
                page = self.load_page(index)
                blocks_read = page.get_text("blocks", flags=flags)
            except (RuntimeError, ValueError, IndexError) as error:
                if "cycle in page tree" in str(error):
                    raise  # the whole page tree is unusable
                unreadable.append(f"{number} ({error})")
                yield PageText(number, str(number), ())
                continue
            texts = [
                text
                for block in blocks_read
                if block[6] == 0 and (text := block[4].strip())  # 0: a text block
            ]
            if needs_ocr(page, sum(map(len, texts))):
                # OCR reads all the page shows, a stamp's text included.
                self.ocr_pages.append(number)
                yield PageText(number, str(number), ())
                continue
            if self.format is Format.TEXT and not toc_titles:
                starts = _adorned_titles(texts)
                texts = [starts.get(position, text) for position, text in enumerate(texts)]
            else:
                starts = _section_starts(texts, toc_titles.get(number, []))
            if unspotted := [t for t in toc_titles.get(number, []) if t not in starts.values()]:
                heading = unspotted[-1]  # its title is not in the text: the page starts it
            blocks: list[tuple[str, str | None]] = []
            for position, text in enumerate(texts):
                heading = starts.get(position, heading)
                blocks.append((text, heading))
                characters += len(text)
            label = (page.get_label() if labelled else "") or str(number)
            yield PageText(number, label, tuple(blocks))
        if unreadable and len(unreadable) == total:
            raise DocumentError(f"damaged: no page can be read (page {unreadable[0]})")
        if unreadable:
            self.add_note(
                f"damaged: {len(unreadable)} of {total} pages cannot be read "
                f"(page {unreadable[0]}{', …' if len(unreadable) > 1 else ''})"
            )
        if characters == 0 and not self.ocr_pages:
            raise DocumentError(self._why_no_text())

    def _toc(self) -> list[list[Any]]:
        """The outline (of every piece, in whole-document page numbers), or none when it cannot
        be read: the text matters more than headings."""
        toc: list[list[Any]] = []
        offset = 0
        try:
            for piece in self._pieces:
                toc += [[level, title, page + offset] for level, title, page in piece.get_toc()]
                offset += piece.page_count
        except (RecursionError, RuntimeError, ValueError):
            self.add_note(UNUSABLE_OUTLINE)
            return []
        return toc

    def add_note(self, note: str) -> None:
        self.note = "; ".join(filter(None, [self.note, note]))

    def _why_no_text(self) -> str:
        if any(self.load_page(i).get_images() for i in range(self.page_count)):
            return (
                "no text layer, and no page is a scan to OCR: its pictures cover too little "
                "of the page to hold its text"
            )
        return "contains no text"


def _rerooted(path: Path, folder: str) -> bytes:
    """The EPUB zipped inside `folder`, as a zip of its own: MuPDF opens the nested one but
    finds no text in it (67 empty pages for Debian's debian-edu bookworm manual)."""
    rerooted = io.BytesIO()
    with zipfile.ZipFile(path) as nested, zipfile.ZipFile(rerooted, "w") as epub:
        # The mimetype member first, as the EPUB container format asks.
        members = sorted(nested.infolist(), key=lambda info: info.filename != f"{folder}mimetype")
        for info in members:
            name = info.filename.removeprefix(folder)
            if info.filename.startswith(folder) and name and not info.is_dir():
                epub.writestr(name, nested.read(info))
    return rerooted.getvalue()


def open_document(path: Path, *, max_unpacked: int | None = None) -> ParsedDocument:
    """Open a file for reading, or raise DocumentError saying exactly why it cannot be read.

    `max_unpacked` (bytes) refuses an EPUB or XPS that is a zip bomb before MuPDF inflates it.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(4096)
    except FileNotFoundError:
        raise DocumentError("the file disappeared before it could be read") from None
    except IsADirectoryError:
        raise DocumentError("is a folder, not a file") from None
    except PermissionError:
        raise DocumentError("permission denied: Docent may not read this file") from None
    except OSError as error:
        raise DocumentError(f"cannot be read: {error.strerror or error}") from None
    if size == 0:
        raise DocumentError("empty file (0 bytes)")
    try:
        detected = detect(path, head)
    except UnsupportedFormat as error:
        raise DocumentError(str(error)) from None

    encoding: str | None = None
    reading_note: str | None = None
    pymupdf = mupdf()
    if max_unpacked is not None and (
        detected.format in (Format.EPUB, Format.XPS) or detected.format.is_office
    ):
        _refuse_zip_bomb(path, size, max_unpacked)
    if detected.format.is_office:
        return _open_office(path, detected.format, detected.note)
    try:
        if detected.format.is_text:
            if size > MAX_TEXT_BYTES:
                raise DocumentError(
                    f"too large for a {detected.format.label} file "
                    f"({size / 2**20:.0f} MB; the limit is {MAX_TEXT_BYTES >> 20} MB)"
                )
            text, encoding, assumed = _read_text(path, detected.format)
            if assumed:
                reading_note = f"encoding assumed: {assumed}"
            text = break_long_runs(text, markup=detected.format is not Format.TEXT)
            pieces = [
                pymupdf.open(stream=piece.encode("utf-8"), filetype=detected.format.value)
                for piece in text_pieces(text, detected.format)
            ]
        elif detected.format is Format.PDF:
            pdf, reading_note = _open_pdf(path)
            pieces = [pdf]
        elif detected.format is Format.IMAGE:
            pieces = [pymupdf.open(path)]  # MuPDF tells PNG, JPEG and TIFF by their content
        elif detected.epub_folder:
            pieces = [pymupdf.open(stream=_rerooted(path, detected.epub_folder), filetype="epub")]
        else:
            pieces = [pymupdf.open(path, filetype=detected.format.value)]
    except FileNotFoundError:
        raise DocumentError("the file disappeared before it could be read") from None
    except pymupdf.EmptyFileError:
        raise DocumentError("empty file") from None
    except (pymupdf.FileDataError, RuntimeError, zipfile.BadZipFile, zlib.error) as error:
        raise DocumentError(
            f"damaged or not a valid {detected.format.label} file ({error})"
        ) from None
    doc = pieces[0]
    if doc.needs_pass:
        doc.close()
        raise DocumentError("encrypted: it needs a password, and Docent cannot index it")
    if doc.page_count == 0:
        doc.close()
        raise DocumentError(
            f"damaged or not a valid {detected.format.label} file (no readable pages)"
        )
    note = "; ".join(filter(None, [detected.note, reading_note])) or None
    if doc.is_repaired:
        note = "; ".join(filter(None, [note, "damaged file repaired: some text may be missing"]))
    title = _normalise((doc.metadata or {}).get("title") or "") or path.stem
    return ParsedDocument(
        path=path,
        format=detected.format,
        title=title,
        note=note,
        encoding=encoding,
        _pieces=pieces,
    )


# An Office unit's preview: A4 wide and tall enough that a unit (SHEET_ROWS_PER_UNIT rows, a
# long slide) is one page; a longer one shows its beginning. A shorter one is cut to its text.
_UNIT_PAGE = (595.0, 4 * 842.0)
_UNIT_MARGIN = 72.0


def _open_office(path: Path, fmt: Format, detected_note: str | None) -> ParsedDocument:
    readers = {Format.DOCX: office.read_docx, Format.PPTX: office.read_pptx}
    try:
        read = readers.get(fmt, office.read_xlsx)(path)
    except Exception as error:  # the libraries raise anything on a damaged file (KeyError, …)
        raise DocumentError(
            f"damaged or not a valid {fmt.label} file ({type(error).__name__}: {error})"
        ) from None
    if not read.units:
        raise DocumentError("contains no text")
    note = "; ".join(filter(None, [detected_note, *read.notes])) or None
    return ParsedDocument(path, fmt, read.title, note, None, [], _units=read.units)


def _unit_piece(unit: office.Unit) -> Any:
    """An Office unit's Markdown laid out by MuPDF: its preview (tables drawn as tables)."""
    markdown = break_long_runs("\n\n".join(unit.markdown) + "\n", markup=False)
    piece = mupdf().open(stream=markdown.encode("utf-8"), filetype="md")
    width, height = _UNIT_PAGE
    piece.layout(width=width, height=height)
    if piece.page_count == 1:
        bottom = max((block[3] for block in piece.load_page(0).get_text("blocks")), default=0.0)
        piece.layout(width=width, height=min(bottom + _UNIT_MARGIN, height))
    return piece


def text_pieces(text: str, fmt: Format) -> list[str]:
    """A long text or Markdown file in pieces of about TEXT_PIECE characters, cut at line ends
    (Markdown: at blank lines outside code fences), each laid out as a document of its own:
    MuPDF's cost per page grows with the whole document (8 MB of prose took 77 s in one piece).
    HTML stays whole: a cut could fall inside an element."""
    if len(text) <= TEXT_PIECE or fmt is Format.HTML:
        return [text]
    pieces: list[str] = []
    lines: list[str] = []
    size = 0
    fenced = False
    for line in text.splitlines(keepends=True):
        if fmt is Format.MARKDOWN and line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        lines.append(line)
        size += len(line)
        at_break = fmt is Format.TEXT or (not fenced and not line.strip())
        if size >= TEXT_PIECE and (at_break or size >= 2 * TEXT_PIECE):
            pieces.append("".join(lines))
            lines, size = [], 0
    if lines:
        pieces.append("".join(lines))
    return pieces


def _refuse_zip_bomb(path: Path, size: int, max_unpacked: int) -> None:
    """Sum the sizes the zip's directory declares (MuPDF inflates no further than they say)."""
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise DocumentError(f"damaged: not a readable zip archive ({error})") from None
    if unpacked > max_unpacked and unpacked > BOMB_RATIO * size:
        raise DocumentError(
            f"too large when unpacked: {_megabytes(size)} inflate to {_megabytes(unpacked)} "
            f"(the limit is {_megabytes(max_unpacked)})"
        )


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size < 10 * 2**20 else f"{size / 2**20:,.0f} MB"


def _open_pdf(path: Path) -> tuple[Any, str | None]:
    """Open a PDF; one whose outline could crash MuPDF is opened as a copy without it.

    PyMuPDF loads the outline as it opens a document, so it is checked first on the raw PDF
    objects, iteratively."""
    pymupdf = mupdf()
    raw = pymupdf.mupdf
    try:
        pdf = raw.PdfDocument(str(path))
        root = raw.pdf_dict_get(raw.pdf_trailer(pdf), raw.PDF_ENUM_NAME_Root)
        outlines = raw.pdf_dict_get(root, raw.PDF_ENUM_NAME_Outlines)
        usable = _outline_is_usable(raw, outlines)
    except Exception:
        # The raw reader could not tell; MuPDF's own open below reports what is wrong.
        return pymupdf.open(path, filetype="pdf"), None
    if usable:
        return pymupdf.open(path, filetype="pdf"), None
    raw.pdf_dict_del(root, raw.PDF_ENUM_NAME_Outlines)
    copy = raw.fz_new_buffer(0)
    output = raw.FzOutput(copy)
    options = raw.PdfWriteOptions()
    options.do_garbage = 1  # drop the unreferenced outline objects
    raw.pdf_write_document(pdf, output, options)
    output.fz_close_output()
    stream = raw.fz_buffer_extract_copy(copy)
    return pymupdf.open(stream=stream, filetype="pdf"), UNUSABLE_OUTLINE


def _outline_is_usable(raw: Any, outlines: Any) -> bool:
    """False for an outline deeper than MAX_OUTLINE_DEPTH, longer than MAX_OUTLINE_ENTRIES or
    looping; walked with an explicit stack, so no depth can overflow this one."""
    if not outlines.m_internal:
        return True
    first, following = raw.PDF_ENUM_NAME_First, raw.PDF_ENUM_NAME_Next
    stack = [(raw.pdf_dict_get(outlines, first), 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        while item.m_internal and raw.pdf_is_dict(item):
            number = raw.pdf_to_num(item)
            if number in seen or depth > MAX_OUTLINE_DEPTH or len(seen) >= MAX_OUTLINE_ENTRIES:
                return False
            seen.add(number)
            child = raw.pdf_dict_get(item, first)
            if child.m_internal:
                stack.append((child, depth + 1))
            item = raw.pdf_dict_get(item, following)
    return True


def break_long_runs(text: str, *, markup: bool) -> str:
    """A line break every LONGEST_RUN characters of text that has none, so MuPDF's layout stays
    linear; chunking joins the lines again. With `markup`, tags (a data: URI) stay whole."""

    def broken(match: re.Match[str]) -> str:
        if match.lastindex:  # the tag group matched
            return match.group()
        run = match.group()
        return "\n".join(run[i : i + LONGEST_RUN] for i in range(0, len(run), LONGEST_RUN))

    return (_TAG_OR_LONG_RUN if markup else _LONG_RUN).sub(broken, text)


def _read_text(path: Path, fmt: Format) -> Decoded:
    data = path.read_bytes()
    decoded: Decoded | None = None
    if fmt is Format.HTML and (declared := _META_CHARSET.search(data[:4096])):
        name = declared.group(1).decode("ascii", "replace")
        try:
            decoded = Decoded(data.decode(name), name.lower())
        except (LookupError, UnicodeDecodeError):
            decoded = None  # the declaration lies; detect instead
    if decoded is None:
        try:
            decoded = decode_text(data)
        except NotTextError as error:
            raise DocumentError(f"not readable as {fmt.label}: {error}") from None
    if not decoded.text.strip():
        raise DocumentError("contains only whitespace")
    if fmt is Format.MARKDOWN and not decoded.text.endswith("\n"):
        # MuPDF's Markdown reader drops the last character of an unterminated line.
        decoded = decoded._replace(text=decoded.text + "\n")
    return decoded


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


_NUMBERING = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\s+|(?:\d+(?:\.\d+)*|[IVXivx]+)[.):]\s*|[一二三四五六七八九十]+[、.]\s*)"
)


# A plain-text section title (reStructuredText, Setext): a line underlined, and maybe overlined,
# with one punctuation character repeated. Changelogs and Sphinx sources carry their structure
# (a release's version, a section's name) only this way.
_ADORNMENT = re.compile(r"^([=\-~^+*#\"'`:.<>_])\1{2,}$")
# `0.54.0`_ , `text <url>`_ and ``literal``: the words, not the markup.
_RST_MARKUP = re.compile(r"`([^`<]+?)\s*(?:<[^>]*>)?`_{1,2}|``([^`]+)``")


def _adorned_titles(texts: list[str]) -> dict[int, str]:
    """Which text blocks are adorned section titles, and the title's words."""
    titles: dict[int, str] = {}
    for position, text in enumerate(texts):
        lines = [line.strip() for line in text.split("\n")]
        if len(lines) == 3 and _ADORNMENT.match(lines[0]):
            lines = lines[1:]  # an overline
        underlined = len(lines) == 2 and lines[0] and _ADORNMENT.match(lines[1])
        if underlined and not _ADORNMENT.match(lines[0]):
            title = _RST_MARKUP.sub(lambda m: m.group(1) or m.group(2), lines[0])
            titles[position] = _normalise(title)
    return titles


def _section_starts(texts: list[str], titles: list[str]) -> dict[int, str]:
    """Which text block starts each TOC title of a page: its first line, numbering aside."""
    starts: dict[int, str] = {}
    remaining = list(titles)
    for position, text in enumerate(texts):
        first_line = _normalise(text.split("\n", 1)[0]).casefold()
        bare = _NUMBERING.sub("", first_line)
        for title in remaining:
            wanted = title.casefold()
            if first_line.startswith(wanted) or bare.startswith(_NUMBERING.sub("", wanted)):
                starts[position] = title
                remaining.remove(title)
                break
    return starts
