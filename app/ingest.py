"""Files and folders in, documents in the index out, with a typed progress event stream.

Each file is parsed and written on the database-writer thread in one transaction, page by page:
a bad file, a crash or a cancel leaves the index exactly as it was for that file and untouched for
every other. Unchanged files (same size and time, or same content hash) are skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from app.documents import EXTENSIONS, DocumentError, PageText, chunk_pages, open_document
from app.index import Library
from app.index.store import NewDocument, Store


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


IngestEvent = FileStarted | PagesParsed | FileIndexed | FileSkipped | FileFailed
Emit = Callable[[IngestEvent], None]


PROGRESS_INTERVAL = 0.05  # seconds


def collect_files(paths: Iterable[Path]) -> tuple[list[Path], list[FileFailed]]:
    """Expand folders (supported extensions only, hidden entries skipped); keep explicit files."""
    files: list[Path] = []
    problems: list[FileFailed] = []
    for given in paths:
        path = given.expanduser().absolute()
        if path.is_dir():
            files.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file()
                    and p.suffix.lower() in EXTENSIONS
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                )
            )
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            problems.append(FileFailed(path, "no such file or folder"))
    return list(dict.fromkeys(files)), problems


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class Ingestor:
    def __init__(self, library: Library) -> None:
        self.library = library

    async def index(
        self, paths: Sequence[Path], *, force: bool = False
    ) -> AsyncIterator[IngestEvent]:
        """Index files one after another; the stream ends when every file has an outcome.

        Closing the stream early (a cancel) stops the current file at its next progress report
        and rolls it back. `force` re-indexes files even when they are unchanged.
        """
        files, problems = collect_files(paths)
        for problem in problems:
            yield problem
        for position, path in enumerate(files, start=1):
            yield FileStarted(path, position, len(files))
            async with contextlib.aclosing(
                self.library.write_stream(partial(ingest_file, path=path, force=force))
            ) as events:
                async for event in events:
                    yield event


def ingest_file(store: Store, emit: Emit, *, path: Path, force: bool = False) -> None:
    """Runs on the writer thread: emits progress, then the file's outcome (never raises for a
    bad file). An emit that raises (the listener left) rolls the file back."""
    emit(_ingest(store, emit, path, force))


def _ingest(
    store: Store, emit: Emit, path: Path, force: bool
) -> FileIndexed | FileSkipped | FileFailed:
    key = str(path)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return FileFailed(path, "the file disappeared before it could be read")
    except OSError as error:
        return FileFailed(path, f"cannot be read: {error.strerror or error}")
    try:
        previous = None if force else store.document_by_path(key)
        if previous and (previous.size, previous.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            return FileSkipped(path, "unchanged since it was indexed")
        digest = sha256_of(path)
        if previous and previous.sha256 == digest:
            return FileSkipped(path, "unchanged content")
        with open_document(path) as document:
            total = document.page_count

            def pages() -> Iterator[PageText]:
                reported = 0.0
                for page in document.pages():
                    yield page
                    # Waking the event loop for every page measurably slowed indexing (GIL
                    # hand-offs): report at most every PROGRESS_INTERVAL, and the last page.
                    now = time.monotonic()
                    if now - reported >= PROGRESS_INTERVAL or page.number == total:
                        reported = now
                        emit(PagesParsed(path, page.number, total))

            document_id = store.write_document(
                NewDocument(
                    path=key,
                    title=document.title,
                    format=document.format.value,
                    sha256=digest,
                    size=stat.st_size,
                    mtime_ns=stat.st_mtime_ns,
                    pages=total,
                    note=document.note,
                ),
                chunk_pages(pages()),
            )
        info = store.document(document_id)
        return FileIndexed(path, document_id, total, info.chunks if info else 0, document.note)
    except DocumentError as error:
        return FileFailed(path, str(error))
    except FileNotFoundError:
        return FileFailed(path, "the file disappeared while it was being indexed")
    except PermissionError:
        return FileFailed(path, "permission denied: Docent may not read this file")
    except sqlite3.Error as error:
        return FileFailed(path, f"the index could not store it: {error}")
    except (OSError, RuntimeError, ValueError) as error:
        # MuPDF raises RuntimeError subclasses for damaged content found mid-document.
        return FileFailed(path, f"could not be read: {error}")
