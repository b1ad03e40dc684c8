"""Real documents made in the tests: PDFs with page labels, headings (a TOC) and Chinese text."""

from __future__ import annotations

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
