"""A document cut into the sections a summary reads one at a time (the map step).

Sections follow the outline where the document has one (each chunk keeps its heading), and are
page windows otherwise; a section longer than the model can read at once is cut into page
windows too. Each page of a section is one numbered source, so a summary sentence is cited by
page exactly as an answer's is. A chapter ("chapter 3", "第三章", a heading's words) is found
among the sections' headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import groupby

from app.answering.events import Source
from app.cjk import estimate_tokens
from app.documents.chunking import cited_as
from app.errors import DocentError
from app.index import StoredChunk

# Per source: its "Page n:" header and the blank line between two.
_SOURCE_OVERHEAD = 8
# A section under this many tokens joins the one before it (a heading's one-line section, a
# title page): a map step's fixed cost (prompt, instruction, a few sentences out) is not worth
# spending on one line.
MIN_SECTION_TOKENS = 100


class PartNotFound(DocentError):
    """The chapter asked for is not among the document's sections."""


@dataclass(frozen=True, slots=True)
class Section:
    heading: str | None
    sources: tuple[Source, ...]  # one per page, in page order

    @property
    def tokens(self) -> int:
        return sum(estimate_tokens(s.text) + _SOURCE_OVERHEAD for s in self.sources)

    @property
    def pages(self) -> str:
        """ "pages 11–20", "page 4", "slides 2–3"."""
        first, last = self.sources[0], self.sources[-1]
        if first.page_label == last.page_label:
            return cited_as(first.page_label, "page")
        if " " in first.page_label:  # Office units name themselves
            return f"{first.page_label} – {last.page_label}"
        return f"pages {first.page_label}–{last.page_label}"

    @property
    def title(self) -> str:
        return f"{self.heading} ({self.pages})" if self.heading else self.pages.capitalize()


def page_sources(chunks: Sequence[StoredChunk]) -> list[Source]:
    """One source per page and heading, numbered from 1 in reading order."""
    sources: list[Source] = []
    for (page, heading), run in groupby(chunks, key=lambda c: (c.page, c.heading)):
        pieces = list(run)
        first = pieces[0]
        sources.append(
            Source(
                number=len(sources) + 1,
                chunk_id=first.id,
                document_id=first.document_id,
                document=first.document_name,
                path=first.document_path,
                page=page,
                page_label=first.page_label,
                heading=heading,
                text="\n".join(piece.text for piece in pieces),
                score=1.0,
            )
        )
    return sources


def split(sources: Sequence[Source], budget_tokens: int) -> list[Section]:
    """The document's sections, each within `budget_tokens`."""
    by_heading = [
        Section(heading, tuple(run)) for heading, run in groupby(sources, key=lambda s: s.heading)
    ]
    sections: list[Section] = []
    for section in by_heading:
        if section.tokens <= budget_tokens:
            if sections and sections[-1].tokens < MIN_SECTION_TOKENS:
                merged = Section(sections[-1].heading, sections[-1].sources + section.sources)
                if merged.tokens <= budget_tokens:
                    sections[-1] = merged
                    continue
            sections.append(section)
        else:
            sections.extend(Section(section.heading, w) for w in _windows(section, budget_tokens))
    return sections


def _windows(section: Section, budget_tokens: int) -> Iterator[tuple[Source, ...]]:
    """Consecutive pages that fit the budget; a page alone beyond it is cut short (its end is
    not read: a table of 10,000 rows on one page does not fit any prompt)."""
    window: list[Source] = []
    used = 0
    for source in section.sources:
        cost = estimate_tokens(source.text) + _SOURCE_OVERHEAD
        if window and used + cost > budget_tokens:
            yield tuple(window)
            window, used = [], 0
        if cost > budget_tokens:
            source = _shortened(source, budget_tokens)
            cost = budget_tokens
        window.append(source)
        used += cost
    if window:
        yield tuple(window)


def _shortened(source: Source, budget_tokens: int) -> Source:
    text = source.text
    while estimate_tokens(text) + _SOURCE_OVERHEAD > budget_tokens:
        text = text[: len(text) * 9 // 10]
    return replace(source, text=text)


# --- a part of the document: "chapter 3", "第三章", "the chapter on budgets" -------------------

NUMBER_WORDS = {
    word: number
    for number, word in enumerate(
        "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split(),
        start=1,
    )
}
_HAN_DIGITS = {ch: n for n, ch in enumerate("零一二三四五六七八九")} | {"两": 2}


def number_of(text: str) -> int | None:
    """ "3", "three", "三", "十二", "第3" -> the number; None when it is not one."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    if text and all(ch in _HAN_DIGITS or ch == "十" for ch in text):
        if "十" not in text:
            value = 0
            for ch in text:
                value = value * 10 + _HAN_DIGITS[ch]
            return value
        tens, _, ones = text.partition("十")
        return (_HAN_DIGITS[tens] if tens else 1) * 10 + (_HAN_DIGITS[ones] if ones else 0)
    return None


_CHAPTER_HEADING = re.compile(
    r"^\s*(?:(?:chapter|chap\.|ch\.|part|section)\s*(\w+)|第\s*([0-9零一二三四五六七八九十两]+)\s*[章节部篇])",
    re.IGNORECASE,
)
# "3 Ships", "3. Ships", "3) Ships"; not a subsection's "3.1 Sails".
_NUMBERED_HEADING = re.compile(r"^\s*(\d+)[.:)]?(?:\s|$)")


def _heading_number(heading: str) -> int | None:
    if match := _CHAPTER_HEADING.match(heading):
        return number_of(match.group(1) or match.group(2))
    if match := _NUMBERED_HEADING.match(heading):
        return int(match.group(1))
    return None


def select_part(
    sections: Sequence[Section], number: int | None, title: str | None
) -> list[Section]:
    """The sections of one chapter: the one headed "Chapter n" (or "n. …", "第n章"), else the
    n-th heading; or the one whose heading holds `title`. A numbered chapter's numbered
    subsections come with it; any other part is its heading's own."""
    headings = list(dict.fromkeys(s.heading for s in sections if s.heading))
    chosen: str | None = None
    if number is not None:
        chosen = next((h for h in headings if _heading_number(h) == number), None)
        if chosen is None and not any(_heading_number(h) for h in headings):
            chosen = headings[number - 1] if 0 < number <= len(headings) else None
    elif title:
        wanted = title.casefold()
        chosen = next((h for h in headings if wanted in h.casefold()), None)
    if chosen is None:
        asked = f"chapter {number}" if number is not None else repr(title)
        listed = "; ".join(headings[:12]) or "it has no headings"
        raise PartNotFound(f"the document has no {asked} (its sections: {listed})")
    start = next(i for i, s in enumerate(sections) if s.heading == chosen)
    # A numbered chapter keeps its numbered subsections ("3.1 …", "3.2 …").
    number = _heading_number(chosen)
    subsection = re.compile(rf"^\s*{number}\.\d") if number is not None else None
    part = [sections[start]]
    for section in sections[start + 1 :]:
        heading = section.heading or ""
        if heading != chosen and not (subsection and subsection.match(heading)):
            break
        part.append(section)
    return part
