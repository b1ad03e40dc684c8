"""Indexing, owned by the core: one queue of work, the document reader, the embedding pass, the
watched folders, and one event stream that the window, the CLI and the tests all consume.

Work arrives as batches (files and folders added, changes in watched folders, documents removed)
and runs one batch after another. Each file is read by the supervised reader process and then
written in one short transaction; whatever goes wrong with one file (a hang, a crash, an
exception) is that file's FileFailed, and the batch goes on. Unchanged files (same size and time,
or same content hash) are skipped. Once the queue is empty, chunks without a vector are embedded.

Pages without a text layer (scans) are OCR'd by a pass of their own, beside the queue: a page
takes seconds, so a 200-page scan would hold every other file back for many minutes. The pass
has its own reader process, takes the pages left to OCR from the index (so a restart resumes
it) and stores each page as it is read: the document is searchable page by page.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import sqlite3
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from app.documents import Chunk, DocumentError
from app.documents.reader import ChunksRead, DocumentReader, Opened, Parsed
from app.index import EmbeddingProgress, Library, NewDocument
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
from app.intake.folders import OutsideLink, collect_files, still_inside
from app.intake.watch import FolderChanges, FolderWatch
from app.workers import Subscription, publish


@dataclass(slots=True)
class _Batch:
    number: int
    kind: BatchKind
    paths: list[Path] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    force: bool = False
    embed: bool = True
    within: list[Path] | None = None  # watched folders: nothing outside them is followed
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # found so by the watcher


class Intake:
    def __init__(
        self, library: Library, reader: DocumentReader, ocr_reader: DocumentReader
    ) -> None:
        self.library = library
        self.reader = reader
        self.ocr_reader = ocr_reader
        self._ocr_task: asyncio.Task[None] | None = None
        self._embedding_left: asyncio.Task[None] | None = None  # what a session left: resume()
        self._embed_after_ocr = False
        self._busy = False  # a batch is being worked on (or its embedding)
        self._queue: asyncio.Queue[_Batch] = asyncio.Queue()
        self._listeners: set[asyncio.Queue[IntakeEvent]] = set()
        self._numbers = itertools.count(1)
        self._worker: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self.folder_watch: FolderWatch | None = None
        self._embed_wanted = False

    # --- what callers use ------------------------------------------------------------------

    def subscribe(self) -> Subscription[IntakeEvent]:
        return Subscription(self._listeners)

    def add(self, paths: Sequence[Path], *, force: bool = False, embed: bool = True) -> int:
        """Queue files and folders for indexing; returns the batch number its events carry.
        `force` re-indexes unchanged files; `embed=False` leaves embedding to a later pass."""
        return self._submit(
            _Batch(next(self._numbers), "add", list(paths), force=force, embed=embed)
        )

    async def remove(self, paths: Sequence[str]) -> int:
        """Remove indexed documents (by path) now, not behind queued work; returns how many."""
        removed = await self._remove(list(paths))
        self._publish(LibraryChanged())
        return removed

    def sync(self, changes: FolderChanges, folders: Sequence[Path]) -> int:
        """Queue what changed in watched `folders`: removals, then files to (re)index."""
        return self._submit(
            _Batch(
                next(self._numbers),
                "sync",
                list(changes.index),
                list(changes.remove),
                within=list(folders),
                skipped=list(changes.skipped),
            )
        )

    async def index(
        self, paths: Sequence[Path], *, force: bool = False, embed: bool = False
    ) -> AsyncIterator[IntakeEvent]:
        """Index `paths` now and yield what happens to them; with `embed`, then the OCR and
        embedding passes too, until the library is up to date."""
        with self.subscribe() as events:
            mine = self.add(paths, force=force, embed=embed)
            running = finished = False
            async for event in events:
                behind = isinstance(
                    event, EmbeddingProgress | EmbeddingFailed | OcrProgress | OcrFailed
                )
                if isinstance(event, BatchStarted):
                    running = event.batch == mine
                elif isinstance(event, BatchFinished) and event.batch == mine:
                    running, finished = False, True
                    if not embed:
                        return
                elif finished and isinstance(event, Idle):  # the first Idle after it is its own
                    return
                elif running or (finished and behind):
                    yield event

    async def resume(self) -> None:
        """OCR the pages a previous session left unread, and embed the chunks it left without a
        vector: every chunk, once the library was embedded by another engine (a batch resumes
        them too)."""
        if await self.library.next_ocr_page() is not None:
            self._start_ocr()
        left = self._embedding_left
        if _over(left) and self.library.embeds and await self.library.pending_embeddings():
            self._embedding_left = asyncio.ensure_future(self._embed_left())

    def watch(self, folders: Sequence[Path]) -> None:
        """Follow `folders` from now on, replacing any earlier watch: first what changed while
        Docent was closed, then changes as they happen."""
        previous = self._watching
        if previous is not None:
            previous.cancel()
        self._watching = (
            asyncio.ensure_future(self._watch([Path(f) for f in folders], previous))
            if folders
            else None
        )

    async def close(self) -> None:
        """Stop watching and indexing: a file being read is abandoned (its reader process
        stopped), and the next start resumes where this stopped."""
        for task in (self._watching, self._worker, self._ocr_task, self._embedding_left):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # --- the queue ---------------------------------------------------------------------------

    def _submit(self, batch: _Batch) -> int:
        self._queue.put_nowait(batch)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())
        return batch.number

    def _publish(self, event: IntakeEvent) -> None:
        publish(self._listeners, event)

    async def _work(self) -> None:
        while True:
            batch = await self._queue.get()
            self._busy = True
            self._embed_wanted |= batch.embed
            self._publish(BatchStarted(batch.number, batch.kind))
            try:
                counts = await self._run(batch)
            except Exception as error:  # the queue goes on: later batches may well succeed
                self._publish(BatchFailed(batch.number, f"indexing stopped: {error}"))
                counts = (0, 0, 0, 0)
            self._publish(BatchFinished(batch.number, batch.kind, *counts))
            self._publish(LibraryChanged())
            self._embed_after_ocr |= batch.embed
            self._start_ocr()  # also resumes the pages a previous session left
            if self._queue.empty():
                if self._embed_wanted:
                    self._embed_wanted = False
                    await self._embed()
                self._busy = False
                if _over(self._ocr_task) and _over(self._embedding_left):
                    self._publish(Idle())  # else the pass still running says it when it ends

    async def _run(self, batch: _Batch) -> tuple[int, int, int, int]:
        removed = 0
        if batch.remove:
            removed = await self._remove(batch.remove)
        collected = await asyncio.to_thread(collect_files, batch.paths, batch.within)
        files = collected.files
        outcomes: list[IngestEvent] = [
            *(FileFailed(path, "no such file or folder") for path in collected.missing),
            *(FileSkipped(path, reason) for path, reason in batch.skipped + collected.skipped),
        ]
        for problem in outcomes:
            self._publish(problem)
        # A watched file that became a link out of its folder: its document goes too.
        removed += await self._remove_indexed(collected.outside)
        for position, path in enumerate(files, start=1):
            self._publish(FileStarted(path, position, len(files)))
            outcome = await self._index_file(path, batch.force, collected.roots.get(path))
            outcomes.append(outcome)
            self._publish(outcome)
        return (
            sum(isinstance(o, FileIndexed) for o in outcomes),
            sum(isinstance(o, FileSkipped) for o in outcomes),
            sum(isinstance(o, FileFailed) for o in outcomes),
            removed,
        )

    async def _remove_indexed(self, paths: Sequence[Path]) -> int:
        """Those of `paths` that are documents (one indexed lookup each: usually none)."""
        indexed = [str(p) for p in paths if await self.library.document_by_path(str(p))]
        return await self._remove(indexed) if indexed else 0

    async def _remove(self, paths: list[str]) -> int:
        by_path = {d.path: d for d in await self.library.documents()}
        removed = 0
        for path in paths:
            if (document := by_path.get(path)) is not None:
                removed += await self.library.remove(document.id)
            self._publish(FileRemoved(path))
        return removed

    async def _embed(self) -> None:
        try:
            await self.library.embed_pending(self._publish)
        except Exception as error:  # the embedder's failure: the index itself is fine
            self._publish(EmbeddingFailed(f"embedding stopped: {error}"))
        self._publish(LibraryChanged())

    async def _embed_left(self) -> None:
        await self._embed()
        if not self._busy and self._queue.empty() and _over(self._ocr_task):
            self._publish(Idle())

    def _start_ocr(self) -> None:
        if _over(self._ocr_task):
            self._ocr_task = asyncio.ensure_future(self._ocr())

    async def _ocr(self) -> None:
        pending = None
        read = False  # any page stored: only then is there anything new to embed
        try:
            while (pending := await self.library.next_ocr_page()) is not None:
                path = Path(pending.path)
                try:
                    indexed = (pending.size, pending.mtime_ns)
                    page = await self.ocr_reader.ocr(path, pending.page, indexed)
                    chunks, words = page.chunks, page.words
                except DocumentError as error:  # the page stays without text; the others go on
                    self._publish(OcrFailed(path, pending.page, str(error)))
                    chunks, words = [], []
                if await self.library.write_ocr_page(pending, chunks, words):
                    read = True
                    done, total = await self.library.ocr_progress(pending.document_id)
                    self._publish(OcrProgress(path, pending.document_id, done, total))
                    self._publish(LibraryChanged())
        except Exception as error:  # the index failed: the pass stops, the next batch resumes it
            where = (Path(pending.path), pending.page) if pending else (Path(), 0)
            self._publish(OcrFailed(*where, f"OCR stopped: {error}"))
        # OCR's models hold ~850 MB in the child: not kept while there is nothing to read.
        await self.ocr_reader.stop()
        if self._embed_after_ocr and read:
            # The batch's own pass embedded its text; this one embeds what OCR added.
            await self._embed()
        self._embed_after_ocr = False
        if not self._busy and self._queue.empty() and _over(self._embedding_left):
            self._publish(Idle())

    # --- one file ----------------------------------------------------------------------------

    async def _index_file(
        self, path: Path, force: bool, within: Path | None
    ) -> FileIndexed | FileSkipped | FileFailed:
        """`within`: the real folder the file must still lie in (see folders.still_inside)."""
        try:
            return await self._read_and_write(path, force, within)
        except OutsideLink as error:  # swapped for a link since the walk: as the walk skips it
            await self._remove_indexed([path])
            return FileSkipped(path, str(error))
        except DocumentError as error:
            return FileFailed(path, str(error))
        except sqlite3.Error as error:
            return FileFailed(path, f"the index could not store it: {error}")
        except FileNotFoundError:
            return FileFailed(path, "the file disappeared before it could be read")
        except PermissionError:
            return FileFailed(path, "permission denied: Docent may not read this file")
        except OSError as error:
            return FileFailed(path, f"cannot be read: {error.strerror or error}")
        except Exception as error:  # one file never stops the others
            return FileFailed(path, f"could not be indexed: {error!r}")

    async def _read_and_write(
        self, path: Path, force: bool, within: Path | None
    ) -> FileIndexed | FileSkipped | FileFailed:
        # Checked again now (the walk may be minutes old) and again by the reader, which opens
        # the real place it checked: a link swapped in meanwhile is never followed out.
        real = path if within is None else still_inside(path, within)
        stat = await asyncio.to_thread(real.stat)
        if not S_ISREG(stat.st_mode):  # opening a pipe would wait for a writer forever
            return FileFailed(path, "not a regular file (a pipe, a device or a socket)")
        previous = None if force else await self.library.document_by_path(str(path))
        if previous and (previous.size, previous.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            return FileSkipped(path, "unchanged since it was indexed")
        digest = await asyncio.to_thread(sha256_of, real)
        if previous and previous.sha256 == digest:
            return FileSkipped(path, "unchanged content")
        opened: Opened | None = None
        note: str | None = None
        ocr_pages: tuple[int, ...] = ()
        chunks: list[Chunk] = []
        async with contextlib.aclosing(self.reader.parse(path, within)) as events:
            async for event in events:
                match event:
                    case Opened():
                        opened = event
                    case ChunksRead(done=done, total=total, chunks=batch):
                        chunks += batch
                        self._publish(PagesParsed(path, done, total))
                    case Parsed():
                        note, ocr_pages = event.note, event.ocr_pages
        assert opened is not None, "the reader reports a document opened before its chunks"
        written = await self.library.write_document(
            NewDocument(
                path=str(path),
                title=opened.title,
                format=opened.format,
                sha256=digest,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                pages=opened.pages,
                note=note,
                ocr_pages=ocr_pages,
            ),
            chunks,
        )
        if ocr_pages:
            self._start_ocr()
        return FileIndexed(path, written.document_id, opened.pages, len(chunks), note)

    # --- watched folders ---------------------------------------------------------------------

    async def _watch(self, folders: list[Path], previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)  # its thread has stopped
        watch = self.folder_watch = FolderWatch(self.library, folders)
        try:
            if missing := await asyncio.to_thread(watch.missing):
                names = ", ".join(str(folder) for folder in missing)
                self._publish(WatchProblem(f"Watched folder not found: {names}"))
            self._follow(await watch.pending(), "Changed while Docent was closed", watch)
            async for changes in watch.changes():
                self._follow(changes, "Changed in watched folders", watch)
        except Exception as error:  # a folder vanished, the OS refused a watch
            self._publish(WatchProblem(f"Watched folders are no longer followed: {error}"))
        finally:
            watch.close()

    def _follow(self, changes: FolderChanges, why: str, watch: FolderWatch) -> None:
        if changes:
            self._publish(FoldersChanged(changes, why))
        self.sync(changes, watch.folders)


def _over(task: asyncio.Task[None] | None) -> bool:
    return task is None or task.done()


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
