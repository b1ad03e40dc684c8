"""The local index: one SQLite file with full text (FTS5) and vectors, and hybrid retrieval."""

from app.index.library import EmbeddingProgress, Library
from app.index.retrieval import Passage
from app.index.store import DocumentInfo, HistoryRecord, StoredChunk

__all__ = [
    "DocumentInfo",
    "EmbeddingProgress",
    "HistoryRecord",
    "Library",
    "Passage",
    "StoredChunk",
]
