"""Indexing, owned by the core (queue.py has the map): one queue of work, the document reader,
the OCR and embedding passes, the watched folders (watch.py; the folder walk and its rules:
folders.py), and one event stream (events.py) that the window, the CLI and the tests consume."""

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
    WatchProblem,
)
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
    "IngestEvent",
    "Intake",
    "IntakeEvent",
    "LibraryChanged",
    "OcrFailed",
    "OcrProgress",
    "PagesParsed",
    "WatchProblem",
]
