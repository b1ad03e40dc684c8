"""Real documents made in the tests: PDFs with page labels, headings (a TOC) and Chinese text."""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pymupdf

REPORT_SECTIONS: tuple[tuple[str, str], ...] = (
    (
        "Introduction",
        "This annual report describes the data governance programme of Northwind Ltd. "
        "It covers storage, retention and privacy of customer records.",
    ),
    (
        "Section 3: Retention",
        "Customer invoices must be retained for seven years after the end of the fiscal year. "
        "Email archives are deleted after 24 months unless a legal hold applies.",
    ),
    (
        "Section 4: Privacy",
        "Personal data is encrypted at rest with AES-256. Subject access requests are answered "
        "within 30 days by the privacy office.",
    ),
    (
        "第五节 数据保留",
        "员工档案在员工离职后必须保存十年。财务凭证保存十五年，之后由档案室统一销毁。",
    ),
)

# Facts that follow-up questions lean on (tests of conversations).
HANDBOOK_SECTIONS: tuple[tuple[str, str], ...] = (
    ("Harbor Handbook", "The Harbor Handbook explains how to deploy services with Harbor."),
    (
        "English edition",
        "The English edition of the Harbor Handbook was published in 2019 by Quay Press.",
    ),
    (
        "Chinese edition",
        "The Chinese edition of the Harbor Handbook was published in 2022 by Lotus Books. "
        "It was translated by Mei Lin.",
    ),
    (
        "Installation",
        "Install Harbor with the command pipx install harbor-deploy. Harbor needs Python 3.11.",
    ),
)


def write_pdf(
    path: Path,
    sections: Sequence[tuple[str, str]] = REPORT_SECTIONS,
    *,
    roman_front_pages: int = 1,
) -> Path:
    """One section per page, a TOC entry per section, and printed page labels i, 1, 2, …"""
    doc = pymupdf.open()
    for title, body in sections:
        font = "china-s" if any("\u4e00" <= ch <= "\u9fff" for ch in title + body) else "helv"
        page = doc.new_page()
        page.insert_text((72, 80), title, fontsize=18, fontname=font)
        page.insert_textbox(pymupdf.Rect(72, 100, 520, 700), body, fontsize=11, fontname=font)
    labels = [{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1}]
    if roman_front_pages < len(sections):
        labels.append(
            {"startpage": roman_front_pages, "prefix": "", "style": "D", "firstpagenum": 1}
        )
    doc.set_page_labels(labels)
    doc.set_toc([[1, title, number] for number, (title, _) in enumerate(sections, start=1)])
    doc.save(path)
    doc.close()
    return path


def write_long_pdf(path: Path, pages: int, lines_per_page: int = 12) -> Path:
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        page = doc.new_page()
        text = "\n".join(
            f"Page {number} line {line}: the quarterly ledger for region {number % 17} "
            f"balances account {number * 31 + line} against the audit trail."
            for line in range(lines_per_page)
        )
        page.insert_textbox(pymupdf.Rect(50, 50, 560, 800), text, fontsize=9)
    doc.save(path)
    doc.close()
    return path


def write_image_only_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pixmap.clear_with(200)
    page.insert_image(pymupdf.Rect(72, 72, 400, 400), pixmap=pixmap)
    doc.save(path)
    doc.close()
    return path


def write_encrypted_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Top secret budget figures.")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    doc.close()
    return path


def write_xps(path: Path, text: str) -> Path:
    """A one-page XPS package (MuPDF reads XPS; nothing here writes it, so it is built by hand)."""
    page = (
        '<FixedPage xmlns="http://schemas.microsoft.com/xps/2005/06" Width="816" Height="1056">'
        '<Glyphs Fill="#ff000000" FontUri="/Resources/font.otf" FontRenderingEmSize="14" '
        f'OriginX="96" OriginY="120" UnicodeString="{text}"/></FixedPage>'
    )
    types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        + "".join(
            f'<Default Extension="{ext}" ContentType="{kind}"/>'
            for ext, kind in (
                ("fdseq", "application/vnd.ms-package.xps-fixeddocumentsequence+xml"),
                ("fdoc", "application/vnd.ms-package.xps-fixeddocument+xml"),
                ("fpage", "application/vnd.ms-package.xps-fixedpage+xml"),
                ("otf", "application/vnd.ms-opentype"),
                ("rels", "application/vnd.openxmlformats-package.relationships+xml"),
            )
        )
        + "</Types>"
    )
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("[Content_Types].xml", types)
        package.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Type="http://schemas.microsoft.com/xps/2005/06/fixedrepresentation" '
            'Target="/FixedDocSeq.fdseq" Id="R0"/></Relationships>',
        )
        package.writestr(
            "FixedDocSeq.fdseq",
            '<FixedDocumentSequence xmlns="http://schemas.microsoft.com/xps/2005/06">'
            '<DocumentReference Source="/Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>',
        )
        package.writestr(
            "Documents/1/FixedDoc.fdoc",
            '<FixedDocument xmlns="http://schemas.microsoft.com/xps/2005/06">'
            '<PageContent Source="/Documents/1/Pages/1.fpage"/></FixedDocument>',
        )
        package.writestr("Documents/1/Pages/1.fpage", page)
        package.writestr("Resources/font.otf", pymupdf.Font("helv").buffer)
    return path


