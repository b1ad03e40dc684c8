"""Which sources an answer used, found while it streams.

Small local models answer well from numbered sources but cite them poorly: asked for "[1]"
markers, the bundled 0.5B model writes only markers. So the model answers in plain sentences,
and each finished sentence is attributed to the source that shares most of its content words
(CJK by bigrams). Explicit [n] markers, when a model writes them, are honoured too. A sentence
that no source supports gets no citation: the evidence a user (and the cloud router) needs.

Words alone are not support: a sentence's checkable facts (facts.py: numbers, dates, versions,
names) must each be stated by the passage it cites (or a second one beside it). A sentence with
a fact no passage states is *unverified*: never cited, flagged where it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from app.answering.facts import NO_FACTS, Evidence, Facts, facts_of, ungrouped
from app.documents.render import sentences
from app.index.terms import keyword_terms, stated_values

_MARKER = re.compile(r"\[(\d{1,2}(?:\s*[,;]\s*\d{1,2})*)\]")
_NUMBER = re.compile(r"\d+")
# A Latin sentence ends at . ! ? followed by space and a non-lowercase character, so "Ltd. is" does
# not end one; the next character must have arrived, so a stream never cuts a sentence too early.
_SENTENCE_END = re.compile(r"[.!?](?=\s+[^\sa-z])|[。！？]|\n")
SUPPORT_THRESHOLD = 0.5  # share of a sentence's content words found in one source
MIN_SHARED_TERMS = 2
# "Based on the information provided in the sources, …", "根据文档内容，…": how small models open
# an answer. Its words would dilute the sentence's support or match the wrong source. Leaving it
# out, and letting a stated value decide (see _attribute), took page-citation hits on the
# manuals evaluation from 55 % to 71 % (held-out questions: 44 % to 64 %).
_LEAD_IN = re.compile(
    r"^\s*(?:(?:based on|according to|as stated in|from)\b[^,.\n]*,|据[^，,。\n]*[，,]"
    r"|根据[^，,。\n]*[，,])\s*",
    re.IGNORECASE,
)


class Citable(Protocol):
    @property
    def number(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def heading(self) -> str | None: ...

    @property
    def document(self) -> str: ...


UNVERIFIED = "unverified"  # the flag closing a sentence whose facts no passage states
SHOWN_MISSING = 3  # facts named in the flag


@dataclass(frozen=True, slots=True)
class Attribution:
    number: int  # the source's number
    end: int  # offset in the answer where the supported sentence ends
    support: float  # share of the sentence's content words found in the source
    explicit: bool  # the model wrote the marker itself
    # The facts of the sentence no passage states: the sentence is unverified, not cited
    # (`number` is then the passage that came closest).
    missing: tuple[str, ...] = ()


class CitationTracker:
    """Feed it the answer as it streams; it reports each supported sentence and each marker."""

    def __init__(self, sources: Sequence[Citable], question: str = "") -> None:
        self._numbers = {source.number for source in sources}
        # A source's section heading is its evidence too: a changelog entry's version is there.
        evidence = {source.number: f"{source.heading or ''}\n{source.text}" for source in sources}
        self._terms = {number: set(keyword_terms_all(text)) for number, text in evidence.items()}
        self._values = {number: stated_values(ungrouped(text)) for number, text in evidence.items()}
        # Words of the question echoed in the answer say nothing about where the answer came from.
        self._question_terms = set(keyword_terms_all(question))
        self._question_values = stated_values(question)
        # The file's name states names too ("the Debian FAQ" of debian-faq.en.pdf).
        self._evidence = {
            source.number: Evidence.of(f"{source.document}\n{evidence[source.number]}")
            for source in sources
        }
        # Facts that need no passage: the names the question gives (its topic, often the
        # document's), and what Docent computed (computed()). The question's numbers do need
        # one: "Debian 15 is codenamed forky" echoes the question's 15 beside a passage's
        # forky (Debian 14's); the passage must state both.
        self._given_text = " ".join(facts_of(question).names)
        self._given = Evidence.of(self._given_text)
        self._text = ""
        self._sentence_start = 0
        self._marker_scan = 0
        self.sentences = 0
        self.supported_sentences = 0
        # Of the sentences that state checkable facts, in order: whether their passages do.
        self.facts_verified: list[bool] = []

    @property
    def text(self) -> str:
        return self._text

    def feed(self, piece: str) -> list[Attribution]:
        self._text += piece
        found = self._explicit_markers()
        while match := _SENTENCE_END.search(self._text, self._sentence_start):
            end = match.end()
            found.extend(self._attribute(self._text[self._sentence_start : end], end))
            self._sentence_start = end
        return found

    def finish(self) -> list[Attribution]:
        tail = self._text[self._sentence_start :]
        self._sentence_start = len(self._text)
        return self._attribute(tail, len(self._text.rstrip()))

    def computed(self, text: str) -> None:
        """Facts Docent worked out itself (a calculation's result): stated by no passage, and
        still no invention."""
        self._given_text += f"\n{text}"
        self._given = Evidence.of(self._given_text)

    @property
    def key_unverified(self) -> bool:
        """The answer's first sentence stating facts states one no passage does: the answer
        itself is in doubt, not a side remark."""
        return bool(self.facts_verified) and not self.facts_verified[0]

    @property
    def grounded_share(self) -> float | None:
        """Share of the answer's sentences that some source supports (None: no sentences)."""
        return self.supported_sentences / self.sentences if self.sentences else None

    def _explicit_markers(self) -> list[Attribution]:
        found: list[Attribution] = []
        for match in _MARKER.finditer(self._text, self._marker_scan):
            self._marker_scan = match.end()
            for number in map(int, _NUMBER.findall(match.group(1))):
                if number in self._numbers:
                    found.append(Attribution(number, match.end(), 1.0, explicit=True))
        return found

    def _attribute(self, sentence: str, end: int) -> list[Attribution]:
        claim = _LEAD_IN.sub("", _MARKER.sub(" ", sentence), count=1)
        # A value (a number, a version, "deb12u1", FNM_PATHNAME) is the evidence of a lookup's
        # answer: the source that states it whole wins, and suffices, even among other words.
        # Its digits are not words of their own: "$0.01" is not supported by any "0" or "01".
        values = stated_values(ungrouped(claim)) - self._question_values
        digits = {part for value in values for part in keyword_terms_all(value) if part.isdigit()}
        terms = set(keyword_terms_all(claim)) - self._question_terms - digits
        if not terms and not values:
            return []
        self.sentences += 1
        best_number, best = 0, (0, 0)  # (values shared, terms shared)
        for number, source_terms in self._terms.items():
            shared = (len(values & self._values[number]), len(terms & source_terms))
            if shared > best:
                best_number, best = number, shared
        shared_values, shared_terms = best
        support = shared_terms / len(terms) if terms else 0.0
        if facts := self._given.lacks(facts_of(claim)):
            return self._checked(facts, best_number, end, support, terms)
        if support < SUPPORT_THRESHOLD and not shared_values:
            return []
        few = shared_terms < min(MIN_SHARED_TERMS, len(terms))
        if few and not shared_values and not self._only_in(best_number, terms):
            return []
        self.supported_sentences += 1
        return [Attribution(best_number, end, support, explicit=False)]

    def _checked(
        self, facts: Facts, number: int, end: int, support: float, terms: set[str]
    ) -> list[Attribution]:
        """A sentence stating facts, cited to the passage its words chose (or, sharing none, as
        an English answer to Chinese passages does, the one stating most of its facts): each fact
        must be stated there, or by a second passage that shares its words or that states the
        rest as specific facts (a version, a longer number: not a stray 6); else the sentence
        is unverified."""
        if not number and self._evidence:
            number = max(
                self._evidence, key=lambda n: len(facts) - len(self._evidence[n].lacks(facts))
            )
        missing = self._evidence[number].lacks(facts) if number else facts
        cited = [number]
        if missing and number:
            for other, evidence in self._evidence.items():
                joins = bool(terms & self._terms[other]) or missing.specific
                if other != number and joins and not evidence.lacks(missing):
                    cited.append(other)
                    missing = NO_FACTS
                    break
        self.facts_verified.append(not missing)
        if missing:
            return [Attribution(number, end, 0.0, False, tuple(missing.described()))]
        self.supported_sentences += 1
        return [Attribution(n, end, support, explicit=False) for n in cited]

    def _only_in(self, number: int, terms: set[str]) -> bool:
        """Whether that source alone holds a word of the sentence ("Expat", "两个"): a short
        answer's one word of evidence."""
        others = set().union(*(held for n, held in self._terms.items() if n != number))
        return number in self._terms and bool((terms & self._terms[number]) - others)


_WIDE_STOPS = "。！？"  # CJK: no space before a marker
_SENTENCE_STOPS = ".!?" + _WIDE_STOPS


def mark(streamed: str, attributions: Sequence[Attribution]) -> str:
    """The answer (`streamed`, the text as it streamed, stripped) with a [n] marker closing each
    sentence the tracker tied to a source, when the model wrote no marker itself (the models
    Docent ships hardly ever do), and a flag closing each unverified one ("[unverified: 2010]").
    Written once, here: the window, a reopened conversation, the history, the cache, `--json`
    and MCP all show the same cited text."""
    answer = streamed.strip()
    model_cites = any(attribution.explicit for attribution in attributions)
    shown = [a for a in attributions if a.missing or not (model_cites or a.explicit)]
    lead = len(streamed) - len(streamed.lstrip())
    for attribution in sorted(shown, key=lambda a: a.end, reverse=True):
        end = min(max(attribution.end - lead, 0), len(answer))
        while end and answer[end - 1].isspace():
            end -= 1
        if end and answer[end - 1] in _SENTENCE_STOPS:
            end -= 1
        following = answer[end : end + 1]
        space = "" if following and following in _WIDE_STOPS else " "
        answer = f"{answer[:end]}{space}{_marker(attribution)}{answer[end:]}"
    return answer


def _marker(attribution: Attribution) -> str:
    if not attribution.missing:
        return f"[{attribution.number}]"
    return f"[{UNVERIFIED}: {', '.join(attribution.missing[:SHOWN_MISSING])}]"


def keyword_terms_all(text: str) -> list[str]:
    """Content words of any length of text (retrieval caps a question's terms; this must not)."""
    return keyword_terms(text, limit=None)


# Where the claim a marker closes begins: after the sentence before it, or an earlier marker
# ("kept seven years [1]; deletion needs approval [2]"); markers side by side close one claim.
_CLAIM_START = re.compile(rf".*(?:[.!?。！？\n]|{_MARKER.pattern})(?=.)", re.DOTALL)
_CLOSING_MARKERS = re.compile(rf"(?:\s*{_MARKER.pattern})+\s*$")


def claims_citing(answer: str, number: int) -> list[str]:
    """The sentences (or clauses) of a cited answer (the model's markers or mark()'s) that
    cite source `number`, without their markers."""
    claims = []
    for match in _MARKER.finditer(answer):
        if number not in map(int, _NUMBER.findall(match.group(1))):
            continue
        before = _CLOSING_MARKERS.sub("", answer[: match.start()]).rstrip()
        before = before.rstrip(_SENTENCE_STOPS)  # "rules. [1]": the marker follows its stop
        opened = _CLAIM_START.match(before)
        if claim := before[opened.end() if opened else 0 :].strip(" \t;,，；"):
            claims.append(claim)
    return claims


def supporting_sentences(passage: str, claims: Sequence[str]) -> tuple[str, ...]:
    """The sentences of `passage` that the `claims` rest on, in the passage's order: for each
    claim, the sentence sharing most of its values and content words (two words at least, or
    a value, or its only word); none for a claim the passage supports only as a whole."""
    candidates = [
        (sentence, set(keyword_terms_all(sentence)), stated_values(ungrouped(sentence)))
        for sentence in sentences(passage)
    ]
    chosen: set[int] = set()
    for claim in claims:
        terms = set(keyword_terms_all(claim))
        values = stated_values(ungrouped(claim))
        best, shared = -1, (0, 0)
        for index, (_sentence, held, stated) in enumerate(candidates):
            if (score := (len(values & stated), len(terms & held))) > shared:
                best, shared = index, score
        if shared[0] or shared[1] >= min(MIN_SHARED_TERMS, len(terms)) > 0:
            chosen.add(best)
    return tuple(candidates[index][0] for index in sorted(chosen))
