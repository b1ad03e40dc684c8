"""The extraction step: a small local model asked "which release …?" writes a neighbouring value, a
date instead of a version, or one it made up. For a question that asks for a value (a version, a
CVE, a year, a file or flag name), the value is picked from those the sources state: the one
whose surroundings (its sentence; for a section title, the section) share most of the question's
words. The answer is then written with that value in front of the model.

The model itself choosing among the values, held to them by a grammar, was tried first: on a
changelog it picked a neighbouring release.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.answering.citations import Citable
from app.answering.facts import facts_of
from app.index.terms import keyword_terms

_LETTER = re.compile(r"[A-Za-z]")
# Where a sentence ends; a value is judged by its own sentence. A window of 160 characters
# either side (tried first) let a neighbouring example's words vote: 10 of 18 values right on
# the manuals set's lookups, 12 of 18 by sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n")
_VERSION = r"v?\d+(?:\.\d+)+(?:[-+~][0-9A-Za-z.+~]+)?"
# "which (two words at most) version", "哪个版本": the question asks for one; "version 3.0 of the
# FHS" only names one.
_WHICH = r"\b(?:which|what)\s+(?:[\w()+.-]+\s+){0,2}?"
_KINDS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # what the question asks for: (how the question says it, how the sources write one)
    "CVE": (re.compile(r"\bCVE\b"), re.compile(r"\bCVE-\d{4}-\d{4,}\b")),
    "version": (
        re.compile(rf"{_WHICH}(?:version|release)\b|哪个版本|什么版本|哪一版", re.IGNORECASE),
        re.compile(rf"(?<![\w.]){_VERSION}(?![\w])"),
    ),
    "year": (
        re.compile(rf"{_WHICH}year\b|哪一年|哪年", re.IGNORECASE),
        re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)"),
    ),
    # Names a file, flag or function is written as; not commands, which are often words.
    "name": (
        re.compile(
            rf"{_WHICH}(?:file|flag|option|function|variable|field|path|directory|api)\b"
            r"|哪(?:个|一个)\s*\S{0,8}?(?:文件|选项|函数|变量|字段|路径|目录)",
            re.IGNORECASE,
        ),
        # `quoted`, --options, dotted.names, snake_case, paths and ALL_CAPS_FLAGS.
        re.compile(
            r"`{1,2}([^`\n]{2,60})`{1,2}|(?<![A-Za-z0-9_/.-])(?:--?[a-z][A-Za-z0-9_-]+"
            r"|/?[A-Za-z0-9_-]*[._/][A-Za-z0-9_./-]*[A-Za-z0-9_]|[A-Z][A-Z0-9]*_[A-Z0-9_]+)"
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class Extraction:
    kind: str
    value: str

    @property
    def line(self) -> str:
        """What the answering prompt is told."""
        return f"The sources give this {self.kind}: {self.value}"


# "which port …, and in which release", "what month and year", "分别": more than one value.
_SEVERAL = re.compile(
    r"\band\s+(?:in\s+)?(?:\w+\s+){0,2}?(?:which|what|when|who|where|date|year)\b|分别|各自",
    re.IGNORECASE,
)


def value_kind(question: str) -> str | None:
    """Which kind of value the question asks for (None: something else, or several values)."""
    if _SEVERAL.search(question):
        return None
    for kind, (asks, _) in _KINDS.items():
        if asks.search(question):
            return kind
    return None


def extract(kind: str, question: str, sources: Sequence[Citable]) -> Extraction | None:
    """The value of that kind the sources state whose surroundings share most of the question's
    words: its sentence, or for a section title the section's best line. Never one the question
    itself names ("which release dropped Python 2.7?" is not 2.7). Of values that tie, the first
    stated in the best-ranked source. None when no value shares a word with the question."""
    _, written = _KINDS[kind]
    named = question.casefold()
    asked = set(keyword_terms(question, limit=None))
    specific = _specific(question)
    scores: dict[str, int] = {}

    def shared(text: str) -> int:
        return len(asked & set(keyword_terms(text, limit=None)))

    for source in sources:
        best_line = max((shared(line) for line in source.text.splitlines()), default=0)
        for text, in_title in ((source.heading or "", True), (source.text, False)):
            for match in written.finditer(text):
                value = next((g for g in match.groups() if g), match.group(0)).strip(" .,;:")
                if not value or value.casefold() in named:
                    continue
                if kind == "name" and not _LETTER.search(value):
                    continue  # "2.27.0" is a version, not a name
                around = source.text if in_title else f"{source.heading}\n{_sentence(text, match)}"
                folded = around.casefold()
                if not all(term in folded for term in specific):
                    continue  # "added support for Python 3.13?" is not a 3.12 release's line
                score = best_line if in_title else shared(_sentence(text, match))
                scores[value] = max(scores.get(value, 0), score)
    # sorted() is stable: of values that tie, the first stated in the best-ranked source wins.
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    if not ranked or ranked[0][1] == 0:
        return None
    return Extraction(kind, ranked[0][0])


def _specific(question: str) -> set[str]:
    """What the question names that a value's surroundings must name too: its versions,
    identifiers and dotted numbers ("Python 3.13", "ensure_text", "1.5-2"), not a bare "3"."""
    facts = facts_of(question)
    dotted = {number for number in facts.numbers if "." in number}
    return {term.casefold() for term in facts.values | dotted}


def _sentence(text: str, match: re.Match[str]) -> str:
    """The sentence (or line) the match stands in."""
    start = max((end.end() for end in _SENTENCE_END.finditer(text, 0, match.start())), default=0)
    following = _SENTENCE_END.search(text, match.end())
    return text[start : following.start() if following else len(text)]