def write_mobi(path: Path, html: str) -> Path:
    """A minimal uncompressed MOBI: a Palm database whose record 0 has PalmDOC + MOBI headers."""
    text = html.encode("utf-8")
    header = bytearray(232)
    header[0:4] = b"MOBI"
    struct.pack_into(">III", header, 4, 232, 2, 65001)  # header length, book type, UTF-8
    records = [struct.pack(">HHIHHHH", 1, 0, len(text), 1, 4096, 0, 0) + bytes(header), text]
    database = bytearray(path.stem.encode()[:31].ljust(32, b"\0")) + bytes(28) + b"BOOKMOBI"
    database += struct.pack(">IIH", 0, 0, len(records))
    offset = len(database) + 8 * len(records) + 2
    for number, record in enumerate(records):
        database += struct.pack(">IB3s", offset, 0, number.to_bytes(3, "big"))
        offset += len(record)
    path.write_bytes(bytes(database) + b"\0\0" + b"".join(records))
    return path


# Known text for OCR: what a scan of it must read back.
SCANNED_ENGLISH = (
    "The committee reviewed the annual maintenance report for the northern pumping station. "
    "Pressure readings remained within tolerance throughout the winter, although valve seven "
    "showed intermittent leakage after the January freeze. Engineers recommend replacing the "
    "gasket assembly before the spring inspection and recording flow rates every fortnight. "
    "Budget estimates for the replacement parts total 4,350 euros, excluding labour."
)
SCANNED_CHINESE = (
    "委员会审阅了北部泵站的年度维护报告。整个冬季压力读数保持在允许范围内，但一月份冰冻之后，"
    "七号阀门出现间歇性渗漏。工程师建议在春季检查之前更换垫圈组件，并每两周记录一次流量。"
)
TEXT_BOX = pymupdf.Rect(60, 60, 535, 782)  # where the text sits on an A4 page


def text_page(doc: pymupdf.Document, text: str, fontsize: float = 11) -> pymupdf.Page:
    """An A4 page with `text` on it, in a CJK font when it needs one."""
    page = doc.new_page(width=595, height=842)
    font = "china-s" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "helv"
    left = page.insert_textbox(TEXT_BOX, text, fontsize=fontsize, fontname=font, lineheight=1.5)
    assert left >= 0, "the text does not fit on the page"
    return page


def scan_of(text: str, dpi: int = 200) -> pymupdf.Pixmap:
    """A picture of a page of `text`, as a scanner would make it (without the noise)."""
    return text_page(pymupdf.open(), text).get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)


def write_scanned_pdf(path: Path, texts: Sequence[str], dpi: int = 200) -> Path:
    """An image-only PDF: each page is nothing but a picture of one of `texts`."""
    doc = pymupdf.open()
    for text in texts:
        page = doc.new_page(width=595, height=842)
        page.insert_image(page.rect, pixmap=scan_of(text, dpi))
    doc.save(path)
    doc.close()
    return path


# Office files, written with the libraries Docent reads them with. Each fact sits on one page,
# slide or sheet, in a table, so a citation can be checked against where it really is.
def write_docx(path: Path) -> Path:
    """Three pages (hard page breaks): a policy's introduction, a retention table, a contact."""
    import docx
    from docx.enum.text import WD_BREAK

    document = docx.Document()
    document.core_properties.title = "Records policy"
    document.add_heading("Introduction", 1)
    document.add_paragraph("This policy says how long Northwind keeps its business records.")
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.add_heading("Retention periods", 1)
    document.add_paragraph("Each record type is kept for the period in this table.")
    table = document.add_table(rows=4, cols=2)
    for row, (kind, period) in enumerate(
        [
            ("Record type", "Period"),
            ("Customer invoices", "7 years"),
            ("Supplier contracts", "12 years"),
            ("Visitor logs", "90 days"),
        ]
    ):
        table.cell(row, 0).text = kind
        table.cell(row, 1).text = period
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    document.add_heading("Contact", 1)
    document.add_paragraph("Questions about this policy go to the records office in room 204.")
    document.save(str(path))
    return path


