"""A page as a picture, with the cited passage marked: what a click on a citation shows."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.documents.ocr import WordBox
from app.documents.parse import DocumentError, mupdf, open_document, text_flags

_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*|\n")
# Spacing and hyphens differ between a page's layout and the indexed text (lines joined,
# "gover-\nnance" made "governance"): a passage is matched with neither.
_UNSPELLED = re.compile(r"[\s\-\u00ad]")
# A page may declare any size (a 200-inch poster): the preview is scaled down to at most this
# many pixels, so one page cannot take gigabytes to draw.
MAX_PREVIEW_PIXELS = 4096 * 4096

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
# A piece of a page's text and its box: a character of a text layer, a word read by OCR. Pieces
# with the same `run` key that are marked one after the other are drawn as one box (a line).
Piece = tuple[str, Box, int]


@dataclass(frozen=True, slots=True)
class RenderedPage:
    png: bytes
    page: int  # physical, 1-based
    pages: int
    label: str
    highlights: tuple[Box, ...]  # the whole passage, in pixels
    used: tuple[Box, ...] = ()  # the sentences of it an answer rests on, in pixels


def sentences(passage: str) -> list[str]:
    """The passage's sentences, as the preview looks for them on the page."""
    return [s for s in (part.strip() for part in _SENTENCES.split(passage)) if s]


def render_page(
    path: Path,
    page: int,
    zoom: float = 1.5,
    passage: str = "",
    words: Sequence[WordBox] = (),
    used: Sequence[str] = (),
) -> RenderedPage:
    """Render one page (opened exactly as it was indexed) and find the passage on it, and the
    `used` sentences of it: in its text layer, or, for a page read by OCR, among its OCR'd
    `words`.

    Runs in the reader's child process (PyMuPDF may crash on a hostile page).
    """
    with open_document(path) as document:
        if not 1 <= page <= document.page_count:
            raise DocumentError(f"{path.name} has no page {page} (it has {document.page_count})")
        loaded = document.load_page(page - 1)
        area = max(loaded.rect.width * loaded.rect.height, 1.0)
        zoom = min(zoom, (MAX_PREVIEW_PIXELS / area) ** 0.5)
        pixmap = loaded.get_pixmap(matrix=mupdf().Matrix(zoom, zoom), alpha=False)
        pieces: list[Piece] = []
        if passage or used:
            pieces = _ocr_pieces(words) if words else _characters(loaded)

        def scaled(found: Sequence[str]) -> tuple[Box, ...]:
            return tuple(
                (x0 * zoom, y0 * zoom, x1 * zoom, y1 * zoom)
                for x0, y0, x1, y1 in sentence_boxes(pieces, found)
            )

        return RenderedPage(
            png=pixmap.tobytes("png"),
            page=page,
            pages=document.page_count,
            label=document.page_label(page - 1),
            highlights=scaled(sentences(passage)),
            used=scaled(used),
        )


def _characters(page: Any) -> list[Piece]:
    """Every character of a page's text layer, with its box, keyed by its line: found whole,
    a sentence of any length, across line breaks and in CJK (MuPDF's search_for finds neither
    a long needle nor one across a CJK line break)."""
    pieces: list[Piece] = []
    line_number = 0
    for block in page.get_text("rawdict", flags=text_flags())["blocks"]:
        for line in block.get("lines", ()):
            line_number += 1
            for span in line["spans"]:
                pieces += [(char["c"], char["bbox"], line_number) for char in span["chars"]]
    return pieces


def _ocr_pieces(words: Sequence[WordBox]) -> list[Piece]:
    # Each word its own box: OCR's lines are not known, and its word gaps may hold a figure.
    return [
        (text, (x0, y0, x1, y1), position) for position, (text, x0, y0, x1, y1) in enumerate(words)
    ]


def passage_boxes(words: Sequence[WordBox], passage: str) -> list[Box]:
    """The boxes of the OCR'd words that spell each sentence of `passage` (spacing aside: OCR's
    and the chunker's differ)."""
    return sentence_boxes(_ocr_pieces(words), sentences(passage))


def sentence_boxes(pieces: Sequence[Piece], wanted: Iterable[str]) -> list[Box]:
    """The boxes of the pieces that spell each of the `wanted` sentences wherever it occurs on
    the page (spacing and hyphens aside), a line's run of marked pieces as one box."""
    spelled = ""
    owner: list[int] = []  # the piece each character of `spelled` belongs to
    for position, (text, _box, _run) in enumerate(pieces):
        bare = _UNSPELLED.sub("", text)
        spelled += bare
        owner += [position] * len(bare)
    marked: set[int] = set()
    for sentence in wanted:
        if not (needle := _UNSPELLED.sub("", sentence)):
            continue
        start = spelled.find(needle)
        while start >= 0:
            marked.update(owner[start : start + len(needle)])
            start = spelled.find(needle, start + len(needle))
    return _runs(pieces, marked)


def _runs(pieces: Sequence[Piece], marked: set[int]) -> list[Box]:
    boxes: list[Box] = []
    extending: int | None = None  # the run whose box the next marked piece extends
    for position, (text, (x0, y0, x1, y1), run) in enumerate(pieces):
        if position in marked:
            if extending == run:
                a0, b0, a1, b1 = boxes[-1]
                boxes[-1] = (min(a0, x0), min(b0, y0), max(a1, x1), max(b1, y1))
            else:
                boxes.append((x0, y0, x1, y1))
                extending = run
        elif _UNSPELLED.sub("", text):  # a letter not marked ends the box; a space does not
            extending = None
    return boxes
