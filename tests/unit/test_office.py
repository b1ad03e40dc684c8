"""Office documents as units: tables as Markdown, pages / slides / sheet row ranges as labels."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from app.documents import office
from app.documents.chunking import cited_as, unwrap
from app.documents.office import is_table, markdown_table, read_docx, read_pptx, read_xlsx
from app.documents.parse import DocumentError, open_document
from tests.documents import write_docx, write_pptx, write_xlsx


def test_rows_become_a_markdown_table_with_pipes_escaped_and_blanks_dropped() -> None:
    rows = [
        ("Item", "Cost", None),
        ("Pipe | valve", 12.5, None),
        (None, None, None),
        ("Two\nlines", None, ""),
    ]
    assert markdown_table(rows) == [
        "| Item | Cost |\n|---|---|\n| Pipe \\| valve | 12.5 |\n| Two lines |  |"
    ]


def test_a_long_table_is_cut_into_blocks_that_each_repeat_the_header() -> None:
    rows = [("Name", "Note")] + [(f"row {i}", "a note of several words") for i in range(60)]
    blocks = markdown_table(rows)
    assert len(blocks) > 1
    for block in blocks:
        lines = block.splitlines()
        assert lines[:2] == ["| Name | Note |", "|---|---|"]
        assert is_table(block)
    assert sum(len(block.splitlines()) - 2 for block in blocks) == 60


def test_a_table_keeps_its_rows_when_chunked_and_prose_is_unwrapped() -> None:
    (table,) = markdown_table([("a", "b"), ("1", "2")])
    assert unwrap(table) == table
    assert unwrap("a wrapped\nparagraph") == "a wrapped paragraph"
    assert not is_table("| not a table")


def test_citations_name_pages_by_number_and_units_by_their_label() -> None:
    assert cited_as("12") == "p. 12"
    assert cited_as("iv", "page") == "page iv"
    assert cited_as("slide 3") == "slide 3"
    assert cited_as("Budget A1:C4") == "Budget A1:C4"


def test_a_docx_is_cut_at_its_page_breaks_with_headings(tmp_path: Path) -> None:
    read = read_docx(write_docx(tmp_path / "policy.docx"))
    assert read.title == "Records policy"
    assert [unit.label for unit in read.units] == ["1", "2", "3"]
    assert read.notes == []
    assert read.units[1].blocks[0] == ("Retention periods", "Retention periods")
    table = read.units[1].blocks[-1]
    assert table[1] == "Retention periods"
    assert "| Supplier contracts | 12 years |" in table[0].splitlines()
    assert read.units[1].markdown[0] == "# Retention periods"


def test_a_docx_without_page_breaks_is_cited_by_section(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    for title in ("Scope", "Rules"):
        document.add_heading(title, 1)
        document.add_paragraph(f"What the {title.lower()} say.")
    path = tmp_path / "flat.docx"
    document.save(str(path))
    read = read_docx(path)
    assert [(unit.label, unit.blocks[0][1]) for unit in read.units] == [
        ("section 1", "Scope"),
        ("section 2", "Rules"),
    ]
    assert read.notes == ["no page breaks in the file: cited by section"]


def test_a_pptx_is_one_unit_per_slide_titled_by_the_slide(tmp_path: Path) -> None:
    read = read_pptx(write_pptx(tmp_path / "briefing.pptx"))
    assert [unit.label for unit in read.units] == [f"slide {n}" for n in range(1, 5)]
    slide = read.units[2]
    assert slide.blocks[0] == ("Ferry timetable", "Ferry timetable")
    assert ("Ferries leave from pier nine.", "Ferry timetable") in slide.blocks
    assert "| Kastel | every forty minutes |" in slide.blocks[-1][0].splitlines()


def test_a_sheet_is_cited_by_row_ranges_each_with_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Log"
    sheet.append(["Day", "Reading"])
    for day in range(1, 26):
        sheet.append([day, day * 10])
    path = tmp_path / "log.xlsx"
    workbook.save(str(path))
    monkeypatch.setattr(office, "SHEET_ROWS_PER_UNIT", 10)
    read = read_xlsx(path)
    assert [unit.label for unit in read.units] == ["Log A1:B10", "Log A11:B20", "Log A21:B26"]
    for unit in read.units:
        assert unit.blocks[0][0].startswith("| Day | Reading |\n|---|---|\n")
        assert unit.blocks[0][1] == "Log"
    assert "| 25 | 250 |" in read.units[-1].blocks[-1][0].splitlines()


def test_a_sheets_title_and_notes_are_text_and_its_header_is_the_row_that_names_the_columns(
    tmp_path: Path,
) -> None:
    """Real workbooks put a title, a source or a note above the table and footnotes below it:
    taking the first row as the header named every column after the title and counted the
    notes as rows."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Ports"
    sheet.append(["Cargo handled by the Adriatic ports, 2025"])
    sheet.append([])
    sheet.append(["Source: harbour authorities' yearly reports", None, None])
    sheet.append(["Port", "Country", "Tonnes", None])
    sheet.append(["Rijeka", "Croatia", 13_200_000])
    sheet.append(["Koper", "Slovenia", 24_100_000])
    sheet.append(["Trieste", "Italy", 54_600_000])
    sheet.append(["* Provisional figures for December."])
    path = tmp_path / "ports.xlsx"
    workbook.save(str(path))

    (unit,) = read_xlsx(path).units
    assert unit.label == "Ports A1:C7"
    assert [text for text, _ in unit.blocks] == [
        "Cargo handled by the Adriatic ports, 2025",
        "Source: harbour authorities' yearly reports",
        "| Port | Country | Tonnes |\n|---|---|---|\n| Rijeka | Croatia | 13200000 |\n"
        "| Koper | Slovenia | 24100000 |\n| Trieste | Italy | 54600000 |",
        "* Provisional figures for December.",
    ]


