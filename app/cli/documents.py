"""`docent index`, `docent docs`, `docent remove`: the documents in the library; and how every
command turns a document's name into the document."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.bootstrap import Docent
from app.cli.terminal import Progress, printable, printable_json
from app.errors import DocentError
from app.index import DocumentInfo, DocumentNotFound, EmbeddingProgress
from app.intake import (
    BatchFailed,
    EmbeddingFailed,
    FileFailed,
    FileIndexed,
    FileSkipped,
    FileStarted,
    IndexingProgress,
    OcrFailed,
    OcrProgress,
    PagesParsed,
)


class UsageError(DocentError):
    """A mistake in the command line; printed without a traceback."""


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    index = commands.add_parser(
        "index",
        help="add or update files and folders in the library (Ctrl-C stops; the rest stays queued)",
    )
    index.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    index.add_argument(
        "--resume",
        action="store_true",
        help="go on with the files a stopped run (or the window) left queued, even if paused",
    )
    index.add_argument(
        "--no-embed",
        action="store_true",
        help="stop once documents are keyword-searchable; embed later (any index run resumes)",
    )
    docs = commands.add_parser("docs", help="list the indexed documents")
    docs.add_argument("--json", action="store_true")
    remove = commands.add_parser("remove", help="remove documents from the library")
    remove.add_argument("documents", nargs="+", metavar="DOCUMENT", help="id, path or file name")
    remove.add_argument(
        "--forget-answers",
        action="store_true",
        help="also delete the recorded answers that quote them (conversations and history)",
    )


async def resolve(docent: Docent, names: Sequence[str]) -> list[DocumentInfo]:
    """The documents named (id, path or file name), or a usage error saying which is unknown."""
    try:
        return await docent.library.match_documents(names)
    except DocumentNotFound as error:
        raise UsageError(f"{error} (see `docent docs`)") from None


async def index(docent: Docent, arguments: argparse.Namespace) -> int:
    paths: list[Path] = arguments.paths
    if not paths and not arguments.resume:
        raise UsageError("name files or folders to index, or --resume a stopped run")
    embed = not arguments.no_embed
    intake = docent.intake
    events = (
        intake.index_queued(embed=embed) if arguments.resume else intake.index(paths, embed=embed)
    )
    tally = _Tally()
    try:
        async for event in events:
            tally.show(event)
    except asyncio.CancelledError:  # Ctrl-C: the files not read stay in the stored queue
        tally.progress.line(tally.stopped())
        raise
    if arguments.resume and not tally.files:
        tally.progress.line("No files were left queued.")
    if tally.embedded:
        tally.progress.line(f"embedded {tally.embedded} chunks: semantic search is up to date")
    elif not embed and (pending := await docent.library.pending_embeddings()):
        tally.progress.line(
            f"{pending} chunks wait for embedding (run `docent index` again to finish)"
        )
    tally.progress.line(
        f"{tally.indexed} indexed, {tally.skipped} unchanged, {tally.failed} failed"
    )
    return 1 if tally.failed and not tally.indexed and not tally.skipped else 0


class _Tally:
    """What `docent index` prints as events come, and counts. On a terminal, one line is
    rewritten with the file being read and the batch's progress; redirected, the progress is
    printed at every tenth of the files."""

    def __init__(self) -> None:
        self.progress = Progress()
        self.indexed = self.skipped = self.failed = self.embedded = self.files = 0
        self._position = ""
        self._reading = ""  # the file being read, and how far
        self._last: IndexingProgress | None = None
        self._tenths = 0

    def stopped(self) -> str:
        last = self._last
        if last is not None and last.done == last.total:
            left = "every file was read; the chunks not yet embedded wait"
        else:
            files = f"the other {last.total - last.done} files" if last else "the files"
            left = f"{files} stay queued"
        return (
            f"Stopped: {left}. `docent index --resume` goes on from there (so does the window "
            "when it starts)."
        )

    def _update(self, reading: str) -> None:
        self._reading = reading
        shown = self._last.describe() if self._last else ""
        self.progress.update(" · ".join(filter(None, [shown, reading])))

    def show(self, event: object) -> None:
        progress = self.progress
        position = self._position
        match event:
            case FileStarted(path=path, position=number, total=total):
                self._position = f"[{number}/{total}]"
                self.files += 1
                self._update(f"{path.name}: opening")
            case PagesParsed(path=path, done=done, total=total):
                self._update(f"{path.name}: {done}/{total} pages")
            case IndexingProgress(stage="reading") as reading:
                self._last = reading
                tenths = 10 * reading.done // max(reading.total, 1)
                if not progress.live and tenths > self._tenths:
                    progress.line(reading.describe())
                self._tenths = tenths
                self._update(self._reading)
            case IndexingProgress(stage="embedding") as embedding:
                progress.update(embedding.describe())
            case FileIndexed(path=path, pages=pages, chunks=chunks, note=note):
                self.indexed += 1
                suffix = f" ({note})" if note else ""
                progress.line(f"{position} indexed {path}: {pages} pages, {chunks} chunks{suffix}")
            case FileSkipped(path=path, reason=reason):
                self.skipped += 1
                progress.line(f"{position} skipped {path}: {reason}".lstrip())
            case FileFailed(path=path, reason=reason):
                self.failed += 1
                progress.line(f"{position} error: {path}: {reason}".lstrip())
            case EmbeddingProgress(done=done):
                self.embedded = done
            case OcrProgress(path=path, done=done, total=total):
                progress.update(f"OCR {path.name}: {done}/{total} pages")
            case OcrFailed(path=path, page=page, reason=reason):
                progress.line(f"error: OCR of {path} page {page}: {reason}")
            case EmbeddingFailed(reason=reason) | BatchFailed(reason=reason):
                self.failed += isinstance(event, BatchFailed)
                progress.line(f"error: {reason}")


async def docs(docent: Docent, arguments: argparse.Namespace) -> int:
    as_json = arguments.json
    documents = await docent.library.documents()
    if as_json:
        print(printable_json([_document_dict(d) for d in documents]))
        return 0
    if not documents:
        print("No documents yet: add some with `docent index PATH`.")
        return 0
    for d in documents:
        embedded = "ready" if d.embedded >= d.chunks else f"embedding {d.embedded}/{d.chunks}"
        note = f"  ({d.note})" if d.note else ""
        print(
            printable(f"{d.id:>4}  {d.name}  {d.pages} pages, {d.chunks} chunks, {embedded}{note}")
        )
        print(f"      {printable(d.path)}")
    return 0


def _document_dict(document: DocumentInfo) -> dict[str, Any]:
    return {
        "id": document.id,
        "name": document.name,
        "path": document.path,
        "title": document.title,
        "format": document.format,
        "pages": document.pages,
        "chunks": document.chunks,
        "embedded": document.embedded,
        "note": document.note,
        "indexed_at": document.indexed_at,
    }


async def remove(docent: Docent, arguments: argparse.Namespace) -> int:
    documents = await resolve(docent, arguments.documents)
    for document in documents:
        await docent.library.remove(document.id)
        print(printable(f"removed {document.name} ({document.path})"))
    # Their passages live on in the answers that quoted them (never sent again by a follow-up).
    quoting = await docent.desk.answers_quoting([d.id for d in documents])
    if quoting and arguments.forget_answers:
        print(f"deleted {await docent.desk.forget_answers(quoting)} answers that quoted them")
    elif quoting:
        print(f"{len(quoting)} recorded answers quote them: `--forget-answers` deletes those")
    return 0
