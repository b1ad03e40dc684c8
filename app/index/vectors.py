"""Exact k-NN over normalised embeddings held in memory as one float32 matrix.

Measured on this class of machine: a numpy dot product over 100k x 384 vectors beats sqlite-vec's
exact scan about 6x, and needs no SQLite extension loading (which many Python builds lack). The
SQLite `vectors` table stays the source of truth; this is a cache rebuilt from it at start.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from threadpoolctl import threadpool_limits

# One BLAS thread: the scan is memory-bound, and idle OpenBLAS threads spin for milliseconds
# after each call, stealing the cores the embedder and llama.cpp need next (measured: hybrid
# search p95 at 100k chunks fell from 114 ms to 71 ms).
_blas_limited = False


def _limit_blas_threads() -> None:
    global _blas_limited
    if not _blas_limited:
        threadpool_limits(1, user_api="blas")
        _blas_limited = True


class VectorIndex:
    """Thread-safe: writers swap in new arrays under a lock, searches use a consistent snapshot."""

    def __init__(self) -> None:
        _limit_blas_threads()
        self._lock = threading.Lock()
        self._ids = np.empty(0, np.int64)
        self._documents = np.empty(0, np.int64)
        self._matrix = np.empty((0, 0), np.float32)
        self._capacity = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def replace_all(self, ids: np.ndarray, documents: np.ndarray, matrix: np.ndarray) -> None:
        with self._lock:
            self._ids, self._documents = ids.copy(), documents.copy()
            self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            self._capacity = self._size = len(ids)

    def add(self, ids: Sequence[int], documents: Sequence[int], vectors: np.ndarray) -> None:
        if not len(ids):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        with self._lock:
            needed = self._size + len(ids)
            if needed > self._capacity or self._matrix.shape[1] != vectors.shape[1]:
                # Grow geometrically so adding a batch at a time stays amortised O(1) per row.
                capacity = max(needed, int(self._capacity * 1.5) + 64)
                matrix = np.empty((capacity, vectors.shape[1]), np.float32)
                if self._size:
                    matrix[: self._size] = self._matrix[: self._size]
                grown_ids = np.empty(capacity, np.int64)
                grown_ids[: self._size] = self._ids[: self._size]
                grown_documents = np.empty(capacity, np.int64)
                grown_documents[: self._size] = self._documents[: self._size]
                self._matrix, self._ids, self._documents = matrix, grown_ids, grown_documents
                self._capacity = capacity
            end = self._size + len(ids)
            self._matrix[self._size : end] = vectors
            self._ids[self._size : end] = ids
            self._documents[self._size : end] = documents
            self._size = end

    def remove_document(self, document_id: int) -> None:
        with self._lock:
            keep = self._documents[: self._size] != document_id
            self._ids = self._ids[: self._size][keep]
            self._documents = self._documents[: self._size][keep]
            self._matrix = self._matrix[: self._size][keep]
            self._capacity = self._size = len(self._ids)

    def search(
        self, query: np.ndarray, limit: int, document_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) best first."""
        with self._lock:
            size = self._size
            ids, documents, matrix = self._ids[:size], self._documents[:size], self._matrix[:size]
        if size == 0:
            return []
        scores = matrix @ np.asarray(query, dtype=np.float32)
        if document_ids is not None:
            scores = np.where(np.isin(documents, document_ids), scores, -np.inf)
        limit = min(limit, size)
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top])]
        return [(int(ids[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]
