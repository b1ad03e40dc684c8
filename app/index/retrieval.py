"""Hybrid retrieval's result type and reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.index.store import StoredChunk

RRF_K = 60  # the constant from Cormack et al. (2009); robust across collections


@dataclass(frozen=True, slots=True)
class Passage:
    chunk: StoredChunk
    score: float  # fused reciprocal-rank score
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
