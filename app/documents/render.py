"""A page as a picture, with the cited passage marked: what a click on a citation shows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.documents.ocr import WordBox
from app.documents.parse import DocumentError, mupdf, open_document

_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*|\n")
_SEARCH_CHARS = 100  # MuPDF's search_for needs a needle; long ones rarely survive line breaks
# A page may declare any size (a 200-inch poster): the preview is scaled down to at most this
# many pixels, so one page cannot take gigabytes to draw.
MAX_PREVIEW_PIXELS = 4096 * 4096


@dataclass(frozen=True, slots=True)
class RenderedPage:
    png: bytes
    page: int  # physical, 1-based
    pages: int
    label: str
    highlights: tuple[tuple[float, float, float, float], ...]  # x0, y0, x1, y1 in pixels


def render_page(
    path: Path,
    page: int,
    zoom: float = 1.5,
    passage: str = "",
    words: Sequence[WordBox] = (),
) -> RenderedPage:
    """Render one page (opened exactly as it was indexed) and find the passage on it: in its
    text layer, or, for a page read by OCR, among its OCR'd `words`.

    Runs in the reader's child process (PyMuPDF may crash on a hostile page).
    """
    with open_document(path) as document:
        if not 1 <= page <= document.page_count:
            raise DocumentError(f"{path.name} has no page {page} (it has {document.page_count})")
        loaded = document.load_page(page - 1)
        area = max(loaded.rect.width * loaded.rect.height, 1.0)
        zoom = min(zoom, (MAX_PREVIEW_PIXELS / area) ** 0.5)
        pixmap = loaded.get_pixmap(matrix=mupdf().Matrix(zoom, zoom), alpha=False)
        if words:  # a page read by OCR: no text layer to search
            boxes = passage_boxes(words, passage)
        else:
            boxes = [
                (rect.x0, rect.y0, rect.x1, rect.y1)
                for sentence in filter(None, (s.strip() for s in _SENTENCES.split(passage)))
                for rect in loaded.search_for(sentence[:_SEARCH_CHARS])
            ]
        rects = [(x0 * zoom, y0 * zoom, x1 * zoom, y1 * zoom) for x0, y0, x1, y1 in boxes]
        return RenderedPage(
            png=pixmap.tobytes("png"),
            page=page,
            pages=document.page_count,
            label=document.page_label(page - 1),
            highlights=tuple(rects),
        )


def passage_boxes(
    words: Sequence[WordBox], passage: str
) -> list[tuple[float, float, float, float]]:
    """The boxes of the OCR'd words that spell each sentence of `passage` (spacing aside: OCR's
    and the chunker's differ); what search_for does on a page with a text layer."""
    spelled = ""
    owner: list[int] = []  # the word each character of `spelled` belongs to
    for position, (text, *_box) in enumerate(words):
        bare = "".join(text.split())
        spelled += bare
        owner += [position] * len(bare)
    marked: set[int] = set()
    for sentence in _SENTENCES.split(passage):
        if not (wanted := "".join(sentence.split())):
            continue
        start = spelled.find(wanted)
        while start >= 0:
            marked.update(owner[start : start + len(wanted)])
            start = spelled.find(wanted, start + len(wanted))
    return [(x0, y0, x1, y1) for _, x0, y0, x1, y1 in (words[p] for p in sorted(marked))]
