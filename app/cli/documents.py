"""`docent index`, `docent docs`, `docent remove`: the documents in the library; and how every
command turns a document's name into the document."""

from __future__ import annotations

import argparse
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
    OcrFailed,
    OcrProgress,
    PagesParsed,
)


class UsageError(DocentError):
    """A mistake in the command line; printed without a traceback."""


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    index = commands.add_parser("index", help="add or update files and folders in the library")
    index.add_argument("paths", nargs="+", type=Path, metavar="PATH")
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
    embed = not arguments.no_embed
    progress = Progress()
    indexed = skipped = failed = embedded = 0
    position = ""
    async for event in docent.intake.index(paths, embed=embed):
        match event:
            case FileStarted(path=path, position=number, total=total):
                position = f"[{number}/{total}]"
                progress.update(f"{position} {path.name}: opening")
            case PagesParsed(path=path, done=done, total=total):
                progress.update(f"{position} {path.name}: {done}/{total} pages")
            case FileIndexed(path=path, pages=pages, chunks=chunks, note=note):
                indexed += 1
                suffix = f" ({note})" if note else ""
                progress.line(f"{position} indexed {path}: {pages} pages, {chunks} chunks{suffix}")
            case FileSkipped(path=path, reason=reason):
                skipped += 1
                progress.line(f"{position} skipped {path}: {reason}".lstrip())
            case FileFailed(path=path, reason=reason):
                failed += 1
                progress.line(f"{position} error: {path}: {reason}".lstrip())
            case EmbeddingProgress(done=done, total=total):
                embedded = done
                progress.update(f"embedding: {done}/{total} chunks")
            case OcrProgress(path=path, done=done, total=total):
                progress.update(f"OCR {path.name}: {done}/{total} pages")
            case OcrFailed(path=path, page=page, reason=reason):
                progress.line(f"error: OCR of {path} page {page}: {reason}")
            case EmbeddingFailed(reason=reason) | BatchFailed(reason=reason):
                failed += isinstance(event, BatchFailed)
                progress.line(f"error: {reason}")
    if embedded:
        progress.line(f"embedded {embedded} chunks: semantic search is up to date")
    elif not embed and (pending := await docent.library.pending_embeddings()):
        progress.line(f"{pending} chunks wait for embedding (run `docent index` again to finish)")
    progress.line(f"{indexed} indexed, {skipped} unchanged, {failed} failed")
    return 1 if failed and not indexed and not skipped else 0


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
