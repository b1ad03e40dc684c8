"""A section's key points: its own sentences that carry the most facts the summary left out.

Asked for two or three sentences per section, the bundled 0.5B model kept 19 % of a part's key
facts (names, versions, commands, numbers; `docent eval --summaries`); asked for a list, 27 %,
and a longer text only made it repeat itself. Facts are what a reader of a manual's summary
looks for, and the section states them: so after the model's sentences, the summary quotes the
section's sentences that state the most facts not yet said, each cited by its page. A quote
cannot make a false claim, and it costs no model time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from app.answering.events import Source
from app.answering.facts import facts_of
from app.cjk import CJK_RUN, estimate_tokens, has_cjk
from app.index.terms import STOPWORDS

# Per section, by its length: a summary, not the section again.
MIN_POINTS, MAX_POINTS, TOKENS_PER_POINT = 3, 8, 120
# A point must add this much: a fact named twice, or two facts (one named once is often a
# cross-reference); a fact's weight is the document's sentences naming it, up to MAX_WEIGHT,
# squared: one subject outweighs two names in passing.
MIN_GAIN = 2
MAX_WEIGHT = 4
MAX_POINT_CHARS = 400  # longer sentences are paragraphs run together (a PDF table, a code block)
MIN_POINT_CHARS = 12
# A first or last line more than this share of a document's pages share: a running header or
# footer.
RUNNING_SHARE = 0.5

# Paragraphs: a blank line, or a line that opens a list item or a table row.
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*•+]|\d{1,3}[.)]|\|)\s)")
_SENTENCE = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[A-Z0-9“\"'(`*])|(?<=[。！？；])|\s•\s")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
# Identifiers a manual names in lower case: build-essential, resolv.conf, /etc/hosts, dh_make.
_IDENTIFIER = re.compile(r"(?<![\w/.-])[/~]?[A-Za-z][\w+]*(?:[./_-][\w+]+)+")
_CODE = re.compile(r"`([^`\n]{2,40})`")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+_-]{2,}")
_STOPS = ".!?。！？"
_DIGITS = re.compile(r"\d+")
# A page ending at a lower-case word or a comma, and the next opening in lower case: one sentence
# cut by the page break. (A list item ends so too: "Fixed a crash in the parser".)
_CUT_BY_PAGE = re.compile(r"(?:\b[a-z]+|,)$")
# Lower-case words used as names: "• lintian - checks…", "quilt: manages…", "see dpkg(1)".
_ITEM_HEAD = re.compile(r"(?m)^\s*(?:[-*•+]\s+)?([a-z][\w.+-]{2,})\s+[-–—:]\s")
_MAN_PAGE = re.compile(r"(?<![\w-])([a-z][\w.+-]{2,})\(\d[a-z]*\)")


@dataclass(frozen=True, slots=True)
class KeyPoint:
    text: str
    source: Source


def facts_in(text: str) -> frozenset[str]:
    """What a reader would look for in `text`: its names, versions, identifiers and numbers
    that say something (not a bare 1 or 2), and in Chinese text every Latin word (a command, a
    package, a file)."""
    facts = facts_of(text)
    found = set(facts.values) | set(facts.names)
    found |= {number for number in facts.numbers if len(number) >= 2 or "." in number}
    identifiers = _IDENTIFIER.findall(text)
    found |= {identifier.casefold() for identifier in identifiers}
    found |= {match.casefold() for match in _CODE.findall(text)}
    if has_cjk(text):  # the words of an identifier are not facts of their own
        latin = _LATIN_WORD.findall(_IDENTIFIER.sub(" ", CJK_RUN.sub(" ", text)))
        found |= {word.casefold() for word in latin if word.casefold() not in STOPWORDS}
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Prominence:
    """What a document names and how often: the sentences naming each fact; its running headers
    and footers (a first or last line most pages share, numbers aside: "Guide 3 / 57"), which
    are no sentences; and the words it uses as names although they are written in lower case (a
    command a list item describes, a man page it refers to: "lintian - checks packages", "see
    quilt(1)"), which are facts wherever they appear."""

    mentions: Counter[str]
    running: frozenset[str]  # lines, their digits as "#"
    terms: frozenset[str]
    # Pages whose last sentence goes on over the next page ("… only and" / "must not"): no point.
    continued: frozenset[int] = frozenset()

    @classmethod
    def of(cls, document: Sequence[Source]) -> Prominence:
        terms = frozenset(
            word.casefold()
            for source in document
            for pattern in (_ITEM_HEAD, _MAN_PAGE)
            for word in pattern.findall(source.text)
            if word.casefold() not in STOPWORDS
        )
        edges = Counter(edge for source in document for edge in _edges(source.text))
        many = RUNNING_SHARE * len(document)
        running = {e for e, count in edges.items() if count > many} if len(document) >= 3 else ()
        bodies = [_lines(page.text, running) for page in document]
        continued = frozenset(
            page.chunk_id
            for page, body, following in zip(document, bodies, bodies[1:], strict=False)
            if body and following and _CUT_BY_PAGE.search(body[-1]) and following[0][0].islower()
        )
        prominence = cls(Counter(), frozenset(running), terms, continued)
        for _, sentence in prominence.sentences(document):
            prominence.mentions.update(prominence.facts(sentence))
        return prominence

    def facts(self, text: str) -> frozenset[str]:
        named = {word.casefold() for word in _LATIN_WORD.findall(text)} & self.terms
        return facts_in(text) | named

    def sentences(self, sources: Sequence[Source]) -> list[tuple[Source, str]]:
        """Every sentence, list item and line of text of `sources`, but their running lines and
        headings (a heading runs into its first sentence where no blank line parts them)."""
        found = []
        for source in sources:
            heading = {_DIGITS.sub("#", (source.heading or "").strip())} - {""}
            kept = _lines(source.text, self.running | heading, keep_blank=True)
            found += [(source, sentence) for sentence in _sentences("\n".join(kept))]
        return found


def key_points(sources: Sequence[Source], said: str, document: Prominence) -> list[KeyPoint]:
    """Sentences of `sources` (a section's pages; a few per TOKENS_PER_POINT of them), in
    reading order, chosen greedily by the facts each adds to those already `said` (the model's
    summary) and chosen. A fact weighs more the more the document comes back to it: the tools
    a manual keeps using, not the one named once in a list of eighteen."""
    wanted = sum(estimate_tokens(source.text) for source in sources) // TOKENS_PER_POINT
    wanted = max(MIN_POINTS, min(MAX_POINTS, wanted))
    sentences = [(source, s, document.facts(s)) for source, s in document.sentences(sources)]
    candidates = [
        (position, KeyPoint(sentence, source), facts)
        for position, (source, sentence, facts) in enumerate(sentences)
        if MIN_POINT_CHARS <= len(sentence) <= MAX_POINT_CHARS
        # A sentence opening with a bracket is a reference ("(see dh_make(8))"), not a point:
        # its facts still count as the document naming them.
        and sentence[0] not in "(（"
        and not (source.chunk_id in document.continued and _last_on(source, sentence))
    ]
    covered = set(document.facts(said))

    def gain(facts: frozenset[str]) -> int:
        return sum(min(document.mentions[fact], MAX_WEIGHT) ** 2 for fact in facts - covered)

    chosen: list[tuple[int, KeyPoint]] = []
    seen: set[str] = set()
    while len(chosen) < wanted:
        best = max(
            (c for c in candidates if c[1].text not in seen),
            key=lambda c: (gain(c[2]), -len(c[1].text)),
            default=None,
        )
        if best is None or gain(best[2]) < MIN_GAIN:
            break
        position, point, facts = best
        chosen.append((position, point))
        seen.add(point.text)
        covered |= facts
    return [point for _, point in sorted(chosen, key=lambda chosen_point: chosen_point[0])]


def as_line(point: KeyPoint) -> str:
    """A Markdown list item, closed as a sentence (a changelog's items end in none)."""
    closing = "" if point.text[-1] in _STOPS else "。" if has_cjk(point.text[-1]) else "."
    return f"- {point.text}{closing}\n"


def _lines(text: str, skipped: Collection[str], *, keep_blank: bool = False) -> list[str]:
    """The lines of `text` but those `skipped` (compared with their digits as "#")."""
    return [
        line.strip()
        for line in text.splitlines()
        if (line.strip() or keep_blank) and _DIGITS.sub("#", line.strip()) not in skipped
    ]


def _last_on(source: Source, sentence: str) -> bool:
    return source.text.rstrip().endswith(sentence[-20:])


def _sentences(text: str) -> list[str]:
    found = []
    for paragraph in _PARAGRAPH.split(text):
        if paragraph.count("|") >= 3:  # a table row: cells, not a sentence
            continue
        joined = _joined_lines(_BULLET.sub("", paragraph.strip()))
        found += [sentence.strip() for sentence in _SENTENCE.split(joined) if sentence.strip()]
    return found


def _edges(text: str) -> set[str]:
    """A page's first and last lines of text, their digits as "#"."""
    lines = [_DIGITS.sub("#", line.strip()) for line in text.splitlines() if line.strip()]
    return {lines[0], lines[-1]} if lines else set()


def _joined_lines(paragraph: str) -> str:
    """A paragraph's lines as one (a PDF breaks its lines where the page did): CJK text joins
    without a space."""
    lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
    joined = ""
    for line in lines:
        glue = "" if not joined or (has_cjk(joined[-1]) and has_cjk(line[0])) else " "
        joined += glue + line
    return joined
