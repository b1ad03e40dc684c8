"""Indexing, owned by the core (queue.py has the map): one queue of work, the document reader,
the OCR and embedding passes, the watched folders (watch.py; the folder walk and its rules:
folders.py), progress and time left (progress.py), and one event stream (events.py) that the
window, the CLI and the tests consume."""

from app.intake.events import (
    BatchFailed,
    BatchFinished,
    BatchKind,
    BatchStarted,
    EmbeddingFailed,
    FileFailed,
    FileIndexed,
    FileRemoved,
    FileSkipped,
    FileStarted,
    FoldersChanged,
    Idle,
    IngestEvent,
    IntakeEvent,
    LibraryChanged,
    OcrFailed,
    OcrProgress,
    PagesParsed,
    PauseChanged,
    WatchProblem,
)
from app.intake.progress import IndexingProgress, IntakeTimes
from app.intake.queue import Intake

__all__ = [
    "BatchFailed",
    "BatchFinished",
    "BatchKind",
    "BatchStarted",
    "EmbeddingFailed",
    "FileFailed",
    "FileIndexed",
    "FileRemoved",
    "FileSkipped",
    "FileStarted",
    "FoldersChanged",
    "Idle",
    "IndexingProgress",
    "IngestEvent",
    "Intake",
    "IntakeEvent",
    "IntakeTimes",
    "LibraryChanged",
    "OcrFailed",
    "OcrProgress",
    "PagesParsed",
    "PauseChanged",
    "WatchProblem",
]
