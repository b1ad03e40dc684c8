"""Cut pages into passages small enough to retrieve precisely and to fit a CPU model's prompt.

A chunk never crosses a page (a citation names one page) or a section heading (a chunk belongs to
one section). Paragraphs are kept whole when they fit; longer ones are cut at sentence ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from app.cjk import estimate_tokens, has_cjk, is_cjk_char
from app.documents.office import is_table
from app.documents.parse import PageText

TARGET_TOKENS = 180
MAX_TOKENS = 260
_MIN_TAIL_TOKENS = 40
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])")
_LINE_BREAK = re.compile(r"\s*\n\s*")
_HYPHENATED = re.compile(r"(?<=[^\W\d_])-\s*\n\s*(?=[a-z])")


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int  # position within the document
    page: int
    page_label: str
    heading: str | None
    text: str


def cited_as(page_label: str, page: str = "p.") -> str:
    """How a citation names its place: "p. 12", or a unit that names itself ("slide 3",
    "Sheet1 A1:F100", "section 2": an Office file's labels hold a space, page numbers do not)."""
    return page_label if " " in page_label else f"{page} {page_label}"


def unwrap(block: str) -> str:
    """Join a paragraph's visual lines (and words hyphenated across them); no space is put
    between two CJK characters. A Markdown table keeps its rows, one a line."""
    if is_table(block):
        return block
    if "-" in block:
        block = _HYPHENATED.sub("", block)
    if not has_cjk(block):
        return " ".join(block.split())

    def join(match: re.Match[str]) -> str:
        before = match.string[match.start() - 1] if match.start() > 0 else ""
        after = match.string[match.end()] if match.end() < len(match.string) else ""
        return "" if is_cjk_char(before) and is_cjk_char(after) else " "

    return _LINE_BREAK.sub(join, block.strip())


def split_long(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Cut an over-long paragraph at sentence ends, then at words or characters if it must."""
    sentences = filter(None, (s.strip() for s in _SENTENCE_END.split(text)))
    return _pack((part for s in sentences for part in _hard_split(s, max_tokens)), max_tokens)


def _hard_split(sentence: str, max_tokens: int) -> list[str]:
    if estimate_tokens(sentence) <= max_tokens:
        return [sentence]
    if " " not in sentence:  # unspaced text (CJK, a URL): cut by characters
        step = max_tokens if is_cjk_char(sentence[:1]) else max_tokens * 4
        return [sentence[i : i + step] for i in range(0, len(sentence), step)]
    words = sentence.split(" ")
    return _pack((part for word in words for part in _hard_split(word, max_tokens)), max_tokens)


def _pack(parts: Iterable[str], max_tokens: int) -> list[str]:
    """Join parts with spaces, greedily, into pieces of at most `max_tokens` each."""
    pieces: list[str] = []
    current = ""
    for part in parts:
        candidate = f"{current} {part}" if current else part
        if current and estimate_tokens(candidate) > max_tokens:
            pieces.append(current)
            current = part
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def chunk_pages(pages: Iterable[PageText]) -> Iterator[Chunk]:
    """Yield chunks page by page, so a caller can store a page before the next one is read."""
    ordinal = 0
    for page in pages:
        for heading, text in _page_chunks(page):
            yield Chunk(ordinal, page.number, page.label, heading, text)
            ordinal += 1


def _page_chunks(page: PageText) -> list[tuple[str | None, str]]:
    chunks: list[tuple[str | None, str]] = []
    parts: list[str] = []
    tokens = 0
    heading: str | None = None

    def flush() -> None:
        nonlocal parts, tokens
        if parts:
            chunks.append((heading, "\n".join(parts)))
        parts, tokens = [], 0

    for block, block_heading in page.blocks:
        if block_heading != heading:
            flush()
            heading = block_heading
        text = unwrap(block)
        for piece in split_long(text) if estimate_tokens(text) > MAX_TOKENS else [text]:
            size = estimate_tokens(piece)
            # A short lead (a heading line) stays with the paragraph that follows it.
            lead_is_short = tokens < _MIN_TAIL_TOKENS
            if parts and tokens + size > TARGET_TOKENS and not lead_is_short:
                flush()
            parts.append(piece)
            tokens += size
    if (
        parts
        and tokens < _MIN_TAIL_TOKENS
        and chunks
        and chunks[-1][0] == heading
        and estimate_tokens(chunks[-1][1]) + tokens <= MAX_TOKENS
    ):
        last_heading, last_text = chunks.pop()
        chunks.append((last_heading, "\n".join([last_text, *parts])))
        parts = []
    flush()
    return chunks
