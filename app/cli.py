"""`docent`: index documents, ask questions, list and remove documents, benchmark, open the app."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from app import summary_cli
from app.answering import (
    Citation,
    DraftReplaced,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    SourcesFound,
    Status,
    Token,
    Waiting,
)
from app.answering.conversation import Conversation
from app.answering.metrics import describe_cost
from app.bench.eval_set import SOURCES, fetch_documents, load_sources, set_folder
from app.bench.evaluation import (
    MODES,
    breakdown,
    evaluate,
    load_questions,
    router_table,
    table,
)
from app.bootstrap import Docent
from app.catalog import ensure_model
from app.cli_conversations import continued, conversations_command
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
from app.llm.engine import CancelToken, EngineError
from app.llm.local import probe
from app.routing import Route
from app.samples import shipped_questions_path
from app.terminal import printable, printable_json


class UsageError(DocentError):
    """A mistake in the command line; printed without a traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docent", description="Ask questions about your documents, with page citations."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("gui", help="open the desktop app (the default)")

    index = commands.add_parser("index", help="add or update files and folders in the library")
    index.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    index.add_argument(
        "--no-embed",
        action="store_true",
        help="stop once documents are keyword-searchable; embed later (any index run resumes)",
    )

    ask = commands.add_parser("ask", help="ask a question; the answer streams with its sources")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print one JSON object instead")
    ask.add_argument(
        "--route",
        choices=["local", "cloud"],
        default=None,
        help="answer on this route instead of the router's choice",
    )
    ask.add_argument(
        "--doc",
        action="append",
        default=[],
        metavar="DOCUMENT",
        help="limit the question to a document (id, path or file name); repeatable",
    )
    follow = ask.add_mutually_exclusive_group()
    follow.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="a follow-up in the last conversation (each plain ask starts a new one)",
    )
    follow.add_argument(
        "--conversation", type=int, metavar="ID", help="a follow-up in this conversation"
    )

    kept = commands.add_parser(
        "conversations", help="list the kept conversations; show or delete one"
    )
    kept.add_argument("--show", type=int, metavar="ID", help="print a conversation's turns")
    kept.add_argument("--delete", type=int, metavar="ID", help="delete a conversation")
    kept.add_argument("--json", action="store_true")

    summarize = commands.add_parser(
        "summarize", help="summarize a document, citing its pages (stored: instant next time)"
    )
    summarize.add_argument("document", metavar="DOCUMENT", help="id, path or file name")
    summarize.add_argument(
        "--chapter", default=None, help="only this chapter: its number or words of its heading"
    )
    summarize.add_argument(
        "--route",
        choices=["local", "cloud"],
        default=None,
        help="make it on this route (default: the stored summary, else the local model)",
    )
    summarize.add_argument(
        "--estimate", action="store_true", help="only say what it would take, and exit"
    )
    summarize.add_argument("--json", action="store_true", help="print one JSON object instead")

    docs = commands.add_parser("docs", help="list the indexed documents")
    docs.add_argument("--json", action="store_true")

    remove = commands.add_parser("remove", help="remove documents from the library")
    remove.add_argument("documents", nargs="+", metavar="DOCUMENT", help="id, path or file name")

    history = commands.add_parser("history", help="recent questions with route, latency and cost")
    history.add_argument("-n", type=int, default=10, help="how many (default 10)")
    history.add_argument("--json", action="store_true")

    models = commands.add_parser("models", help="list the catalog's models and their state")
    models.add_argument(
        "--setup", action="store_true", help="assemble and verify the bundled models now"
    )

    evaluation = commands.add_parser(
        "eval", help="the same questions through local only, cloud only and auto, in one table"
    )
    evaluation.add_argument(
        "qa",
        nargs="?",
        type=Path,
        default=None,
        help="a QA .jsonl file (default: the set shipped for the sample documents)",
    )
    evaluation.add_argument(
        "--documents",
        nargs="*",
        type=Path,
        default=None,
        help="index these first (default: the documents that a sources.toml beside QA pins, "
        "fetched into Docent's cache; with the shipped set: the sample documents)",
    )
    evaluation.add_argument(
        "--mirror",
        default=None,
        metavar="URL",
        help="fetch the pinned documents' packages from this base URL instead of the hosts "
        "sources.toml names (their paths are kept)",
    )
    evaluation.add_argument(
        "--modes",
        default="local only,cloud only,auto",
        help="comma-separated, from: local only, cloud only, auto",
    )
    evaluation.add_argument("--limit", type=int, default=None, help="only the first N questions")
    evaluation.add_argument(
        "--split",
        choices=["all", "tune", "holdout"],
        default="all",
        help="only the questions of this split (holdout: never used to tune)",
    )
    evaluation.add_argument("--json", type=Path, default=None, help="also write the rows here")

    commands.add_parser(
        "gateway",
        help="serve Docent's cloud gateway (an MCP server) over stdio; the app starts it itself",
    )

    serve = commands.add_parser(
        "serve-mcp",
        help="serve the library to other MCP clients (tools: search_documents, read_page, "
        "list_documents, ask, summarize_document)",
    )
    serve.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    serve.add_argument(
        "--host",
        default=None,
        help="streamable-http: the address to bind (default 127.0.0.1); any other address "
        "requires a bearer token, made once and kept in the keychain",
    )
    serve.add_argument("--port", type=int, default=None, help="streamable-http: default 8765")
    serve.add_argument(
        "--new-token", action="store_true", help="replace the bearer token and show the new one"
    )

    bench = commands.add_parser("bench", help="measure Docent against its baselines")
    bench.add_argument(
        "suite",
        choices=["inference", "overhead", "transport", "ingest", "retrieval", "gui"],
        help="inference: local and cloud TTFT, prefill, decode and concurrency; overhead: "
        "Docent's routes vs the model called directly; transport: MCP over stdio, SSE and "
        "Streamable HTTP vs polling; ingest: indexing and embedding vs the raw libraries; "
        "retrieval: hybrid search latency and memory at 1k-100k chunks vs FTS5 and sqlite-vec; "
        "gui: GUI-thread stalls and cold start",
    )
    bench.add_argument("--quick", action="store_true", help="a CI-sized run")
    bench.add_argument("--out", type=Path, default=None, help="write results.json here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    if arguments.command in (None, "gui"):
        raise UsageError("the desktop app starts from the `docent` launcher (ui.launcher)")
    try:
        if arguments.command == "gateway":  # stdout belongs to the MCP protocol from here on
            from app.cloud.gateway import serve_stdio

            return serve_stdio()
        if arguments.command == "serve-mcp":  # over stdio, stdout is the protocol's too
            from app.serving.run import serve_mcp

            return serve_mcp(
                arguments.transport, arguments.host, arguments.port, arguments.new_token
            )
        return asyncio.run(_dispatch(arguments))
    except DocentError as error:
        print(f"docent: {printable(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("docent: interrupted", file=sys.stderr)
        return 130


async def _dispatch(arguments: argparse.Namespace) -> int:
    if arguments.command == "bench":
        from app.bench.run import run_bench

        return await run_bench(arguments.suite, quick=arguments.quick, out=arguments.out)
    # Listing and removing need no embedder: skip loading it.
    docent = Docent.from_environment(embeddings=arguments.command in ("index", "ask", "eval"))
    if arguments.command == "models":
        return _models(docent, arguments.setup)
    await docent.open()
    try:
        match arguments.command:
            case "index":
                return await _index(docent, arguments.paths, embed=not arguments.no_embed)
            case "eval":
                return await _eval(docent, arguments)
            case "ask":
                conversation = await continued(
                    docent.library, arguments.continue_last, arguments.conversation
                )
                return await _ask(
                    docent,
                    arguments.question,
                    arguments.doc,
                    arguments.json,
                    arguments.route,
                    conversation,
                )
            case "conversations":
                return await conversations_command(
                    docent.library, arguments.show, arguments.delete, arguments.json
                )
            case "summarize":
                (document,) = await _resolve(docent, [arguments.document])
                return await summary_cli.summarize(
                    docent,
                    document,
                    chapter=arguments.chapter,
                    route=arguments.route,
                    as_json=arguments.json,
                    estimate_only=arguments.estimate,
                )
            case "docs":
                return await _docs(docent, arguments.json)
            case "remove":
                return await _remove(docent, arguments.documents)
            case "history":
                return await _history(docent, arguments.n, arguments.json)
        raise UsageError(f"unknown command {arguments.command}")
    finally:
        await docent.close()


class _Progress:
    """One status line on a terminal (rewritten in place); nothing when output is redirected.
    Lines name files and quote errors: printed as printable text."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self._width = 0

    def update(self, text: str) -> None:
        if self.live:
            text = printable(text)
            self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()
            self._width = len(text)

    def line(self, text: str) -> None:
        if self.live and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(printable(text) + "\n")
        self.stream.flush()


async def _index(docent: Docent, paths: list[Path], *, embed: bool) -> int:
    progress = _Progress()
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


async def _resolve(docent: Docent, names: Sequence[str]) -> list[DocumentInfo]:
    try:
        return await docent.library.match_documents(names)
    except DocumentNotFound as error:
        raise UsageError(f"{error} (see `docent docs`)") from None


async def _ask(
    docent: Docent,
    question: str,
    scope_names: Sequence[str],
    as_json: bool,
    route: Route | None,
    conversation: Conversation,
) -> int:
    scope = [d.id for d in await _resolve(docent, scope_names)] if scope_names else None
    await docent.cloud_session.ready()
    answerer = await docent.answerer()
    cancel = CancelToken()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows: KeyboardInterrupt
        loop.add_signal_handler(signal.SIGINT, cancel.cancel)
    out = sys.stdout
    result: dict[str, Any] = {"question": question}
    status = 0
    async for event in answerer.answer(question, scope, cancel, route, conversation):
        match event:
            case InConversation(conversation_id=conversation_id, standalone=standalone):
                result |= {"conversation_id": conversation_id, "standalone": standalone}
                if standalone != question and not as_json:
                    print(f"[searched for: {printable(standalone)}]", file=sys.stderr)
            case SourcesFound(sources=sources):
                result["sources"] = [s.as_dict() | {"text": s.text} for s in sources]
            case RouteDecided(route=chosen, model=model, reason=reason):
                if "route" in result and not as_json:  # a fallback: say so before its answer
                    print(f"\n[{chosen}: {printable(reason)}]", file=sys.stderr)
                result["route"] = {"route": chosen, "model": model, "reason": reason}
                result.setdefault("routes", []).append(result["route"])
            case Waiting(ahead=ahead) if not as_json:
                print(f"[waiting for the local model: {ahead} ahead]", file=sys.stderr)
            case Status(text=text) if not as_json:
                print(f"[{printable(text)}]", file=sys.stderr)
            case Token(text=text) if not as_json:
                out.write(printable(text))
                out.flush()
            case Citation():
                pass  # listed after the answer, from Finished
            case DraftReplaced(reason=reason) if not as_json:
                print(f"\n[{printable(reason)}]", file=sys.stderr)
            case Finished(answer=answer, citations=citations, metrics=metrics) as finished:
                result |= {
                    "answer": answer,
                    "citations": [c.as_dict() for c in citations],
                    "metrics": metrics.as_dict(),
                    "cancelled": finished.cancelled,
                    "grounded": finished.grounded,
                    "unsupported_draft": finished.unsupported_draft,
                    "history_id": finished.history_id,
                    "sent": None
                    if finished.sent is None
                    else [{"role": m.role, "content": m.content} for m in finished.sent],
                }
                if not as_json:
                    if finished.cancelled:
                        out.write(" [stopped]")
                    if finished.unsupported_draft is not None:  # streamed above: disowned here
                        out.write(f"\n\n{printable(answer)}\n")
                    out.write("\n\nSources:\n")
                    cited = {c.number for c in citations}
                    for source in result.get("sources", []):
                        mark = "*" if source["number"] in cited else " "
                        out.write(f" {mark}[{source['number']}] {printable(source['where'])}\n")
                    grounded = finished.grounded
                    if finished.unsupported_draft is None and grounded is not None and grounded < 1:
                        out.write(
                            f"\nNote: the sources support {grounded:.0%} of this "
                            "answer's sentences; check the rest against the documents.\n"
                        )
                    out.write("\n" + printable(metrics.footer()) + "\n")
            case Failed(error=error):
                result["error"] = error
                status = 1
                if not as_json:
                    print(f"docent: {printable(error)}", file=sys.stderr)
    if notice := docent.chat.take_notice():  # safe settings taken after a crash, say
        result["notice"] = notice
        if not as_json:
            print(f"docent: {printable(notice)}", file=sys.stderr)
    if as_json:
        out.write(printable_json(result) + "\n")
    return status


async def _eval(docent: Docent, arguments: argparse.Namespace) -> int:
    qa_path = arguments.qa or shipped_questions_path()
    questions = [qa for qa in load_questions(qa_path) if arguments.split in ("all", qa.split)][
        : arguments.limit
    ]
    modes = [mode.strip() for mode in arguments.modes.split(",")]
    if unknown := [mode for mode in modes if mode not in MODES]:
        raise UsageError(f"unknown mode {unknown[0]!r} (choose from: {', '.join(MODES)})")
    documents = arguments.documents
    pinned = arguments.qa.parent / SOURCES if arguments.qa else None
    if documents is None and pinned is not None and pinned.is_file():
        documents = await fetch_documents(
            load_sources(pinned),
            set_folder(docent.paths.cache_dir, pinned),
            mirror=arguments.mirror,
            report=lambda line: print(printable(line), file=sys.stderr),
        )
    elif arguments.mirror:
        raise UsageError(f"--mirror needs a {SOURCES} beside QA (and no --documents)")
    elif documents is None and arguments.qa is None:
        documents = [Path(str(resources.files("resources").joinpath("sample")))]
    if documents:
        async for event in docent.intake.index(documents, embed=True):
            if isinstance(event, FileFailed):
                raise UsageError(f"cannot index {event.path}: {event.reason}")
    # Every mode answers every question itself: no answer may come from another mode's cache.
    await docent.apply_settings(
        docent.settings.model_copy(
            update={"routing": docent.settings.routing.model_copy(update={"cache_ttl_s": 0})}
        )
    )
    await docent.cloud_session.ready()
    rows = await evaluate(await docent.answerer(), questions, modes)
    print(f"{len(questions)} questions from {qa_path}\n")
    print(printable(table(rows)))
    print("\n" + printable(breakdown(rows)))
    print("\n" + printable(router_table(rows)))
    for row in rows:
        for failure in row["failures"]:
            print(f"{row['mode']}: failed: {printable(failure)}", file=sys.stderr)
    if arguments.json:
        arguments.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False), "utf-8")
    return 0


async def _docs(docent: Docent, as_json: bool) -> int:
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


async def _remove(docent: Docent, names: Sequence[str]) -> int:
    for document in await _resolve(docent, names):
        await docent.library.remove(document.id)
        print(printable(f"removed {document.name} ({document.path})"))
    return 0


async def _history(docent: Docent, limit: int, as_json: bool) -> int:
    rows = await docent.library.read(lambda store: store.history(limit))
    if as_json:
        print(printable_json(rows))
        return 0
    for row in reversed(rows):
        ttft = "–" if row["ttft_s"] is None else f"{row['ttft_s']:.2f} s"
        print(
            printable(
                f"{row['asked_at']}  {row['route']} ({row['model']})  TTFT {ttft}  "
                f"total {row['total_s']:.1f} s  {describe_cost(row['cost_usd'])}  [{row['status']}]"
            )
        )
        print(f"    Q: {printable(row['question'])}")
    await docent.budget.load()
    print(f"budget: {docent.budget.describe()}")
    return 0


def _models(docent: Docent, setup: bool) -> int:
    progress = _Progress()
    for model in docent.catalog.models:
        if setup and model.bundled and (model.default or model.installed):

            def show(done: int, total: int, name: str = model.name) -> None:
                progress.update(f"{name}: {done * 100 // max(total, 1)}%")

            path = ensure_model(model, docent.paths.models_dir, show)
            progress.line(f"{model.name} ({model.role}): ready at {path}")
        else:
            state = "bundled" if model.bundled else "download"
            print(
                f"{model.name:<24} {model.role:<9} {model.size / 1e6:>7.0f} MB  {state}  "
                f"{model.licence}"
            )
    try:
        print(f"\nllama.cpp here: {probe()}")
    except EngineError as error:
        print(f"\nllama.cpp here: {error}", file=sys.stderr)
        return 1
    chat_model = docent.settings.local.chat_model
    mode = docent.chat.safe_mode()
    print(f"{chat_model}: {mode.describe() if mode else 'normal settings'}")
    return 0


if __name__ == "__main__":  # `python -m app.cli …`: how Docent starts its gateway child
    sys.exit(main())