def test_notes_spread_over_as_many_cells_as_the_header_are_still_notes(tmp_path: Path) -> None:
    """Notes typed across the columns above a table, and words under its last row: the header
    is the row of words right above the first row of numbers, dates or yes/no values."""
    import datetime

    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Crew"
    sheet.append(["Some", "people", "write", None, "notes", "up here"])
    sheet.append(["Name", "Role", "Age", "On duty", "Joined"])
    sheet.append(["Ana", "pilot", 41, True, datetime.datetime(2019, 3, 1)])
    sheet.append(["Ivo", "engineer", 35, False, datetime.datetime(2021, 7, 15)])
    sheet.append(["and", "more", None, "down", "here"])
    path = tmp_path / "crew.xlsx"
    workbook.save(str(path))

    (unit,) = read_xlsx(path).units
    assert [text for text, _ in unit.blocks] == [
        "Some people write notes up here",
        "| Name | Role | Age | On duty | Joined |\n|---|---|---|---|---|\n"
        "| Ana | pilot | 41 | True | 2019-03-01 00:00:00 |\n"
        "| Ivo | engineer | 35 | False | 2021-07-15 00:00:00 |",
        "and more down here",
    ]


def test_a_sheet_of_numbers_alone_is_headed_by_its_first_row(tmp_path: Path) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Readings"
    for row in ([1, 20.5], [2, 21.0], [3, 19.5]):
        sheet.append(row)
    path = tmp_path / "readings.xlsx"
    workbook.save(str(path))
    (unit,) = read_xlsx(path).units
    assert [text for text, _ in unit.blocks] == [
        "| 1 | 20.5 |\n|---|---|\n| 2 | 21 |\n| 3 | 19.5 |"
    ]


def test_a_workbook_over_the_cell_limit_is_read_up_to_it_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(office, "MAX_CELLS", 5)
    read = read_xlsx(write_xlsx(tmp_path / "harbour.xlsx"))
    assert [unit.label for unit in read.units] == ["Staff A1:B2"]
    assert read.notes == [
        "sheet Staff read up to the cell limit (5)",
        "sheet Budget not read: the workbook is over the cell limit",
    ]


def test_every_row_is_read_when_a_sheet_declares_a_smaller_dimension(tmp_path: Path) -> None:
    """Some writers (readxl's datasets.xlsx) declare `<dimension ref="A1"/>` whatever the sheet
    holds; openpyxl's read-only mode would stop at that cell."""
    source = write_xlsx(tmp_path / "source.xlsx")
    path = tmp_path / "harbour.xlsx"
    with zipfile.ZipFile(source) as good, zipfile.ZipFile(path, "w") as understated:
        for info in good.infolist():
            data = good.read(info)
            if info.filename.startswith("xl/worksheets/sheet"):
                data = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1"/>', data)
                assert b'<dimension ref="A1"/>' in data
            understated.writestr(info, data)
    with open_document(path) as document:
        pages = [(page.label, [text for text, _ in page.blocks]) for page in document.pages()]
    assert pages == [
        ("Staff A1:B3", ["| Name | Role |\n|---|---|\n| Ana | Harbour master |\n| Ivo | Pilot |"]),
        (
            "Budget A1:C4",
            [
                "| Item | Cost in euros | Year |\n|---|---|---|\n| Quay repairs | 40000 | 2025 |\n"
                "| Buoys | 3500 | 2025 |\n| Harbour crane | 185000 | 2026 |"
            ],
        ),
    ]


def test_a_docx_is_paged_where_word_last_rendered_its_page_breaks(tmp_path: Path) -> None:
    """Word records where it broke pages (`lastRenderedPageBreak`), also after a hard break:
    one break, not two."""
    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_paragraph("First page text.")
    flowing = document.add_paragraph("Second page starts ")
    flowing.add_run("mid-paragraph.")._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    after_hard = document.add_paragraph()
    after_hard.add_run("Third page text.")._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    path = tmp_path / "word.docx"
    document.save(str(path))
    read = read_docx(path)
    assert [(unit.label, [text for text, _ in unit.blocks]) for unit in read.units] == [
        ("1", ["First page text.", "Second page starts"]),
        ("2", ["mid-paragraph."]),
        ("3", ["Third page text."]),
    ]


_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY l0 "lollollollollollollollollollol">'
    + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    + "]>"
)


@pytest.mark.parametrize(
    ("name", "part", "body", "message"),
    [
        (
            "laughs.docx",
            "word/document.xml",
            '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            "<w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p></w:body></w:document>",
            "damaged or not a valid Word (DOCX) file (XMLSyntaxError: ",
        ),
        (
            "laughs.xlsx",
            "xl/worksheets/sheet1.xml",
            '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&l9;</t></is></c></row>'
            "</sheetData></worksheet>",
            "damaged or not a valid Excel (XLSX) file (ParseError: ",
        ),
    ],
)
def test_an_entity_bomb_in_a_part_fails_that_file_as_damaged(
    tmp_path: Path, name: str, part: str, body: str, message: str
) -> None:
    """A billion laughs (10^9 "lol"s from 1 KB): both XML parsers refuse to expand it."""
    source = (write_docx if name.endswith("docx") else write_xlsx)(tmp_path / f"source-{name}")
    path = tmp_path / name
    with zipfile.ZipFile(source) as good, zipfile.ZipFile(path, "w") as bomb:
        for info in good.infolist():
            laughing = info.filename == part
            bomb.writestr(info, (_LAUGHS + body).encode() if laughing else good.read(info))
    with pytest.raises(DocumentError) as failure:
        open_document(path, max_unpacked=100 << 20)
    assert str(failure.value).startswith(message)
