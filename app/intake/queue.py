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

The files of an added batch are stored in the library as the batch is queued, and marked
finished as they are done (a second's worth at a time): a quit, a crash or Ctrl-C in the middle
of a folder leaves the rest queued, and the next start (`resume()`, `index_queued()`) goes on
from there; a file marked late is only checked again and skipped as unchanged. Watched folders'
batches are not stored: their watcher finds what changed while Docent was closed by itself.
Indexing can be paused (`pause()`, kept in the library across restarts, until `unpause()`): the
queue, the OCR pass and the embedding pass each stop at their next step.

Each batch has a meter (progress.py) that says how far it is and how long the rest will take,
and `times` adds up where the time went.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from app.documents import Chunk, DocumentError
from app.documents.reader import ChunksRead, DocumentReader, Opened, Parsed
from app.embeddings import EmbeddingOff
from app.index import EmbeddingProgress, Library, NewDocument, Queue, QueuedFile
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
from app.intake.folders import Collected, OutsideLink, collect_files, still_inside
from app.intake.progress import EmbeddingMeter, IndexingProgress, IntakeTimes, ReadingMeter
from app.intake.watch import FolderChanges, FolderWatch
from app.processes import process_identity
from app.workers import Subscription, publish

FINISHED_FLUSH_S = 1.0  # how often files done are marked so in the stored queue


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
    stored: bool = False  # its files are in the library's stored queue
    collecting: asyncio.Task[Collected] | None = None  # an added batch's walk, then stored
    collected: Collected | None = None  # a resumed batch's files, as stored
    forced: set[Path] = field(default_factory=set)  # a resumed batch's files queued with force
    done_before: int = 0  # a resumed batch's files finished before the restart


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
        self._collecting: set[asyncio.Task[Collected]] = set()
        self._unpaused = asyncio.Event()
        self._unpaused.set()
        self._pauses = 0  # how many times indexing was paused: a paused pass's speed is not kept
        self._reading: ReadingMeter | None = None  # the running batch's
        self._finished: list[str] = []  # files done, not yet marked so in the stored queue
        self._marked_at = 0.0
        self._identity: str | None = None  # this process, as its claims on stored files name it
        self.times = IntakeTimes()

    # --- what callers use ------------------------------------------------------------------

    def subscribe(self) -> Subscription[IntakeEvent]:
        return Subscription(self._listeners)

    def add(self, paths: Sequence[Path], *, force: bool = False, embed: bool = True) -> int:
        """Queue files and folders for indexing; returns the batch number its events carry.
        `force` re-indexes unchanged files; `embed=False` leaves embedding to a later pass."""
        batch = _Batch(
            next(self._numbers), "add", list(paths), force=force, embed=embed, stored=True
        )
        # Walked and stored now, not when its turn comes: a batch waiting behind another one
        # survives a quit too.
        batch.collecting = asyncio.ensure_future(self._collect_and_store(batch))
        self._collecting.add(batch.collecting)
        batch.collecting.add_done_callback(self._collecting.discard)
        return self._submit(batch)

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
        async for event in self._events_of(
            lambda: self.add(paths, force=force, embed=embed), embed
        ):
            yield event

    async def index_queued(self, *, embed: bool = False) -> AsyncIterator[IntakeEvent]:
        """Unpause indexing and index the files an earlier run left queued (it was stopped, or
        paused), yielding as index() does; with `embed`, then what is left to OCR and embed."""
        if self.paused or await self.library.queue_paused():
            await self.unpause()
        queue = await self.library.queue()
        async for event in self._events_of(
            lambda: self._submit(self._resumed(queue, embed)), embed
        ):
            yield event

    async def _events_of(
        self, submit: Callable[[], int], embed: bool
    ) -> AsyncIterator[IntakeEvent]:
        """What happens to the batch `submit` queues (subscribed first: nothing is missed)."""
        with self.subscribe() as events:
            mine = submit()
            running = finished = False
            async for event in events:
                behind = isinstance(
                    event, EmbeddingProgress | EmbeddingFailed | OcrProgress | OcrFailed
                ) or (isinstance(event, IndexingProgress) and event.stage == "embedding")
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
        """Continue what a previous session left: the files it had queued (held until unpause()
        while indexing is paused), the pages it left unread by OCR, and the chunks it left
        without a vector: every chunk, once the library was embedded by another engine (a
        batch resumes them too)."""
        queue = await self.library.queue()
        if await self.library.queue_paused():
            self._unpaused.clear()
            self._publish(PauseChanged(True, len(queue.left)))
        if queue.left:
            self._submit(self._resumed(queue, embed=True))
        if await self.library.next_ocr_page() is not None:
            self._start_ocr()
        left = self._embedding_left
        if _over(left) and self.library.embeds and await self.library.pending_embeddings():
            self._embedding_left = asyncio.ensure_future(self._embed_left())

    @property
    def paused(self) -> bool:
        return not self._unpaused.is_set()

    async def pause(self) -> None:
        """Hold indexing at its next step (the file being read, the page being OCR'd and the
        chunks being embedded are finished first) until unpause(), across restarts too."""
        if self.paused:
            return
        self._unpaused.clear()
        self._pauses += 1
        await self.library.set_queue_paused(True)
        await self._mark_finished()  # what a restart shows as done
        await self._tell_paused()

    async def unpause(self) -> None:
        self._unpaused.set()
        await self.library.set_queue_paused(False)
        await self._tell_paused()

    async def _tell_paused(self) -> None:
        waiting = len((await self.library.queue()).left)
        self._publish(PauseChanged(self.paused, waiting))

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
        tasks = (self._watching, self._worker, self._ocr_task, self._embedding_left)
        for task in (*tasks, *self._collecting):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        # The files finished since the last mark: a stop says how many stay queued, and the
        # next start must begin there, not a second's files earlier.
        await self._mark_finished()
        if self._identity is not None:  # the file abandoned is another process's to take
            await self.library.release_queued(self._identity)

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

    async def _collect_and_store(self, batch: _Batch) -> Collected:
        collected = await asyncio.to_thread(collect_files, batch.paths)
        roots = collected.roots
        started = time.perf_counter()
        await self.library.queue_files(
            [
                QueuedFile(str(path), str(roots[path]) if path in roots else None, batch.force)
                for path in collected.files
            ]
        )
        self.times.write_s += time.perf_counter() - started
        return collected

    def _resumed(self, queue: Queue, embed: bool) -> _Batch:
        """A batch of the files a stored queue has left."""
        files = [Path(file.path) for file in queue.left]
        roots = {Path(file.path): Path(file.root) for file in queue.left if file.root}
        return _Batch(
            next(self._numbers),
            "add",
            files,
            embed=embed,
            stored=True,
            collected=Collected(files=files, roots=roots),
            forced={Path(file.path) for file in queue.left if file.force},
            done_before=queue.done,
        )

    async def _collect(self, batch: _Batch) -> Collected:
        if batch.collected is not None:
            return batch.collected
        if batch.collecting is not None:
            return await batch.collecting
        return await asyncio.to_thread(collect_files, batch.paths, batch.within)

    async def _meter(self, batch: _Batch, sizes: list[int]) -> ReadingMeter:
        embeds = batch.embed and self.library.embeds
        return ReadingMeter(
            sizes,
            done=batch.done_before,
            embeds=embeds,
            pending_chunks=await self.library.pending_embeddings() if embeds else 0,
            embedding_speed=await self.library.embedding_speed() if embeds else None,
        )

    async def _run(self, batch: _Batch) -> tuple[int, int, int, int]:
        removed = 0
        if batch.remove:
            removed = await self._remove(batch.remove)
        collected = await self._collect(batch)
        outcomes: list[IngestEvent] = [
            *(FileFailed(path, "no such file or folder") for path in collected.missing),
            *(FileSkipped(path, reason) for path, reason in batch.skipped + collected.skipped),
        ]
        for problem in outcomes:
            self._publish(problem)
        # A watched file that became a link out of its folder: its document goes too.
        removed += await self._remove_indexed(collected.outside)
        outcomes += await self._read_files(batch, collected)
        return (
            sum(isinstance(o, FileIndexed) for o in outcomes),
            sum(isinstance(o, FileSkipped) for o in outcomes),
            sum(isinstance(o, FileFailed) for o in outcomes),
            removed,
        )

    async def _read_files(self, batch: _Batch, collected: Collected) -> list[IngestEvent]:
        """Each file in turn, followed by the batch's meter; held between files while paused."""
        files = collected.files
        if not files:
            return []
        sizes = await asyncio.to_thread(_sizes, files)
        meter = self._reading = await self._meter(batch, sizes)
        total = batch.done_before + len(files)
        self._publish(meter.progress())  # a resumed queue says how far it is, even paused
        outcomes: list[IngestEvent] = []
        try:
            for position, (path, size) in enumerate(zip(files, sizes, strict=True), start=1):
                if self.paused:  # what was done is marked so first: a restart shows it
                    await self._mark_finished()
                    await self._unpaused.wait()
                self._publish(FileStarted(path, batch.done_before + position, total))
                meter.file_started()
                force = batch.force or path in batch.forced
                holder = await self._claim(path) if batch.stored else None
                if holder is None:
                    outcome = await self._index_file(path, force, collected.roots.get(path))
                else:  # that process marks it finished
                    outcome = FileSkipped(
                        path, f"being indexed by another Docent process ({holder})"
                    )
                outcomes.append(outcome)
                self._publish(outcome)
                if isinstance(outcome, FileIndexed):
                    meter.file_finished(size, read=True, pages=outcome.pages, chunks=outcome.chunks)
                else:
                    meter.file_finished(size, read=False)
                if meter.wants_embedding_speed:
                    meter.embedding_measured(await self._measure_embedding())
                self._publish(meter.progress())
                if batch.stored and holder is None:
                    self._finished.append(str(path))
                    if time.monotonic() - self._marked_at >= FINISHED_FLUSH_S:
                        await self._mark_finished()
        finally:
            self._reading = None
        if batch.stored:
            await self._mark_finished()
        return outcomes

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

    async def _claim(self, path: Path) -> str | None:
        """None when this process may read the stored file `path`; else the other running
        Docent process (the window, `docent index --resume`) reading it now, as "pid N"."""
        if self._identity is None:
            self._identity = await asyncio.to_thread(process_identity)
        holder = await self.library.claim_queued(str(path), self._identity)
        return None if holder is None else f"pid {holder.partition(':')[0]}"

    async def _mark_finished(self) -> None:
        paths, self._finished = self._finished, []
        self._marked_at = time.monotonic()
        if paths:
            started = time.perf_counter()
            await self.library.finish_queued(paths)
            self.times.write_s += time.perf_counter() - started

    async def _embed(self) -> None:
        if not self.library.embeds:
            return
        pauses = self._pauses
        meter = EmbeddingMeter(await self.library.embedding_speed())
        started: float | None = None  # once the pass runs: OCR's may wait for the batch's

        def progress(event: EmbeddingProgress) -> None:
            nonlocal started
            started = started or time.perf_counter()
            self._publish(event)
            self._publish(meter.update(event.done, event.total))

        try:
            await self.library.embed_pending(progress, self._unpaused.wait)
            if (speed := meter.speed()) is not None and pauses == self._pauses:
                await self.library.keep_embedding_speed(speed)
        except Exception as error:  # the embedder's failure: the index itself is fine
            lasting = isinstance(error, EmbeddingOff)
            self._publish(EmbeddingFailed(f"embedding stopped: {error}", lasting))
        if started is not None:
            self.times.embedding_s += time.perf_counter() - started
        self._publish(LibraryChanged())

    async def _measure_embedding(self) -> float | None:
        """A first folder's time left needs the embedding pass's speed: a few batches now."""
        started = time.perf_counter()
        try:
            return await self.library.measure_embedding_speed(self._unpaused.wait)
        except Exception:  # the embedder's failure: the pass after reading reports it
            return None
        finally:
            self.times.embedding_s += time.perf_counter() - started

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
            while True:
                await self._unpaused.wait()  # a pause holds the pass here, between pages
                if (pending := await self.library.next_ocr_page()) is None:
                    break
                started = time.perf_counter()
                path = Path(pending.path)
                try:
                    indexed = (pending.size, pending.mtime_ns)
                    page = await self.ocr_reader.ocr(path, pending.page, indexed)
                    chunks, words = page.chunks, page.words
                except DocumentError as error:  # the page stays without text; the others go on
                    self._publish(OcrFailed(path, pending.page, str(error)))
                    chunks, words = [], []
                stored = await self.library.write_ocr_page(pending, chunks, words)
                self.times.ocr_s += time.perf_counter() - started
                self.times.ocr_pages += 1
                if stored:
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
        started = time.perf_counter()
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
                        if self._reading is not None:
                            self._reading.pages_read(done)
                            self._publish(self._reading.progress())
                    case Parsed():
                        note, ocr_pages = event.note, event.ocr_pages
        assert opened is not None, "the reader reports a document opened before its chunks"
        parsed = time.perf_counter()
        self.times.parse_s += parsed - started
        self.times.pages += opened.pages
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
        self.times.write_s += time.perf_counter() - parsed
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


def _sizes(files: Sequence[Path]) -> list[int]:
    """Each file's bytes, for the estimate of the time left (0 where it cannot be told)."""
    sizes = []
    for path in files:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    return sizes


def _over(task: asyncio.Task[None] | None) -> bool:
    return task is None or task.done()


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
