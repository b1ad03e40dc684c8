"""Hybrid retrieval's result type, reciprocal-rank fusion and the reranking of its best."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.index.store import StoredChunk
from app.index.terms import keyword_terms, stated_values

RRF_K = 60  # the constant from Cormack et al. (2009); robust across collections
RERANK_POOL = 20  # fused candidates the reranker reorders


@dataclass(frozen=True, slots=True)
class Passage:
    chunk: StoredChunk
    score: float  # fused reciprocal-rank score, reranked (see rerank)
    keyword_rank: int | None  # 1-based rank in the BM25 list, if it was there
    vector_rank: int | None
    similarity: float | None  # cosine similarity to the question, if embedded


def fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: score(d) = sum over lists of 1 / (k + rank of d in the list)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def rerank(question: str, passages: Sequence[Passage]) -> list[Passage]:
    """Reorder fused candidates by how much of the question each one holds.

    A passage's score is multiplied by 1 + (the share of the question's words it holds) + (the
    values the question names that it states whole: "0.55.0", "urllib3 2.0", FNM_PATHNAME),
    each word and value weighted by how few of the candidates hold it. Fusion ranks a chunk
    that repeats the common words ("python", "function") above the one holding the rare one
    ("getoutput"), and keyword search splits "0.55.0" into parts every changelog entry shares.
    On the manuals evaluation: evidence among the four best 69/77 -> 75/77 (lookups 51 -> 53 of
    54, held out 23 -> 25 of 25); the gain held for pools of 8 to 20 and weights of 0.5 to 4.

    A cross-encoder would read meaning too, but none that is multilingual installs offline, and
    the local model scoring 20 candidates costs about a minute on two cores.
    """
    if len(passages) < 2:
        return list(passages)
    asked = set(keyword_terms(question, limit=None))
    named = stated_values(question)
    evidence = [f"{p.chunk.heading or ''}\n{p.chunk.text}" for p in passages]
    holds = [asked & set(keyword_terms(text, limit=None)) for text in evidence]
    states = [named & stated_values(text) for text in evidence]
    holders = Counter(item for held in (*holds, *states) for item in held)

    def rarity(item: str) -> float:
        """Smoothed inverse share of the candidates holding it: what all hold says little."""
        return math.log((len(passages) + 1) / (holders[item] + 0.5))

    total = sum(map(rarity, asked))
    rescored = []
    for passage, held, stated in zip(passages, holds, states, strict=True):
        coverage = sum(map(rarity, held)) / total if total > 0 else 0.0
        values = sum(map(rarity, stated))
        rescored.append(replace(passage, score=passage.score * (1.0 + coverage + values)))
    return sorted(rescored, key=lambda passage: -passage.score)
