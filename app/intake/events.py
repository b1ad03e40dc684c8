"""What indexing says, in order, to whoever follows it (the window, the CLI, the tests): each
file started, parsed, indexed, skipped or failed; how far a batch is and how long it will take
(IndexingProgress, app/intake/progress.py); batches; pauses; watched folders; the OCR and
embedding passes; and when the library changed and when the queue is idle."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.index import EmbeddingProgress
from app.intake.progress import IndexingProgress
from app.intake.watch import FolderChanges


@dataclass(frozen=True, slots=True)
class FileStarted:
    path: Path
    position: int  # 1-based, of `total`
    total: int


@dataclass(frozen=True, slots=True)
class PagesParsed:
    path: Path
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class FileIndexed:
    path: Path
    document_id: int
    pages: int
    chunks: int
    note: str | None


@dataclass(frozen=True, slots=True)
class FileSkipped:
    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class FileFailed:
    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class FileRemoved:
    path: str


@dataclass(frozen=True, slots=True)
class OcrProgress:
    """A page of a scan was OCR'd (or failed to be): `done` of its `total` pages are."""

    path: Path
    document_id: int
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class OcrFailed:
    path: Path
    page: int
    reason: str


IngestEvent = FileStarted | PagesParsed | FileIndexed | FileSkipped | FileFailed

BatchKind = Literal["add", "sync"]


@dataclass(frozen=True, slots=True)
class BatchStarted:
    batch: int
    kind: BatchKind


@dataclass(frozen=True, slots=True)
class BatchFinished:
    batch: int
    kind: BatchKind
    indexed: int
    skipped: int
    failed: int
    removed: int


@dataclass(frozen=True, slots=True)
class BatchFailed:
    """Something outside any one file failed (the index could not be read); the batch ends."""

    batch: int
    reason: str


@dataclass(frozen=True, slots=True)
class PauseChanged:
    """Indexing was paused (it stays so across restarts) or resumed; `waiting`: the files
    queued and not yet read."""

    paused: bool
    waiting: int


@dataclass(frozen=True, slots=True)
class FoldersChanged:
    """The watched folders changed (live, or while Docent was closed); a batch follows."""

    changes: FolderChanges
    why: str


@dataclass(frozen=True, slots=True)
class WatchProblem:
    message: str


@dataclass(frozen=True, slots=True)
class EmbeddingFailed:
    """An embedding pass stopped; `lasting`: the embedder is off for the rest of the session
    (keyword search is all there will be until a restart)."""

    reason: str
    lasting: bool = False


@dataclass(frozen=True, slots=True)
class LibraryChanged:
    """Documents were added, replaced or removed, or their embeddings moved on."""


@dataclass(frozen=True, slots=True)
class Idle:
    """Every batch is done, every scanned page OCR'd and every chunk embedded."""


IntakeEvent = (
    IngestEvent
    | FileRemoved
    | BatchStarted
    | BatchFinished
    | BatchFailed
    | IndexingProgress
    | PauseChanged
    | FoldersChanged
    | WatchProblem
    | EmbeddingProgress
    | EmbeddingFailed
    | OcrProgress
    | OcrFailed
    | LibraryChanged
    | Idle
)
