"""Hybrid retrieval's pure parts: the keyword query and reciprocal-rank fusion."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.cjk import CJK_RUN, bigrams
from app.index.store import StoredChunk

RRF_K = 60  # the constant from Cormack et al. (2009); robust across collections
MAX_TERMS = 24
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


@dataclass(frozen=True, slots=True)
class Passage:
    chunk: StoredChunk
    score: float  # fused reciprocal-rank score
    keyword_rank: int | None  # 1-based rank in the BM25 list, if it was there
    vector_rank: int | None
    similarity: float | None  # cosine similarity to the question, if embedded


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


def match_expression(question: str) -> str | None:
    """An FTS5 MATCH string: any term may match; BM25 ranks chunks matching more, rarer terms."""
    terms = keyword_terms(question)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: score(d) = sum over lists of 1 / (k + rank of d in the list)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
