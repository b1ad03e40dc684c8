"""Text for pages that have none: scans, image-only pages, images dropped as documents.

RapidOCR runs PaddleOCR's PP-OCR models (Chinese and English in one recogniser) on onnxruntime;
the models ship inside its wheel, so OCR works offline on every platform. Like PyMuPDF, this runs
only in the reader's child process (`app.documents.worker`): a page is rendered there and read
there, under the reader's time and memory limits.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# 150 dpi reads 11 pt English and Chinese on an A4 page without an error; 200 dpi was no better
# and no faster (the recogniser, which sees each line at a fixed height, takes most of the time).
OCR_DPI = 150
# A poster or an A0 plan at OCR_DPI would be a picture of hundreds of MB (and the detector sees
# at most 2,000 pixels a side anyway): larger pages are read at a lower resolution.
MAX_SIDE_PIXELS = 3000
# A page is a scan when images cover this much of it and it has no text, or when one image covers
# nearly all of it and its text is no more than a stamp, a page number or a Bates label.
IMAGE_ONLY_COVER = 0.5
SCAN_COVER = 0.9
STAMP_CHARACTERS = 200
# A line further below the previous one than this many line heights starts a new paragraph.
PARAGRAPH_GAP = 0.8


# A word OCR read, as stored and sent between processes: text, x0, y0, x1, y1 in page points.
WordBox = tuple[str, float, float, float, float]


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in page points, as PyMuPDF's rects


@dataclass(frozen=True, slots=True)
class OcrPage:
    words: tuple[Word, ...]  # in reading order
    paragraphs: tuple[str, ...]  # in reading order

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


def needs_ocr(page: Any, text_characters: int) -> bool:
    """Whether a PyMuPDF page holding `text_characters` of text has no usable text layer."""
    if text_characters >= STAMP_CHARACTERS:
        return False
    area = abs(page.rect)
    if not area:
        return False
    covers = [abs(page.rect & info["bbox"]) / area for info in page.get_image_info()]
    if not covers:
        return False
    return max(covers) >= SCAN_COVER or (text_characters == 0 and sum(covers) >= IMAGE_ONLY_COVER)


@functools.cache
def _engine() -> Any:
    from rapidocr import RapidOCR

    return RapidOCR(
        params={
            "Global.log_level": "error",
            # The text-direction classifier turned long upright lines upside down (16 % of the
            # characters of a clean English page lost); scans are upright.
            "Global.use_cls": False,
        }
    )


def ocr_dpi(width: float, height: float, dpi: int = OCR_DPI) -> int:
    """The resolution to read a page of this size (in points) at."""
    return max(1, min(dpi, int(MAX_SIDE_PIXELS * 72 / max(width, height, 1.0))))


def read_page(page: Any, dpi: int = OCR_DPI) -> OcrPage:
    """OCR one PyMuPDF page: its words with their boxes, and its text in paragraphs."""
    import numpy as np

    dpi = ocr_dpi(page.rect.width, page.rect.height, dpi)
    pixmap = page.get_pixmap(dpi=dpi)  # RGB, no alpha
    image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.h, pixmap.w, 3)
    result = _engine()(np.ascontiguousarray(image[:, :, ::-1]), return_word_box=True)  # BGR
    scale = 72 / dpi
    x, y = page.rect.x0, page.rect.y0
    lines: list[Line] = []
    for text, line_words in zip(result.txts or (), result.word_results or (), strict=False):
        words = []
        for word, _score, box in line_words:
            xs = [point[0] for point in box]
            ys = [point[1] for point in box]
            box_on_page = (
                x + min(xs) * scale,
                y + min(ys) * scale,
                x + max(xs) * scale,
                y + max(ys) * scale,
            )
            words.append(Word(word, box_on_page))
        if text.strip() and words:
            lines.append(Line(text.strip(), tuple(words)))
    blocks = in_reading_order(lines)
    return OcrPage(
        tuple(word for block in blocks for line in block for word in line.words),
        tuple("\n".join(line.text for line in block) for block in blocks),
    )


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    words: tuple[Word, ...]

    @property
    def box(self) -> tuple[float, float, float, float]:
        return _union(word.box for word in self.words)


def in_reading_order(lines: Sequence[Line]) -> list[list[Line]]:
    """Lines grouped into blocks (a paragraph of one column), the blocks in reading order.

    RapidOCR lists lines top to bottom across the whole page, which interleaves columns. A line
    joins the block just above it that it overlaps sideways; a block is read after the blocks
    above it that it overlaps sideways and after those on its left on the same rows; of the
    blocks that may be read next, the leftmost, then the highest, is.
    """
    blocks: list[list[Line]] = []
    for line in sorted(lines, key=lambda line: line.box[1]):
        x0, y0, x1, _ = line.box
        for block in reversed(blocks):
            bx0, _, bx1, by1 = block[-1].box
            height = by1 - block[-1].box[1]
            overlap = min(x1, bx1) - max(x0, bx0)
            if overlap > 0.5 * min(x1 - x0, bx1 - bx0) and y0 - by1 < PARAGRAPH_GAP * height:
                block.append(line)
                break
        else:
            blocks.append([line])
    boxes = [_union(line.box for line in block) for block in blocks]

    def before(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        sideways = min(a[2], b[2]) > max(a[0], b[0])
        same_rows = min(a[3], b[3]) > max(a[1], b[1])
        return (sideways and (a[1] + a[3]) / 2 < b[1]) or (
            same_rows and not sideways and a[2] <= b[0]
        )

    after = [
        [j for j in range(len(boxes)) if j != i and before(boxes[i], boxes[j])]
        for i in range(len(boxes))
    ]
    waiting = [0] * len(boxes)
    for followers in after:
        for j in followers:
            waiting[j] += 1
    left = set(range(len(boxes)))
    ordered: list[list[Line]] = []
    while left:
        ready = [i for i in left if not waiting[i]]
        # A cycle (overlapping boxes of a skewed scan) is broken at the highest block.
        pick = (
            min(ready, key=lambda i: (boxes[i][0], boxes[i][1]))
            if ready
            else min(left, key=lambda i: (boxes[i][1], boxes[i][0]))
        )
        left.remove(pick)
        ordered.append(blocks[pick])
        for j in after[pick]:
            waiting[j] -= 1
    return ordered


def _union(boxes: Iterable[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return min(x0s), min(y0s), max(x1s), max(y1s)
