"""Keyword search terms: what a question contributes to the FTS5 (BM25) query."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from app.cjk import CJK_RUN, bigrams

MAX_TERMS = 24
POSTINGS_BUDGET = 20_000
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Question words and glue: in an OR query they would match nearly every chunk and cost time.
STOPWORDS = frozenset(
    (
        "a about above after again all also am an and any are as at be because been before being "
        "between both but by can could did do does doing down during each few for from further "
        "had has have having he her here hers him his how i if in into is it its itself just me "
        "more most my no nor not now of off on once only or other our out over own please same "
        "say says said she should so some such tell than that the their them then there these "
        "they this those through to too under until up very was we were what when where which "
        "while who whom why will with would yes you your"
    ).split()
)


# A value as written: a number, a version ("v2.26.0" is 2.26.0), an identifier (FNM_PATHNAME,
# get_connection_with_tls_context), kept whole; keyword terms split them into parts that
# every changelog entry shares ("0", "26"). ASCII only: Chinese text runs on without spaces.
_VALUE = re.compile(r"[A-Za-z0-9]*[\d_][A-Za-z0-9_.+~/-]*")


def stated_values(text: str) -> set[str]:
    """The values a text states, casefolded, each whole."""
    values = set()
    for match in _VALUE.finditer(text):
        value = match.group(0).strip("._+~/-").casefold()
        if value[:1] == "v" and value[1:2].isdigit():
            value = value[1:]
        if value and (any(character.isdigit() for character in value) or "_" in value):
            values.add(value)
    return values


def keyword_terms(question: str, limit: int | None = MAX_TERMS) -> list[str]:
    """Search terms: words minus stopwords, CJK runs as bigrams (as they were indexed)."""
    terms: list[str] = []
    for run in CJK_RUN.findall(question):
        terms.extend(bigrams(run))
    for word in _WORD.findall(CJK_RUN.sub(" ", question)):
        lowered = word.casefold()
        if lowered not in STOPWORDS and (len(lowered) > 1 or lowered.isdigit()):
            terms.append(lowered)
    unique = list(dict.fromkeys(terms))
    return unique if limit is None else unique[:limit]


def match_expression(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH string: any term may match; BM25 ranks chunks matching more, rarer terms."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def index_form(term: str) -> str:
    """A term as FTS5's unicode61 tokenizer (remove_diacritics 2) stores it in the vocabulary."""
    decomposed = unicodedata.normalize("NFKD", term.lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def selective_terms(terms: Sequence[str], document_frequency: Mapping[str, int]) -> list[str]:
    """The rarest terms whose postings together fit POSTINGS_BUDGET (always the rarest one).

    BM25 scores every posting of every OR-ed term, so a term found in a large share of a big
    library cost most of the query time (measured: p95 576 ms at 100k chunks) while adding
    almost no ranking weight; the budget bounds the work, and small libraries lose nothing.
    """
    by_rarity = sorted(terms, key=lambda term: document_frequency.get(index_form(term), 0))
    kept: list[str] = []
    postings = 0
    for term in by_rarity:
        postings += document_frequency.get(index_form(term), 0)
        if kept and postings > POSTINGS_BUDGET:
            break
        kept.append(term)
    return [term for term in terms if term in kept]
