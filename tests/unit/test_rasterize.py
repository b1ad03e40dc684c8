"""`docent eval --scanned`: a PDF's image-only copy (app.bench.rasterize, made in a child
process) and the questions the option refuses to run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import cast

import pymupdf
import pytest

from app.bench.rasterize import RasterizeError, scanned_copies
from app.bootstrap import Docent
from app.cli.documents import UsageError
from app.cli.evaluate import evaluate_questions
from app.cli.main import build_parser
from app.documents import open_document
from tests.documents import write_pdf

DPI = 50  # the lowest --scanned takes: the copy's content is not what these tests read


def test_a_scanned_copy_has_every_page_and_no_text_layer(tmp_path: Path) -> None:
    original = write_pdf(tmp_path / "report.pdf")
    folder = tmp_path / "scanned"
    said: list[str] = []

    copies = asyncio.run(scanned_copies([original], folder, DPI, said.append))

    assert copies == [folder / "report.pdf"]
    with pymupdf.open(original) as text, pymupdf.open(copies[0]) as scan:
        assert scan.page_count == text.page_count == 4
        assert [page.rect for page in scan] == [page.rect for page in text]
        assert [page.get_text() for page in scan] == [""] * 4
    with open_document(copies[0]) as document:
        list(document.pages())
        assert document.ocr_pages == [1, 2, 3, 4]  # Docent's OCR pass reads every page
    assert [path.name for path in folder.iterdir()] == ["report.pdf"]  # no partial left

    made = copies[0].stat().st_mtime_ns
    assert asyncio.run(scanned_copies([original], folder, DPI, said.append)) == copies
    assert copies[0].stat().st_mtime_ns == made
    assert said == [
        f"report.pdf: scanning at {DPI} dpi",
        f"report.pdf: scanned at {DPI} dpi (cached)",
    ]


def test_a_document_that_cannot_be_scanned_is_reported_and_leaves_no_copy(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\nnot a PDF at all")
    folder = tmp_path / "scanned"

    with pytest.raises(RasterizeError, match=r"broken\.pdf: cannot be scanned"):
        asyncio.run(scanned_copies([broken], folder, DPI))
    assert not (folder / "broken.pdf").exists()


def refused(*arguments: str) -> str:
    """What `docent eval ARGUMENTS` refuses with, before it touches the library."""
    parsed = build_parser().parse_args(["eval", *arguments])
    with pytest.raises(UsageError) as refusal:
        asyncio.run(evaluate_questions(cast(Docent, None), parsed))
    return str(refusal.value)


def test_scanned_takes_only_a_set_fetched_from_its_sources(tmp_path: Path) -> None:
    line = {"question": "Q?", "answers": ["A"], "document": "guide.epub", "pages": [1]}
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps(line), encoding="utf-8")

    assert "needs a QA file with a sources.toml beside it" in refused(str(qa), "--scanned", "150")
    assert "sources.toml beside it" in refused("--scanned", "150")  # the shipped samples
    assert "no --summaries or --documents" in refused(
        str(qa), "--scanned", "150", "--documents", str(tmp_path)
    )
    (tmp_path / "sources.toml").write_text("", encoding="utf-8")
    assert "DPI must be 50 to 600" in refused(str(qa), "--scanned", "1200")
    assert "asks nothing about a PDF" in refused(str(qa), "--scanned", "150")
