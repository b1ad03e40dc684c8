"""The local index: one SQLite file with full text (FTS5) and vectors, and hybrid retrieval."""

from app.index.library import AmbiguousDocument, DocumentNotFound, EmbeddingProgress, Library
from app.index.retrieval import Passage
from app.index.store import DocumentInfo, HistoryRecord, StoredChunk

__all__ = [
    "AmbiguousDocument",
    "DocumentInfo",
    "DocumentNotFound",
    "EmbeddingProgress",
    "HistoryRecord",
    "Library",
    "Passage",
    "StoredChunk",
]
