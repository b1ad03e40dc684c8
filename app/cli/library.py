"""`docent library copy|export|import`: a library's documents moved between the embedded SQLite
file and a shared PostgreSQL library (app/index/transfer.py says what moves and how it is checked);
`re-embed`: a shared library moved to this computer's embedding model.

One verb does the work, `copy --from SRC --to DST`, since either side may be either kind (a
server moved to another server, a shared library kept as a file); `export URL` and `import URL`
name the everyday trips from and to this person's own library, so they need no file path.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from app.bootstrap import Docent
from app.cli.terminal import Progress
from app.index import EmbeddingProgress
from app.index.shared import redacted
from app.index.transfer import Copied, Report, copy_library
from app.settings import is_shared_url


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    library = commands.add_parser(
        "library",
        help="move documents (text, chunks, vectors, OCR'd pages, summaries) between your "
        "library and a shared one; resumable, verified by counts and content digests",
    )
    verbs = library.add_subparsers(dest="verb", metavar="VERB", required=True)
    copy = verbs.add_parser(
        "copy", help="copy every document of one library into another (either kind, any way)"
    )
    copy.add_argument(
        "--from", dest="source", required=True, metavar="SRC", help="postgresql://… or a file"
    )
    copy.add_argument(
        "--to", dest="destination", required=True, metavar="DST", help="postgresql://… or a file"
    )
    export = verbs.add_parser("export", help="copy your own library into a shared one")
    export.add_argument("url", metavar="URL", help="postgresql://user@host/db")
    imported = verbs.add_parser("import", help="copy a shared library into your own")
    imported.add_argument("url", metavar="URL", help="postgresql://user@host/db")
    re_embed = verbs.add_parser(
        "re-embed",
        help="make this computer's embedding model the shared library's: its vectors are "
        "dropped and every passage embedded again (resumable: run it again)",
    )
    re_embed.add_argument("url", metavar="URL", help="postgresql://user@host/db")


def library(arguments: argparse.Namespace) -> int:
    """Blocking, on the main thread: Ctrl-C rolls back the document being written, and the
    next run goes on from there."""
    if arguments.verb != "copy" and not is_shared_url(arguments.url):
        from app.cli.documents import UsageError

        raise UsageError(
            "export, import and re-embed take a postgresql://… URL (copy takes files too)"
        )
    if arguments.verb == "re-embed":
        return asyncio.run(_re_embed(arguments.url))
    docent = Docent.from_environment(embeddings=False)
    own = str(docent.paths.database)
    if arguments.verb == "export":
        source, destination = own, arguments.url
    elif arguments.verb == "import":
        source, destination = arguments.url, own
    else:
        source, destination = arguments.source, arguments.destination
    progress = Progress()

    def report(copied: Copied) -> None:
        text = f"{copied.done}/{copied.total} documents ({copied.skipped} already there)"
        if progress.live:
            progress.update(text)
        # Redirected (a log), a line each twentieth of the way.
        elif copied.done % max(1, copied.total // 20) == 0 or copied.done == copied.total:
            progress.line(text)

    def keychain(url: str) -> str | None:
        return docent.library_password(url)()

    progress.line(f"copying {_shown(source)} → {_shown(destination)}")
    result: Report = copy_library(source, destination, password=keychain, progress=report)
    counts = result.destination
    progress.line(
        f"{result.copied} copied, {result.skipped} already there; verified: {counts.documents} "
        f"documents, {counts.chunks} chunks, {counts.vectors} vectors, {counts.ocr_pages} OCR "
        f"pages, {counts.summaries} summaries, each document's digest equal"
        + (
            f"; {result.others} other documents in the destination left as they were"
            if result.others
            else ""
        )
    )
    return 0


def _shown(location: str) -> str:
    return redacted(location) if is_shared_url(location) else str(Path(location))


async def _re_embed(url: str) -> int:
    docent = Docent.from_environment(library=url)
    progress = Progress()
    await docent.open()
    try:
        model = await docent.library.take_over_embeddings()
        progress.line(f"{_shown(url)}: its vectors dropped; embedding every passage with {model}")

        def report(embedded: EmbeddingProgress) -> None:
            progress.update(f"{embedded.done}/{embedded.total} passages embedded")

        done = await docent.library.embed_pending(report)
        progress.line(f"{done} passages embedded with {model}")
    finally:
        await docent.close()
    return 0
