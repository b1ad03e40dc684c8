"""Recent answers, keyed by the normalised question, the scope and the index version.

A hit is its own route on the badge (free and instant). Identical questions in flight share one
generation: the second asker waits for the first answer instead of paying for another.
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.answering.run import Kept

CacheKey = tuple[str, tuple[int, ...], int]


def normalise(question: str) -> str:
    """Case, width, spacing and trailing punctuation do not make a different question."""
    folded = unicodedata.normalize("NFKC", question).casefold()
    return re.sub(r"\s+", " ", folded).strip().rstrip("?？.。!！ ")


def cache_key(question: str, scope: Sequence[int] | None, index_version: int) -> CacheKey:
    return normalise(question), tuple(sorted(scope or ())), index_version


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    kept: Kept
    stored_at: float


class AnswerCache:
    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._answers: dict[CacheKey, CachedAnswer] = {}
        self._in_flight: dict[CacheKey, asyncio.Future[CachedAnswer | None]] = {}

    @property
    def enabled(self) -> bool:
        return self.ttl_s > 0

    def now(self) -> float:
        return self._clock()

    def get(self, key: CacheKey) -> CachedAnswer | None:
        cached = self._answers.get(key)
        if cached is not None and self.now() - cached.stored_at > self.ttl_s:
            del self._answers[key]
            return None
        return cached

    def in_flight(self, key: CacheKey) -> asyncio.Future[CachedAnswer | None] | None:
        return self._in_flight.get(key)

    def claim(self, key: CacheKey) -> None:
        """This asker generates the answer; later identical askers wait for it."""
        self._in_flight[key] = asyncio.get_running_loop().create_future()

    def release(self, key: CacheKey, answer: CachedAnswer | None) -> None:
        """Store a finished answer (None: failed or cancelled) and wake whoever waited."""
        if answer is not None:
            self._answers[key] = answer
        if (waiting := self._in_flight.pop(key, None)) is not None and not waiting.done():
            waiting.set_result(answer)
