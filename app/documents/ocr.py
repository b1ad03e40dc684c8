"""Text for pages that have none: scans, image-only pages, images dropped as documents.

RapidOCR runs PaddleOCR's PP-OCR models (Chinese and English in one recogniser) on onnxruntime;
the models ship inside its wheel, so OCR works offline on every platform. Like PyMuPDF, this runs
only in the reader's child process (`app.documents.worker`): a page is rendered there and read
there, under the reader's time and memory limits.
"""

from __future__ import annotations

import functools
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
    words: list[Word] = []
    paragraphs: list[list[str]] = []
    previous_bottom: float | None = None
    for line, line_words in zip(result.txts or (), result.word_results or (), strict=False):
        text = line.strip()
        if not text:
            continue
        tops = [point[1] for _, _, box in line_words for point in box]
        top, bottom = (min(tops), max(tops)) if tops else (0.0, 0.0)
        height = max(bottom - top, 1.0)
        if previous_bottom is None or top - previous_bottom > PARAGRAPH_GAP * height:
            paragraphs.append([])
        paragraphs[-1].append(text)
        previous_bottom = bottom
        for word, _score, box in line_words:
            xs = [point[0] for point in box]
            ys = [point[1] for point in box]
            words.append(
                Word(
                    word,
                    (
                        x + min(xs) * scale,
                        y + min(ys) * scale,
                        x + max(xs) * scale,
                        y + max(ys) * scale,
                    ),
                )
            )
    return OcrPage(tuple(words), tuple("\n".join(lines) for lines in paragraphs))