def write_pptx(path: Path) -> Path:
    """Four slides; the third, "Ferry timetable", holds a table of departures."""
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    slides = [
        ("Harbour briefing", "Welcome to the spring briefing of the harbour office."),
        ("Moorings", "Visitor moorings are on the east quay."),
        ("Ferry timetable", "Ferries leave from pier nine."),
        ("Questions", "Ask the harbour master."),
    ]
    for title, text in slides:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = text
        if title == "Ferry timetable":
            shape = slide.shapes.add_table(3, 2, Inches(1), Inches(4), Inches(6), Inches(1.5))
            for row, cells in enumerate(
                [("Route", "Departures"), ("Kastel", "every forty minutes"), ("Solin", "hourly")]
            ):
                for column, value in enumerate(cells):
                    shape.table.cell(row, column).text = value
    presentation.save(str(path))
    return path


def write_xlsx(path: Path) -> Path:
    """Two sheets: "Staff" (names) and "Budget" (cost lines; the crane's on its row 4)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    staff = workbook.active
    staff.title = "Staff"
    for row in [("Name", "Role"), ("Ana", "Harbour master"), ("Ivo", "Pilot")]:
        staff.append(row)
    budget = workbook.create_sheet("Budget")
    for row in [
        ("Item", "Cost in euros", "Year"),
        ("Quay repairs", 40_000, 2025),
        ("Buoys", 3_500, 2025),
        ("Harbour crane", 185_000, 2026),
    ]:
        budget.append(row)
    workbook.save(str(path))
    return path


def write_encrypted_office(path: Path) -> Path:
    """What Office writes for a password-protected file: an OLE2 compound file whose directory
    (here in its second sector, as in Word's) names an EncryptedPackage stream."""
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    entry = "EncryptedPackage".encode("utf-16-le").ljust(64, b"\0") + bytes(64)
    path.write_bytes(header + bytes(512) + entry + bytes(512 - len(entry)))
    return path


def write_office_bomb(path: Path, inflated_mb: int) -> Path:
    """A DOCX whose document part is `inflated_mb` MB of spaces, deflated about 1000:1."""
    from tests.hostile import deflate_repeated, write_zip

    types = b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'
    body = deflate_repeated((b" " * (1 << 20), inflated_mb))
    return write_zip(path, [("[Content_Types].xml", types), ("word/document.xml", body)])


# A book of six chapters of ten pages; each chapter holds one fact (a made-up name) on one page
# among pages that only describe its subject: what a summary must keep, and cite by page.
BOOK_CHAPTERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Chapter 1: The Harbour Lighthouse",
        "The first keeper of the harbour lighthouse was Ottilie Brask, who kept its lamp lit "
        "for 41 years.",
        (
            "The lighthouse stands at the end of the northern pier.",
            "Its lamp turns every twelve seconds through the night.",
            "Ships use its light to find the channel into the harbour.",
        ),
    ),
    (
        "Chapter 2: The Hillside Orchard",
        "The orchard's golden apple was bred by Teodor Quillan in 1923.",
        (
            "The orchard covers the southern slope above the village.",
            "Apple trees there are pruned in late winter.",
            "The harvest is picked by hand in October.",
        ),
    ),
    (
        "Chapter 3: The Valley Railway",
        "The valley railway was designed by the engineer Marisol Okafor.",
        (
            "The railway climbs the valley along the river.",
            "Its trains stop at five small stations.",
            "Goods and passengers share the single track.",
        ),
    ),
    (
        "Chapter 4: The Mountain Observatory",
        "The comet seen from the observatory was discovered by Ingrid Halvorsen.",
        (
            "The observatory sits on the highest ridge of the mountain.",
            "Its telescope opens on clear and cold nights.",
            "Visitors may look through it on Fridays.",
        ),
    ),
    (
        "Chapter 5: The Market Bakery",
        "The bakery was founded by Pellegrino Vasto, whose rye loaf is still sold.",
        (
            "The bakery opens before dawn on the market square.",
            "Its ovens are fired with beech wood.",
            "Bread is sold until the last loaf is gone.",
        ),
    ),
    (
        "Chapter 6: The River Bridge",
        "The stone bridge over the river was built by the architect Yusuf Demirel.",
        (
            "The bridge crosses the river in seven arches.",
            "Carts and walkers cross it every day.",
            "Its parapet is repaired each spring.",
        ),
    ),
)
BOOK_PAGES_PER_CHAPTER = 10
BOOK_FACT_PAGE = 4  # the page of its chapter that holds the fact


def write_book_pdf(
    path: Path, chapters: Sequence[tuple[str, str, tuple[str, ...]]] = BOOK_CHAPTERS
) -> Path:
    """Ten pages a chapter (60 pages), with an outline; page n of the file is printed n."""
    doc = pymupdf.open()
    toc = []
    for title, fact, description in chapters:
        toc.append([1, title, len(doc) + 1])
        for number in range(1, BOOK_PAGES_PER_CHAPTER + 1):
            lines = [title] if number == 1 else []
            lines += [description[(number + i) % len(description)] for i in range(2)]
            if number == BOOK_FACT_PAGE:
                lines.append(fact)
            text_page(doc, "\n\n".join(lines))
    doc.set_toc(toc)
    doc.save(path)
    doc.close()
    return path
