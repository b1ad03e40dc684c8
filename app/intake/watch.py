"""Watched folders: what changed there, as work for the index (files to index, documents to remove).

At start-up `pending()` compares the folders with the index (it knows each document's path, size,
time and content hash): that catches changes made while Docent was closed. Then `changes()`
follows the folders live through watchfiles (Rust `notify`: inotify, FSEvents,
ReadDirectoryChangesW; recursive; changes batched until the folder is quiet) on its own thread.
The intake applies the work; it skips files whose content did not change.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.documents import is_document_name
from app.index import DocumentInfo, Library
from app.intake.folders import collect_files
from app.workers import SerialWorker


@dataclass(frozen=True, slots=True)
class FolderChanges:
    index: list[Path] = field(default_factory=list)  # new or changed files
    remove: list[str] = field(default_factory=list)  # indexed paths whose file is gone
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # links leading out, loops

    def __bool__(self) -> bool:
        return bool(self.index or self.remove or self.skipped)

    def describe(self) -> str:
        parts = []
        if self.index:
            parts.append(f"{len(self.index)} to index")
        if self.remove:
            parts.append(f"{len(self.remove)} removed")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        return ", ".join(parts) or "no changes"


def _watched(path: Path, folders: Sequence[Path]) -> bool:
    """A supported, non-hidden file inside one of the folders (as `collect_files` chooses)."""
    for folder in folders:
        if path.is_relative_to(folder):
            relative = path.relative_to(folder).parts
            return is_document_name(path.name) and not any(
                part.startswith(".") for part in relative
            )
    return False


def _scan(folders: Sequence[Path], documents: list[DocumentInfo]) -> FolderChanges:
    """Runs off the loop: walks the folders and stats every file."""
    collected = collect_files(folders)
    files = collected.files
    known = {document.path: document for document in documents}
    index = []
    for path in files:
        document = known.get(str(path))
        try:
            stat = path.stat()
        except OSError:
            continue  # gone while walking: the live watcher reports it
        if document is None or (document.size, document.mtime_ns) != (
            stat.st_size,
            stat.st_mtime_ns,
        ):
            index.append(path)
    present = {str(path) for path in files}
    remove = [
        document.path
        for document in documents
        if document.path not in present and _watched(Path(document.path), folders)
    ]
    return FolderChanges(index, remove, collected.skipped)


def _batch(
    changed: Iterable[Path], folders: Sequence[Path], documents: list[DocumentInfo]
) -> FolderChanges:
    """Runs off the loop: one batch of file system events as index work."""
    present: list[Path] = []
    remove: list[str] = []
    for path in sorted(set(changed)):
        if path.is_dir() or (path.is_file() and _watched(path, folders)):
            present.append(path)  # a file, or a folder moved or copied in
        elif not path.exists():  # deleted or moved away: a file, or a folder of documents
            remove += [
                document.path
                for document in documents
                if Path(document.path) == path or Path(document.path).is_relative_to(path)
            ]
    # The start-up scan's rule: nothing reached through a link out of the folders.
    collected = collect_files(present, within=folders)
    return FolderChanges(collected.files, list(dict.fromkeys(remove)), collected.skipped)


class FolderWatch:
    """Watches `folders` (absolute paths) for changes to the library's documents."""

    def __init__(self, library: Library, folders: Sequence[Path]) -> None:
        self.library = library
        self.folders = [folder.absolute() for folder in folders]
        self._worker = SerialWorker("watch")
        self.ready = asyncio.Event()  # set once the watcher follows the folders

    def missing(self) -> list[Path]:
        return [folder for folder in self.folders if not folder.is_dir()]

    async def pending(self) -> FolderChanges:
        """What changed since the index last saw the folders (e.g. while Docent was closed)."""
        documents = await self.library.documents()
        return await asyncio.to_thread(_scan, self._existing(), documents)

    def _existing(self) -> list[Path]:
        return [folder for folder in self.folders if folder.is_dir()]

    async def changes(self) -> AsyncIterator[FolderChanges]:
        """Each batch of changes, live, until the consumer stops (then the thread stops)."""
        folders = await asyncio.to_thread(self._existing)
        if not folders:
            return
        loop = asyncio.get_running_loop()
        batches: asyncio.Queue[set[Path]] = asyncio.Queue()
        stop = threading.Event()

        def follow() -> None:
            import watchfiles  # here, on the watching thread: not every start-up needs it

            # A quiet wait ends after rust_timeout with an empty batch: the first one proves the
            # folders are being watched (nothing that changes later is missed).
            for changes in watchfiles.watch(
                *folders, stop_event=stop, rust_timeout=300, yield_on_timeout=True
            ):
                if changes:
                    batch = {Path(path) for _, path in changes}
                    loop.call_soon_threadsafe(batches.put_nowait, batch)
                elif not self.ready.is_set():
                    loop.call_soon_threadsafe(self.ready.set)

        following = asyncio.ensure_future(self._worker.run(follow))
        waiting: asyncio.Future[set[Path]] | None = None
        try:
            while True:
                waiting = asyncio.ensure_future(batches.get())
                await asyncio.wait({waiting, following}, return_when=asyncio.FIRST_COMPLETED)
                if not waiting.done():
                    following.result()  # the watcher failed (a folder vanished): raise it
                    return
                documents = await self.library.documents()
                work = await asyncio.to_thread(_batch, waiting.result(), folders, documents)
                if work:
                    yield work
        finally:
            if waiting is not None:
                waiting.cancel()
            stop.set()
            await asyncio.gather(following, return_exceptions=True)

    def close(self) -> None:
        self._worker.shutdown()
