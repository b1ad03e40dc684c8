"""The local index: one SQLite file with full text (FTS5) and vectors, and hybrid retrieval.

Everything above the index speaks to `Library` and the typed records exported here; the store
and its SQL stay inside (an import contract in pyproject.toml keeps them there)."""

from app.index.conversations import ConversationInfo, ConversationMatch
from app.index.library import AmbiguousDocument, DocumentNotFound, EmbeddingProgress, Library
from app.index.retrieval import Passage
from app.index.store import (
    DocumentInfo,
    HistoryEntry,
    HistoryRecord,
    NewDocument,
    Queue,
    QueuedFile,
    Spending,
    StoredChunk,
)

__all__ = [
    "AmbiguousDocument",
    "ConversationInfo",
    "ConversationMatch",
    "DocumentInfo",
    "DocumentNotFound",
    "EmbeddingProgress",
    "HistoryEntry",
    "HistoryRecord",
    "Library",
    "NewDocument",
    "Passage",
    "Queue",
    "QueuedFile",
    "Spending",
    "StoredChunk",
]
