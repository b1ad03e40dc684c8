"""Office documents (DOCX, PPTX, XLSX) as citation units: a page, a slide, a sheet's rows.

Each unit becomes one page of the ParsedDocument: its text blocks (headings, paragraphs, tables
as Markdown pipe tables, so the model sees rows and columns) are indexed as they are here, and
its Markdown is laid out by MuPDF for the preview. Runs only in the reader's child process, as
parse.py does: the zip was already checked for a bomb, and the child's limits hold the rest.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.cjk import estimate_tokens

# A table is cut into blocks of rows of about this many tokens, the header repeated in each,
# so a chunk never cuts a row in half (chunking's MAX_TOKENS is 260).
TABLE_BLOCK_TOKENS = 200
# A sheet is cited by row range: one unit per this many rows keeps a citation (and a preview)
# to something a reader can find.
SHEET_ROWS_PER_UNIT = 100
# A workbook holding more cells than this (a million-row export) is read up to it, with a note:
# the index is for reading, and the reader's time limit would end it anyway.
MAX_CELLS = 500_000
MAX_COLUMNS = 200
# A sheet's header is looked for among its first rows (past a title, a source, a note).
HEADER_SEARCH_ROWS = 20
# A DOCX without page breaks is cited by section (Heading 1); a section longer than this many
# characters is cut at a paragraph so a unit stays a readable preview.
MAX_UNIT_CHARS = 20_000


@dataclass(slots=True)
class Unit:
    label: str  # "3" (a page), "slide 3", "Sheet1 A1:F100"
    blocks: list[tuple[str, str | None]] = field(default_factory=list)  # (text, heading)
    markdown: list[str] = field(default_factory=list)  # what the preview lays out

    @property
    def characters(self) -> int:
        return sum(len(text) for text, _ in self.blocks)


@dataclass(slots=True)
class OfficeDocument:
    title: str
    units: list[Unit]
    notes: list[str] = field(default_factory=list)


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def markdown_table(rows: Sequence[Sequence[object]]) -> list[str]:
    """Rows (the first one the header) as Markdown pipe tables of about TABLE_BLOCK_TOKENS each,
    the header repeated in every one. Empty rows and trailing empty columns are dropped."""
    cells = [[_cell(value) for value in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return []
    width = max(
        (max((i + 1 for i, text in enumerate(row) if text), default=0) for row in cells),
        default=0,
    )
    cells = [row[:width] + [""] * (width - len(row)) for row in cells]
    header = "| " + " | ".join(cells[0]) + " |"
    rule = "|" + "---|" * width
    blocks: list[str] = []
    lines = [header, rule]
    tokens = estimate_tokens(header + rule)
    for row in cells[1:]:
        line = "| " + " | ".join(row) + " |"
        size = estimate_tokens(line)
        if len(lines) > 2 and tokens + size > TABLE_BLOCK_TOKENS:
            blocks.append("\n".join(lines))
            lines, tokens = [header, rule], estimate_tokens(header + rule)
        lines.append(line)
        tokens += size
    blocks.append("\n".join(lines))
    return blocks


def is_table(block: str) -> bool:
    """A block that markdown_table wrote: its lines are kept as rows when chunked."""
    return block.startswith("| ") and block.endswith("|") and "\n|---" in block


class _Builder:
    """Units as the document is walked; a heading starts a section within the current unit."""

    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.heading: str | None = None

    def start(self, label: str) -> Unit:
        self.units.append(Unit(label))
        return self.units[-1]

    def heading_line(self, text: str, level: int) -> None:
        self.heading = text
        unit = self.units[-1]
        unit.blocks.append((text, text))
        unit.markdown.append(f"{'#' * min(max(level, 1), 6)} {_escape(text)}")

    def paragraph(self, text: str) -> None:
        unit = self.units[-1]
        unit.blocks.append((text, self.heading))
        unit.markdown.append(_escape(text))

    def table(self, rows: Sequence[Sequence[object]]) -> None:
        unit = self.units[-1]
        for block in markdown_table(rows):
            unit.blocks.append((block, self.heading))
            unit.markdown.append(block)


def _escape(text: str) -> str:
    """Plain text as Markdown that shows it as written (a line starting `#` or `-` stays text)."""
    return "".join(f"\\{c}" if c in "\\`*_[]#+-!|<>" else c for c in text)


def _finish(title: str, units: Iterable[Unit], notes: list[str]) -> OfficeDocument:
    kept = [unit for unit in units if unit.blocks]
    return OfficeDocument(title, kept, notes)


# --- DOCX -------------------------------------------------------------------------------------


def read_docx(path: Path) -> OfficeDocument:
    """Pages where Word recorded them (hard page breaks, `lastRenderedPageBreak`); without any,
    sections that start at each Heading 1."""
    import docx
    from docx.oxml.ns import qn
    from docx.table import Table

    document = docx.Document(str(path))
    body = document.element.body
    page_marks = (qn("w:lastRenderedPageBreak"), qn("w:br"))
    paged = any(
        element.tag == page_marks[0] or element.get(qn("w:type")) == "page"
        for element in body.iter(*page_marks)
    )
    builder = _Builder()
    number = 1
    builder.start("1" if paged else "section 1")
    notes = [] if paged else ["no page breaks in the file: cited by section"]
    text_tag = qn("w:t")
    spacing = {qn("w:tab"): " ", qn("w:br"): "\n", qn("w:cr"): "\n"}
    paragraph_tag, table_tag = qn("w:p"), qn("w:tbl")

    def new_unit() -> None:
        nonlocal number
        if builder.units[-1].blocks:
            number += 1
            builder.start(str(number) if paged else f"section {number}")

    for element in body.iterchildren(paragraph_tag, table_tag):
        if element.tag == table_tag:
            table = Table(element, document)
            builder.table([[cell.text for cell in row.cells] for row in table.rows])
            continue
        style = _style_name(document, element)
        level = _heading_level(style)
        if not paged and (
            (level == 1 and builder.units[-1].blocks)
            or builder.units[-1].characters > MAX_UNIT_CHARS
        ):
            new_unit()
        parts: list[str] = []
        for node in element.iter(text_tag, *spacing, page_marks[0]):
            is_break = node.tag == page_marks[0] or (
                node.tag == page_marks[1] and node.get(qn("w:type")) == "page"
            )
            if is_break:
                _paragraph(builder, "".join(parts), level)
                parts = []
                new_unit()
            elif node.tag == text_tag:
                parts.append(node.text or "")
            else:
                parts.append(spacing[node.tag])
        _paragraph(builder, "".join(parts), level)
    title = _clean(document.core_properties.title or "") or path.stem
    return _finish(title, builder.units, notes)


def _style_name(document: Any, paragraph: Any) -> str:
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml.ns import qn

    style_id = paragraph.find(f"{qn('w:pPr')}/{qn('w:pStyle')}")
    if style_id is None:
        return ""
    try:
        style = document.styles.get_by_id(style_id.get(qn("w:val")), WD_STYLE_TYPE.PARAGRAPH)
    except (KeyError, ValueError):
        return ""
    return str(style.name or "") if style is not None else ""


def _heading_level(style: str) -> int:
    """1 for Title and Heading 1, n for Heading n, 0 for anything else."""
    if style == "Title":
        return 1
    name, _, level = style.partition(" ")
    return int(level) if name == "Heading" and level.isdigit() else 0


def _paragraph(builder: _Builder, text: str, level: int) -> None:
    text = _clean(text)
    if not text:
        return
    if level:
        builder.heading_line(text, level)
    else:
        builder.paragraph(text)


def _clean(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


# --- PPTX -------------------------------------------------------------------------------------


def read_pptx(path: Path) -> OfficeDocument:
    """One unit per slide, its title the heading; text boxes, tables, groups and speaker notes."""
    import pptx

    presentation = pptx.Presentation(str(path))
    builder = _Builder()
    for number, slide in enumerate(presentation.slides, start=1):
        builder.start(f"slide {number}")
        title_shape = slide.shapes.title
        title = _clean(title_shape.text_frame.text) if title_shape is not None else ""
        builder.heading = None
        if title:
            builder.heading_line(title.replace("\n", " "), 1)
        for shape in _shapes(slide.shapes):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
                builder.table(rows)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                for paragraph in shape.text_frame.paragraphs:
                    _paragraph(builder, "".join(run.text for run in paragraph.runs), 0)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = _clean(slide.notes_slide.notes_text_frame.text)
            if notes:
                builder.paragraph(f"Speaker notes: {notes}")
    title = _clean(presentation.core_properties.title or "") or path.stem
    return _finish(title, builder.units, [])


def _shapes(shapes: Iterable[Any]) -> Iterator[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    def position(shape: Any) -> tuple[int, int]:
        return (shape.top or 0, shape.left or 0)

    for shape in sorted(shapes, key=position):
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes)
        else:
            yield shape


# --- XLSX -------------------------------------------------------------------------------------


def read_xlsx(path: Path) -> OfficeDocument:
    """One unit per SHEET_ROWS_PER_UNIT rows of each sheet, labelled with its cell range; the
    sheet's header row (past any title or note lines above it: see `_header_row`) heads every
    table. Values as last computed by Excel."""
    import openpyxl

    builder = _Builder()
    notes: list[str] = []
    cells = 0
    # Our own handle, closed here: when a sheet's XML fails to parse, openpyxl leaves the
    # sheet's stream, and so the file, open.
    with path.open("rb") as handle:
        workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        for sheet in workbook.worksheets:
            if cells >= MAX_CELLS:
                notes.append(f"sheet {sheet.title} not read: the workbook is over the cell limit")
                continue
            rows: list[tuple[int, list[object]]] = []
            truncated = False
            # Read-only mode stops at the sheet's declared <dimension>, which some writers leave
            # at "A1" (readxl's datasets.xlsx). Without it each row is as wide as its own last
            # cell, not padded, and reading ends with the sheet's last row.
            sheet.reset_dimensions()
            for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
                values = values[:MAX_COLUMNS]
                row = list(values[: _width(values)])
                if not row:
                    continue
                cells += len(row)
                if cells > MAX_CELLS:
                    truncated = True
                    break
                rows.append((number, row))
            _sheet_units(builder, sheet.title, rows)
            if truncated:
                notes.append(f"sheet {sheet.title} read up to the cell limit ({MAX_CELLS:,})")
        workbook.close()
    title = _clean(workbook.properties.title or "") or path.stem
    return _finish(title, builder.units, notes)


def _sheet_units(builder: _Builder, title: str, rows: list[tuple[int, list[object]]]) -> None:
    """A sheet's rows as units of its table, the lines above the header and the notes below the
    last row as text: a title, a source or a footnote is no row to count or sum."""
    if not rows:
        return
    start = _header_row(rows)
    end = len(rows)
    # Words under rows of numbers and dates: the table ends with its last row of data.
    typed = [index for index in range(start + 1, end) if _typed(rows[index][1])]
    if typed and len(typed) >= 0.8 * (typed[-1] - start):
        end = typed[-1] + 1
    while end > start + 2 and _filled(rows[start][1]) >= 3 and _filled(rows[end - 1][1]) == 1:
        end -= 1  # one cell under a table of three columns or more
    header = rows[start][1]
    for first in range(start, end, SHEET_ROWS_PER_UNIT):
        batch = rows[first : min(first + SHEET_ROWS_PER_UNIT, end)]
        _sheet_unit(builder, title, header, batch, rows[:start] if first == start else [])
    for _, row in rows[end:]:
        builder.paragraph(_row_text(row))


def _header_row(rows: Sequence[tuple[int, list[object]]]) -> int:
    """The index of the sheet's header among its first HEADER_SEARCH_ROWS: the row of words
    right above the first row holding numbers, dates or yes/no values — notes above a table may
    be spread over as many cells as its header. Without such rows (a table of words), the first
    row filling at least half as many cells as the widest with text; else the first row."""
    first_rows = rows[:HEADER_SEARCH_ROWS]
    widest = max(_filled(row) for _, row in first_rows)
    first_typed = next((i for i, (_, row) in enumerate(first_rows) if _typed(row)), None)
    if first_typed:
        above = first_rows[first_typed - 1][1]
        if not _typed(above) and _filled(above) * 2 >= _filled(first_rows[first_typed][1]) >= 2:
            return first_typed - 1
    for index, (_, row) in enumerate(first_rows):
        filled = _filled(row)
        texts = sum(isinstance(value, str) and value.strip() != "" for value in row)
        if filled >= max(2, (widest + 1) // 2) and texts * 2 >= filled:
            return index
    return 0


def _typed(row: Sequence[object]) -> bool:
    """Whether a row holds a number, a date or a yes/no value: data, not a note or a header."""
    return any(isinstance(value, int | float | datetime.date | datetime.time) for value in row)


def _filled(row: Sequence[object]) -> int:
    return sum(value not in (None, "") for value in row)


def _row_text(row: Sequence[object]) -> str:
    return " ".join(_cell(value) for value in row if value not in (None, ""))


def _sheet_unit(
    builder: _Builder,
    title: str,
    header: list[object],
    batch: list[tuple[int, list[object]]],
    above: Sequence[tuple[int, list[object]]] = (),
) -> None:
    """One unit of a sheet's rows (numbered as in the sheet), cited by its cell range, with the
    lines `above` the header first."""
    from openpyxl.utils import get_column_letter

    width = max(_width(row) for _, row in [*batch, (0, header)])
    first, last = (above or batch)[0][0], batch[-1][0]
    unit = builder.start(f"{title} A{first}:{get_column_letter(max(width, 1))}{last}")
    builder.heading = title
    unit.markdown.append(f"# {_escape(title)}")
    for _, line in above:
        builder.paragraph(_row_text(line))
    rows = [row for _, row in batch]
    builder.table(rows if rows[0] is header else [header, *rows])


def _width(row: Sequence[object]) -> int:
    return max((i + 1 for i, value in enumerate(row) if value not in (None, "")), default=0)
